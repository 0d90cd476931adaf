//! Finite-difference checks of every force field: add_dforce against differences of add_force,
//! and the assembled stiffness against add_dforce.
//!
//! Corotational forces have a tangent that SOFA (and Canapé) approximate by −Rᵀ K R, ignoring
//! the derivative of R. That approximation is exact at any rigidly moved rest configuration
//! (zero stress), so the check runs there for large/polar/svd, and anywhere for small.

use crate::tetra::{Flavor, Method, TetrahedronFemForceField};
use crate::HexahedronFemForceField;
use canape_core::component::{Component, ForceField};
use canape_core::matrix::Triplets;
use nalgebra::Rotation3;

fn rnd(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
}

/// A 2×1×1 block of 12 points split into tetrahedra and two hexahedra, slightly irregular.
fn points(seed: &mut u64) -> Vec<f64> {
    let mut p = Vec::new();
    for k in 0..2 {
        for j in 0..2 {
            for i in 0..3 {
                p.extend_from_slice(&[
                    i as f64 + 0.05 * rnd(seed),
                    j as f64 + 0.05 * rnd(seed),
                    k as f64 * 1.2 + 0.05 * rnd(seed),
                ]);
            }
        }
    }
    p
}

fn hexas() -> Vec<[u32; 8]> {
    let idx = |i: u32, j: u32, k: u32| i + 3 * (j + 2 * k);
    (0..2)
        .map(|x| {
            [
                idx(x, 0, 0),
                idx(x + 1, 0, 0),
                idx(x + 1, 1, 0),
                idx(x, 1, 0),
                idx(x, 0, 1),
                idx(x + 1, 0, 1),
                idx(x + 1, 1, 1),
                idx(x, 1, 1),
            ]
        })
        .collect()
}

fn tets() -> Vec<[u32; 4]> {
    hexas()
        .iter()
        .flat_map(|h| canape_core::mesh::hexa_to_tetras(*h, false))
        .collect()
}

fn rigidly_moved(rest: &[f64]) -> Vec<f64> {
    let r = Rotation3::from_euler_angles(0.4, -0.3, 0.8);
    rest.chunks_exact(3)
        .flat_map(|p| {
            let q = r * nalgebra::Vector3::new(p[0], p[1], p[2])
                + nalgebra::Vector3::new(0.3, -1.0, 2.0);
            [q.x, q.y, q.z]
        })
        .collect()
}

fn force(ff: &mut dyn ForceField, x: &[f64]) -> Vec<f64> {
    let mut f = vec![0.0; x.len()];
    ff.add_force(x, &vec![0.0; x.len()], &mut f);
    f
}

/// Check df = K dx against (f(x + h dx) − f(x − h dx)) / 2h and against the assembled K.
fn check(ff: &mut dyn ForceField, x: &[f64], tol: f64, seed: &mut u64) {
    let n = x.len();
    let dx: Vec<f64> = (0..n).map(|_| rnd(seed)).collect();
    let h = 1e-6;
    let xp: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + h * b).collect();
    let xm: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a - h * b).collect();
    let fp = force(ff, &xp);
    let fm = force(ff, &xm);
    let _ = force(ff, x); // rotations of x for the tangent
    let mut df = vec![0.0; n];
    ff.add_dforce(&dx, &mut df, 1.0);
    let fd: Vec<f64> = fp
        .iter()
        .zip(&fm)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect();
    let scale = fd.iter().map(|v| v.abs()).fold(0.0, f64::max).max(1e-12);
    let err = fd
        .iter()
        .zip(&df)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / scale;
    assert!(
        err < tol,
        "{}: addDForce differs from finite differences by {err:e} (relative)",
        ff.class_name()
    );
    // assembled: y = K dx
    let mut t = Triplets::new(n);
    ff.add_k_to_matrix(&mut t, 1.0, 0);
    let k = t.to_csr();
    let mut y = vec![0.0; n];
    k.mul(&dx, &mut y);
    let err2 = y
        .iter()
        .zip(&df)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / scale;
    assert!(
        err2 < 1e-10,
        "{}: assembled K differs from addDForce by {err2:e}",
        ff.class_name()
    );
    // a factor scales linearly, in the product and in the assembled matrix
    let mut df2 = vec![0.0; n];
    ff.add_dforce(&dx, &mut df2, -0.5);
    for (a, b) in df2.iter().zip(&df) {
        assert!((a + 0.5 * b).abs() <= 1e-9 * scale);
    }
    let mut t = Triplets::new(n);
    ff.add_k_to_matrix(&mut t, -0.5, 0);
    let mut y2 = vec![0.0; n];
    t.to_csr().mul(&dx, &mut y2);
    for (a, b) in y2.iter().zip(&df) {
        assert!((a + 0.5 * b).abs() <= 1e-9 * scale);
    }
}

