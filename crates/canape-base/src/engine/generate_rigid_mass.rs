//! GenerateRigidMass (Sofa/Component/Engine/Generate/src/sofa/component/engine/generate/
//! GenerateRigidMass.inl): the mass, volume, centre of mass and inertia (per unit mass, about
//! the centre of mass) of the solid bounded by a closed triangle/quad surface of uniform
//! `density`, by the divergence theorem over the surface's triangles (quads split along
//! their 0–2 diagonal). `rigidMass` is SOFA's Rigid3 mass text "mass volume I00 … I22", as
//! UniformMass's `vertexMass` reads it.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use nalgebra::Vector3;

/// The solid's integrals over its bounding surface, in SOFA's order: 1, x, y, z, x², y², z²,
/// xy, yz, zx (each already divided by its constant).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VolumeIntegrals(pub [f64; 10]);

/// The mass properties of a solid of unit density.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidProperties {
    pub volume: f64,
    pub center: Vector3<f64>,
    /// The inertia about the centre of mass divided by the volume, row-major.
    pub inertia: [f64; 9],
}

impl VolumeIntegrals {
    /// The integrals of the solid bounded by `triangles` (outward oriented) over `points`.
    pub fn of_triangles(triangles: impl IntoIterator<Item = [Vector3<f64>; 3]>) -> Self {
        let mut s = [0.0; 10];
        for [v0, v1, v2] in triangles {
            let n = (v1 - v0).cross(&(v2 - v0));
            // per axis: the sums f1 = Σv, f2 = Σ_{i≤j} v_i v_j, f3 = Σ_{i≤j≤k} v_i v_j v_k, and
            // g_i = f2 + v_i (f1 + v_i)
            let axis = |d: usize| {
                let (a, b, c) = (v0[d], v1[d], v2[d]);
                let t0 = a + b;
                let f1 = t0 + c;
                let t1 = a * a;
                let t2 = t1 + b * t0;
                let f2 = t2 + c * f1;
                let f3 = a * t1 + b * t2 + c * f2;
                let g = [f2 + a * (f1 + a), f2 + b * (f1 + b), f2 + c * (f1 + c)];
                (f1, f2, f3, g)
            };
            let (f1x, f2x, f3x, gx) = axis(0);
            let (_, f2y, f3y, gy) = axis(1);
            let (_, f2z, f3z, gz) = axis(2);
            s[0] += n.x * f1x;
            s[1] += n.x * f2x;
            s[2] += n.y * f2y;
            s[3] += n.z * f2z;
            s[4] += n.x * f3x;
            s[5] += n.y * f3y;
            s[6] += n.z * f3z;
            s[7] += n.x * (v0.y * gx[0] + v1.y * gx[1] + v2.y * gx[2]);
            s[8] += n.y * (v0.z * gy[0] + v1.z * gy[1] + v2.z * gy[2]);
            s[9] += n.z * (v0.x * gz[0] + v1.x * gz[1] + v2.x * gz[2]);
        }
        let div = [6.0, 24.0, 24.0, 24.0, 60.0, 60.0, 60.0, 120.0, 120.0, 120.0];
        for (v, d) in s.iter_mut().zip(div) {
            *v /= d;
        }
        VolumeIntegrals(s)
    }

    /// The mass properties at unit density; None for a zero volume.
    pub fn properties(&self) -> Option<RigidProperties> {
        let s = &self.0;
        let volume = s[0];
        if volume == 0.0 {
            return None;
        }
        let c = Vector3::new(s[1], s[2], s[3]) / volume;
        // about the origin, then moved to the centre of mass (parallel axis theorem)
        let xx = s[5] + s[6] - volume * (c.y * c.y + c.z * c.z);
        let yy = s[4] + s[6] - volume * (c.z * c.z + c.x * c.x);
        let zz = s[4] + s[5] - volume * (c.x * c.x + c.y * c.y);
        let xy = -s[7] + volume * c.x * c.y;
        let yz = -s[8] + volume * c.y * c.z;
        let zx = -s[9] + volume * c.z * c.x;
        let inertia = [xx, xy, zx, xy, yy, yz, zx, yz, zz].map(|v| v / volume);
        Some(RigidProperties {
            volume,
            center: c,
            inertia,
        })
    }
}

