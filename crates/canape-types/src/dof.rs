//! DOF types as types (SOFA's DataTypes): [`DataTypes`] gives, for Vec1d, Vec2d, Vec3d, Rigid2d
//! and Rigid3d, the coordinate and derivative sizes, typed views of flat buffers, and the
//! coordinate + h·derivative update (quaternion integration for Rigid3d, as SOFA's RigidTypes).
//!
//! States store flat `f64` buffers; a component that knows its type reads them through
//! [`DataTypes::coords`] / [`DataTypes::derivs`] (no copy), and code that only knows the
//! [`DofType`](crate::DofType) value at run time uses [`DofType::coord_add_deriv`], which
//! dispatches once per vector.

use crate::DofType;
use nalgebra::{Quaternion, Vector3};

/// A DOF type known at compile time.
pub trait DataTypes: 'static {
    /// The run-time tag of this type.
    const DOF: DofType;
    /// Scalars per coordinate.
    const COORD: usize;
    /// Scalars per derivative.
    const DERIV: usize;
    /// One coordinate (position entry).
    type Coord: Copy;
    /// One derivative (velocity, force, dx entry).
    type Deriv: Copy;
    /// A flat coordinate buffer seen as coordinates.
    fn coords(buf: &[f64]) -> &[Self::Coord];
    fn coords_mut(buf: &mut [f64]) -> &mut [Self::Coord];
    /// A flat derivative buffer seen as derivatives.
    fn derivs(buf: &[f64]) -> &[Self::Deriv];
    fn derivs_mut(buf: &mut [f64]) -> &mut [Self::Deriv];
    /// `c += d·h` (for Rigid types: the center moves, the orientation turns).
    fn coord_add_deriv(c: &mut Self::Coord, d: &Self::Deriv, h: f64);
}

macro_rules! vec_types {
    ($t:ident, $n:literal, $dof:expr, $doc:literal) => {
        #[doc = $doc]
        pub struct $t;
        impl DataTypes for $t {
            const DOF: DofType = $dof;
            const COORD: usize = $n;
            const DERIV: usize = $n;
            type Coord = [f64; $n];
            type Deriv = [f64; $n];
            fn coords(buf: &[f64]) -> &[[f64; $n]] {
                buf.as_chunks::<$n>().0
            }
            fn coords_mut(buf: &mut [f64]) -> &mut [[f64; $n]] {
                buf.as_chunks_mut::<$n>().0
            }
            fn derivs(buf: &[f64]) -> &[[f64; $n]] {
                buf.as_chunks::<$n>().0
            }
            fn derivs_mut(buf: &mut [f64]) -> &mut [[f64; $n]] {
                buf.as_chunks_mut::<$n>().0
            }
            #[inline]
            fn coord_add_deriv(c: &mut [f64; $n], d: &[f64; $n], h: f64) {
                for k in 0..$n {
                    c[k] += d[k] * h;
                }
            }
        }
    };
}

vec_types!(Vec1Types, 1, DofType::Vec1, "Vec1d: one scalar per point.");
vec_types!(Vec2Types, 2, DofType::Vec2, "Vec2d: two scalars per point.");
vec_types!(
    Vec3Types,
    3,
    DofType::Vec3,
    "Vec3d: three scalars per point."
);

/// Rigid3d: coordinate = center (x y z) and unit quaternion (qx qy qz qw); derivative = linear
/// velocity (vx vy vz) and angular velocity (wx wy wz), both in world frame.
pub struct Rigid3Types;

impl DataTypes for Rigid3Types {
    const DOF: DofType = DofType::Rigid3;
    const COORD: usize = 7;
    const DERIV: usize = 6;
    type Coord = [f64; 7];
    type Deriv = [f64; 6];
    fn coords(buf: &[f64]) -> &[[f64; 7]] {
        buf.as_chunks::<7>().0
    }
    fn coords_mut(buf: &mut [f64]) -> &mut [[f64; 7]] {
        buf.as_chunks_mut::<7>().0
    }
    fn derivs(buf: &[f64]) -> &[[f64; 6]] {
        buf.as_chunks::<6>().0
    }
    fn derivs_mut(buf: &mut [f64]) -> &mut [[f64; 6]] {
        buf.as_chunks_mut::<6>().0
    }
    #[inline]
    fn coord_add_deriv(c: &mut [f64; 7], d: &[f64; 6], h: f64) {
        rigid3_add_deriv(c, d, h);
    }
}

