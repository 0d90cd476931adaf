//! Vertex2Frame (Sofa/Component/Engine/Transform/src/sofa/component/engine/transform/
//! Vertex2Frame.inl): one Rigid3 frame per vertex, centred on it, its z axis along the vertex
//! normal (or, without normals, its x axis towards the next vertex), optionally turned about
//! one of its own axes by `rotationAngle` degrees.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Flag, Int, Real, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};

/// The quaternion (x, y, z, w) of a rotation matrix, with SOFA's `Quat::fromMatrix` branches
/// (so that the sign of the quaternion is SOFA's).
pub fn quat_from_matrix(m: &Matrix3<f64>) -> [f64; 4] {
    let tr = m[(0, 0)] + m[(1, 1)] + m[(2, 2)];
    let q;
    if tr > 0.0 {
        let r = (tr + 1.0).sqrt();
        let s = 0.5 / r;
        q = [
            (m[(2, 1)] - m[(1, 2)]) * s,
            (m[(0, 2)] - m[(2, 0)]) * s,
            (m[(1, 0)] - m[(0, 1)]) * s,
            r * 0.5,
        ];
    } else if m[(1, 1)] > m[(0, 0)] && m[(2, 2)] <= m[(1, 1)] {
        let r = ((m[(1, 1)] - (m[(2, 2)] + m[(0, 0)])) + 1.0).sqrt();
        // a zero pivot leaves s (and the other terms) at 0, as in SOFA
        let s = if r != 0.0 { 0.5 / r } else { r };
        q = [
            (m[(0, 1)] + m[(1, 0)]) * s,
            r * 0.5,
            (m[(1, 2)] + m[(2, 1)]) * s,
            (m[(0, 2)] - m[(2, 0)]) * s,
        ];
    } else if (m[(1, 1)] <= m[(0, 0)] && m[(2, 2)] > m[(0, 0)]) || m[(2, 2)] > m[(1, 1)] {
        let r = ((m[(2, 2)] - (m[(0, 0)] + m[(1, 1)])) + 1.0).sqrt();
        // a zero pivot leaves s (and the other terms) at 0, as in SOFA
        let s = if r != 0.0 { 0.5 / r } else { r };
        q = [
            (m[(2, 0)] + m[(0, 2)]) * s,
            (m[(1, 2)] + m[(2, 1)]) * s,
            r * 0.5,
            (m[(1, 0)] - m[(0, 1)]) * s,
        ];
    } else {
        let r = ((m[(0, 0)] - (m[(1, 1)] + m[(2, 2)])) + 1.0).sqrt();
        // a zero pivot leaves s (and the other terms) at 0, as in SOFA
        let s = if r != 0.0 { 0.5 / r } else { r };
        q = [
            r * 0.5,
            (m[(0, 1)] + m[(1, 0)]) * s,
            (m[(2, 0)] + m[(0, 2)]) * s,
            (m[(2, 1)] - m[(1, 2)]) * s,
        ];
    }
    q
}

canape_core::data_schema! {
    /// Vertex2Frame's own Data (after the base Data).
    pub struct Vertex2FrameData {
        position: Reals = ("position", DataKind::Reals(3), "", "Vertices of the mesh loaded"),
        tex_coords: Reals = ("texCoords", DataKind::Reals(2), "", "TexCoords of the mesh loaded"),
        normals: Reals = ("normals", DataKind::Reals(3), "", "Normals of the mesh loaded"),
        use_normals: Flag = ("useNormals", DataKind::Bool, "1", "Use normals to compute the orientations; if disabled the direction of the x axisof a vertice is the one from this vertice to the next one"),
        invert_normals: Flag = ("invertNormals", DataKind::Bool, "0", "Swap normals"),
        rotation: Int = ("rotation", DataKind::Int, "0", "Apply a local rotation on the frames. If 0 a x-axis rotation is applied. If 1 a y-axis rotation is applied, If 2 a z-axis rotation is applied."),
        rotation_angle: Real = ("rotationAngle", DataKind::Real, "0", "Angle rotation"),
        frames: Reals => ("frames", DataKind::Reals(7), "Frames at output"),
    }
}

