//! Tests of TaitSurfacePressureForceField and its free functions (Tait's law, volume, injection,
//! surface checks).

use super::*;
use crate::topology::MeshContainer;
use canape_core::component::{Component, Topology};
use canape_core::diag::{Diagnostics, Severity};
use canape_core::scene::Scene;
use canape_core::state::MechanicalObject;

/// The unit cube [0, 1]³: its 8 corners and 12 triangles turning outwards.
fn unit_cube() -> (Vec<f64>, Vec<[u32; 3]>) {
    let mut x = Vec::new();
    for k in 0..8 {
        x.extend_from_slice(&[(k & 1) as f64, ((k >> 1) & 1) as f64, ((k >> 2) & 1) as f64]);
    }
    // each face as a quad turning counter-clockwise seen from outside, split in two
    let quads = [
        [0, 2, 3, 1], // z = 0
        [4, 5, 7, 6], // z = 1
        [0, 1, 5, 4], // y = 0
        [2, 6, 7, 3], // y = 1
        [0, 4, 6, 2], // x = 0
        [1, 3, 7, 5], // x = 1
    ];
    let tris = quads
        .iter()
        .flat_map(|q: &[u32; 4]| [[q[0], q[1], q[2]], [q[2], q[3], q[0]]])
        .collect();
    (x, tris)
}

/// A closed, lumpy surface: an octahedron with each face split in four, its points pushed
/// off the sphere by deterministic amounts, plus one point inside that no triangle uses.
fn lumpy_ball() -> (Vec<f64>, Vec<[u32; 3]>) {
    let mut pts: Vec<[f64; 3]> = vec![
        [1., 0., 0.],
        [-1., 0., 0.],
        [0., 1., 0.],
        [0., -1., 0.],
        [0., 0., 1.],
        [0., 0., -1.],
    ];
    let faces = [
        [0, 2, 4],
        [2, 1, 4],
        [1, 3, 4],
        [3, 0, 4],
        [2, 0, 5],
        [1, 2, 5],
        [3, 1, 5],
        [0, 3, 5],
    ];
    let mut mids: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut mid = |a: u32, b: u32, pts: &mut Vec<[f64; 3]>| -> u32 {
        *mids.entry((a.min(b), a.max(b))).or_insert_with(|| {
            let (p, q) = (pts[a as usize], pts[b as usize]);
            pts.push([0, 1, 2].map(|c| (p[c] + q[c]) / 2.0));
            (pts.len() - 1) as u32
        })
    };
    let mut tris = Vec::new();
    for f in faces {
        let [a, b, c] = f;
        let (ab, bc, ca) = (
            mid(a, b, &mut pts),
            mid(b, c, &mut pts),
            mid(c, a, &mut pts),
        );
        tris.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
    }
    let mut x = Vec::new();
    for (i, p) in pts.iter().enumerate() {
        let s = 1.0 + 0.15 * ((i as f64) * 1.7).sin();
        x.extend(p.iter().map(|c| c * s + 0.05 * (i as f64 * 0.9).cos()));
    }
    x.extend_from_slice(&[0.01, -0.02, 0.03]);
    (x, tris)
}

/// A dense matrix sink.
struct Dense {
    n: usize,
    a: Vec<f64>,
}
impl MatrixSink for Dense {
    fn add(&mut self, row: usize, col: usize, v: f64) {
        self.a[row * self.n + col] += v;
    }
}

/// Put `ff` (with `attrs`) on a Vec3 state at rest positions `rest` and positions `x`, over a
/// triangle topology `tris`, in a one-node scene of dt 0.02; run its init.
fn init_on(
    ff: &mut TaitSurfacePressureForceField,
    rest: &[f64],
    x: &[f64],
    tris: &[[u32; 3]],
    attrs: &[(&str, &str)],
) -> Diagnostics {
    let mut scene = Scene::new();
    let root = scene.add_node("root", None);
    scene.node_mut(root).dt = 0.02;
    let mut topo = MeshContainer::new("TriangleSetTopologyContainer");
    topo.mesh_mut().triangles = tris.to_vec();
    scene.add_component(root, "topo", AnyComponent::Topology(Box::new(topo)), None);
    let mut mo = MechanicalObject::new(DofType::Vec3);
    mo.resize(x.len() / 3);
    mo.vec_mut(VecId::POSITION).copy_from_slice(x);
    mo.vec_mut(VecId::REST_POSITION).copy_from_slice(rest);
    scene.add_component(root, "dofs", AnyComponent::State(mo), None);
    crate::test_support::init_in(
        &mut scene,
        root,
        ff,
        |f| AnyComponent::ForceField(Box::new(f)),
        attrs,
    )
}