/// Rigid2d: coordinate = center (x y) and angle; derivative = (vx vy ω).
pub struct Rigid2Types;

impl DataTypes for Rigid2Types {
    const DOF: DofType = DofType::Rigid2;
    const COORD: usize = 3;
    const DERIV: usize = 3;
    type Coord = [f64; 3];
    type Deriv = [f64; 3];
    fn coords(buf: &[f64]) -> &[[f64; 3]] {
        buf.as_chunks::<3>().0
    }
    fn coords_mut(buf: &mut [f64]) -> &mut [[f64; 3]] {
        buf.as_chunks_mut::<3>().0
    }
    fn derivs(buf: &[f64]) -> &[[f64; 3]] {
        buf.as_chunks::<3>().0
    }
    fn derivs_mut(buf: &mut [f64]) -> &mut [[f64; 3]] {
        buf.as_chunks_mut::<3>().0
    }
    #[inline]
    fn coord_add_deriv(c: &mut [f64; 3], d: &[f64; 3], h: f64) {
        for k in 0..3 {
            c[k] += d[k] * h;
        }
    }
}

/// The quaternion (x, y, z, w) of a Rigid3 coordinate.
#[inline]
pub fn quat_of(c: &[f64; 7]) -> Quaternion<f64> {
    Quaternion::new(c[6], c[3], c[4], c[5])
}

/// Store a quaternion into a Rigid3 coordinate.
#[inline]
pub fn set_quat(c: &mut [f64; 7], q: &Quaternion<f64>) {
    c[3] = q.i;
    c[4] = q.j;
    c[5] = q.k;
    c[6] = q.w;
}

/// Rotate `v` by the (unit) quaternion of a Rigid3 coordinate.
#[inline]
pub fn rigid3_rotate(c: &[f64; 7], v: &Vector3<f64>) -> Vector3<f64> {
    // v' = v + 2 w (q × v) + 2 q × (q × v), q the vector part
    let q = Vector3::new(c[3], c[4], c[5]);
    let w = c[6];
    let t = q.cross(v) * 2.0;
    v + t * w + q.cross(&t)
}

/// Rotate `v` by the inverse of a Rigid3 coordinate's quaternion.
#[inline]
pub fn rigid3_inverse_rotate(c: &[f64; 7], v: &Vector3<f64>) -> Vector3<f64> {
    let mut ci = *c;
    ci[3] = -c[3];
    ci[4] = -c[4];
    ci[5] = -c[5];
    rigid3_rotate(&ci, v)
}

/// `c += d·h` for a Rigid3 coordinate, following SOFA's RigidCoord `operator+=(Deriv)`
/// (Sofa/framework/DefaultType/src/sofa/defaulttype/RigidCoord.h): the center moves by the
/// linear part; the orientation is turned by the exponential of the world-frame rotation vector
/// ω h, multiplied on the left: q ← exp(ω h / 2) ⊗ q, with the quaternion
/// (sin|θ|/|θ| θ, cos|θ|) for θ = ω h / 2 (below machine epsilon: (θ, 1) normalised). The
/// result is not renormalised, as in SOFA.
#[inline]
pub fn rigid3_add_deriv(c: &mut [f64; 7], d: &[f64; 6], h: f64) {
    c[0] += d[0] * h;
    c[1] += d[1] * h;
    c[2] += d[2] * h;
    // SOFA scales the whole derivative first, then halves the rotation vector
    let (ox, oy, oz) = (d[3] * h * 0.5, d[4] * h * 0.5, d[5] * h * 0.5);
    let theta = (ox * ox + oy * oy + oz * oz).sqrt();
    let (ex, ey, ez, ew) = if theta < f64::EPSILON {
        let mag = ox * ox + oy * oy + oz * oz + 1.0;
        if (mag - 1.0).abs() > 1e-10 {
            let s = 1.0 / mag.sqrt();
            (ox * s, oy * s, oz * s, s)
        } else {
            (ox, oy, oz, 1.0)
        }
    } else {
        let s = theta.sin() / theta;
        (s * ox, s * oy, s * oz, theta.cos())
    };
    let (qx, qy, qz, qw) = (c[3], c[4], c[5], c[6]);
    // e ⊗ q (Hamilton product, SOFA's Quat::operator*)
    c[6] = ew * qw - (ex * qx + ey * qy + ez * qz);
    c[3] = ew * qx + ex * qw + ey * qz - ez * qy;
    c[4] = ew * qy + ey * qw + ez * qx - ex * qz;
    c[5] = ew * qz + ez * qw + ex * qy - ey * qx;
}

