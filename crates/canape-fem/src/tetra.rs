//! TetrahedronFEMForceField and TetrahedralCorotationalFEMForceField.
//!
//! Linear tetrahedra with SOFA's formulation (Sofa/Component/SolidMechanics/FEM/Elastic/src/sofa/
//! component/solidmechanics/fem/elastic/TetrahedronFEMForceField.inl and
//! TetrahedralCorotationalFEMForceField.inl): a strain-displacement matrix J built from cofactors
//! (J = 6V·∇N), the material matrix divided by 36V, per-element rest frames, and for the
//! corotational methods a rotation recomputed in every `add_force` and reused by `add_dforce` and
//! assembly. Displacements are rest − current in the element frame, so F = J·M·Jᵀ·D is added.

mod data;
mod element;
mod product;
mod stress;

use crate::common::{
    check_material, fem_inputs, polar_q, polar_q_all, stable_rotation, Material, ParallelLoop,
};
use crate::pairs::NodePairs;
use canape_core::component::{Component, ForceField, Reaction};
use canape_core::data::{ChangedData, DataTable};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};
use data::Handles;
use element::{edge_matrix, kernel, kernel_with, Plasticity};
pub use element::{gradients, rotation_large};
use product::{dforce_range_dispatch, element_blocks, pairs_of, WorldBlocks, WorldElem};

/// Corotational method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Small,
    Large,
    Polar,
    Svd,
}

/// Which SOFA class this instance stands for (their Data and small numeric details differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    TetrahedronFem,
    TetrahedralCorotational,
}

/// What the stiffness product (`add_dforce`, called at every CG iteration) reads: kept apart
/// from the rest shape so that the product streams 208 bytes per element instead of 448.
#[derive(Clone, Debug)]
struct Elem {
    idx: [u32; 4],
    /// Gradient coefficients (gx, gy, gz) of each node: J = 6V·∇N in the element frame.
    g: [[f64; 3]; 4],
    mat: Material,
    /// Rotation from the last add_force (world → element frame).
    rot: Mat3,
}

/// Rest shape of an element, read by `add_force` only.
#[derive(Clone, Debug)]
struct Shape {
    /// Rest positions in the element frame (large: relative to node 0).
    rest: [Vec3; 4],
    /// Initial rotation (world → element frame).
    r0: Mat3,
    /// Inverse of the rest edge matrix (svd method).
    a0_inv: Mat3,
    /// The element's index in the topology (its entry in a per-element modulus list).
    tet: u32,
    /// The material's divisor: a multiple of the rest volume (SOFA's per-class convention).
    div: f64,
}

/// Both tetrahedral FEM force fields (selected by [`Flavor`]).
#[derive(Clone)]
pub struct TetrahedronFemForceField {
    flavor: Flavor,
    data: DataTable,
    /// Typed handles to the Data in `data`.
    h: Handles,
    method: Method,
    elems: Vec<Elem>,
    /// Rest shapes, parallel to `elems`.
    shapes: Vec<Shape>,
    /// World-frame operators of the last `add_force`, parallel to `elems`.
    world: WorldBlocks,
    /// Materials of `world`: one per element, or a single one shared by all.
    world_mats: Vec<Material>,
    /// The stiffness product over worker threads.
    par: ParallelLoop,
    rayleigh: f64,
    /// Node pairs of the elements for assembly, made on the first assembly.
    pairs: std::sync::OnceLock<NodePairs>,
    /// The stiffness summed per node pair, for the products of one step (see
    /// [`NODE_OPERATOR_MIN_PRODUCTS`]).
    node_op: NodeOperator,
    /// The polar method's rotations of the current `add_force` (kept: no allocation per step).
    polar: Vec<Mat3>,
    /// SOFA's plasticity (`plasticMaxThreshold` > 0), with each element's plastic strain.
    plastic: Option<Plasticity>,
}

/// Products per `add_force` from which the stiffness products of a step go through the
/// stiffness summed per node pair ([`NodeOperator`]) instead of element by element: summing
/// costs about as much as six element-wise products, and a summed product about a quarter of
/// one on a tetrahedral mesh (about 1.3 symmetric 3×3 blocks per element, read in node order,
/// instead of gathering and scattering four nodes per element).
pub const NODE_OPERATOR_MIN_PRODUCTS: u32 = 8;

