//! HexahedronFEMForceField: trilinear hexahedra, 2×2×2 Gauss stiffness in a rotated rest frame,
//! corotational by averaged edge directions ("large") or polar decomposition.
//! Follows Sofa/Component/SolidMechanics/FEM/Elastic/src/sofa/component/solidmechanics/fem/
//! elastic/HexahedronFEMForceField.inl: f_e = Rᵀ K (X0r − R x), tangent −Rᵀ K R.

mod element;
mod product;

use crate::common::{check_material, fem_inputs, Material};
use canape_core::component::{ForceField, Reaction};
use canape_core::data::MassData;
use canape_core::data::{
    ChangedData, DataKind, DataTable, Flag, ForceFieldData, Real, Reals, Text, Value,
};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};
pub use element::hexa_stiffness;
use element::{frame, COEF};
use nalgebra::SMatrix;
use product::{
    add_force_dispatch, component_major, dforce_range_dispatch, rest_point, rotated_stiffness, Kp,
    Rest,
};

type K24 = SMatrix<f64, 24, 24>;

canape_core::data_schema! {
    /// HexahedronFEMForceField's own Data (after the force-field Data).
    struct HexaData {
        young: Reals = ("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)"),
        poisson: Reals = ("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)"),
        method: Text = ("method", DataKind::Str, "large", "\"large\" or \"polar\" or \"small\" displacements"),
        update_stiffness_matrix: Flag = ("updateStiffnessMatrix", DataKind::Bool, "0", ""),
        gather_pt: Text = ("gatherPt", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)"),
        gather_bsize: Text = ("gatherBsize", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)"),
        drawing: Flag = ("drawing", DataKind::Bool, "1", "draw the forcefield if true"),
        draw_percentage_offset: Real = ("drawPercentageOffset", DataKind::Real, "0.15", "size of the hexa"),
        stiffness_matrices: Reals = ("stiffnessMatrices", DataKind::Reals(0), "", "Stiffness matrices per element (K_i)"),
        initial_points: Reals = ("initialPoints", DataKind::Reals(3), "", "Initial Position"),
    }
}

canape_core::data_schema! {
    /// HexahedronFEMForceFieldAndMass's own Data (after [`MassData`]).
    struct HexaMassData {
        density: Real = ("density", DataKind::Real, "1", "density == volumetric mass in english (kg.m-3)"),
        lumped_mass: Flag = ("lumpedMass", DataKind::Bool, "0", "Does it use lumped masses?"),
        mass_matrices: Reals = ("massMatrices", DataKind::Reals(0), "", "Mass matrices per element (M_i)"),
    }
}

/// The typed handles of a [`HexahedronFemForceField`]'s Data.
#[derive(Clone, Copy, Debug)]
struct Handles {
    ff: ForceFieldData,
    d: HexaData,
    /// The mass Data (HexahedronFEMForceFieldAndMass only).
    mass: Option<(MassData, HexaMassData)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HexaMethod {
    Large,
    Polar,
    Small,
}

#[derive(Clone)]
struct HexElem {
    idx: [u32; 8],
    /// Index of the element stiffness in `HexahedronFemForceField::kps`.
    k: u32,
    rot: Mat3,
}

/// The mass part of HexahedronFEMForceFieldAndMass (SOFA's formulation, including its quirk:
/// every 3×3 node block of the element mass matrix is (8/27)·ρ·vol·I, while gravity uses ρ·vol/8
/// per node; HexahedronFEMForceFieldAndMass.inl computeElementMass/integrateMass).
#[derive(Clone)]
struct HexMass {
    density: f64,
    lumped: bool,
    /// (8/27)·ρ·vol per element.
    block: Vec<f64>,
    /// Gravity masses per node.
    particle: Vec<f64>,
    gravity: Vec3,
}

#[derive(Clone)]
pub struct HexahedronFemForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    h: Handles,
    mass: Option<HexMass>,
    method: HexaMethod,
    elems: Vec<HexElem>,
    /// Element stiffness matrices in the element frame, in component-major order ([`Kp`]: what
    /// the stiffness product reads); consecutive elements of the same shape and material (a
    /// regular grid) share one, which then stays in cache during the products.
    kps: Vec<Box<Kp>>,
    /// Rest positions in the element frame, parallel to `elems` (kept apart: the stiffness
    /// product, run at every CG iteration, reads 108 bytes per element instead of 300); the
    /// element stiffnesses are recomputed from them when the material is edited.
    rests: Vec<Rest>,
    /// The stiffness product over worker threads.
    par: crate::common::ParallelLoop,
    rayleigh: f64,
    /// Node pairs of the elements for assembly, made on the first assembly.
    pairs: std::sync::OnceLock<crate::pairs::NodePairs>,
    /// Per-element stiffness and mass coefficients from the topology (a SparseGridTopology's
    /// ½ for boundary cells); empty: all 1.
    coef: Vec<f64>,
    /// SOFA's HexahedralFEMForceField(AndMass): the same element (see [`Self::hexahedral`]).
    hexahedral: bool,
}