fn tetra_ff(flavor: Flavor, method: &str, rest: &[f64]) -> TetrahedronFemForceField {
    let mut ff = TetrahedronFemForceField::new(flavor);
    ff.data_mut().set_str("method", method).unwrap();
    ff.data_mut().set_str("youngModulus", "1000").unwrap();
    ff.data_mut().set_str("poissonRatio", "0.3").unwrap();
    ff.set_method_from_data().unwrap();
    ff.setup(rest, &tets());
    ff
}

#[test]
fn tetra_small_matches_finite_differences_when_deformed() {
    let mut seed = 1;
    let rest = points(&mut seed);
    for flavor in [Flavor::TetrahedronFem, Flavor::TetrahedralCorotational] {
        let mut ff = tetra_ff(flavor, "small", &rest);
        assert_eq!(ff.method(), Method::Small);
        let x: Vec<f64> = rest.iter().map(|v| v + 0.05 * rnd(&mut seed)).collect();
        check(&mut ff, &x, 1e-6, &mut seed);
        // at rest, no force
        assert!(force(&mut ff, &rest).iter().all(|v| v.abs() < 1e-9));
    }
}

#[test]
fn tetra_corotational_methods_match_finite_differences_at_rotated_rest() {
    let mut seed = 2;
    let rest = points(&mut seed);
    let moved = rigidly_moved(&rest);
    for (flavor, method) in [
        (Flavor::TetrahedronFem, "large"),
        (Flavor::TetrahedronFem, "polar"),
        (Flavor::TetrahedronFem, "svd"),
        (Flavor::TetrahedralCorotational, "large"),
        (Flavor::TetrahedralCorotational, "polar"),
    ] {
        let mut ff = tetra_ff(flavor, method, &rest);
        let f = force(&mut ff, &moved);
        assert!(
            f.iter().all(|v| v.abs() < 1e-8),
            "{method}: rigid motion must produce no force"
        );
        check(&mut ff, &moved, 1e-5, &mut seed);
    }
}

#[test]
fn tetra_corotational_forces_are_rotation_invariant_when_deformed() {
    let mut seed = 3;
    let rest = points(&mut seed);
    let x: Vec<f64> = rest.iter().map(|v| v + 0.03 * rnd(&mut seed)).collect();
    let xr = rigidly_moved(&x);
    let r = Rotation3::from_euler_angles(0.4, -0.3, 0.8);
    for method in ["large", "polar", "svd"] {
        let mut ff = tetra_ff(Flavor::TetrahedronFem, method, &rest);
        let f = force(&mut ff, &x);
        let fr = force(&mut ff, &xr);
        for (a, b) in f.chunks_exact(3).zip(fr.chunks_exact(3)) {
            let ra = r * nalgebra::Vector3::new(a[0], a[1], a[2]);
            assert!(
                (ra - nalgebra::Vector3::new(b[0], b[1], b[2])).norm() < 1e-8 * (1.0 + ra.norm()),
                "{method}"
            );
        }
        // forces sum to zero (no net force from internal stresses)
        let s = f.chunks_exact(3).fold([0.0; 3], |acc, p| {
            [acc[0] + p[0], acc[1] + p[1], acc[2] + p[2]]
        });
        assert!(s.iter().all(|v| v.abs() < 1e-8));
    }
}

#[test]
fn hexa_matches_finite_differences() {
    let mut seed = 4;
    let rest = points(&mut seed);
    for method in ["small", "large", "polar"] {
        let mut ff = HexahedronFemForceField::new();
        ff.data_mut().set_str("method", method).unwrap();
        ff.data_mut().set_str("youngModulus", "4000").unwrap();
        ff.data_mut().set_str("poissonRatio", "0.3").unwrap();
        ff.set_method_from_data().unwrap();
        ff.setup(&rest, &hexas());
        let x = if method == "small" {
            rest.iter().map(|v| v + 0.05 * rnd(&mut seed)).collect()
        } else {
            rigidly_moved(&rest)
        };
        if method != "small" {
            assert!(
                force(&mut ff, &x).iter().all(|v| v.abs() < 1e-8),
                "{method}: rigid motion must produce no force"
            );
        }
        check(&mut ff, &x, 1e-5, &mut seed);
    }
}