fn usize_tris(t: &[[u32; 3]]) -> Vec<[usize; 3]> {
    t.iter().map(|t| t.map(|i| i as usize)).collect()
}

fn warnings(d: &Diagnostics) -> Vec<String> {
    d.iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn the_unit_cube_encloses_a_volume_of_one_and_reversing_it_negates_it() {
    let (x, tris) = unit_cube();
    let t = usize_tris(&tris);
    assert_eq!(surface_defects(&t), None);
    let (v, a) = volume_and_area(&t, &x);
    assert!((v - 1.0).abs() < 1e-14, "{v}");
    assert!((a - 6.0).abs() < 1e-14, "{a}");
    // moved away from the origin: the same volume (the tetrahedra's apex does not matter)
    let moved: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(k, c)| c + [3., -7., 11.][k % 3])
        .collect();
    assert!((volume_and_area(&t, &moved).0 - 1.0).abs() < 1e-12);
    let reversed: Vec<[usize; 3]> = t.iter().map(|t| [t[0], t[2], t[1]]).collect();
    assert_eq!(surface_defects(&reversed), None);
    assert!((volume_and_area(&reversed, &x).0 + 1.0).abs() < 1e-14);
    // one triangle flipped: an inconsistent orientation is reported
    let mut mixed = t.clone();
    mixed[0] = [t[0][0], t[0][2], t[0][1]];
    assert!(surface_defects(&mixed).unwrap().contains("orientation"));
    // one triangle less: an open surface
    assert!(surface_defects(&t[1..]).unwrap().contains("open"));
    // quads are split as SOFA's pressureTriangles: (a, b, c), (c, d, a)
    let mesh = Mesh {
        triangles: vec![[7, 8, 9]],
        quads: vec![[0, 1, 2, 3]],
        ..Mesh::default()
    };
    assert_eq!(
        pressure_triangles(&mesh),
        vec![[7, 8, 9], [0, 1, 2], [2, 3, 0]]
    );
}

#[test]
fn tait_law_values_and_its_derivative() {
    let (p0, b, gamma, v0) = (2.0, 100.0, 5.0, 3.0);
    let v = 1.1 * v0;
    let (p, k) = tait_pressure(p0, b, gamma, v, v0);
    let r = 1.1f64.powi(5);
    assert!((p - (2.0 - 100.0 * (r - 1.0))).abs() < 1e-12, "{p}");
    assert!((p + 59.051).abs() < 1e-9, "{p}");
    assert!((k - (-100.0 * 5.0 * r / v)).abs() < 1e-12, "{k}");
    // dP/dV by central differences
    let h = 1e-6;
    let fd = (tait_pressure(p0, b, gamma, v + h, v0).0 - tait_pressure(p0, b, gamma, v - h, v0).0)
        / (2.0 * h);
    assert!((fd - k).abs() < 1e-6 * k.abs(), "{fd} {k}");
    // at the rest volume: p0
    assert_eq!(tait_pressure(p0, b, gamma, v0, v0).0, p0);
    // ideal gas (γ = 1): linear in V
    assert_eq!(tait_pressure(p0, b, 1.0, 2.0 * v0, v0), (p0 - b, -b / v0));
    // constant pressure: B = 0, γ = 0 or v0 = 0
    assert_eq!(tait_pressure(p0, 0.0, gamma, v, v0), (p0, 0.0));
    assert_eq!(tait_pressure(p0, b, 0.0, v, v0), (p0, 0.0));
    assert_eq!(tait_pressure(p0, b, gamma, v, 0.0), (p0, 0.0));
    // V = 0: no stiffness (SOFA's guard), pressure p0 + B
    assert_eq!(tait_pressure(p0, b, gamma, 0.0, v0), (p0 + b, 0.0));
    // compressed: the pressure rises
    assert!(tait_pressure(p0, b, gamma, 0.9 * v0, v0).0 > p0);
}