/// The element stiffnesses summed per node and per node pair (a symmetric block matrix),
/// rebuilt lazily after each `add_force` when the previous interval between two `add_force`
/// made at least [`NODE_OPERATOR_MIN_PRODUCTS`] products (an implicit step solved by CG; a step
/// solved by a direct solver makes one). Used only where the element loop would run on one
/// thread. A matrix-free solver still sees a product: only the force field's own storage of
/// its operator changes (results differ from the element-wise sums by round-off).
#[derive(Clone, Debug)]
struct NodeOperator {
    /// K = Σ J_w M J_wᵀ (not scaled by k), once built.
    matrix: Option<canape_core::matrix::SymBsr3>,
    /// Whether `matrix` holds the operator of the current rotations.
    fresh: bool,
    /// Products since the last `add_force`, and in the interval before it.
    products: u32,
    last_products: u32,
    /// Whether the last product went through `matrix`.
    used: bool,
    /// The product over worker threads, by block rows.
    par: ParallelLoop,
    /// K dx.
    kdx: Vec<f64>,
}

/// Block rows below which the node-pair product stays on one thread: a row (a node) carries
/// about as much work as four or five tetrahedra.
const NODE_OPERATOR_MIN_PARALLEL_ROWS: usize = crate::common::PARALLEL_MIN_ELEMENTS / 4;

impl Default for NodeOperator {
    fn default() -> Self {
        NodeOperator {
            matrix: None,
            fresh: false,
            products: 0,
            last_products: 0,
            used: false,
            par: ParallelLoop::with_min_items(NODE_OPERATOR_MIN_PARALLEL_ROWS),
            kdx: Vec::new(),
        }
    }
}

impl TetrahedronFemForceField {
    pub fn new(flavor: Flavor) -> Self {
        let (data, h) = Handles::declare(flavor == Flavor::TetrahedronFem);
        TetrahedronFemForceField {
            flavor,
            data,
            h,
            method: Method::Large,
            elems: Vec::new(),
            shapes: Vec::new(),
            world: WorldBlocks::default(),
            world_mats: Vec::new(),
            par: ParallelLoop::default(),
            rayleigh: 0.0,
            pairs: std::sync::OnceLock::new(),
            node_op: NodeOperator::default(),
            polar: Vec::new(),
            plastic: None,
        }
    }