impl Default for HexahedronFemForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl HexahedronFemForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = HexaData::declare(data);
        HexahedronFemForceField {
            data,
            h: Handles { ff, d, mass: None },
            hexahedral: false,
            coef: Vec::new(),
            mass: None,
            method: HexaMethod::Large,
            elems: Vec::new(),
            kps: Vec::new(),
            pairs: std::sync::OnceLock::new(),
            rests: Vec::new(),
            par: Default::default(),
            rayleigh: 0.0,
        }
    }

    /// HexahedronFEMForceFieldAndMass: the same force field carrying SOFA's element masses.
    pub fn with_mass() -> Self {
        let mut f = Self::new();
        let (data, mass) = MassData::declare(std::mem::take(&mut f.data));
        let (data, hexa_mass) = HexaMassData::declare(data);
        f.data = data;
        f.h.mass = Some((mass, hexa_mass));
        f.mass = Some(HexMass {
            density: 1.0,
            lumped: false,
            block: Vec::new(),
            particle: Vec::new(),
            gravity: Vec3::zeros(),
        });
        f
    }

    /// HexahedralFEMForceField (Sofa/Component/SolidMechanics/FEM/Elastic/.../
    /// HexahedralFEMForceField.inl), with mass: HexahedralFEMForceFieldAndMass. SOFA's class
    /// has the same rest frames ("large" and "polar"), forces, tangent and element masses as
    /// HexahedronFEMForceField; its element stiffness is a closed form that equals the exact
    /// (Gauss) one on axis-aligned cubes up to float rounding and differs elsewhere, so Canapé
    /// computes the exact one and warns when an element is not such a cube. It has no "small"
    /// method and no sparse-grid coefficients.
    pub fn hexahedral(with_mass: bool) -> Self {
        let mut f = if with_mass {
            Self::with_mass()
        } else {
            Self::new()
        };
        f.hexahedral = true;
        f
    }

    fn setup_mass(&mut self, n: usize, gravity: Vec3) {
        let Some((md, hd)) = self.h.mass else { return };
        let density = self.data.get(hd.density);
        let lumped = self.data.get(hd.lumped_mass);
        let separate = self.data.get(md.separate_gravity);
        let Some(m) = self.mass.as_mut() else { return };
        m.density = density;
        m.lumped = lumped;
        m.gravity = if separate { Vec3::zeros() } else { gravity };
        m.block.clear();
        m.particle = vec![0.0; n];
        for (e, (el, rest)) in self.elems.iter().zip(&self.rests).enumerate() {
            let p: [Vec3; 8] = std::array::from_fn(|w| rest_point(rest, w));
            // times the sparse grid's mass coefficient (SOFA's getMassCoef)
            let vol = (p[1] - p[0]).norm()
                * (p[3] - p[0]).norm()
                * (p[4] - p[0]).norm()
                * self.coef.get(e).copied().unwrap_or(1.0);
            m.block.push(vol * (8.0 / 27.0) * density);
            for &i in &el.idx {
                m.particle[i as usize] += vol * density / 8.0;
            }
        }
    }

    /// Young's moduli and Poisson's ratios (one, or one per element), never empty.
    fn moduli(&self) -> (Vec<f64>, Vec<f64>) {
        let or = |v: &[f64], d: f64| if v.is_empty() { vec![d] } else { v.to_vec() };
        (
            or(self.data.get(self.h.d.young), 5000.0),
            or(self.data.get(self.h.d.poisson), 0.45),
        )
    }

    /// The stiffness of element `e` from its rest positions in its frame `x0r`, the moduli of
    /// [`Self::moduli`] and its sparse-grid coefficient, in the order the product reads it.
    fn element_stiffness(
        &self,
        e: usize,
        x0r: &[Vec3; 8],
        (young, nu): &(Vec<f64>, Vec<f64>),
    ) -> Box<Kp> {
        let mat = Material::new(
            *young.get(e).unwrap_or(&young[0]),
            *nu.get(e).unwrap_or(&nu[0]),
            1.0,
        );
        let mut k = hexa_stiffness(&mat, x0r);
        // SOFA's HexahedronFEMForceField scales by the sparse grid's stiffness coefficient
        if let Some(c) = self.coef.get(e).filter(|c| **c != 1.0) {
            k *= *c;
        }
        component_major(&k)
    }

    /// Add an element's stiffness to `kps` (shared with the previous element when equal) and
    /// return its index there.
    fn push_stiffness(kps: &mut Vec<Box<Kp>>, kp: Box<Kp>) -> u32 {
        if kps.last() != Some(&kp) {
            kps.push(kp);
        }
        (kps.len() - 1) as u32
    }

    /// Recompute every element's stiffness from its rest positions (`rests`) and the current
    /// moduli, rest frames and rotations kept: what [`Self::setup`] computes for the same rest
    /// positions.
    fn update_stiffness(&mut self) {
        let moduli = self.moduli();
        let mut kps = Vec::with_capacity(self.kps.len());
        for e in 0..self.elems.len() {
            let x0r: [Vec3; 8] = std::array::from_fn(|w| rest_point(&self.rests[e], w));
            let kp = self.element_stiffness(e, &x0r, &moduli);
            self.elems[e].k = Self::push_stiffness(&mut kps, kp);
        }
        self.kps = kps;
    }

    /// Set up elements from rest positions and hexahedra (used by init and tests).
    pub fn setup(&mut self, rest: &[f64], hexa: &[[u32; 8]]) {
        let moduli = self.moduli();
        self.elems.clear();
        self.kps.clear();
        self.pairs = std::sync::OnceLock::new();
        self.rests.clear();
        self.par.reset();
        for (e, h) in hexa.iter().enumerate() {
            let p: [Vec3; 8] = std::array::from_fn(|w| get3(rest, h[w] as usize));
            let r = frame(self.method, &p);
            let x0r: [Vec3; 8] = std::array::from_fn(|w| r * p[w]);
            let kp = self.element_stiffness(e, &x0r, &moduli);
            let k = Self::push_stiffness(&mut self.kps, kp);
            self.elems.push(HexElem { idx: *h, k, rot: r });
            self.rests
                .push(std::array::from_fn(|c| std::array::from_fn(|w| x0r[w][c])));
        }
    }

    /// Read `method` from Data; an unknown name selects `large` and is returned as error.
    pub fn set_method_from_data(&mut self) -> Result<(), crate::common::MethodError> {
        let (m, ok) = match self.data.get(self.h.d.method) {
            "large" => (HexaMethod::Large, true),
            "polar" => (HexaMethod::Polar, true),
            "small" => (HexaMethod::Small, true),
            _ => (HexaMethod::Large, false),
        };
        self.method = m;
        if ok {
            Ok(())
        } else {
            Err(crate::common::MethodError::Unknown {
                method: self.data.get(self.h.d.method).to_string(),
            })
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if let Err(other) = self.set_method_from_data() {
            ctx.warn(format!("unknown method '{other}'; using 'large'"));
        }
        if self.hexahedral && self.method == HexaMethod::Small {
            ctx.warn("HexahedralFEMForceField has no 'small' method (SOFA's has \"large\" and \"polar\"); using 'large'");
            self.method = HexaMethod::Large;
        }
        if self.data.get(self.h.d.update_stiffness_matrix) {
            ctx.warn("updateStiffnessMatrix is not supported yet and is ignored");
        }
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        self.elems.clear();
        self.pairs = std::sync::OnceLock::new();
        if let Some(m) = check_material(
            self.data.get(self.h.d.young),
            self.data.get(self.h.d.poisson),
        ) {
            ctx.error(m);
            return;
        }
        let Some((rest, mesh)) =
            fem_inputs(ctx, &self.data, |m| !m.hexahedra.is_empty(), "hexahedra")
        else {
            return;
        };
        self.coef = if self.hexahedral {
            // SOFA's HexahedralFEMForceField reads no sparse-grid coefficients
            Vec::new()
        } else {
            ctx.topology_where(|m| !m.hexahedra.is_empty())
                .and_then(|t| t.hexahedron_coefficients())
                .filter(|c| c.len() == mesh.hexahedra.len())
                .map(<[f64]>::to_vec)
                .unwrap_or_default()
        };
        if self.hexahedral {
            if let Some(e) = mesh
                .hexahedra
                .iter()
                .position(|h| !is_axis_aligned_cube(&rest, h))
            {
                ctx.warn(format!(
                    "hexahedron {e} is not an axis-aligned cube at rest: SOFA's HexahedralFEMForceField computes its stiffness by a closed form that is exact only for such cubes; Canapé integrates the element exactly, as HexahedronFEMForceField does, so results differ from SOFA's there"
                ));
            }
        }
        self.setup(&rest, &mesh.hexahedra);
        if let Some((md, _)) = self.h.mass {
            if self.data.get(md.separate_gravity) {
                ctx.warn("separateGravity is not supported by HexahedronFEMForceFieldAndMass in Canapé: gravity is left out");
            }
            let g = ctx.gravity();
            self.setup_mass(rest.len() / 3, g);
        }
        let _ = self.data.put(self.h.d.initial_points, Value::Reals(rest));
    }
}