#[test]
fn forces_are_the_pressure_on_a_third_of_each_triangle_and_sum_to_zero() {
    let (x, tris) = lumpy_ball();
    let mut ff = TaitSurfacePressureForceField::new();
    // rest volume from x scaled down: the surface is inflated relative to its rest
    let rest: Vec<f64> = x.iter().map(|c| 0.95 * c).collect();
    let d = init_on(
        &mut ff,
        &rest,
        &x,
        &tris,
        &[("B", "40"), ("gamma", "3"), ("p0", "1.5")],
    );
    assert!(
        !d.has_errors() && warnings(&d).is_empty(),
        "{:?}",
        d.iter().collect::<Vec<_>>()
    );
    let v_rest = volume_and_area(&usize_tris(&tris), &rest).0;
    assert!((ff.rest_volume() - v_rest).abs() < 1e-15);
    let mut f = vec![0.0; x.len()];
    ff.add_force(&x, &vec![0.0; x.len()], &mut f);
    let (v, _) = volume_and_area(&usize_tris(&tris), &x);
    let (p, _) = tait_pressure(1.5, 40.0, 3.0, v, v_rest);
    assert_eq!(ff.pressure(), p);
    assert_eq!(ff.data().real("currentPressure"), p);
    assert_eq!(ff.data().real("currentVolume"), v);
    assert!(
        p < 1.5,
        "inflated past its rest volume: the pressure drops ({p})"
    );
    // expected: each triangle's area times its unit normal, a third per corner
    let mut expected = vec![0.0; x.len()];
    for t in &tris {
        let q = t.map(|i| get3(&x, i as usize));
        let cr = (q[1] - q[0]).cross(&(q[2] - q[0]));
        let (area, normal) = (cr.norm() / 2.0, cr.normalize());
        for &i in t {
            add3(&mut expected, i as usize, &(normal * (p * area / 3.0)));
        }
    }
    for (a, b) in f.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-12, "{a} {b}");
    }
    // no force on the point inside
    let last = x.len() / 3 - 1;
    assert_eq!(get3(&f, last), Vec3::zeros());
    // total force zero on a closed surface; Σ f·x = 3 P V (virial of a uniform pressure)
    let total = (0..x.len() / 3).fold(Vec3::zeros(), |s, i| s + get3(&f, i));
    assert!(total.norm() < 1e-12, "{total}");
    let virial: f64 = f.iter().zip(&x).map(|(a, b)| a * b).sum();
    // the virial is taken about the origin: also zero total force makes it origin-free
    assert!(
        (virial - 3.0 * p * v).abs() < 1e-10,
        "{virial} {}",
        3.0 * p * v
    );
}