/// Vertex2Frame: the `frames` (x y z qx qy qz qw each) of the vertices in `position`.
#[derive(Clone)]
pub struct Vertex2Frame {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: Vertex2FrameData,
}

impl Default for Vertex2Frame {
    fn default() -> Self {
        Self::new()
    }
}

impl Vertex2Frame {
    pub fn new() -> Self {
        let (data, d) = Vertex2FrameData::declare(base_data(DataTable::new()));
        Vertex2Frame { data, d }
    }

    /// The orientation of the frame of axes (x, y, z), turned by `rotationAngle` degrees about
    /// the axis chosen by `rotation` (no turn for another value, as SOFA's zero axis gives).
    fn orientation(&self, x: Vector3<f64>, y: Vector3<f64>, z: Vector3<f64>) -> [f64; 4] {
        let frame = quat_from_matrix(&Matrix3::from_columns(&[x, y, z]));
        let axis = match self.data.get(self.d.rotation) {
            0 => x,
            1 => y,
            2 => z,
            _ => Vector3::zeros(),
        };
        let angle = self.data.get(self.d.rotation_angle) * std::f64::consts::PI / 180.0;
        let turn = if axis.norm() < f64::EPSILON {
            Quaternion::identity()
        } else {
            UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle)
                .into_inner()
        };
        let q = turn * Quaternion::new(frame[3], frame[0], frame[1], frame[2]);
        [q.i, q.j, q.k, q.w]
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let pts: Vec<Vector3<f64>> = self
            .data
            .get(self.d.position)
            .chunks_exact(3)
            .map(|p| Vector3::new(p[0], p[1], p[2]))
            .collect();
        let n = pts.len();
        if n == 0 {
            // SOFA only logs this at the info level: vertices may come later
            return;
        }
        let normalize = |v: Vector3<f64>| {
            let l = v.norm();
            if l > 0.0 {
                v / l
            } else {
                v
            }
        };
        let mut frames: Vec<[f64; 7]> = Vec::with_capacity(n);
        if self.data.get(self.d.use_normals) {
            let normals: Vec<Vector3<f64>> = self
                .data
                .get(self.d.normals)
                .chunks_exact(3)
                .map(|p| Vector3::new(p[0], p[1], p[2]))
                .collect();
            if normals.is_empty() {
                ctx.error("useNormals is set but no normals are given: no frames are computed");
                return;
            }
            if normals.len() < n {
                ctx.error(format!(
                    "{} normals for {n} vertices: no frames are computed",
                    normals.len()
                ));
                return;
            }
            let invert = self.data.get(self.d.invert_normals);
            for (p, nrm) in pts.iter().zip(&normals) {
                let z = normalize(if invert { -nrm } else { *nrm });
                let mut y = Vector3::y();
                if 1.0 - y.dot(&z).abs() <= f64::EPSILON {
                    y = Vector3::z();
                }
                let x = normalize(y.cross(&z));
                let y = normalize(z.cross(&x));
                let q = self.orientation(x, y, z);
                frames.push([p.x, p.y, p.z, q[0], q[1], q[2], q[3]]);
            }
        } else {
            if n < 2 {
                ctx.error("without normals, at least 2 vertices are needed to orient the frames: no frames are computed");
                return;
            }
            for w in pts.windows(2) {
                let x = normalize(w[1] - w[0]);
                let mut z = Vector3::x();
                if 1.0 - z.dot(&x).abs() <= f64::EPSILON {
                    z = Vector3::z();
                }
                let y = normalize(z.cross(&x));
                let z = normalize(x.cross(&y));
                let q = self.orientation(x, y, z);
                let p = w[0];
                frames.push([p.x, p.y, p.z, q[0], q[1], q[2], q[3]]);
            }
            let last = pts[n - 1];
            let mut f = frames[n - 2];
            f[..3].copy_from_slice(&[last.x, last.y, last.z]);
            frames.push(f);
        }
        let _ = self.data.put(
            self.d.frames,
            Value::Reals(frames.into_iter().flatten().collect()),
        );
    }
}

