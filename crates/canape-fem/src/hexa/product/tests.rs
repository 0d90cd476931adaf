//! Tests of the element loops: the AVX2/FMA builds give the baseline's bits and the dense
//! formulas' values.

use super::*;
use crate::hexa::HexahedronFemForceField;
use canape_core::component::ForceField;
use nalgebra::SMatrix;

/// The AVX2/FMA build of the product gives the same bits as the baseline loop, and both
/// equal −k Rᵀ K R dx computed densely in node-major order (up to round-off).
/// Deterministic pseudo-random numbers in [−0.5, 0.5).
fn rng(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    }
}

/// The element forces Rᵀ K (X0r − R x): the dispatched build gives the baseline bits and
/// the dense node-major formula's values, and the rotations are updated.
#[test]
fn dispatched_forces_are_bit_identical_and_right() {
    let mut rnd = rng(777u64);
    // two unit cubes side by side, stretched and sheared a little
    let mut ff = HexahedronFemForceField::new();
    let mut rest = Vec::new();
    for k in 0..2 {
        for j in 0..2 {
            for i in 0..3 {
                rest.extend([i as f64, j as f64, k as f64]);
            }
        }
    }
    let at = |i: u32, j: u32, k: u32| i + 3 * j + 6 * k;
    let hexa: Vec<[u32; 8]> = (0..2)
        .map(|i| {
            [
                at(i, 0, 0),
                at(i + 1, 0, 0),
                at(i + 1, 1, 0),
                at(i, 1, 0),
                at(i, 0, 1),
                at(i + 1, 0, 1),
                at(i + 1, 1, 1),
                at(i, 1, 1),
            ]
        })
        .collect();
    ff.setup(&rest, &hexa);
    let x: Vec<f64> = rest.iter().map(|v| v * 1.1 + 0.1 * rnd()).collect();
    let mut elems = ff.elems.clone();
    let (mut a, mut b) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    update_rotations(ff.method, &mut elems, &x);
    elements_range::<true>(&elems, &ff.rests, &ff.kps, &x, &mut a, 0, 1.0);
    ff.add_force(&x, &[], &mut b);
    assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
    let mut c = vec![0.0; x.len()];
    for (el, rest) in ff.elems.iter().zip(&ff.rests) {
        let p: [Vec3; 8] = std::array::from_fn(|w| get3(&x, el.idx[w] as usize));
        let r = frame(ff.method, &p);
        assert_eq!(el.rot, r);
        let k =
            K24::from_fn(|i, j| ff.kps[el.k as usize][8 * (j % 3) + j / 3][8 * (i % 3) + i / 3]);
        let d = SMatrix::<f64, 24, 1>::from_fn(|i, _| rest[i % 3][i / 3] - (r * p[i / 3])[i % 3]);
        let fe = k * d;
        for w in 0..8 {
            let fw = r.transpose() * Vec3::new(fe[3 * w], fe[3 * w + 1], fe[3 * w + 2]);
            for q in 0..3 {
                c[3 * el.idx[w] as usize + q] += fw[q];
            }
        }
    }
    let scale = c.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 1.0);
    assert!(a.iter().zip(&c).all(|(p, q)| (p - q).abs() < 1e-12 * scale));
}

#[test]
fn dispatched_product_is_bit_identical_and_right() {
    let mut rnd = rng(12345u64);
    let mut k = K24::zeros();
    for v in k.iter_mut() {
        *v = rnd();
    }
    let elems: Vec<HexElem> = (0..5)
        .map(|e| HexElem {
            idx: std::array::from_fn(|w| ((e * 3 + w) % 20) as u32),
            k: 0,
            rot: nalgebra::Rotation3::from_euler_angles(rnd(), rnd(), rnd()).into_inner(),
        })
        .collect();
    let dx: Vec<f64> = (0..60).map(|_| rnd()).collect();
    let kps = [component_major(&k)];
    let mut a = vec![0.0; 60];
    let mut b = vec![0.0; 60];
    elements_range::<false>(&elems, &[], &kps, &dx, &mut a, 0, -0.7);
    dforce_range_dispatch(&elems, &kps, &dx, &mut b, 0, -0.7);
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    // dense reference
    let mut c = vec![0.0; 60];
    for el in &elems {
        let mut big_r = K24::zeros();
        for w in 0..8 {
            big_r
                .fixed_view_mut::<3, 3>(3 * w, 3 * w)
                .copy_from(&el.rot);
        }
        let ke = big_r.transpose() * k * big_r;
        let xe = SMatrix::<f64, 24, 1>::from_fn(|i, _| dx[3 * el.idx[i / 3] as usize + i % 3]);
        let fe = ke * xe;
        for i in 0..24 {
            c[3 * el.idx[i / 3] as usize + i % 3] += 0.7 * fe[i];
        }
    }
    let scale = c.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.1);
    assert!(a.iter().zip(&c).all(|(x, y)| (x - y).abs() < 1e-12 * scale));
    // the rotated stiffness of assembly: dispatched = baseline bits, and = −0.7 Rᵀ K R
    let rot = elems[1].rot;
    let (mut p, mut q) = ([[0.0; 24]; 24], [[0.0; 24]; 24]);
    rotated_stiffness(&kps[0], &rot, -0.7, &mut p);
    rotated_stiffness_impl(&kps[0], &rot, -0.7, &mut q);
    assert!(p
        .as_flattened()
        .iter()
        .zip(q.as_flattened())
        .all(|(x, y)| x.to_bits() == y.to_bits()));
    let mut big_r = K24::zeros();
    for w in 0..8 {
        big_r.fixed_view_mut::<3, 3>(3 * w, 3 * w).copy_from(&rot);
    }
    let ke = big_r.transpose() * k * big_r * -0.7;
    for (col, pc) in p.iter().enumerate() {
        for (row, v) in pc.iter().enumerate() {
            let dense = ke[(3 * (row % 8) + row / 8, 3 * (col % 8) + col / 8)];
            assert!((v - dense).abs() < 1e-13, "({row}, {col}): {v} vs {dense}");
        }
    }
}
