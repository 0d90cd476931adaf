//! Degree-of-freedom types shared by every Canapé crate.
//!
//! A mechanical state stores its vectors as flat `f64` buffers; the [`DofType`] says how many
//! scalars make one coordinate (position) and one derivative (velocity, force, dx). Vec1d/Vec2d/Vec3d
//! have the same size for both; Rigid3d has 7 coordinate scalars
//! (x y z qx qy qz qw) and 6 derivative scalars (linear and angular). [`dof`] has the types as
//! types ([`DataTypes`]) and the coordinate + derivative update.
//!
//! Helpers here view flat buffers as `nalgebra::Vector3` without copying, so that element loops
//! in force fields work on small fixed-size vectors.

use nalgebra::Vector3;

pub mod dof;
pub use dof::{DataTypes, Rigid2Types, Rigid3Types, Vec1Types, Vec2Types, Vec3Types};
/// The small fixed-size linear algebra the types are built on, for component authors.
pub use nalgebra;

/// Short alias for the 3D vector type used throughout.
pub type Vec3 = Vector3<f64>;
/// 3x3 matrix.
pub type Mat3 = nalgebra::Matrix3<f64>;

/// The template of a mechanical state (SOFA's `template="Vec3d"` etc.).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DofType {
    Vec1,
    Vec2,
    Vec3,
    Rigid2,
    Rigid3,
}

impl DofType {
    /// Scalars per coordinate (position entry).
    pub fn coord_size(self) -> usize {
        match self {
            DofType::Vec1 => 1,
            DofType::Vec2 => 2,
            DofType::Vec3 => 3,
            DofType::Rigid2 => 3,
            DofType::Rigid3 => 7,
        }
    }
    /// Scalars per derivative (velocity, force, dx entry).
    pub fn deriv_size(self) -> usize {
        match self {
            DofType::Vec1 => 1,
            DofType::Vec2 => 2,
            DofType::Vec3 => 3,
            DofType::Rigid2 => 3,
            DofType::Rigid3 => 6,
        }
    }
    /// SOFA's canonical template name.
    pub fn name(self) -> &'static str {
        match self {
            DofType::Vec1 => "Vec1d",
            DofType::Vec2 => "Vec2d",
            DofType::Vec3 => "Vec3d",
            DofType::Rigid2 => "Rigid2d",
            DofType::Rigid3 => "Rigid3d",
        }
    }
    /// Resolve a SOFA template name or alias (`Vec3`, `Vec3d`, `Vec3f`, `Rigid`, `Rigid3`…).
    pub fn from_template(t: &str) -> Option<DofType> {
        match t.trim() {
            "Vec1" | "Vec1d" | "Vec1f" => Some(DofType::Vec1),
            "Vec2" | "Vec2d" | "Vec2f" => Some(DofType::Vec2),
            "Vec3" | "Vec3d" | "Vec3f" | "" => Some(DofType::Vec3),
            "Rigid" | "Rigid3" | "Rigid3d" | "Rigid3f" => Some(DofType::Rigid3),
            "Rigid2" | "Rigid2d" | "Rigid2f" => Some(DofType::Rigid2),
            _ => None,
        }
    }
}

/// Read point `i` of a flat Vec3 buffer.
#[inline(always)]
pub fn get3(buf: &[f64], i: usize) -> Vec3 {
    Vec3::new(buf[3 * i], buf[3 * i + 1], buf[3 * i + 2])
}

/// Add `v` to point `i` of a flat Vec3 buffer.
#[inline(always)]
pub fn add3(buf: &mut [f64], i: usize, v: &Vec3) {
    buf[3 * i] += v.x;
    buf[3 * i + 1] += v.y;
    buf[3 * i + 2] += v.z;
}

/// Overwrite point `i` of a flat Vec3 buffer.
#[inline(always)]
pub fn set3(buf: &mut [f64], i: usize, v: &Vec3) {
    buf[3 * i] = v.x;
    buf[3 * i + 1] = v.y;
    buf[3 * i + 2] = v.z;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_aliases() {
        assert_eq!(DofType::from_template("Vec3"), Some(DofType::Vec3));
        assert_eq!(DofType::from_template("Rigid"), Some(DofType::Rigid3));
        assert_eq!(DofType::from_template("Vec4d"), None);
        assert_eq!(DofType::Rigid3.coord_size(), 7);
        assert_eq!(DofType::Rigid3.deriv_size(), 6);
    }

    #[test]
    fn dot_points_follows_sofas_order() {
        // 1e16 + 1 − 1e16: the grouping decides what survives
        let a = [1e16, 1.0, -1e16, 1.0, 1.0, 1.0];
        let b = [1.0; 6];
        // per point of 3: (1e16 + 1) − 1e16 = 0 (the 1 is lost), then + 3
        assert_eq!(dot_points(&a, &b, 3), 3.0);
        // as one rigid derivative: ((1e16 + 1) − 1e16) + 3 = 3
        assert_eq!(dot_points(&a, &b, 6), 3.0);
        // scalar points: the same chain here
        assert_eq!(dot_points(&a, &b, 1), 3.0);
        let a = [1.0, 1e16, -1e16, 1.0];
        // per point of 2: (1 + 1e16) + (−1e16 + 1) = 1e16 − 1e16 = 0
        assert_eq!(dot_points(&a, &[1.0; 4], 2), 0.0);
        // scalar chain: ((1 + 1e16) − 1e16) + 1 = 1
        assert_eq!(dot_points(&a, &[1.0; 4], 1), 1.0);
    }

    #[test]
    fn flat_access() {
        let mut b = vec![0.0; 6];
        set3(&mut b, 1, &Vec3::new(1.0, 2.0, 3.0));
        add3(&mut b, 1, &Vec3::new(1.0, 1.0, 1.0));
        assert_eq!(get3(&b, 1), Vec3::new(2.0, 3.0, 4.0));
        assert_eq!(get3(&b, 0), Vec3::zeros());
    }
}

