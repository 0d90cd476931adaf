//! Unit tests of the hyperelastic materials and TetrahedronHyperelasticityFEMForceField.

use super::*;

fn materials() -> Vec<Material> {
    vec![
        Material::ArrudaBoyce { mu: 3.0, k0: 20.0 },
        Material::StVenantKirchhoff {
            mu: 3.0,
            lambda: 20.0,
        },
        Material::NeoHookean {
            mu: 3.0,
            lambda: 20.0,
        },
        Material::MooneyRivlin {
            c1: 2.0,
            c2: 1.5,
            k0: 10.0,
        },
        Material::VerondaWestman {
            c1: 2.0,
            c2: 0.7,
            k0: 10.0,
        },
        Material::Costa {
            a: 2.0,
            k0: 10.0,
            b: [1.5, 0.8, 1.2, 0.6, 0.9, 1.1],
        },
        Material::Ogden {
            mu: 3.0,
            alpha: 4.0,
            k0: 10.0,
        },
        Material::StableNeoHookean {
            mu: 3.0,
            lambda: 20.0,
        },
    ]
}

fn deformed() -> Mat3 {
    Mat3::new(1.1, 0.08, -0.05, 0.03, 0.93, 0.06, -0.04, 0.02, 1.05)
}

#[test]
fn stress_is_twice_the_energy_gradient_and_tensor_its_derivative() {
    let f = deformed();
    for m in materials() {
        let s0 = Strain::new(&f).unwrap();
        let s = m.stress(&s0);
        // S = 2 ∂W/∂C along symmetric directions, by central differences of W(C(F))
        // with C perturbed through F: C + εH needs F' with F'ᵀF' = C + εH; use
        // F' = F·(I + εF⁻¹F⁻ᵀH/2) to first order — simpler: perturb F and compare
        // dW = S:FᵀdF (P = F S).
        let h = 1e-6;
        for a in 0..3 {
            for b in 0..3 {
                let mut fp = f;
                fp[(a, b)] += h;
                let mut fm = f;
                fm[(a, b)] -= h;
                let dw = (m.energy(&Strain::new(&fp).unwrap())
                    - m.energy(&Strain::new(&fm).unwrap()))
                    / (2.0 * h);
                let p = (f * s)[(a, b)];
                assert!(
                    (dw - p).abs() < 1e-5 * (1.0 + p.abs()),
                    "{m:?} P({a},{b}): {p} vs {dw}"
                );
            }
        }
        // 𝒜(H) = dS/dC·H: perturb F so that C changes by εH (H = FᵀdF + dFᵀF)
        let df = Mat3::new(0.3, -0.1, 0.2, 0.05, 0.1, -0.2, 0.15, 0.0, -0.1);
        let hmat = f.transpose() * df + df.transpose() * f;
        let sp = m.stress(&Strain::new(&(f + df * h)).unwrap());
        let sm = m.stress(&Strain::new(&(f - df * h)).unwrap());
        let fd = (sp - sm) / (2.0 * h);
        let an = m.tensor(&s0, &hmat);
        assert!(
            (fd - an).norm() < 1e-5 * (1.0 + an.norm()),
            "{m:?}: {fd} vs {an}"
        );
        // at rest S vanishes for the laws with a stress-free reference
        let rest = m.stress(&Strain::new(&Mat3::identity()).unwrap());
        assert!(rest.norm() < 1e-9, "{m:?} at rest: {rest}");
    }
}

