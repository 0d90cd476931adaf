//! TriangularFEMForceField (method "large"): per-triangle rotated frames, plane-stress material.

use super::*;

canape_core::data_schema! {
    /// TriangularFEMForceField's own Data (after the force-field Data).
    struct LargeData {
        young: Reals = ("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)"),
        poisson: Reals = ("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)"),
        method: Text = ("method", DataKind::Str, "large", "large: large displacements (corotational); small is not supported"),
        rotated_initial_elements: Reals = ("rotatedInitialElements", DataKind::Reals(9), "", "Flag activating rendering of stress directions within each triangle"),
        initial_transformation: Reals = ("initialTransformation", DataKind::Reals(9), "", "Flag activating rendering of stress directions within each triangle"),
        hosford_exponant: Real = ("hosfordExponant", DataKind::Real, "1", "Exponant in the Hosford yield criteria"),
        criteria_value: Real = ("criteriaValue", DataKind::Real, "1e15", "Fracturable threshold used to draw fracturable triangles"),
        show_stress_value: Flag = ("showStressValue", DataKind::Bool, "1", "Flag activating rendering of stress values as a color in each triangle"),
        show_stress_vector: Flag = ("showStressVector", DataKind::Bool, "0", "Flag activating rendering of stress directions within each triangle"),
        show_fracturable_triangles: Flag = ("showFracturableTriangles", DataKind::Bool, "0", "Flag activating rendering of triangles to fracture"),
        compute_principal_stress: Flag = ("computePrincipalStress", DataKind::Bool, "0", "Compute principal stress for each triangle"),
    }
}

canape_core::data_schema! {
    /// What TriangleFEMForceField adds to TriangularFEMForceField's Data.
    struct OlderData {
        thickness: Real = ("thickness", DataKind::Real, "1", "Thickness of the elements"),
        plane_strain: Flag = ("planeStrain", DataKind::Bool, "0", "Plane strain or plane stress assumption"),
        initial_points: Reals = ("initialPoints", DataKind::Reals(3), "", "Initial Position"),
    }
}

/// TriangularFEMForceField, method "large" (the only one SOFA's scenes use), following SOFA's
/// Sofa/Component/SolidMechanics/FEM/Elastic/.../TriangularFEMForceField.inl: each triangle's
/// frame has x along AB and z along AB × AC; the rest triangle in its rest frame gives the
/// material matrix (plane stress, times the rest area); at each `add_force` the strain-
/// displacement matrix J is rebuilt from the current triangle in its current frame, and the
/// force is Rᵀ·J·K·Jᵀ·(rest − current) in local coordinates. `add_dforce` and the assembled
/// stiffness use the J and frame of the last `add_force`.
#[derive(Clone)]
pub struct TriangularFemForceField {
    data: DataTable,
    /// Typed handles to the force-field Data in `data`.
    ff: ForceFieldData,
    /// Typed handles to the own Data in `data`.
    d: LargeData,
    /// Typed handles to TriangleFEMForceField's Data (when `older`).
    od: Option<OlderData>,
    tris: Vec<LargeTri>,
    /// What each triangle's material is scaled by (its rest area, times the thickness for
    /// TriangleFEMForceField), parallel to `tris`.
    areas: Vec<f64>,
    rayleigh: f64,
    /// TriangleFEMForceField (SOFA's TriangleFEMForceField.inl, the older component with the
    /// same "large" element): the material times thickness·area (plane stress, or plane
    /// strain with `planeStrain`), rest points rotated before they are subtracted, quads split
    /// in two when the topology has no triangles.
    older: bool,
}

#[derive(Clone, Copy, Debug)]
struct LargeTri {
    idx: [usize; 3],
    /// Rest B and C in the rest frame (A at the origin): (P1.x, 0), (P2.x, P2.y).
    p1x: f64,
    p2x: f64,
    p2y: f64,
    /// Material matrix entries (times the rest area): K00 = K11, K01 = K10, K22.
    k00: f64,
    k01: f64,
    k22: f64,
    /// From the last `add_force`: the frame R (rows ex, ey, ez) and J's entries
    /// (J00, J02, J20, J22, J42; J11 = J02, J12 = J00, J31 = J22, J32 = J20, J51 = J42).
    r: [V3; 3],
    j: [f64; 5],
}