canape_core::data_schema! {
    /// GenerateRigidMass's own Data (after the base Data).
    pub struct GenerateRigidMassData {
        density: Real = ("density", DataKind::Real, "1000", "input: Density of the object"),
        position: Reals = ("position", DataKind::Reals(3), "", "input: positions of the vertices"),
        triangles: Ints = ("triangles", DataKind::Ints(3), "", "input: triangles of the mesh"),
        quads: Ints = ("quads", DataKind::Ints(4), "", "input: quads of the mesh"),
        polygons: Text = ("polygons", DataKind::Str, "", "input: polygons of the mesh (not supported yet: triangles and quads only)"),
        rigid_mass: Reals => ("rigidMass", DataKind::Reals(0), "output: rigid mass computed"),
        mass: Real => ("mass", DataKind::Real, "output: mass of the mesh"),
        volume: Real => ("volume", DataKind::Real, "output: volume of the mesh"),
        inertia_matrix: Reals => ("inertiaMatrix", DataKind::Reals(9), "output: the inertia matrix of the mesh"),
        mass_center: Reals => ("massCenter", DataKind::Vector(3), "output: the gravity center of the mesh"),
        center_to_origin: Reals => ("centerToOrigin", DataKind::Vector(3), "output: vector going from the mass center to the space origin"),
    }
}

/// GenerateRigidMass: the rigid mass of a closed surface mesh.
#[derive(Clone)]
pub struct GenerateRigidMass {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: GenerateRigidMassData,
}

impl Default for GenerateRigidMass {
    fn default() -> Self {
        Self::new()
    }
}

impl GenerateRigidMass {
    pub fn new() -> Self {
        let (data, d) = GenerateRigidMassData::declare(base_data(DataTable::new()));
        GenerateRigidMass { data, d }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if !self.data.get(self.d.polygons).trim().is_empty() {
            ctx.warn("polygons are not supported yet and are ignored (triangles and quads are integrated)");
        }
        let pos = self.data.get(self.d.position);
        let n = pos.len() / 3;
        let point = |i: u32| {
            let o = 3 * i as usize;
            pos.get(o..o + 3).map(|p| Vector3::new(p[0], p[1], p[2]))
        };
        let mut bad = 0usize;
        let mut tris: Vec<[Vector3<f64>; 3]> = Vec::new();
        let mut push = |a: u32, b: u32, c: u32| match (point(a), point(b), point(c)) {
            (Some(a), Some(b), Some(c)) => tris.push([a, b, c]),
            _ => bad += 1,
        };
        for t in self.data.get(self.d.triangles).chunks_exact(3) {
            push(t[0], t[1], t[2]);
        }
        for q in self.data.get(self.d.quads).chunks_exact(4) {
            push(q[0], q[1], q[2]);
            push(q[0], q[2], q[3]);
        }
        if bad > 0 {
            ctx.error(format!(
                "{bad} triangles (quads count as two) use a point index out of range ({n} positions) and are skipped"
            ));
        }
        let Some(p) = VolumeIntegrals::of_triangles(tris).properties() else {
            ctx.warn("the mesh's volume is zero: no rigid mass is computed");
            return;
        };
        if p.volume < 0.0 {
            ctx.warn("the mesh's volume is negative (are its faces oriented inwards?)");
        }
        let mass = p.volume * self.data.get(self.d.density);
        let mut rigid = vec![mass, p.volume];
        rigid.extend_from_slice(&p.inertia);
        let c = p.center;
        let (t, d) = (&mut self.data, self.d);
        let _ = t.put(d.rigid_mass, Value::Reals(rigid));
        let _ = t.put(d.mass, Value::Real(mass));
        let _ = t.put(d.volume, Value::Real(p.volume));
        let _ = t.put(d.inertia_matrix, Value::Reals(p.inertia.to_vec()));
        let _ = t.put(d.mass_center, Value::Reals(vec![c.x, c.y, c.z]));
        let _ = t.put(d.center_to_origin, Value::Reals(vec![-c.x, -c.y, -c.z]));
    }
}