/// Whether the hexahedron's rest edges from node 0 are along x, y and z with equal lengths
/// (to 1e-9 relative) and the element is the box they span.
fn is_axis_aligned_cube(rest: &[f64], h: &[u32; 8]) -> bool {
    let p: [Vec3; 8] = std::array::from_fn(|w| get3(rest, h[w] as usize));
    let l = (p[1] - p[0]).norm();
    let tol = 1e-9 * l.max(f64::MIN_POSITIVE);
    COEF.iter().zip(&p).all(|(s, q)| {
        let want = p[0] + Vec3::new(s[0] + 1.0, s[1] + 1.0, s[2] + 1.0) * (l / 2.0);
        (q - want).norm() <= tol
    })
}

impl HexahedronFemForceField {
    /// SOFA's class name of this instance.
    fn sofa_class(&self) -> &'static str {
        match (self.hexahedral, self.mass.is_some()) {
            (false, true) => "HexahedronFEMForceFieldAndMass",
            (false, false) => "HexahedronFEMForceField",
            (true, true) => "HexahedralFEMForceFieldAndMass",
            (true, false) => "HexahedralFEMForceField",
        }
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let (young, poisson) = (self.h.d.young, self.h.d.poisson);
        let material = [
            young.index(),
            poisson.index(),
            self.h.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&material) || self.elems.is_empty() {
            return Reaction::Reinit;
        }
        if let Some(m) = check_material(self.data.get(young), self.data.get(poisson)) {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        if changed.has(young) || changed.has(poisson) {
            self.update_stiffness();
        }
        Reaction::Updated
    }
}