/// add_dforce against central differences of add_force (SOFA's tangent is the exact
/// derivative on a closed surface), and add_k_to_matrix against add_dforce.
#[test]
fn the_tangent_matches_finite_differences_and_the_assembled_matrix() {
    let (x, tris) = lumpy_ball();
    let n3 = x.len();
    let rest: Vec<f64> = x.iter().map(|c| 1.04 * c).collect();
    let mut ff = TaitSurfacePressureForceField::new();
    let d = init_on(
        &mut ff,
        &rest,
        &x,
        &tris,
        &[("B", "25"), ("gamma", "5"), ("p0", "0.7")],
    );
    assert!(!d.has_errors());
    let force = |ff: &mut TaitSurfacePressureForceField, x: &[f64]| {
        let mut f = vec![0.0; n3];
        ff.add_force(x, &vec![0.0; n3], &mut f);
        f
    };
    let dx: Vec<f64> = (0..n3).map(|k| ((k as f64) * 0.37).sin()).collect();
    let h = 1e-6;
    let plus: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a + h * b).collect();
    let minus: Vec<f64> = x.iter().zip(&dx).map(|(a, b)| a - h * b).collect();
    let (fp, fm) = (force(&mut ff, &plus), force(&mut ff, &minus));
    // back at x: the tangent is taken there
    force(&mut ff, &x);
    assert!(ff.stiffness != 0.0 && ff.pressure != 0.0);
    let mut df = vec![0.0; n3];
    ff.add_dforce(&dx, &mut df, 1.0);
    let scale = df.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 1e-3);
    for k in 0..n3 {
        let fd = (fp[k] - fm[k]) / (2.0 * h);
        assert!((fd - df[k]).abs() < 1e-6 * scale, "{k}: {fd} {}", df[k]);
    }
    // k_factor scales linearly, and df accumulates
    let mut df2 = vec![1.0; n3];
    ff.add_dforce(&dx, &mut df2, -0.5);
    for k in 0..n3 {
        assert!((df2[k] - (1.0 - 0.5 * df[k])).abs() < 1e-12);
    }
    // the assembled matrix, at an offset, times dx
    let off = 3;
    let mut m = Dense {
        n: n3 + off,
        a: vec![0.0; (n3 + off) * (n3 + off)],
    };
    ff.add_k_to_matrix(&mut m, 2.0, off);
    for r in 0..off {
        assert!(m.a[r * m.n..(r + 1) * m.n].iter().all(|v| *v == 0.0));
    }
    for r in 0..n3 {
        let kdx: f64 = (0..n3)
            .map(|c| m.a[(r + off) * m.n + c + off] * dx[c])
            .sum();
        assert!(
            (kdx - 2.0 * df[r]).abs() < 1e-10 * scale,
            "{r}: {kdx} {}",
            2.0 * df[r]
        );
    }
}

#[test]
fn the_injected_volume_follows_its_target_at_the_maximum_rate() {
    let (x, tris) = unit_cube();
    let mut ff = TaitSurfacePressureForceField::new();
    let d = init_on(
        &mut ff,
        &x,
        &x,
        &tris,
        &[
            ("B", "100"),
            ("gamma", "1"),
            ("injectedVolume", "0.5"),
            ("maxInjectionRate", "10"),
        ],
    );
    assert!(!d.has_errors());
    assert_eq!(ff.rest_volume(), 1.0);
    // 10 per second, dt 0.02: 0.2 per step, reached at the third step
    let mut seen = Vec::new();
    for step in 0..4 {
        ff.set_time(0.02 * step as f64);
        seen.push(ff.data().real("currentInjectedVolume"));
    }
    let want = [0.2, 0.4, 0.5, 0.5];
    for (a, b) in seen.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{seen:?}");
    }
    assert!((ff.data().real("v0") - 1.5).abs() < 1e-12);
    // extraction; times met again (several integrations within a step) inject nothing
    ff.data_mut().set_str("injectedVolume", "-1").unwrap();
    ff.injected_target = -1.0;
    ff.set_time(0.08);
    ff.set_time(0.08);
    ff.set_time(0.07);
    assert!((ff.data().real("currentInjectedVolume") - 0.3).abs() < 1e-12);
    // half a step later: half a step's worth
    ff.set_time(0.09);
    assert!((ff.data().real("currentInjectedVolume") - 0.2).abs() < 1e-12);
    // at the same shape, a larger rest volume: the pressure rises (ideal gas:
    // P = B(1 − V/v0))
    let mut f = vec![0.0; x.len()];
    ff.add_force(&x, &vec![0.0; x.len()], &mut f);
    assert!((ff.pressure() - 100.0 * (1.0 - 1.0 / 1.2)).abs() < 1e-12);
    assert!(ff.pressure() > 0.0);
}