impl_component!(GenerateRigidMass, "GenerateRigidMass", init);

impl Engine for GenerateRigidMass {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A box [0,a]×[0,b]×[0,c] shifted by `o`, as 6 outward quads.
    fn cuboid(a: f64, b: f64, c: f64, o: [f64; 3]) -> (String, &'static str) {
        let mut pts = String::new();
        for i in 0..8 {
            let (x, y, z) = (
                (i & 1) as f64 * a,
                ((i >> 1) & 1) as f64 * b,
                (i >> 2) as f64 * c,
            );
            pts += &format!("{} {} {} ", x + o[0], y + o[1], z + o[2]);
        }
        // outward: z-, z+, y-, y+, x-, x+
        let quads = "0 2 3 1  4 5 7 6  0 1 5 4  2 6 7 3  0 4 6 2  1 3 7 5";
        (pts, quads)
    }

    fn run(attrs: &[(&str, &str)]) -> (usize, GenerateRigidMass) {
        let mut e = GenerateRigidMass::new();
        let n = crate::engine::test_support::init_alone(&mut e, attrs);
        (n, e)
    }

    #[test]
    fn box_mass_center_and_inertia() {
        let (pts, quads) = cuboid(1.0, 2.0, 3.0, [1.0, -1.0, 2.0]);
        let (n, e) = run(&[("position", &pts), ("quads", quads), ("density", "10")]);
        assert_eq!(n, 0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(e.data.real("volume"), 6.0));
        assert!(close(e.data.real("mass"), 60.0));
        let c = e.data.reals("massCenter");
        assert!(
            close(c[0], 1.5) && close(c[1], 0.0) && close(c[2], 3.5),
            "{c:?}"
        );
        assert_eq!(e.data.reals("centerToOrigin"), &[-c[0], -c[1], -c[2]]);
        // a box's inertia per unit mass: diag((b²+c²)/12, (a²+c²)/12, (a²+b²)/12)
        let i = e.data.reals("inertiaMatrix");
        let want = [
            13.0 / 12.0,
            0.0,
            0.0,
            0.0,
            10.0 / 12.0,
            0.0,
            0.0,
            0.0,
            5.0 / 12.0,
        ];
        assert!(i.iter().zip(want).all(|(x, y)| close(*x, y)), "{i:?}");
        let r = e.data.reals("rigidMass");
        assert_eq!(r.len(), 11);
        assert!(close(r[0], 60.0) && close(r[1], 6.0) && close(r[2], 13.0 / 12.0));
    }

    #[test]
    fn off_diagonal_terms_of_a_tetrahedron() {
        // the unit corner tetrahedron: volume 1/6, centre (1/4, 1/4, 1/4); about the origin
        // ∫xy = 1/120, so I_xy about the centre = −(1/120 − V/16) / V = −(1/20 − 1/16) = 1/80
        let tris = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
        let v = [Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()];
        let p = VolumeIntegrals::of_triangles(tris.map(|t| t.map(|i| v[i])))
            .properties()
            .unwrap();
        assert!((p.volume - 1.0 / 6.0).abs() < 1e-14);
        assert!((p.center - Vector3::repeat(0.25)).norm() < 1e-14);
        assert!((p.inertia[1] - 1.0 / 80.0).abs() < 1e-14, "{:?}", p.inertia);
        assert_eq!(p.inertia[1], p.inertia[3]);
    }

    #[test]
    fn degenerate_and_bad_meshes_are_reported() {
        let (n, e) = run(&[("position", "0 0 0 1 0 0 0 1 0"), ("triangles", "0 1 2")]);
        assert_eq!(n, 1);
        assert!(e.data.reals("rigidMass").is_empty());
        let (pts, quads) = cuboid(1.0, 1.0, 1.0, [0.0; 3]);
        let (n, e) = run(&[("position", &pts), ("quads", quads), ("triangles", "0 1 9")]);
        assert_eq!(n, 1);
        assert!((e.data.real("volume") - 1.0).abs() < 1e-12);
    }
}
