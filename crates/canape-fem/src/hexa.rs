//! HexahedronFEMForceField: trilinear hexahedra, 2×2×2 Gauss stiffness in a rotated rest frame,
//! corotational by averaged edge directions ("large") or polar decomposition.
//! Follows Sofa/Component/SolidMechanics/FEM/Elastic/src/sofa/component/solidmechanics/fem/
//! elastic/HexahedronFEMForceField.inl: f_e = Rᵀ K (X0r − R x), tangent −Rᵀ K R.

mod element;
mod product;

use crate::common::{check_material, fem_inputs, force_field_data, Material};
use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable, Value};

use canape_core::impl_component;
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
    mass: Option<HexMass>,
    method: HexaMethod,
    elems: Vec<HexElem>,
    /// Element stiffness matrices in the element frame, in component-major order ([`Kp`]: what
    /// the stiffness product reads); consecutive elements of the same shape and material (a
    /// regular grid) share one, which then stays in cache during the products.
    kps: Vec<Box<Kp>>,
    /// Rest positions in the element frame, parallel to `elems` (kept apart: the stiffness
    /// product, run at every CG iteration, reads 108 bytes per element instead of 300).
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
        let data = force_field_data(DataTable::new())
            .with("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)")
            .with("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)")
            .with("method", DataKind::Str, "large", "\"large\" or \"polar\" or \"small\" displacements")
            .with("updateStiffnessMatrix", DataKind::Bool, "0", "")
            .with("gatherPt", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)")
            .with("gatherBsize", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)")
            .with("drawing", DataKind::Bool, "1", "draw the forcefield if true")
            .with("drawPercentageOffset", DataKind::Real, "0.15", "size of the hexa")
            .with("stiffnessMatrices", DataKind::Reals(0), "", "Stiffness matrices per element (K_i)")
            .with("initialPoints", DataKind::Reals(3), "", "Initial Position");
        HexahedronFemForceField {
            data,
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
        f.data = canape_core::data::mass_fields(std::mem::take(&mut f.data))
            .with(
                "density",
                DataKind::Real,
                "1",
                "density == volumetric mass in english (kg.m-3)",
            )
            .with(
                "lumpedMass",
                DataKind::Bool,
                "0",
                "Does it use lumped masses?",
            )
            .with(
                "massMatrices",
                DataKind::Reals(0),
                "",
                "Mass matrices per element (M_i)",
            );
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
        let density = self.data.real("density");
        let lumped = self.data.bool("lumpedMass");
        let separate = self.data.bool("separateGravity");
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

    /// Set up elements from rest positions and hexahedra (used by init and tests).
    pub fn setup(&mut self, rest: &[f64], hexa: &[[u32; 8]]) {
        let young = self.data.reals("youngModulus").to_vec();
        let nu = self.data.reals("poissonRatio").to_vec();
        let young = if young.is_empty() {
            vec![5000.0]
        } else {
            young
        };
        let nu = if nu.is_empty() { vec![0.45] } else { nu };
        self.elems.clear();
        self.kps.clear();
        self.pairs = std::sync::OnceLock::new();
        self.rests.clear();
        self.par.reset();
        for (e, h) in hexa.iter().enumerate() {
            let p: [Vec3; 8] = std::array::from_fn(|w| get3(rest, h[w] as usize));
            let r = frame(self.method, &p);
            let x0r: [Vec3; 8] = std::array::from_fn(|w| r * p[w]);
            let mat = Material::new(
                *young.get(e).unwrap_or(&young[0]),
                *nu.get(e).unwrap_or(&nu[0]),
                1.0,
            );
            let mut k = hexa_stiffness(&mat, &x0r);
            // SOFA's HexahedronFEMForceField scales by the sparse grid's stiffness coefficient
            if let Some(c) = self.coef.get(e).filter(|c| **c != 1.0) {
                k *= *c;
            }
            let kp = component_major(&k);
            if self.kps.last() != Some(&kp) {
                self.kps.push(kp);
            }
            self.elems.push(HexElem {
                idx: *h,
                k: (self.kps.len() - 1) as u32,
                rot: r,
            });
            self.rests
                .push(std::array::from_fn(|c| std::array::from_fn(|w| x0r[w][c])));
        }
    }

    /// Read `method` from Data; an unknown name selects `large` and is returned as error.
    pub fn set_method_from_data(&mut self) -> Result<(), String> {
        let (m, ok) = match self.data.str("method") {
            "large" => (HexaMethod::Large, true),
            "polar" => (HexaMethod::Polar, true),
            "small" => (HexaMethod::Small, true),
            _ => (HexaMethod::Large, false),
        };
        self.method = m;
        if ok {
            Ok(())
        } else {
            Err(self.data.str("method").to_string())
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
        if self.data.bool("updateStiffnessMatrix") {
            ctx.warn("updateStiffnessMatrix is not supported yet and is ignored");
        }
        self.rayleigh = self.data.real("rayleighStiffness");
        self.elems.clear();
        self.pairs = std::sync::OnceLock::new();
        let (y, nu) = (
            self.data.reals("youngModulus").to_vec(),
            self.data.reals("poissonRatio").to_vec(),
        );
        if let Some(m) = check_material(&y, &nu) {
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
        if self.mass.is_some() {
            if self.data.bool("separateGravity") {
                ctx.warn("separateGravity is not supported by HexahedronFEMForceFieldAndMass in Canapé: gravity is left out");
            }
            let g = ctx.gravity();
            self.setup_mass(rest.len() / 3, g);
        }
        let _ = self.data.set_value("initialPoints", Value::Reals(rest));
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

impl_component!(
    HexahedronFemForceField,
    |s| match (s.hexahedral, s.mass.is_some()) {
        (false, true) => "HexahedronFEMForceFieldAndMass",
        (false, false) => "HexahedronFEMForceField",
        (true, true) => "HexahedralFEMForceFieldAndMass",
        (true, false) => "HexahedralFEMForceField",
    },
    init
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