    /// Read `method` from Data; an unknown name selects `large` (as SOFA) and is returned as error.
    pub fn set_method_from_data(&mut self) -> Result<(), crate::common::MethodError> {
        let m = self.data.get(self.h.method).to_string();
        let (method, ok) = match (m.as_str(), self.flavor) {
            ("small", _) => (Method::Small, true),
            ("large", _) => (Method::Large, true),
            ("polar", _) => (Method::Polar, true),
            ("svd", Flavor::TetrahedronFem) => (Method::Svd, true),
            _ => (Method::Large, false),
        };
        self.method = method;
        if ok {
            Ok(())
        } else {
            Err(crate::common::MethodError::Unknown { method: m })
        }
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn nb_elements(&self) -> usize {
        self.elems.len()
    }

    /// Recompute every element's material from the current moduli (after an edit), keeping
    /// the rest shapes, rotations and plastic strains.
    fn update_materials(&mut self) {
        let (young, nu) = self.h.moduli(&self.data);
        for (el, sh) in self.elems.iter_mut().zip(&self.shapes) {
            let e = sh.tet as usize;
            el.mat = Material::new(
                *young.get(e).unwrap_or(&young[0]),
                *nu.get(e).unwrap_or(&nu[0]),
                sh.div,
            );
        }
        self.share_materials();
        // the operator summed per node pair holds the old materials
        self.node_op = NodeOperator::default();
    }

    /// One material for the world-frame operators when all elements share it.
    fn share_materials(&mut self) {
        let first = self.elems.first().map(|e| e.mat);
        self.world_mats = match first {
            Some(m0) if self.elems.iter().all(|e| e.mat == m0) => vec![m0],
            _ => self.elems.iter().map(|e| e.mat).collect(),
        };
    }

    /// Set up elements from rest positions and tetrahedra (used by init and tests).
    pub fn setup(&mut self, rest: &[f64], tets: &[[u32; 4]]) -> Vec<String> {
        let mut warnings = Vec::new();
        let (young, nu) = self.h.moduli(&self.data);
        self.elems.clear();
        self.shapes.clear();
        self.world.clear();
        self.world_mats.clear();
        self.par.reset();
        self.pairs = std::sync::OnceLock::new();
        self.node_op = NodeOperator::default();
        let mut degenerate = 0;
        for (e, t) in tets.iter().enumerate() {
            let p = [
                get3(rest, t[0] as usize),
                get3(rest, t[1] as usize),
                get3(rest, t[2] as usize),
                get3(rest, t[3] as usize),
            ];
            let v6 = (p[1] - p[0])
                .cross(&(p[2] - p[0]))
                .dot(&(p[3] - p[0]))
                .abs();
            let (ye, ne) = (
                *young.get(e).unwrap_or(&young[0]),
                *nu.get(e).unwrap_or(&nu[0]),
            );
            let div = match self.flavor {
                Flavor::TetrahedronFem => (v6 / 6.0) * 36.0,
                Flavor::TetrahedralCorotational => v6 * 6.0,
            };
            if v6 == 0.0 || !v6.is_finite() {
                degenerate += 1;
                continue;
            }
            let mat = Material::new(ye, ne, div);
            let mut el = Elem {
                idx: *t,
                g: [[0.0; 3]; 4],
                mat,
                rot: Mat3::identity(),
            };
            let mut sh = Shape {
                rest: p,
                r0: Mat3::identity(),
                a0_inv: Mat3::identity(),
                tet: e as u32,
                div,
            };
            match self.method {
                Method::Small => {
                    el.g = gradients(&p[0], &p[1], &p[2], &p[3]);
                }
                Method::Large => {
                    let r = rotation_large(&p[0], &p[1], &p[2]);
                    let mut q = [r * p[0], r * p[1], r * p[2], r * p[3]];
                    for k in 1..4 {
                        q[k] -= q[0];
                    }
                    q[0] = Vec3::zeros();
                    el.g = gradients(&q[0], &q[1], &q[2], &q[3]);
                    sh.rest = q;
                    sh.r0 = r;
                    el.rot = r;
                }
                Method::Polar | Method::Svd => {
                    let a0 = edge_matrix(&p);
                    let r = polar_q(&a0);
                    let q = [r * p[0], r * p[1], r * p[2], r * p[3]];
                    el.g = gradients(&q[0], &q[1], &q[2], &q[3]);
                    sh.rest = q;
                    sh.r0 = r;
                    el.rot = r;
                    sh.a0_inv = a0.try_inverse().unwrap_or_else(Mat3::identity);
                }
            }
            self.world
                .push(WorldElem::new(&el, self.method == Method::Small));
            self.elems.push(el);
            self.shapes.push(sh);
        }
        self.share_materials();
        if degenerate > 0 {
            warnings.push(format!(
                "{degenerate} tetrahedra have zero rest volume: they are left out"
            ));
        }
        warnings
    }
}

impl TetrahedronFemForceField {
    /// SOFA's class name of this instance.
    fn sofa_class(&self) -> &'static str {
        match self.flavor {
            Flavor::TetrahedronFem => "TetrahedronFEMForceField",
            Flavor::TetrahedralCorotational => "TetrahedralCorotationalFEMForceField",
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if let Err(other) = self.set_method_from_data() {
            ctx.warn(format!(
                "unknown method '{other}' for {}; using 'large' as SOFA does",
                self.class_name()
            ));
        }
        if self.data.get(self.h.compute_global_matrix) {
            ctx.warn("computeGlobalMatrix/assembling is not supported: the element-wise formulation is used (same forces)");
        }
        if !self.data.get(self.h.local_stiffness_factor).is_empty() {
            ctx.warn("localStiffnessFactor is not supported yet and is ignored");
        }
        self.plastic = None;
        if let Some(p) = self.h.plasticity {
            let max = self.data.get(p.max_threshold);
            if max > 0.0 {
                self.plastic = Some(Plasticity {
                    yield_threshold: self.data.get(p.yield_threshold),
                    max_threshold: max,
                    creep: self.data.get(p.creep),
                    strains: Vec::new(),
                });
            }
        }
        if self.data.get(self.h.update_stiffness_matrix) {
            ctx.warn("updateStiffnessMatrix is not supported yet and is ignored");
        }
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        self.elems.clear();
        self.shapes.clear();
        self.world.clear();
        self.world_mats.clear();
        self.par.reset();
        self.pairs = std::sync::OnceLock::new();
        self.node_op = NodeOperator::default();
        let (young, nu) = self.h.moduli(&self.data);
        if let Some(m) = check_material(&young, &nu) {
            ctx.error(m);
            return;
        }
        let has = |m: &canape_core::mesh::Mesh| !m.tetrahedra.is_empty() || !m.hexahedra.is_empty();
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, has, "tetrahedra (or hexahedra)")
        else {
            return;
        };
        let tets = if mesh.tetrahedra.is_empty() {
            let grid = ctx.topology_where(has).and_then(|t| t.grid_size());
            ctx.warn("each hexahedron has been split into 6 tetrahedra (as SOFA does)");
            split_hexahedra(&mesh.hexahedra, grid)
        } else {
            mesh.tetrahedra.clone()
        };
        for w in self.setup(&rest, &tets) {
            ctx.warn(w);
        }
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&self.h.material_indices()) || self.elems.is_empty() {
            return Reaction::Reinit;
        }
        let (young, nu) = self.h.moduli(&self.data);
        if let Some(m) = check_material(&young, &nu) {
            return Reaction::Refused(vec![m]);
        }
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        self.update_materials();
        Reaction::Updated
    }
}