impl_component!(Vertex2Frame, "Vertex2Frame", init);

impl Engine for Vertex2Frame {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(attrs: &[(&str, &str)]) -> (usize, Vec<f64>) {
        let mut e = Vertex2Frame::new();
        let n = crate::engine::test_support::init_alone(&mut e, attrs);
        (n, e.data.reals("frames").to_vec())
    }

    /// Rotate `v` by the quaternion (x, y, z, w).
    fn rotate(q: &[f64], v: Vector3<f64>) -> Vector3<f64> {
        UnitQuaternion::new_normalize(Quaternion::new(q[3], q[0], q[1], q[2])) * v
    }

    fn near(a: Vector3<f64>, b: Vector3<f64>) -> bool {
        (a - b).norm() < 1e-12
    }

    #[test]
    fn frames_along_the_normals() {
        let (n, f) = run(&[("position", "1 2 3 0 0 0"), ("normals", "0 0 2 1 0 0")]);
        assert_eq!(n, 0);
        assert_eq!(f.len(), 14);
        assert_eq!(&f[..3], &[1.0, 2.0, 3.0]);
        // normal along z: the identity frame
        assert!(near(rotate(&f[3..7], Vector3::z()), Vector3::z()));
        assert!(near(rotate(&f[3..7], Vector3::x()), Vector3::x()));
        // normal along x: z → x, and x = y × z = y × x = −z
        assert!(near(rotate(&f[10..14], Vector3::z()), Vector3::x()));
        assert!(near(rotate(&f[10..14], Vector3::x()), -Vector3::z()));
        // inverted normals flip z
        let (_, f) = run(&[
            ("position", "0 0 0"),
            ("normals", "0 0 1"),
            ("invertNormals", "1"),
        ]);
        assert!(near(rotate(&f[3..7], Vector3::z()), -Vector3::z()));
    }

    #[test]
    fn frames_along_the_polyline_and_local_turn() {
        let (n, f) = run(&[
            ("position", "0 0 0 0 2 0 0 2 5"),
            ("useNormals", "0"),
            ("rotation", "0"),
            ("rotationAngle", "90"),
        ]);
        assert_eq!(n, 0);
        assert_eq!(f.len(), 21);
        // frame 0: x along +y, turned 90° about its own x axis
        assert!(near(rotate(&f[3..7], Vector3::x()), Vector3::y()));
        // before the turn y = z0 × x = x̂ × ŷ = ẑ, z = x × y = x̂; the turn sends y to z
        assert!(near(rotate(&f[3..7], Vector3::y()), Vector3::x()));
        // frame 1: x along +z; the last frame copies its orientation
        assert!(near(rotate(&f[10..14], Vector3::x()), Vector3::z()));
        assert_eq!(&f[17..21], &f[10..14]);
        assert_eq!(&f[14..17], &[0.0, 2.0, 5.0]);
    }

    #[test]
    fn missing_inputs_are_reported() {
        let (n, f) = run(&[("position", "0 0 0")]);
        assert_eq!((n, f.len()), (1, 0));
        let (n, _) = run(&[("position", "0 0 0"), ("useNormals", "0")]);
        assert_eq!(n, 1);
        let (n, f) = run(&[]);
        assert_eq!((n, f.len()), (0, 0));
    }

    #[test]
    fn sofa_quaternion_signs() {
        // a half turn about z: trace −1, SOFA's z branch gives (0, 0, 1, 0)
        let m = Matrix3::new(-1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0);
        assert_eq!(quat_from_matrix(&m), [0.0, 0.0, 1.0, 0.0]);
        let m = Matrix3::identity();
        assert_eq!(quat_from_matrix(&m), [0.0, 0.0, 0.0, 1.0]);
    }
}