#[test]
fn forces_are_the_energy_gradient_and_dforce_its_hessian() {
    let rest = [
        0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.2, 1.1, 0.0, 0.1, 0.2, 0.9, 1.0, 1.0, 1.0,
    ];
    let tets = [[0, 1, 2, 3], [1, 2, 3, 4]];
    let f = deformed();
    let x: Vec<f64> = rest
        .chunks(3)
        .flat_map(|p| {
            let q = f * Vec3::new(p[0], p[1], p[2]);
            [q.x + 0.01 * p[1] * p[1], q.y, q.z]
        })
        .collect();
    for m in materials() {
        let mut ff = TetrahedronHyperelasticityFemForceField::new();
        ff.setup(m.clone(), &rest, &tets);
        let n = x.len();
        let mut fx = vec![0.0; n];
        ff.add_force(&x, &vec![0.0; n], &mut fx);
        let h = 1e-6;
        for i in 0..n {
            let mut xp = x.clone();
            xp[i] += h;
            let mut xm = x.clone();
            xm[i] -= h;
            let g =
                (ff.potential_energy(&xp).unwrap() - ff.potential_energy(&xm).unwrap()) / (2.0 * h);
            assert!(
                (fx[i] + g).abs() < 1e-5 * (1.0 + g.abs()),
                "{m:?} f[{i}] {} vs {}",
                fx[i],
                -g
            );
        }
        // df = K dx against the difference of forces; the assembled matrix the same
        let dx: Vec<f64> = (0..n).map(|i| ((i * 7) % 5) as f64 * 0.2 - 0.4).collect();
        let mut df = vec![0.0; n];
        ff.add_dforce(&dx, &mut df, 1.0);
        let shifted = |s: f64| -> Vec<f64> {
            let xs: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + s * b).collect();
            let mut out = vec![0.0; n];
            let mut tmp = TetrahedronHyperelasticityFemForceField::new();
            tmp.setup(m.clone(), &rest, &tets);
            tmp.add_force(&xs, &vec![0.0; n], &mut out);
            out
        };
        let (fp, fm) = (shifted(h), shifted(-h));
        let mut tr = canape_core::matrix::Triplets::new(n);
        ff.add_k_to_matrix(&mut tr, 1.0, 0);
        let mut k = vec![vec![0.0; n]; n];
        for &(r, c, v) in &tr.entries {
            k[r as usize][c as usize] += v;
        }
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            assert!(
                (df[i] - fd).abs() < 1e-4 * (1.0 + fd.abs()),
                "{m:?} df[{i}] {} vs {fd}",
                df[i]
            );
            let kd: f64 = (0..n).map(|j| k[i][j] * dx[j]).sum();
            assert!((kd - df[i]).abs() < 1e-9 * (1.0 + kd.abs()), "{m:?} K dx");
        }
    }
}