/// SOFA's computeRotationLarge: rows ex = AB/|AB|, ez = (ex × AC)/|…|, ey = ez × ex.
#[inline(always)]
fn rotation_large(a: V3, b: V3, c: V3) -> [V3; 3] {
    let ex = normalized(sub(b, a));
    let ez = normalized(cross(ex, sub(c, a)));
    let ey = cross(ez, ex);
    [ex, ey, ez]
}

/// R·v with R given by rows.
#[inline(always)]
fn rot(r: &[V3; 3], v: V3) -> V3 {
    [dot(r[0], v), dot(r[1], v), dot(r[2], v)]
}

/// Rᵀ·(f0, f1, 0).
#[inline(always)]
fn rot_t2(r: &[V3; 3], f0: f64, f1: f64) -> V3 {
    std::array::from_fn(|i| r[0][i] * f0 + r[1][i] * f1 + r[2][i] * 0.0)
}

impl LargeTri {
    /// J's entries from B = (xb, ·), C = (xc, yc) in the local frame.
    #[inline(always)]
    fn j_from(xb: f64, xc: f64, yc: f64) -> [f64; 5] {
        let inv = 1.0 / (xb * yc);
        [-yc * inv, (xc - xb) * inv, yc * inv, -xc * inv, xb * inv]
    }

    /// Local nodal forces J·K·Jᵀ·D for displacements D (6 numbers: x, y of A, B, C).
    #[inline(always)]
    fn local_forces(&self, d: [f64; 6]) -> [f64; 6] {
        let [j00, j02, j20, j22, j42] = self.j;
        let (j11, j12, j31, j32, j51) = (j02, j00, j22, j20, j42);
        let e0 = j00 * d[0] + j20 * d[2];
        let e1 = j11 * d[1] + j31 * d[3] + j51 * d[5];
        let e2 = j02 * d[0] + j12 * d[1] + j22 * d[2] + j32 * d[3] + j42 * d[4];
        let s0 = self.k00 * e0 + self.k01 * e1;
        let s1 = self.k01 * e0 + self.k00 * e1;
        let s2 = self.k22 * e2;
        [
            j00 * s0 + j02 * s2,
            j11 * s1 + j12 * s2,
            j20 * s0 + j22 * s2,
            j31 * s1 + j32 * s2,
            j42 * s2,
            j51 * s1,
        ]
    }

    /// The 6×6 local stiffness J·K·Jᵀ (rows and columns: x, y of A, B, C).
    fn local_stiffness(&self) -> [[f64; 6]; 6] {
        let mut out = [[0.0; 6]; 6];
        for (col, o) in (0..6).zip(0..6) {
            let mut d = [0.0; 6];
            d[col] = 1.0;
            let f = self.local_forces(d);
            for (r, v) in f.iter().enumerate() {
                out[r][o] = *v;
            }
        }
        out
    }
}