canape_core::impl_component!(
    TetrahedronFemForceField,
    |s| s.sofa_class(),
    init,
    data_changed
);

/// SOFA's TetrahedronFEMForceField on a hexahedral topology (TetrahedronFEMForceField.inl,
/// init): each hexahedron split into 6 tetrahedra after mirroring its vertices by its grid
/// position (even x, odd y, odd z cells; a plain mesh counts as a 2 × 1 grid), always with the
/// same six-tetrahedron list.
pub fn split_hexahedra(hexa: &[[u32; 8]], grid: Option<[usize; 3]>) -> Vec<[u32; 4]> {
    let (nx, ny) = match grid {
        Some(n) => (n[0].saturating_sub(1).max(1), n[1].saturating_sub(1).max(1)),
        None => (2, 1),
    };
    let mut out = Vec::with_capacity(hexa.len() * 6);
    for (i, h) in hexa.iter().enumerate() {
        let mut c = *h;
        if (i % nx) % 2 == 0 {
            c.swap(0, 1);
            c.swap(3, 2);
            c.swap(4, 5);
            c.swap(7, 6);
        }
        if ((i / nx) % ny) % 2 == 1 {
            c.swap(0, 3);
            c.swap(1, 2);
            c.swap(4, 7);
            c.swap(5, 6);
        }
        if (i / (nx * ny)) % 2 == 1 {
            c.swap(0, 4);
            c.swap(1, 5);
            c.swap(2, 6);
            c.swap(3, 7);
        }
        out.extend_from_slice(&canape_core::mesh::hexa_to_tetras(c, false));
    }
    out
}