#[test]
fn hexa_stiffness_has_rigid_body_null_space_and_is_symmetric() {
    let mat = crate::common::Material::new(1000.0, 0.3, 1.0);
    let n: [canape_types::Vec3; 8] = std::array::from_fn(|w| {
        let c = [
            (0., 0., 0.),
            (1., 0., 0.),
            (1., 1., 0.),
            (0., 1., 0.),
            (0., 0., 1.),
            (1., 0., 1.),
            (1., 1., 1.),
            (0., 1., 1.),
        ][w];
        canape_types::Vec3::new(c.0 * 2.0, c.1, c.2 * 0.5)
    });
    let k = crate::hexa::hexa_stiffness(&mat, &n);
    assert!((k - k.transpose()).norm() < 1e-9 * k.norm());
    let mut t = nalgebra::SMatrix::<f64, 24, 1>::zeros();
    for w in 0..8 {
        t[3 * w] = 1.0;
    }
    assert!((k * t).norm() < 1e-9 * k.norm());
}

#[test]
fn springs_match_finite_differences() {
    use crate::SpringForceField;
    let mut seed = 5;
    let rest = points(&mut seed);
    let mut ff = SpringForceField::new();
    ff.data_mut()
        .set_str(
            "spring",
            "0 1 100 0 1  1 4 50 0 0.8  2 7 80 0 1.5  5 11 60 0 1.2",
        )
        .unwrap();
    ff.setup_from_data(12).unwrap();
    let x: Vec<f64> = rest.iter().map(|v| v + 0.1 * rnd(&mut seed)).collect();
    check(&mut ff, &x, 1e-6, &mut seed);
}

/// Patch test: with boundary nodes displaced by an affine field and interior nodes free, the
/// static equilibrium K u = 0 reproduces the affine field in the interior, for every element type.
fn patch_test(k: &canape_core::matrix::Csr, rest: &[f64], boundary: &[bool]) -> f64 {
    let n = rest.len();
    let a = nalgebra::Matrix3::new(0.01, 0.02, -0.005, 0.003, -0.01, 0.004, 0.002, 0.006, 0.008);
    let t = nalgebra::Vector3::new(0.1, -0.2, 0.05);
    let affine =
        |i: usize| a * nalgebra::Vector3::new(rest[3 * i], rest[3 * i + 1], rest[3 * i + 2]) + t;
    let free: Vec<usize> = (0..n).filter(|d| !boundary[d / 3]).collect();
    let mut ub = vec![0.0; n];
    for p in 0..n / 3 {
        if boundary[p] {
            let v = affine(p);
            ub[3 * p..3 * p + 3].copy_from_slice(v.as_slice());
        }
    }
    let nf = free.len();
    let mut kff = nalgebra::DMatrix::<f64>::zeros(nf, nf);
    let mut rhs = nalgebra::DVector::<f64>::zeros(nf);
    for (fi, &r) in free.iter().enumerate() {
        for c in 0..n {
            let v = k.get(r, c);
            if let Some(fj) = free.iter().position(|&x| x == c) {
                kff[(fi, fj)] = v;
            } else {
                rhs[fi] -= v * ub[c];
            }
        }
    }
    let u = kff.lu().solve(&rhs).expect("interior system is regular");
    let mut err: f64 = 0.0;
    for (fi, &r) in free.iter().enumerate() {
        let exact = affine(r / 3)[r % 3];
        err = err.max((u[fi] - exact).abs());
    }
    err
}

/// A 3×3×3-point block (one interior point) with slightly distorted interior.
fn block27(seed: &mut u64) -> (Vec<f64>, Vec<bool>, Vec<[u32; 8]>) {
    let mut p = Vec::new();
    let mut boundary = Vec::new();
    for k in 0..3 {
        for j in 0..3 {
            for i in 0..3 {
                let inner = i == 1 && j == 1 && k == 1;
                let jitter = if inner { 0.1 } else { 0.0 };
                p.extend_from_slice(&[
                    i as f64 + jitter * rnd(seed),
                    j as f64 + jitter * rnd(seed),
                    k as f64 + jitter * rnd(seed),
                ]);
                boundary.push(!inner);
            }
        }
    }
    let idx = |i: u32, j: u32, k: u32| i + 3 * (j + 3 * k);
    let mut hexa = Vec::new();
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..2 {
                hexa.push([
                    idx(x, y, z),
                    idx(x + 1, y, z),
                    idx(x + 1, y + 1, z),
                    idx(x, y + 1, z),
                    idx(x, y, z + 1),
                    idx(x + 1, y, z + 1),
                    idx(x + 1, y + 1, z + 1),
                    idx(x, y + 1, z + 1),
                ]);
            }
        }
    }
    (p, boundary, hexa)
}