impl Default for TriangularFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl TriangularFemForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = LargeData::declare(data);
        TriangularFemForceField {
            data,
            ff,
            d,
            od: None,
            tris: Vec::new(),
            areas: Vec::new(),
            rayleigh: 0.0,
            older: false,
        }
    }

    /// TriangleFEMForceField.
    pub fn triangle_fem() -> Self {
        let mut f = Self::new();
        let (data, od) = OlderData::declare(std::mem::take(&mut f.data));
        f.data = data;
        f.od = Some(od);
        f.older = true;
        f
    }

    /// Set up the triangles from rest positions (init and tests).
    pub fn setup(&mut self, rest: &[f64], triangles: &[[u32; 3]]) {
        let (e, nu) = moduli(&self.data, self.d.young, self.d.poisson);
        self.tris.clear();
        self.areas.clear();
        for (k, t) in triangles.iter().enumerate() {
            let idx = t.map(|i| i as usize);
            let [a, b, c] = idx.map(|i| p3(rest, i));
            let r = rotation_large(a, b, c);
            let (p1, p2, area) = if let Some(od) = self.od {
                // rotated, then subtracted; material times thickness · area (from the cross
                // product)
                let (ra, rb, rc) = (rot(&r, a), rot(&r, b), rot(&r, c));
                let (p1, p2) = (sub(rb, ra), sub(rc, ra));
                let n = cross(sub(b, a), sub(c, a));
                (p1, p2, 0.5 * self.data.get(od.thickness) * dot(n, n).sqrt())
            } else {
                let p1 = rot(&r, sub(b, a));
                let p2 = rot(&r, sub(c, a));
                (p1, p2, p1[0] * p2[1] * 0.5)
            };
            let (k00, k01, k22) = self.material(&e, &nu, k, area);
            self.areas.push(area);
            self.tris.push(LargeTri {
                idx,
                p1x: p1[0],
                p2x: p2[0],
                p2y: p2[1],
                k00,
                k01,
                k22,
                r,
                j: LargeTri::j_from(p1[0], p2[0], p2[1]),
            });
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        self.tris.clear();
        self.areas.clear();
        let method = self.data.get(self.d.method).trim().to_string();
        if method == "small" {
            ctx.error(
                "method 'small' is not supported (SOFA's version only uses the x and y \
                 coordinates and assembles a zero matrix); use 'large'",
            );
            return;
        }
        if !method.is_empty() && method != "large" {
            ctx.warn(format!(
                "unknown method '{method}'; using 'large' (as SOFA)"
            ));
        }
        if let Some(m) = check_material(self.data.get(self.d.young), self.data.get(self.d.poisson))
        {
            ctx.error(m);
            return;
        }
        let older = self.older;
        let has = if older {
            |m: &canape_core::mesh::Mesh| !m.triangles.is_empty() || !m.quads.is_empty()
        } else {
            |m: &canape_core::mesh::Mesh| !m.triangles.is_empty()
        };
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, has, "triangles") else {
            return;
        };
        let triangles = if mesh.triangles.is_empty() {
            mesh.quads
                .iter()
                .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
                .collect()
        } else {
            mesh.triangles.clone()
        };
        self.setup(&rest, &triangles);
        let degenerate = self
            .tris
            .iter()
            .filter(|t| !(t.k00 != 0.0 && t.j.iter().all(|v| v.is_finite())))
            .count();
        if degenerate > 0 {
            ctx.error(format!(
                "{degenerate} triangle(s) have no area at rest: their stiffness is undefined"
            ));
            self.tris.clear();
            self.areas.clear();
        }
    }

    /// The material matrix entries (K00, K01, K22) of element `k` scaled by `area`: plane
    /// stress, or plane strain for TriangleFEMForceField with `planeStrain`.
    fn material(&self, e: &[f64], nu: &[f64], k: usize, area: f64) -> (f64, f64, f64) {
        let (ek, nuk) = element_moduli(e, nu, k);
        match self.od {
            Some(od) if self.data.get(od.plane_strain) => {
                let s = (ek / ((1.0 + nuk) * (1.0 - 2.0 * nuk))) * area;
                ((1.0 - nuk) * s, nuk * s, (0.5 - nuk) * s)
            }
            Some(_) => {
                let s = (ek / (1.0 - nuk * nuk)) * area;
                (s, nuk * s, 0.5 * (1.0 - nuk) * s)
            }
            None => {
                let s = (ek / (1.0 - nuk * nuk)) * area;
                (s, nuk * s, (1.0 - nuk) * 0.5 * s)
            }
        }
    }
}