impl ForceField for TetrahedronFemForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        let method = self.method;
        let op = &mut self.node_op;
        op.last_products = std::mem::take(&mut op.products);
        // the small method's operator does not depend on the positions
        op.fresh &= method == Method::Small;
        if matches!(method, Method::Polar | Method::Svd) {
            // the polar rotations first, four elements at a time (independent iterations side
            // by side; svd uses them for the elements that are not nearly flat or inverted)
            let elems = &self.elems;
            polar_q_all(
                elems.len(),
                |e| edge_matrix(&elems[e].idx.map(|i| get3(x, i as usize))),
                &mut self.polar,
            );
        }
        let polar = &self.polar;
        let plastic = &mut self.plastic;
        if let Some(p) = plastic.as_mut() {
            p.strains.resize(self.elems.len(), [0.0; 6]);
        }
        for (e, (el, sh)) in self.elems.iter_mut().zip(&self.shapes).enumerate() {
            let [a, b, c, d] = el.idx.map(|i| i as usize);
            let p = [get3(x, a), get3(x, b), get3(x, c), get3(x, d)];
            let mut dd = [0.0; 12];
            let rot = match method {
                Method::Small => {
                    for (k, &n) in [b, c, d].iter().enumerate() {
                        let pk = p[k + 1];
                        for i in 0..3 {
                            let x0 = sh.rest[k + 1][i] - sh.rest[0][i];
                            dd[3 * (k + 1) + i] = x0 - pk[i] + p[0][i];
                        }
                        let _ = n;
                    }
                    let fe = match plastic.as_mut() {
                        Some(p) => kernel_with(&el.g, &el.mat, &dd, |s| p.elastic(e, s)),
                        None => kernel(&el.g, &el.mat, &dd),
                    };
                    for (k, &n) in [a, b, c, d].iter().enumerate() {
                        for i in 0..3 {
                            f[3 * n + i] += fe[3 * k + i];
                        }
                    }
                    continue;
                }
                Method::Large => {
                    let mut r = rotation_large(&p[0], &p[1], &p[2]);
                    if !r.iter().all(|v| v.is_finite()) {
                        // collapsed edge: keep the last valid frame rather than spreading NaN
                        r = el.rot;
                    }
                    let mut q = [r * p[0], r * p[1], r * p[2], r * p[3]];
                    q[1].x -= q[0].x;
                    q[2].x -= q[0].x;
                    q[2].y -= q[0].y;
                    q[3] -= q[0];
                    let rr = &sh.rest;
                    dd = [
                        0.0,
                        0.0,
                        0.0,
                        rr[1].x - q[1].x,
                        0.0,
                        0.0,
                        rr[2].x - q[2].x,
                        rr[2].y - q[2].y,
                        0.0,
                        rr[3].x - q[3].x,
                        rr[3].y - q[3].y,
                        rr[3].z - q[3].z,
                    ];
                    r
                }
                Method::Polar | Method::Svd => {
                    // polar[e]: the polar factor of edge_matrix(&p), computed before the loop
                    let r = if method == Method::Svd {
                        let fm = edge_matrix(&p) * sh.a0_inv;
                        if fm.determinant() < 1e-6 {
                            stable_rotation(&fm) * sh.r0
                        } else {
                            polar[e]
                        }
                    } else {
                        polar[e]
                    };
                    for k in 0..4 {
                        let q = r * p[k];
                        for i in 0..3 {
                            dd[3 * k + i] = sh.rest[k][i] - q[i];
                        }
                    }
                    r
                }
            };
            el.rot = rot;
            self.world.set_gradients(e, &WorldElem::new(el, false).gw);
            let fe = match plastic.as_mut() {
                Some(p) => kernel_with(&el.g, &el.mat, &dd, |s| p.elastic(e, s)),
                None => kernel(&el.g, &el.mat, &dd),
            };
            let rt = rot.transpose();
            for (k, &n) in [a, b, c, d].iter().enumerate() {
                let fk = rt * Vec3::new(fe[3 * k], fe[3 * k + 1], fe[3 * k + 2]);
                f[3 * n] += fk.x;
                f[3 * n + 1] += fk.y;
                f[3 * n + 2] += fk.z;
            }
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        self.node_op.products += 1;
        self.node_op.used = self.node_op.last_products >= NODE_OPERATOR_MIN_PRODUCTS
            && self.node_op_product(dx, df, k_factor);
        if self.node_op.used {
            return;
        }
        let (world, mats) = (&self.world, &self.world_mats);
        self.par.run(
            world.len(),
            |e| world.idx(e),
            df,
            |range, out, lo| dforce_range_dispatch(world, mats, range, dx, out, lo, k_factor),
        );
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        // −k Rᵀ J M Jᵀ R = −k J_w M J_wᵀ (the world gradients the product uses), block by block
        let (world, mats) = (&self.world, &self.world_mats);
        let stride = usize::from(mats.len() > 1);
        pairs_of(&self.pairs, &self.elems).assemble::<4, 6>(m, offset, |e, want_pairs, out| {
            let el = &mats[e * stride];
            let mat = Material {
                diag: -k_factor * el.diag,
                off: -k_factor * el.off,
                shear: -k_factor * el.shear,
            };
            element_blocks(&world.get(e).gradients(), &mat, want_pairs, out);
        });
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }

    fn nodal_scalars(&self, x: &[f64]) -> Option<Vec<f64>> {
        let wanted = self.data.get(self.h.compute_von_mises_stress) > 0
            && self
                .h
                .show_stress_per_node
                .is_some_and(|(a, b)| self.data.get(a) || self.data.get(b));
        wanted.then(|| self.von_mises_per_node(x))
    }

    fn nodal_scalar_floor(&self) -> f64 {
        // a stress of 1e-9·E is a strain of 1e-9: round-off of the rest shape, not a load
        let e = self
            .data
            .reals("youngModulus")
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        1e-9 * e
    }
}
