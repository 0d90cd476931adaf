//! Tests of the element FEM: the element stiffnesses of the shapes, the corotational
//! rotations, and the in-place material edits.

use super::*;
use canape_core::component::ForceField;
use canape_types::get3;

/// A box [0, 2] × [0, 1] × [0, 0.5] as SOFA's hexahedron corners, and its two prisms by
/// Hexa2PrismTopologicalMapping's split.
fn box_prisms() -> (Vec<f64>, Vec<[u32; 6]>) {
    let mut rest = Vec::new();
    for s in HEX_SIGNS {
        rest.extend_from_slice(&[s[0] + 1.0, (s[1] + 1.0) * 0.5, (s[2] + 1.0) * 0.25]);
    }
    (rest, vec![[0, 5, 1, 3, 6, 2], [0, 4, 5, 3, 7, 6]])
}

/// Prisms: K has the six rigid modes in its null space, and a uniform strain ε (u = ε·X,
/// represented exactly) stores ½ uᵀ K u = V · ½ εᵀ C ε over the box the two prisms fill.
#[test]
fn prism_stiffness_has_rigid_modes_and_the_uniform_strain_energy() {
    let (rest, prisms) = box_prisms();
    let (e, nu) = (1000.0, 0.3);
    let mu = e / (2.0 * (1.0 + nu));
    let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let eps = Mat3::new(
        0.01, 0.003, -0.002, 0.003, -0.004, 0.001, -0.002, 0.001, 0.006,
    );
    let mut energy = 0.0;
    for pr in &prisms {
        let x: Vec<Vec3> = pr.iter().map(|&i| get3(&rest, i as usize)).collect();
        let k = element_stiffness(Shape::Prism, &x, e, nu);
        let product = |u: &[f64]| -> Vec<f64> {
            (0..18)
                .map(|r| (0..18).map(|c| k[r * 18 + c] * u[c]).sum())
                .collect()
        };
        let rigid = [
            Mat3::zeros(),
            Mat3::new(0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
            Mat3::new(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0),
            Mat3::new(0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0),
        ];
        for (m, w) in rigid.iter().enumerate() {
            for t in 0..3 {
                let u: Vec<f64> = x
                    .iter()
                    .flat_map(|p| {
                        let mut d = w * p;
                        if m == 0 {
                            d[t] = 1.0;
                        }
                        [d.x, d.y, d.z]
                    })
                    .collect();
                let f = product(&u);
                let worst = f.iter().map(|v| v.abs()).fold(0.0, f64::max);
                assert!(worst < 1e-9, "rigid mode {m}/{t}: |K u| {worst:e}");
            }
        }
        let u: Vec<f64> = x
            .iter()
            .flat_map(|p| {
                let d = eps * p;
                [d.x, d.y, d.z]
            })
            .collect();
        energy += 0.5 * u.iter().zip(product(&u)).map(|(a, b)| a * b).sum::<f64>();
    }
    let tr = eps.trace();
    let density = 0.5 * lambda * tr * tr + mu * eps.component_mul(&eps).sum();
    let volume = 2.0 * 1.0 * 0.5;
    assert!(
        (energy - volume * density).abs() < 1e-9 * energy.abs(),
        "{energy} vs {}",
        volume * density
    );
    // FEMMass on the prisms: the box's mass
    let mesh = Mesh {
        prisms: prisms.clone(),
        ..Default::default()
    };
    let mut m = FemMass::new("Vec3,Prism").unwrap();
    m.setup(&rest, &mesh, &|_| 3.0, 8);
    assert!((m.total() - 3.0 * volume).abs() < 1e-9, "{}", m.total());
}

/// The corotational prism with each of its rotation methods: a rigidly turned and moved
/// element feels no force; a stretched one does, as in its rest frame.
#[test]
fn corotational_prisms_ignore_rigid_motions() {
    let (rest, prisms) = box_prisms();
    let mesh = Mesh {
        prisms,
        ..Default::default()
    };
    let r = nalgebra::Rotation3::from_euler_angles(0.4, -0.3, 1.1).into_inner();
    let moved: Vec<f64> = rest
        .chunks(3)
        .flat_map(|p| {
            let q = r * Vec3::new(p[0], p[1], p[2]) + Vec3::new(0.3, -1.0, 2.0);
            [q.x, q.y, q.z]
        })
        .collect();
    for method in ["", "stable_polar", "polar", "identity"] {
        let mut ff = ElementFemForceField::new(true, "Vec3,Prism").unwrap();
        ff.rotation = Rotation::parse(method, Shape::Prism).unwrap();
        ff.setup(&rest, &mesh);
        let mut f = vec![0.0; rest.len()];
        ff.add_force(&moved, &vec![0.0; rest.len()], &mut f);
        let worst = f.iter().map(|v| v.abs()).fold(0.0, f64::max);
        if method == "identity" {
            assert!(
                worst > 1.0,
                "identity: a turned element must push back ({worst})"
            );
        } else {
            assert!(worst < 1e-9, "{method:?}: |f| {worst:e}");
        }
    }
    assert_eq!(Rotation::parse("hexahedron", Shape::Prism), None);
    assert_eq!(
        Rotation::parse("triangle", Shape::Tetrahedron),
        Some(Rotation::Frame)
    );
}

#[test]
fn tetra_stiffness_equals_the_linear_tetra_of_tetrahedron_fem() {
    // K_e of LinearSmallStrain on a tet equals J·M·Jᵀ of TetrahedronFEMForceField "small"
    let x = [
        Vec3::new(0.1, 0.0, 0.0),
        Vec3::new(1.0, 0.1, 0.0),
        Vec3::new(0.0, 1.2, 0.1),
        Vec3::new(0.2, 0.1, 0.9),
    ];
    let k = element_stiffness(Shape::Tetrahedron, &x, 1000.0, 0.3);
    let mut t = crate::tetra::TetrahedronFemForceField::new(crate::tetra::Flavor::TetrahedronFem);
    use canape_core::component::Component;
    t.data_mut().set_str("method", "small").unwrap();
    t.data_mut().set_str("youngModulus", "1000").unwrap();
    t.data_mut().set_str("poissonRatio", "0.3").unwrap();
    t.set_method_from_data().unwrap();
    let rest: Vec<f64> = x.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
    t.setup(&rest, &[[0, 1, 2, 3]]);
    let mut tr = canape_core::matrix::Triplets::new(12);
    t.add_k_to_matrix(&mut tr, 1.0, 0);
    let kt = tr.to_csr();
    for r in 0..12 {
        for c in 0..12 {
            assert!(
                (k[r * 12 + c] + kt.get(r, c)).abs() < 1e-9 * (1.0 + k[r * 12 + c].abs()),
                "{r},{c}"
            );
        }
    }
}
/// Two slightly irregular cells side by side, as hexahedra.
fn two_cells() -> (Vec<f64>, Vec<[u32; 8]>) {
    let mut seed = 3;
    let mut rest = Vec::new();
    for k in 0..2 {
        for j in 0..2 {
            for i in 0..3 {
                for v in [i as f64, j as f64 * 0.8, k as f64 * 1.2] {
                    rest.push(v + 0.05 * crate::fd_check::rnd(&mut seed));
                }
            }
        }
    }
    let idx = |i: u32, j: u32, k: u32| i + 3 * (j + 2 * k);
    let hexa = (0..2)
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
        .collect();
    (rest, hexa)
}

/// Editing youngModulus, poissonRatio or rayleighStiffness of the element FEM force fields
/// while they run updates them in place to exactly what an init with the new values
/// gives, for every element shape, linear and corotational; an invalid material is
/// refused, and other Data ask for a re-initialisation.
#[test]
fn element_fem_material_edits_update_in_place() {
    use canape_core::component::Reaction;
    let (rest, hexa) = two_cells();
    let tets: Vec<[u32; 4]> = hexa
        .iter()
        .flat_map(|h| canape_core::mesh::hexa_to_tetras(*h, false))
        .collect();
    let prisms: Vec<[u32; 6]> = hexa
        .iter()
        .flat_map(|h| {
            [
                [h[0], h[5], h[1], h[3], h[6], h[2]],
                [h[0], h[4], h[5], h[3], h[7], h[6]],
            ]
        })
        .collect();
    let meshes = [
        (
            "Vec3,Tetrahedron",
            Mesh {
                tetrahedra: tets,
                ..Default::default()
            },
        ),
        (
            "Vec3,Hexahedron",
            Mesh {
                hexahedra: hexa,
                ..Default::default()
            },
        ),
        (
            "Vec3,Prism",
            Mesh {
                prisms,
                ..Default::default()
            },
        ),
    ];
    let mut seed = 9;
    let x: Vec<f64> = crate::fd_check::rigidly_moved(&rest)
        .iter()
        .map(|v| v + 0.05 * crate::fd_check::rnd(&mut seed))
        .collect();
    let before = [
        ("youngModulus", "1000"),
        ("poissonRatio", "0.3"),
        ("rayleighStiffness", "0.1"),
    ];
    for corotational in [false, true] {
        for (tpl, mesh) in &meshes {
            let make = || ElementFemForceField::new(corotational, tpl).unwrap();
            let edit =
                |after: &[(&str, &str)]| edit_check::edit(make, &rest, mesh, &before, after, &x);
            assert_eq!(edit(&[("youngModulus", "1500")]), Reaction::Updated);
            assert_eq!(edit(&[("poissonRatio", "0.4")]), Reaction::Updated);
            assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
            // one modulus per element, and the three Data at once
            let per_element = [
                (
                    "youngModulus",
                    "1200 900 1100 800 1000 1300 700 1400 1250 950 1050 850",
                ),
                ("poissonRatio", "0.2 0.35"),
                ("rayleighStiffness", "0"),
            ];
            assert_eq!(edit(&per_element), Reaction::Updated);
            assert!(matches!(
                edit(&[("poissonRatio", "0.7")]),
                Reaction::Refused(_)
            ));
            assert!(matches!(
                edit(&[("youngModulus", "-5")]),
                Reaction::Refused(_)
            ));
            assert_eq!(
                edit(&[("youngModulus", "2000"), ("elementSpace", "0.2")]),
                Reaction::Reinit
            );
            if corotational {
                assert_eq!(edit(&[("rotationMethod", "polar")]), Reaction::Reinit);
            }
        }
    }
}