impl TriangularFemForceField {
    /// SOFA's class name of this instance.
    fn sofa_class(&self) -> &'static str {
        if self.older {
            "TriangleFEMForceField"
        } else {
            "TriangularFEMForceField"
        }
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let material = [
            self.d.young.index(),
            self.d.poisson.index(),
            self.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.tris.is_empty() {
            return Reaction::Reinit;
        }
        if let Some(m) = check_material(self.data.get(self.d.young), self.data.get(self.d.poisson))
        {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.ff.rayleigh_stiffness);
        let (e, nu) = moduli(&self.data, self.d.young, self.d.poisson);
        let mut tris = std::mem::take(&mut self.tris);
        for (k, (t, &area)) in tris.iter_mut().zip(&self.areas).enumerate() {
            (t.k00, t.k01, t.k22) = self.material(&e, &nu, k, area);
        }
        self.tris = tris;
        Reaction::Updated
    }
}

canape_core::impl_component!(
    TriangularFemForceField,
    |s| s.sofa_class(),
    init,
    data_changed
);

impl ForceField for TriangularFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        for t in &mut self.tris {
            let [a, b, c] = t.idx.map(|i| p3(x, i));
            let r = rotation_large(a, b, c);
            let db = rot(&r, sub(b, a));
            let dc = rot(&r, sub(c, a));
            let d = [0.0, 0.0, t.p1x - db[0], 0.0, t.p2x - dc[0], t.p2y - dc[1]];
            t.j = LargeTri::j_from(db[0], dc[0], dc[1]);
            t.r = r;
            let fl = t.local_forces(d);
            for (v, &n) in t.idx.iter().enumerate() {
                let fv = rot_t2(&r, fl[2 * v], fl[2 * v + 1]);
                for c in 0..3 {
                    f[3 * n + c] += fv[c];
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for t in &self.tris {
            let mut d = [0.0; 6];
            for (v, &n) in t.idx.iter().enumerate() {
                let l = rot(&t.r, p3(dx, n));
                d[2 * v] = l[0];
                d[2 * v + 1] = l[1];
            }
            let fl = t.local_forces(d);
            for (v, &n) in t.idx.iter().enumerate() {
                let fv = rot_t2(&t.r, -fl[2 * v], -fl[2 * v + 1]);
                for c in 0..3 {
                    df[3 * n + c] += fv[c] * k_factor;
                }
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for t in &self.tris {
            let ke = t.local_stiffness();
            let r = Mat3::from_rows(&[
                nalgebra::RowVector3::new(t.r[0][0], t.r[0][1], t.r[0][2]),
                nalgebra::RowVector3::new(t.r[1][0], t.r[1][1], t.r[1][2]),
                nalgebra::RowVector3::new(t.r[2][0], t.r[2][1], t.r[2][2]),
            ]);
            for i in 0..3 {
                for j in 0..3 {
                    let mut b = Mat3::zeros();
                    for k in 0..2 {
                        for l in 0..2 {
                            b[(k, l)] = ke[2 * i + k][2 * j + l];
                        }
                    }
                    let w = r.transpose() * b * r * (-k_factor);
                    m.add_block3(offset + 3 * t.idx[i], offset + 3 * t.idx[j], &w);
                }
            }
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod large_tests {
    use super::*;

    fn forces(ff: &mut TriangularFemForceField, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len()];
        ff.add_force(x, &vec![0.0; x.len()], &mut f);
        f
    }

    #[test]
    fn rigid_motion_free_and_plane_stress_under_stretch() {
        let mut ff = TriangularFemForceField::new();
        ff.data.set_str("youngModulus", "1000").unwrap();
        ff.data.set_str("poissonRatio", "0.3").unwrap();
        let rest = vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        ff.setup(&rest, &[[0, 1, 2]]);
        let r = nalgebra::Rotation3::from_euler_angles(-1.1, 0.5, 2.0);
        let moved: Vec<f64> = rest
            .chunks(3)
            .flat_map(|p| {
                let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
                [q.x + 3.0, q.y - 1.0, q.z + 0.5]
            })
            .collect();
        assert!(forces(&mut ff, &moved).iter().all(|v| v.abs() < 1e-9));
        // stretched by ε along x: plane stress (σxx = E/(1−ν²)ε, σyy = νσxx), node forces
        // −A·Bᵀσ with the current geometry (J from the current triangle, K from the rest area)
        let eps = 1e-6;
        let x = vec![0.0, 0.0, 0.0, 2.0 * (1.0 + eps), 0.0, 0.0, 0.0, 1.0, 0.0];
        let f = forces(&mut ff, &x);
        // (the current geometry in J makes a relative difference of order ε)
        let sxx = 1000.0 / (1.0 - 0.09) * eps;
        assert!((f[3] + sxx * 0.5).abs() < 1e-5 * sxx, "{f:?}");
        assert!((f[7] + 0.3 * sxx).abs() < 1e-5 * sxx, "{f:?}");
    }

    #[test]
    fn triangle_fem_scales_with_thickness_and_has_plane_strain() {
        let rest = vec![0.0, 0.0, 0.0, 2.0, 0.1, 0.0, 0.3, 1.0, 0.2];
        let x = vec![0.01, 0.0, 0.0, 2.05, 0.1, 0.02, 0.3, 1.01, 0.2];
        let run = |mut ff: TriangularFemForceField| {
            ff.data.set_str("youngModulus", "1000").unwrap();
            ff.data.set_str("poissonRatio", "0.3").unwrap();
            ff.setup(&rest, &[[0, 1, 2]]);
            forces(&mut ff, &x)
        };
        let base = run(TriangularFemForceField::new());
        let mut older = TriangularFemForceField::triangle_fem();
        older.data.set_str("thickness", "2").unwrap();
        let thick = run(older);
        for (a, b) in thick.iter().zip(&base) {
            assert!(
                (a - 2.0 * b).abs() < 1e-10 * b.abs().max(1e-6),
                "{thick:?} vs {base:?}"
            );
        }
        // plane strain is stiffer than plane stress for ν > 0 (E/((1+ν)(1−2ν)) > E/(1−ν²))
        let mut strain = TriangularFemForceField::triangle_fem();
        strain.data.set_str("planeStrain", "1").unwrap();
        let ps = run(strain);
        let n = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(n(&ps) > n(&base), "{} vs {}", n(&ps), n(&base));
    }

    #[test]
    fn dforce_matrix_and_finite_differences_agree_at_rest() {
        let r = nalgebra::Rotation3::from_euler_angles(0.4, -0.3, 0.9);
        let pts = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.2, 0.9, 0.0],
            [-0.1, 1.1, 0.0],
        ];
        let mut rest = Vec::new();
        for p in pts {
            let q = r * nalgebra::Vector3::new(p[0], p[1], p[2]);
            rest.extend([q.x, q.y, q.z]);
        }
        let mut ff = TriangularFemForceField::new();
        ff.data.set_str("youngModulus", "700").unwrap();
        ff.data.set_str("poissonRatio", "0.35").unwrap();
        ff.setup(&rest, &[[0, 1, 2], [0, 2, 3]]);
        let n = rest.len();
        let _ = forces(&mut ff, &rest);
        let mut tr = canape_core::matrix::Triplets::new(n);
        ff.add_k_to_matrix(&mut tr, 1.0, 0);
        let mut dense = vec![vec![0.0; n]; n];
        for &(r, c, v) in &tr.entries {
            dense[r as usize][c as usize] += v;
        }
        let h = 1e-6;
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let mut col = vec![0.0; n];
            ff.add_dforce(&e, &mut col, 1.0);
            let mut xp = rest.clone();
            xp[j] += h;
            let mut xm = rest.clone();
            xm[j] -= h;
            let fp = forces(&mut ff, &xp);
            let fm = forces(&mut ff, &xm);
            let _ = forces(&mut ff, &rest);
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                assert!(
                    (col[i] - fd).abs() < 1e-5 * 700.0,
                    "dforce ({i},{j}) {} vs {fd}",
                    col[i]
                );
                assert!(
                    (dense[i][j] - col[i]).abs() < 1e-9 * 700.0,
                    "matrix ({i},{j})"
                );
            }
        }
    }
}