#[test]
fn patch_test_affine_fields_are_exact_for_tetra_and_hexa() {
    use crate::element::ElementFemForceField;
    let mut seed = 11;
    let (rest, boundary, hexa) = block27(&mut seed);
    let tets: Vec<[u32; 4]> = hexa
        .iter()
        .flat_map(|h| canape_core::mesh::hexa_to_tetras(*h, false))
        .collect();
    let mesh_t = canape_core::mesh::Mesh {
        tetrahedra: tets.clone(),
        ..Default::default()
    };
    let mesh_h = canape_core::mesh::Mesh {
        hexahedra: hexa.clone(),
        ..Default::default()
    };
    let n = rest.len();
    let mut cases: Vec<(String, Box<dyn ForceField>)> = Vec::new();
    for (tpl, mesh) in [("Vec3,Tetrahedron", &mesh_t), ("Vec3,Hexahedron", &mesh_h)] {
        let mut f = ElementFemForceField::new(false, tpl).unwrap();
        f.data_mut().set_str("youngModulus", "1000").unwrap();
        f.data_mut().set_str("poissonRatio", "0.3").unwrap();
        f.setup(&rest, mesh);
        cases.push((format!("LinearSmallStrain {tpl}"), Box::new(f)));
    }
    let mut t = tetra_ff(Flavor::TetrahedronFem, "small", &rest);
    t.setup(&rest, &tets);
    cases.push(("TetrahedronFEM small".into(), Box::new(t)));
    let mut h = HexahedronFemForceField::new();
    h.data_mut().set_str("method", "small").unwrap();
    h.set_method_from_data().unwrap();
    h.setup(&rest, &hexa);
    cases.push(("HexahedronFEM small".into(), Box::new(h)));
    for (name, ff) in cases {
        let mut tr = Triplets::new(n);
        ff.add_k_to_matrix(&mut tr, 1.0, 0);
        let err = patch_test(&tr.to_csr(), &rest, &boundary);
        assert!(err < 1e-10, "{name}: patch test error {err:e}");
    }
}

#[test]
fn fast_tetrahedral_corotational_matches_finite_differences_and_linear_fem() {
    use crate::fast_tetra::FastTetrahedralCorotationalForceField;
    let mut seed = 21;
    let rest = points(&mut seed);
    let moved = rigidly_moved(&rest);
    for method in ["none", "qr", "polar", "polar2"] {
        let mut ff = FastTetrahedralCorotationalForceField::new();
        ff.data_mut().set_str("method", method).unwrap();
        ff.data_mut().set_str("youngModulus", "1000").unwrap();
        ff.data_mut().set_str("poissonRatio", "0.3").unwrap();
        ff.set_method_from_data().unwrap();
        ff.setup(&rest, &tets());
        if method == "none" {
            // the edge formulation equals the linear tetrahedron (TetrahedronFEM small)
            let x: Vec<f64> = rest.iter().map(|v| v + 0.02 * rnd(&mut seed)).collect();
            let mut lin = tetra_ff(Flavor::TetrahedronFem, "small", &rest);
            let (a, b) = (force(&mut ff, &x), force(&mut lin, &x));
            let scale = b.iter().map(|v| v.abs()).fold(0.0, f64::max);
            for (p, q) in a.iter().zip(&b) {
                assert!(
                    (p - q).abs() < 1e-9 * scale,
                    "linear edge formulation differs: {p} vs {q}"
                );
            }
            check(&mut ff, &x, 1e-6, &mut seed);
        } else {
            assert!(
                force(&mut ff, &moved).iter().all(|v| v.abs() < 1e-8),
                "{method}: rigid motion must produce no force"
            );
            check(&mut ff, &moved, 1e-5, &mut seed);
        }
    }
}

#[test]
fn element_fem_matches_finite_differences() {
    use crate::element::ElementFemForceField;
    let mut seed = 31;
    let rest = points(&mut seed);
    let moved = rigidly_moved(&rest);
    let mesh_t = canape_core::mesh::Mesh {
        tetrahedra: tets(),
        ..Default::default()
    };
    let mesh_h = canape_core::mesh::Mesh {
        hexahedra: hexas(),
        ..Default::default()
    };
    for (corot, tpl, mesh) in [
        (false, "Vec3,Tetrahedron", &mesh_t),
        (false, "Vec3,Hexahedron", &mesh_h),
        (true, "Vec3,Tetrahedron", &mesh_t),
        (true, "Vec3,Hexahedron", &mesh_h),
    ] {
        let mut ff = ElementFemForceField::new(corot, tpl).unwrap();
        ff.data_mut().set_str("youngModulus", "1000").unwrap();
        ff.data_mut().set_str("poissonRatio", "0.3").unwrap();
        ff.setup(&rest, mesh);
        if corot {
            assert!(
                force(&mut ff, &moved).iter().all(|v| v.abs() < 1e-8),
                "{tpl}: rigid motion must produce no force"
            );
            check(&mut ff, &moved, 1e-5, &mut seed);
        } else {
            let x: Vec<f64> = rest.iter().map(|v| v + 0.05 * rnd(&mut seed)).collect();
            check(&mut ff, &x, 1e-6, &mut seed);
        }
    }
}