canape_core::impl_component!(
    HexahedronFemForceField,
    |s| s.sofa_class(),
    init,
    data_changed
);

impl ForceField for HexahedronFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        add_force_dispatch(self.method, &mut self.elems, &self.kps, &self.rests, x, f);
        if let Some(m) = &self.mass {
            for (i, pm) in m.particle.iter().enumerate().take(f.len() / 3) {
                for c in 0..3 {
                    f[3 * i + c] += m.gravity[c] * pm;
                }
            }
        }
    }

    fn has_mass(&self) -> bool {
        self.mass.is_some()
    }

    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        let Some(m) = &self.mass else { return };
        for (el, b) in self.elems.iter().zip(&m.block) {
            let mb = b * factor;
            if m.lumped {
                for &i in &el.idx {
                    let i = i as usize;
                    for c in 0..3 {
                        res[3 * i + c] += 8.0 * mb * dx[3 * i + c];
                    }
                }
                continue;
            }
            let mut s = Vec3::zeros();
            for &j in &el.idx {
                s += get3(dx, j as usize);
            }
            for &i in &el.idx {
                let i = i as usize;
                for c in 0..3 {
                    res[3 * i + c] += mb * s[c];
                }
            }
        }
    }

    fn add_m_to_matrix(&self, mat: &mut dyn MatrixSink, factor: f64, offset: usize) {
        let Some(m) = &self.mass else { return };
        for (el, b) in self.elems.iter().zip(&m.block) {
            let mb = b * factor;
            for &i in &el.idx {
                for &j in &el.idx {
                    if m.lumped && i != j {
                        continue;
                    }
                    let v = if m.lumped { 8.0 * mb } else { mb };
                    for c in 0..3 {
                        mat.add(offset + 3 * i as usize + c, offset + 3 * j as usize + c, v);
                    }
                }
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        let (elems, kps) = (&self.elems, &self.kps);
        let body = |range: std::ops::Range<usize>, df: &mut [f64], lo: usize| {
            dforce_range_dispatch(&elems[range], kps, dx, df, lo, k_factor)
        };
        self.par.run(elems.len(), |e| elems[e].idx, df, body);
    }

    /// Blocks −k Rᵀ K_ab R of every element (HexahedronFEMForceField::addKToMatrix). K is
    /// symmetric, so the block (b, a) is added as the transpose of (a, b): half the products.
    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        use crate::pairs::{local_pairs, NodePairs};
        let pairs = self.pairs.get_or_init(|| {
            let idx: Vec<[u32; 8]> = self.elems.iter().map(|el| el.idx).collect();
            NodePairs::new::<8, 28>(&idx)
        });
        // −k Rᵀ K R, symmetric: the 8 diagonal and 28 upper blocks, read from the rotated
        // matrix straight into the node-pair sums
        let mut d = [[0.0; 24]; 24];
        pairs.assemble_direct::<8, 28>(m, offset, |e, want_pairs, adder| {
            let el = &self.elems[e];
            let kp = &self.kps[el.k as usize];
            if !want_pairs {
                // the diagonal blocks only (block-Jacobi): 8 products of 3×3 blocks
                let rt = el.rot.transpose() * (-k_factor);
                for a in 0..8 {
                    let b = rt * (Mat3::from_fn(|i, j| kp[8 * j + a][8 * i + a]) * el.rot);
                    adder.add(a, a, |i, j| b[(i, j)]);
                }
                return;
            }
            rotated_stiffness(kp, &el.rot, -k_factor, &mut d);
            for a in 0..8 {
                adder.add(a, a, |i, j| d[8 * j + a][8 * i + a]);
            }
            for (a, b) in local_pairs::<8>() {
                adder.add(a, b, |i, j| d[8 * j + b][8 * i + a]);
            }
        });
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}

#[cfg(test)]
mod coefficient_tests {
    use super::*;

    /// A sparse grid's coefficient scales an element's stiffness (and its masses).
    #[test]
    fn coefficients_scale_stiffness_and_mass() {
        let rest = [
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0,
            1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0,
        ];
        let hexa = [[0, 1, 2, 3, 4, 5, 6, 7]];
        let mut x = rest.to_vec();
        x[18] += 0.01;
        let run = |coef: Vec<f64>| {
            let mut ff = HexahedronFemForceField::with_mass();
            ff.coef = coef;
            ff.setup(&rest, &hexa);
            ff.setup_mass(8, Vec3::zeros());
            let mut f = vec![0.0; 24];
            ff.add_force(&x, &[0.0; 24], &mut f);
            let m: f64 = ff.mass.as_ref().unwrap().particle.iter().sum();
            (f, m)
        };
        let (f1, m1) = run(Vec::new());
        let (f2, m2) = run(vec![0.5]);
        assert!(f1.iter().any(|v| v.abs() > 1e-6));
        for (a, b) in f1.iter().zip(&f2) {
            assert!((a * 0.5 - b).abs() < 1e-12 * a.abs().max(1.0), "{a} {b}");
        }
        assert!((m1 * 0.5 - m2).abs() < 1e-12);
    }
}

#[cfg(test)]
mod hexahedral_tests {
    use super::*;

    #[test]
    fn only_axis_aligned_cubes_pass_the_hexahedral_check() {
        let box_points = |l: [f64; 3]| -> Vec<f64> {
            COEF.iter()
                .flat_map(|s| (0..3).map(move |c| (s[c] + 1.0) / 2.0 * l[c] + 3.0))
                .collect()
        };
        let h = [0, 1, 2, 3, 4, 5, 6, 7];
        assert!(is_axis_aligned_cube(&box_points([2.0; 3]), &h));
        assert!(!is_axis_aligned_cube(&box_points([2.0, 1.0, 0.5]), &h));
        // a rotated cube is not axis-aligned
        let mut p = box_points([1.0; 3]);
        for q in p.chunks_exact_mut(3) {
            let (x, y) = (q[0], q[1]);
            q[0] = 0.6 * x - 0.8 * y;
            q[1] = 0.8 * x + 0.6 * y;
        }
        assert!(!is_axis_aligned_cube(&p, &h));
    }
}

#[cfg(test)]
mod edit_tests {
    use super::*;
    use crate::element::edit_check;

    /// Two cells side by side as hexahedra: regular (`jitter` 0: one stiffness shared by both)
    /// or moved slightly by a pseudo-random amount.
    fn two_cells(jitter: f64) -> (Vec<f64>, Vec<[u32; 8]>) {
        let mut seed = 3;
        let mut rest = Vec::new();
        for k in 0..2 {
            for j in 0..2 {
                for i in 0..3 {
                    for v in [i as f64, j as f64 * 0.8, k as f64 * 1.2] {
                        rest.push(v + jitter * crate::fd_check::rnd(&mut seed));
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

    /// Editing youngModulus, poissonRatio or rayleighStiffness of a running hexahedral FEM
    /// force field updates it in place to exactly what an init with the new values gives (the
    /// stiffnesses recomputed from the rest positions the elements keep in their frames), for
    /// every method, with and without mass, on a regular grid (shared stiffness) or not; an
    /// invalid material is refused, and other Data ask for a re-initialisation.
    #[test]
    fn hexa_fem_material_edits_update_in_place() {
        use canape_core::component::Reaction;
        type Make = fn() -> HexahedronFemForceField;
        let makes: [(&str, Make); 3] = [
            ("HexahedronFEMForceField", HexahedronFemForceField::new),
            (
                "HexahedronFEMForceFieldAndMass",
                HexahedronFemForceField::with_mass,
            ),
            ("HexahedralFEMForceField", || {
                HexahedronFemForceField::hexahedral(false)
            }),
        ];
        for jitter in [0.0, 0.05] {
            let (rest, hexahedra) = two_cells(jitter);
            let mesh = canape_core::mesh::Mesh {
                hexahedra,
                ..Default::default()
            };
            let mut seed = 9;
            let x: Vec<f64> = crate::fd_check::rigidly_moved(&rest)
                .iter()
                .map(|v| v + 0.05 * crate::fd_check::rnd(&mut seed))
                .collect();
            for (class, make) in makes {
                for method in ["large", "polar", "small"] {
                    if method == "small" && class == "HexahedralFEMForceField" {
                        continue;
                    }
                    let before = [
                        ("method", method),
                        ("youngModulus", "1000"),
                        ("poissonRatio", "0.3"),
                        ("rayleighStiffness", "0.1"),
                    ];
                    let edit = |after: &[(&str, &str)]| {
                        edit_check::edit(make, &rest, &mesh, &before, after, &x)
                    };
                    assert_eq!(edit(&[("youngModulus", "1500")]), Reaction::Updated);
                    assert_eq!(edit(&[("poissonRatio", "0.4")]), Reaction::Updated);
                    assert_eq!(edit(&[("rayleighStiffness", "0.25")]), Reaction::Updated);
                    // one modulus per element (two stiffnesses where the grid shared one)
                    let per_element = [
                        ("youngModulus", "1200 900"),
                        ("poissonRatio", "0.35"),
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
                        edit(&[("youngModulus", "2000"), ("drawing", "0")]),
                        Reaction::Reinit
                    );
                    if class == "HexahedronFEMForceFieldAndMass" {
                        assert_eq!(edit(&[("density", "3")]), Reaction::Reinit);
                    }
                }
            }
        }
    }
}