impl DofType {
    /// `x[i] = b[i] + c[i]·f` per point, with `x` and `b` coordinate buffers and `c` a derivative
    /// buffer of the same number of points (the integration `x += v·h` when `b` is `x`).
    /// Vec types: plain scalar operation; Rigid3: [`rigid3_add_deriv`].
    pub fn coord_add_deriv(self, x: &mut [f64], c: &[f64], f: f64) {
        match self {
            DofType::Rigid3 => {
                let xs = Rigid3Types::coords_mut(x);
                let cs = Rigid3Types::derivs(c);
                for (xi, ci) in xs.iter_mut().zip(cs) {
                    rigid3_add_deriv(xi, ci, f);
                }
            }
            _ => {
                for (a, b) in x.iter_mut().zip(c) {
                    *a += *b * f;
                }
            }
        }
    }

    /// Whether coordinates and derivatives have different layouts (Rigid types).
    pub fn is_rigid(self) -> bool {
        matches!(self, DofType::Rigid2 | DofType::Rigid3)
    }

    /// The identity coordinate of one point (zero vector; Rigid3: origin and the identity
    /// quaternion).
    pub fn identity_coord(self) -> &'static [f64] {
        match self {
            DofType::Vec1 => &[0.0],
            DofType::Vec2 => &[0.0; 2],
            DofType::Vec3 => &[0.0; 3],
            DofType::Rigid2 => &[0.0; 3],
            DofType::Rigid3 => &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_have_the_type_sizes() {
        let b: Vec<f64> = (0..14).map(f64::from).collect();
        assert_eq!(Rigid3Types::coords(&b).len(), 2);
        assert_eq!(Rigid3Types::coords(&b)[1][0], 7.0);
        assert_eq!(Rigid3Types::derivs(&b[..12]).len(), 2);
        assert_eq!(Vec1Types::coords(&b).len(), 14);
        assert_eq!(Vec3Types::derivs(&b[..12])[3], [9.0, 10.0, 11.0]);
    }

    #[test]
    fn rigid_integration_turns_about_the_angular_velocity() {
        // a constant rotation rate about z, integrated in small steps, turns by ω·t
        let mut c = [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0];
        let d = [0.5, 0.0, 0.0, 0.0, 0.0, 1.0];
        let n = 10000;
        let h = 1.0 / n as f64;
        for _ in 0..n {
            rigid3_add_deriv(&mut c, &d, h);
        }
        assert!((c[0] - 1.5).abs() < 1e-10); // 10 000 additions of a rounded h
                                             // angle of the quaternion about z
        let angle = 2.0 * c[5].atan2(c[6]);
        // the exponential map integrates a constant rate exactly
        assert!((angle - 1.0).abs() < 1e-12, "angle {angle}");
        let norm: f64 = c[3..].iter().map(|v| v * v).sum();
        assert!((norm - 1.0).abs() < 1e-12, "unit up to rounding: {norm}");
        // the rotation maps x to (cos 1, sin 1, 0)
        let r = rigid3_rotate(&c, &Vector3::x());
        assert!((r - Vector3::new(angle.cos(), angle.sin(), 0.0)).norm() < 1e-12);
        let back = rigid3_inverse_rotate(&c, &r);
        assert!((back - Vector3::x()).norm() < 1e-12);
    }

    #[test]
    fn dispatched_update_equals_the_typed_one() {
        let mut a = vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let d = vec![1.0, 2.0, 3.0, 0.3, -0.2, 0.1];
        let mut b = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        DofType::Rigid3.coord_add_deriv(&mut a, &d, 0.1);
        rigid3_add_deriv(&mut b, &[1.0, 2.0, 3.0, 0.3, -0.2, 0.1], 0.1);
        assert_eq!(a, b.to_vec());
        let mut v = vec![1.0, 2.0];
        DofType::Vec2.coord_add_deriv(&mut v, &[1.0, 1.0], 2.0);
        assert_eq!(v, vec![3.0, 4.0]);
    }
}