/// Each material's energy written again, independently of `Material::energy`, as a
/// function of the principal stretches (l1, l2, l3) of a diagonal deformation gradient.
fn energy_in_stretches(m: &Material, l: [f64; 3]) -> f64 {
    let j = l[0] * l[1] * l[2];
    let lnj = j.ln();
    let sq = [l[0] * l[0], l[1] * l[1], l[2] * l[2]];
    let i1 = sq[0] + sq[1] + sq[2];
    let i2 = sq[0] * sq[1] + sq[1] * sq[2] + sq[2] * sq[0];
    let e = sq.map(|c| 0.5 * (c - 1.0));
    match *m {
        Material::StVenantKirchhoff { mu, lambda } => {
            let tr = e[0] + e[1] + e[2];
            0.5 * lambda * tr * tr + mu * (e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
        }
        Material::NeoHookean { mu, lambda } => {
            0.5 * mu * (i1 - 3.0) - mu * lnj + 0.5 * lambda * lnj * lnj
        }
        Material::MooneyRivlin { c1, c2, k0 } => {
            c1 * (i1 / j.cbrt().powi(2) - 3.0)
                + c2 * (i2 / j.cbrt().powi(4) - 3.0)
                + 0.5 * k0 * lnj * lnj
        }
        Material::VerondaWestman { c1, c2, k0 } => {
            c1 * ((c2 * (i1 / j.cbrt().powi(2) - 3.0)).exp() - 1.0)
                - 0.5 * c1 * c2 * (i2 / j.cbrt().powi(4) - 3.0)
                + 0.5 * k0 * lnj * lnj
        }
        Material::ArrudaBoyce { mu, k0 } => {
            // the chain-parameter-8 series: 1/2, 1/160, 11/67200, 19/3584000, 519/2759680000
            let c = [
                0.5,
                1.0 / 160.0,
                11.0 / 67200.0,
                19.0 / 3584000.0,
                519.0 / 2759680000.0,
            ];
            let ib = i1 / j.cbrt().powi(2);
            let w: f64 = (1..=5)
                .map(|i| c[i - 1] * (ib.powi(i as i32) - 3f64.powi(i as i32)))
                .sum();
            mu * w + 0.5 * k0 * lnj * lnj
        }
        Material::Costa { a, k0, b } => {
            // fibre, sheet and normal along x, y, z: only bff, bss, bnn see a diagonal strain
            let q = b[0] * e[0] * e[0] + b[2] * e[1] * e[1] + b[5] * e[2] * e[2];
            0.5 * a * ((q / j.cbrt().powi(4)).exp() - 1.0) + k0 * (j * lnj - j - 1.0)
        }
        Material::Ogden { mu, alpha, k0 } => {
            let s: f64 = l.iter().map(|v| v.powf(alpha)).sum();
            mu / (alpha * alpha) * (j.powf(-alpha / 3.0) * s - 3.0) + 0.5 * k0 * lnj * lnj
        }
        Material::StableNeoHookean { mu, lambda } => {
            let al = 1.0 + mu / (lambda + mu);
            0.5 * (mu * (i1 - 3.0) + (lambda + mu) * (j - al) * (j - al))
        }
    }
}

/// The nominal (first Piola–Kirchhoff) stress P_ii = ∂W/∂l_i: in closed form for
/// StVenantKirchhoff, NeoHookean and StableNeoHookean; for the others by central
/// differences of the energy in stretches above.
fn nominal_stress(m: &Material, l: [f64; 3]) -> [f64; 3] {
    let j = l[0] * l[1] * l[2];
    std::array::from_fn(|i| match *m {
        Material::StVenantKirchhoff { mu, lambda } => {
            let e: Vec<f64> = l.iter().map(|v| 0.5 * (v * v - 1.0)).collect();
            (lambda * (e[0] + e[1] + e[2]) + 2.0 * mu * e[i]) * l[i]
        }
        Material::NeoHookean { mu, lambda } => mu * l[i] - mu / l[i] + lambda * j.ln() / l[i],
        Material::StableNeoHookean { mu, lambda } => {
            let al = 1.0 + mu / (lambda + mu);
            mu * l[i] + (lambda + mu) * (j - al) * j / l[i]
        }
        _ => {
            let h = 1e-6;
            let (mut p, mut q) = (l, l);
            p[i] += h;
            q[i] -= h;
            (energy_in_stretches(m, p) - energy_in_stretches(m, q)) / (2.0 * h)
        }
    })
}

/// A 2×2×2 grid of unit-cube cells (each split into six tetrahedra around its diagonal)
/// spanning [0, 1]³, stretched homogeneously by F = diag(l): every interior node is in
/// equilibrium and the nodal forces on the face X_i = 1 add up to −P_ii times the face's rest
/// area (1), P the material's closed-form nominal stress; on X_i = 0 to +P_ii.
#[test]
fn a_homogeneous_stretch_gives_each_material_its_closed_form_stress() {
    let n = 3;
    let id = |i: usize, j: usize, k: usize| (i + n * (j + n * k)) as u32;
    let mut rest = Vec::new();
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                rest.extend([i as f64 * 0.5, j as f64 * 0.5, k as f64 * 0.5]);
            }
        }
    }
    let mut tets = Vec::new();
    for k in 0..n - 1 {
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let c = |a: usize, b: usize, d: usize| id(i + a, j + b, k + d);
                let (v0, v7) = (c(0, 0, 0), c(1, 1, 1));
                // the six paths from corner 0 to corner 7 along the cube's edges
                for p in [
                    [0, 1, 2],
                    [0, 2, 1],
                    [1, 0, 2],
                    [1, 2, 0],
                    [2, 0, 1],
                    [2, 1, 0],
                ] {
                    let mut s = [0usize; 3];
                    let mut t = [v0, 0, 0, v7];
                    for (step, &axis) in p[..2].iter().enumerate() {
                        s[axis] = 1;
                        t[step + 1] = c(s[0], s[1], s[2]);
                    }
                    tets.push(t);
                }
            }
        }
    }
    let l = [1.15, 0.92, 1.05];
    let x: Vec<f64> = rest
        .chunks(3)
        .flat_map(|p| [l[0] * p[0], l[1] * p[1], l[2] * p[2]])
        .collect();
    for m in materials() {
        let mut ff = TetrahedronHyperelasticityFemForceField::new();
        ff.setup(m.clone(), &rest, &tets);
        let mut f = vec![0.0; x.len()];
        ff.add_force(&x, &vec![0.0; x.len()], &mut f);
        let p = nominal_stress(&m, l);
        let scale = 1.0 + p.iter().map(|v| v.abs()).fold(0.0, f64::max);
        let centre = 3 * id(1, 1, 1) as usize;
        let inner = f[centre..centre + 3]
            .iter()
            .map(|v| v.abs())
            .fold(0.0, f64::max);
        assert!(
            inner < 1e-10 * scale,
            "{m:?}: interior node force {inner:e}"
        );
        for axis in 0..3 {
            let face = |at: f64| -> f64 {
                (0..rest.len() / 3)
                    .filter(|&v| rest[3 * v + axis] == at)
                    .map(|v| f[3 * v + axis])
                    .sum()
            };
            let (hi, lo) = (face(1.0), face(0.0));
            assert!(
                (hi + p[axis]).abs() < 1e-6 * scale && (lo - p[axis]).abs() < 1e-6 * scale,
                "{m:?} axis {axis}: faces {hi} / {lo}, closed-form nominal stress {}",
                p[axis]
            );
        }
    }
}

#[test]
fn unknown_material_and_missing_parameters_are_refused() {
    assert!(Material::from_name("Rubber", &[1.0, 2.0]).is_err());
    assert!(Material::from_name("NeoHookean", &[1.0]).is_err());
    assert!(Material::from_name("Costa", &[1.0; 7]).is_err());
    assert!(Material::from_name("Ogden", &[1.0, 0.0, 1.0]).is_err());
    assert!(Material::from_name("MooneyRivlin", &[1.0, 2.0, 3.0]).is_ok());
}