/// Von Mises stress of a uniform uniaxial stretch ε along x: σxx = (λ+2μ)ε, σyy = σzz = λε, so
/// σ_vm = 2με; a rigid rotation of the stretched body leaves it unchanged (corotational methods).
#[test]
fn von_mises_of_a_uniform_stretch() {
    let mut seed = 7;
    let rest = points(&mut seed);
    let eps = 1e-3;
    let stretched: Vec<f64> = rest
        .chunks(3)
        .flat_map(|p| [p[0] * (1.0 + eps), p[1], p[2]])
        .collect();
    let (young, nu) = (1000.0, 0.3);
    let expected = young / (1.0 + nu) * eps;
    let r = Rotation3::from_euler_angles(0.4, -0.3, 0.8);
    let rotated: Vec<f64> = stretched
        .chunks(3)
        .flat_map(|p| {
            let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
            [q.x, q.y, q.z]
        })
        .collect();
    for method in ["small", "large", "polar"] {
        let mut ff = tetra_ff(Flavor::TetrahedronFem, method, &rest);
        let cases: &[&[f64]] = if method == "small" {
            &[&stretched]
        } else {
            &[&stretched, &rotated]
        };
        for x in cases {
            force(&mut ff, x); // element rotations of this configuration
            let vm = ff.von_mises_per_element(x);
            assert!(!vm.is_empty());
            for v in &vm {
                assert!(
                    (v - expected).abs() < 1e-3 * expected,
                    "{method}: von Mises {v} != {expected}"
                );
            }
            let nodes = ff.von_mises_per_node(x);
            assert!(nodes.iter().all(|v| (v - expected).abs() < 1e-3 * expected));
        }
        // the display hook is off unless the scene asks for it
        assert!(ff.nodal_scalars(&stretched).is_none());
        ff.data_mut().set_str("computeVonMisesStress", "1").unwrap();
        ff.data_mut()
            .set_str("showVonMisesStressPerNodeColorMap", "1")
            .unwrap();
        assert!(ff.nodal_scalars(&stretched).is_some());
    }
}

/// After an `add_force` interval with enough products, the stiffness products go through the
/// node-pair operator: the same products as element by element (up to round-off), rebuilt
/// after every `add_force` (new rotations), for every method.
#[test]
fn tetra_node_operator_matches_element_products() {
    use crate::tetra::NODE_OPERATOR_MIN_PRODUCTS;
    let mut seed = 11u64;
    let rest = points(&mut seed);
    let deformed = |seed: &mut u64| -> Vec<f64> {
        rigidly_moved(&rest)
            .iter()
            .map(|v| v + 0.2 * rnd(seed))
            .collect()
    };
    for method in ["small", "large", "polar", "svd"] {
        let mut ff = tetra_ff(Flavor::TetrahedronFem, method, &rest);
        let n = rest.len();
        let dx: Vec<f64> = (0..n).map(|_| rnd(&mut seed)).collect();
        let product = |ff: &mut TetrahedronFemForceField, k: f64| {
            let mut df = vec![0.5; n];
            ff.add_dforce(&dx, &mut df, k);
            df
        };
        for _ in 0..3 {
            let x = deformed(&mut seed);
            // element by element: a force field that has made no product yet
            let mut fresh = tetra_ff(Flavor::TetrahedronFem, method, &rest);
            force(&mut fresh, &x);
            let want = product(&mut fresh, -0.7);
            assert!(!fresh.uses_node_operator());
            force(&mut ff, &x);
            for _ in 0..NODE_OPERATOR_MIN_PRODUCTS {
                product(&mut ff, 1.0);
            }
            force(&mut ff, &x);
            let got = product(&mut ff, -0.7);
            assert!(ff.uses_node_operator(), "{method}");
            let scale = want.iter().map(|v| v.abs()).fold(0.0, f64::max);
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-12 * scale, "{method}: {a} vs {b}");
            }
        }
    }
}