#[test]
fn bad_input_gives_diagnostics_and_no_force() {
    let (x, tris) = unit_cube();
    let nothing_applied = |ff: &mut TaitSurfacePressureForceField| {
        let mut f = vec![0.0; x.len()];
        ff.add_force(&x, &vec![0.0; x.len()], &mut f);
        ff.add_dforce(&x, &mut f, 1.0);
        f.iter().all(|v| *v == 0.0)
    };
    // a point out of range: error, nothing applied
    let mut ff = TaitSurfacePressureForceField::new();
    let mut bad = tris.clone();
    bad[3] = [0, 1, 42];
    let d = init_on(&mut ff, &x, &x, &bad, &[("B", "1"), ("gamma", "2")]);
    assert!(d.has_errors());
    assert!(nothing_applied(&mut ff));
    // no triangles: error
    let mut ff = TaitSurfacePressureForceField::new();
    let d = init_on(&mut ff, &x, &x, &[], &[]);
    assert!(d.has_errors());
    assert!(nothing_applied(&mut ff));
    // an open surface: a warning, and the forces no longer sum to zero
    let mut ff = TaitSurfacePressureForceField::new();
    let d = init_on(&mut ff, &x, &x, &tris[2..], &[("p0", "1")]);
    assert!(!d.has_errors());
    assert!(
        warnings(&d).iter().any(|w| w.contains("open")),
        "{:?}",
        warnings(&d)
    );
    // zero volume: a flat, closed surface (two triangles back to back)
    let mut ff = TaitSurfacePressureForceField::new();
    let flat = [[0, 1, 3], [0, 3, 1]];
    let d = init_on(&mut ff, &x, &x, &flat, &[("B", "5"), ("gamma", "2")]);
    assert!(
        warnings(&d).iter().any(|w| w.contains("no volume")),
        "{:?}",
        warnings(&d)
    );
    // the volume is 0 but the state is valid: p0 = 0 and no force
    assert!(nothing_applied(&mut ff));
    // inward triangles: negative rest volume
    let mut ff = TaitSurfacePressureForceField::new();
    let inward: Vec<[u32; 3]> = tris.iter().map(|t| [t[0], t[2], t[1]]).collect();
    let d = init_on(&mut ff, &x, &x, &inward, &[("B", "5"), ("gamma", "2")]);
    assert!(warnings(&d).iter().any(|w| w.contains("negative")));
    // gamma ≤ 0, B < 0, a negative rate, non-finite values: warnings, defaults used
    let mut ff = TaitSurfacePressureForceField::new();
    ff.data_mut()
        .set_value("p0", Value::Real(f64::NAN))
        .unwrap();
    ff.data_mut()
        .set_value("injectedVolume", Value::Real(f64::INFINITY))
        .unwrap();
    let d = init_on(
        &mut ff,
        &x,
        &x,
        &tris,
        &[("B", "-3"), ("gamma", "-1"), ("maxInjectionRate", "-2")],
    );
    let w = warnings(&d);
    for name in ["p0", "B", "gamma", "injectedVolume", "maxInjectionRate"] {
        assert!(w.iter().any(|m| m.starts_with(name)), "{name}: {w:?}");
    }
    assert_eq!(
        (ff.p0, ff.b, ff.gamma, ff.max_rate),
        (0.0, 0.0, 0.0, 1000.0)
    );
    assert!(nothing_applied(&mut ff));
    // γ = 0 with B: B is unused, said so
    let mut ff = TaitSurfacePressureForceField::new();
    let d = init_on(&mut ff, &x, &x, &tris, &[("B", "5")]);
    assert!(warnings(&d).iter().any(|w| w.contains("gamma is 0")));
    // a state too small for the surface at run time: nothing, no panic
    let mut ff = TaitSurfacePressureForceField::new();
    init_on(&mut ff, &x, &x, &tris, &[("p0", "3")]);
    let mut f = vec![0.0; 9];
    ff.add_force(&x[..9], &[0.0; 9], &mut f);
    assert!(f.iter().all(|v| *v == 0.0));
    // V/v0 < 0 with a fractional γ: no NaN
    let mut ff = TaitSurfacePressureForceField::new();
    init_on(&mut ff, &x, &x, &tris, &[("B", "5"), ("gamma", "1.5")]);
    let mirrored: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(k, c)| if k % 3 == 0 { -c } else { *c })
        .collect();
    let mut f = vec![0.0; x.len()];
    ff.add_force(&mirrored, &vec![0.0; x.len()], &mut f);
    assert!(f.iter().all(|v| v.is_finite()));
    assert_eq!(ff.pressure(), 0.0);
}