/// Dot product of two flat buffers of points of `point` scalars, summed in SOFA's order
/// (MechanicalObject::vDot): one running sum from 0, to which each point's own product is added
/// in point order; a point's product is its components' products summed left to right, a
/// rigid derivative's (6) as its linear part plus its angular part (RigidDeriv's operator*).
/// The running sum is one chain of dependent additions, so this is slower than [`dot`] on long
/// vectors; the solvers use it where SOFA's results depend on it (CG and PCG's scalars, which
/// decide every iterate of an unconverged solve).
pub fn dot_points(a: &[f64], b: &[f64], point: usize) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut r = 0.0;
    match point {
        3 => {
            for (x, y) in a.chunks_exact(3).zip(b.chunks_exact(3)) {
                r += (x[0] * y[0] + x[1] * y[1]) + x[2] * y[2];
            }
        }
        6 => {
            for (x, y) in a.chunks_exact(6).zip(b.chunks_exact(6)) {
                r += ((x[0] * y[0] + x[1] * y[1]) + x[2] * y[2])
                    + ((x[3] * y[3] + x[4] * y[4]) + x[5] * y[5]);
            }
        }
        0 | 1 => {
            for (x, y) in a.iter().zip(b) {
                r += x * y;
            }
        }
        k => {
            for (x, y) in a.chunks_exact(k).zip(b.chunks_exact(k)) {
                let mut p = x[0] * y[0];
                for i in 1..k {
                    p += x[i] * y[i];
                }
                r += p;
            }
        }
    }
    r
}

/// Dot product of two flat buffers, summed in eight interleaved partial sums (lane `i % 8`)
/// combined in a fixed tree order. The partial sums break the chain of dependent additions of a
/// plain running sum (one addition latency per element), so the loop vectorises; the order of
/// the additions depends only on the length, so the result is the same run to run.
///
/// Runs with AVX2 where the CPU has it (the baseline build left this loop scalar): the same
/// multiplications and additions lane by lane, so the same bits.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { dot_avx2(a, b) };
    }
    dot_impl(a, b)
}

/// [`dot_impl`] with lanes 0–3 and 4–7 in two AVX registers (written with intrinsics: the
/// compiler left the eight partial sums mostly scalar).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[f64], b: &[f64]) -> f64 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    let mut acc = [0.0f64; 8];
    // SAFETY: every load reads 4 doubles inside a chunk of 8; the store writes 8 doubles into
    // `acc`.
    unsafe {
        let (mut lo, mut hi) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        for (x, y) in ca.zip(cb) {
            let (px, py) = (x.as_ptr(), y.as_ptr());
            lo = _mm256_add_pd(lo, _mm256_mul_pd(_mm256_loadu_pd(px), _mm256_loadu_pd(py)));
            hi = _mm256_add_pd(
                hi,
                _mm256_mul_pd(_mm256_loadu_pd(px.add(4)), _mm256_loadu_pd(py.add(4))),
            );
        }
        _mm256_storeu_pd(acc.as_mut_ptr(), lo);
        _mm256_storeu_pd(acc.as_mut_ptr().add(4), hi);
    }
    for (l, (x, y)) in ra.iter().zip(rb).enumerate() {
        acc[l] += x * y;
    }
    ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

#[inline(always)]
fn dot_impl(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    for (l, (x, y)) in ra.iter().zip(rb).enumerate() {
        acc[l] += x * y;
    }
    ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

#[cfg(test)]
mod dot_tests {
    use super::dot;

    #[test]
    fn dispatched_dot_gives_the_baseline_bits() {
        for n in [0usize, 5, 8, 13, 960, 1001] {
            let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos() + 0.5).collect();
            assert_eq!(dot(&a, &b).to_bits(), super::dot_impl(&a, &b).to_bits());
        }
    }

    #[test]
    fn dot_matches_a_plain_sum_and_handles_remainders() {
        for n in [0usize, 1, 7, 8, 9, 31, 1000] {
            let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos() + 0.5).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let d = dot(&a, &b);
            assert!(
                (d - plain).abs() <= 1e-12 * (1.0 + plain.abs()),
                "n = {n}: {d} vs {plain}"
            );
        }
        // exact on integers, whatever the order
        let a: Vec<f64> = (0..37).map(|i| i as f64).collect();
        assert_eq!(dot(&a, &a), (0..37).map(|i| (i * i) as f64).sum::<f64>());
    }
}
