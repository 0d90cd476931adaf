//! Nonlinear distance mappings over the edges of a topology (Vec3d → Vec1d), following
//! Sofa/Component/Mapping/NonLinear/.../DistanceMapping.inl, SquareDistanceMapping.inl and
//! DistanceMultiMapping.inl:
//! - DistanceMapping: out_e = |p_b − p_a| − restLength_e, J row e = (−u, +u) with u the unit
//!   direction; geometric stiffness f/l (I − u uᵀ) per edge.
//! - SquareDistanceMapping: out_e = |p_b − p_a|², J row e = (−2d, +2d); geometric stiffness
//!   2f [[I, −I], [−I, I]].
//! - DistanceMultiMapping: as DistanceMapping, with edge ends taken from several inputs through
//!   `indexPairs` (input index, point index).
//!
//! The geometric stiffness option (`geometricStiffness`: None 0, Exact 1, Stabilized 2, the
//! default) keeps, when Stabilized, only the edges whose output force is negative (in
//! extension), as SOFA does.

use crate::mapping::linear::{mapping_base, resolve_mapping_ends, MappingData};
use crate::mapping::nonlinear::rigid::parse_gs;
use crate::mass::linked_or_context_topology;
use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::data::{Data, DataKind, DataTable, Flag, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use canape_types::{get3, DofType, Mat3, Vec3};

/// Which distance the mapping outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Distance,
    SquareDistance,
    MultiDistance,
}

canape_core::data_schema! {
    /// The Data of the three distance mappings (after [`MappingData`]).
    struct DistanceData {
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
        geometric_stiffness: Text = ("geometricStiffness", DataKind::Str, "Stabilized", "Method used to compute the geometric stiffness: None (0), Exact (1), Stabilized (2)"),
        show_object_scale: Real = ("showObjectScale", DataKind::Real, "0", "Scale for object display"),
        show_color: Reals = ("showColor", DataKind::Reals(4), "1 1 0 1", "Color for object display"),
    }
}

canape_core::data_schema! {
    /// The rest lengths of DistanceMapping and DistanceMultiMapping (after [`DistanceData`]).
    struct DistanceRestData {
        compute_distance: Flag = ("computeDistance", DataKind::Bool, "0", "if 'computeDistance = true', then rest length of each element equal 0, otherwise rest length is the initial lenght of each of them"),
        rest_lengths: Reals = ("restLengths", DataKind::Reals(1), "", "Rest lengths of the connections"),
    }
}

canape_core::data_schema! {
    /// DistanceMultiMapping's own Data (after [`DistanceRestData`]).
    struct DistanceMultiData {
        index_pairs: Ints = ("indexPairs", DataKind::Ints(2), "", "list of couples (parent index + index in the parent)"),
    }
}

/// DistanceMapping, SquareDistanceMapping and DistanceMultiMapping (one implementation).
#[derive(Clone)]
pub struct DistanceMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`: every mapping's, the distances', the rest lengths'
    /// (not SquareDistanceMapping) and `indexPairs` (DistanceMultiMapping).
    m: MappingData,
    d: DistanceData,
    rest_d: Option<DistanceRestData>,
    index_pairs: Option<Data<Ints>>,
    kind: Kind,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    /// Edge ends: (input, point) for each end of each edge.
    ends: Vec<[(u32, u32); 2]>,
    rest: Vec<f64>,
    /// Per edge at the last apply: unit direction (or 2d for the square distance) and 1/length.
    dir: Vec<Vec3>,
    inv_len: Vec<f64>,
    gs: u32,
}

impl DistanceMapping {
    pub fn new(kind: Kind) -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (mut data, d) = DistanceData::declare(data);
        let mut rest_d = None;
        if kind != Kind::SquareDistance {
            let (t, r) = DistanceRestData::declare(data);
            data = t;
            rest_d = Some(r);
        }
        let mut index_pairs = None;
        if kind == Kind::MultiDistance {
            let (t, p) = DistanceMultiData::declare(data);
            data = t;
            index_pairs = Some(p.index_pairs);
        }
        DistanceMapping {
            data,
            m,
            d,
            rest_d,
            index_pairs,
            kind,
            input: Vec::new(),
            output: None,
            ends: Vec::new(),
            rest: Vec::new(),
            dir: Vec::new(),
            inv_len: Vec::new(),
            gs: 2,
        }
    }

    fn class(&self) -> &'static str {
        match self.kind {
            Kind::Distance => "DistanceMapping",
            Kind::SquareDistance => "SquareDistanceMapping",
            Kind::MultiDistance => "DistanceMultiMapping",
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        if e.out_dof != DofType::Vec1 || e.in_dofs.iter().any(|d| *d != DofType::Vec3) {
            ctx.error(format!(
                "{} maps Vec3d inputs to a Vec1d output ({} to {} given)",
                self.class(),
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        if self.kind != Kind::MultiDistance && e.inputs.len() != 1 {
            ctx.error(format!("{} maps one input", self.class()));
            return;
        }
        self.gs = match parse_gs(self.data.get(self.d.geometric_stiffness)) {
            Some(g) => g,
            None => {
                ctx.warn(format!(
                    "geometricStiffness '{}' is not None, Exact, Stabilized, 0, 1 or 2: None is used, as SOFA reads it",
                    self.data.get(self.d.geometric_stiffness)
                ));
                0
            }
        };
        let Some(mesh) = linked_or_context_topology(ctx, &self.data, self.d.topology) else {
            ctx.error("no topology with edges: set topology=\"@…\" or put an EdgeSetTopologyContainer in the context");
            return;
        };
        if mesh.edges.is_empty() {
            ctx.error("the topology has no edges");
            return;
        }
        let scene = ctx.scene;
        let sizes: Vec<u32> = e
            .inputs
            .iter()
            .map(|c| scene.state(*c).map_or(0, |s| s.size() as u32))
            .collect();
        let pairs: Vec<(u32, u32)> = if let Some(index_pairs) = self.index_pairs {
            self.data
                .get(index_pairs)
                .chunks_exact(2)
                .map(|p| (p[0], p[1]))
                .collect()
        } else {
            (0..sizes[0]).map(|i| (0, i)).collect()
        };
        let mut ends = Vec::with_capacity(mesh.edges.len());
        for edge in &mesh.edges {
            let end = |v: u32| pairs.get(v as usize).copied();
            let (Some(a), Some(b)) = (end(edge[0]), end(edge[1])) else {
                ctx.error(format!(
                    "edge ({}, {}) refers to a point the {} does not have",
                    edge[0],
                    edge[1],
                    if self.kind == Kind::MultiDistance {
                        "indexPairs list"
                    } else {
                        "input state"
                    }
                ));
                return;
            };
            for (m, j) in [a, b] {
                if m as usize >= sizes.len() || j >= sizes[m as usize] {
                    ctx.error(format!(
                        "index pair ({m}, {j}) is out of the inputs (input {m} has {} points)",
                        sizes.get(m as usize).copied().unwrap_or(0)
                    ));
                    return;
                }
            }
            ends.push([a, b]);
        }
        // rest lengths: given, or the distances at the current positions, or 0
        // (computeDistance); recomputed whole when their count does not match
        if let Some(r) = self.rest_d {
            let given = self.data.get(r.rest_lengths);
            if given.len() == ends.len() {
                self.rest = given.to_vec();
            } else if self.data.get(r.compute_distance) {
                self.rest = vec![0.0; ends.len()];
            } else {
                let x = |(m, j): (u32, u32)| {
                    scene
                        .state(e.inputs[m as usize])
                        .map_or(Vec3::zeros(), |s| get3(s.vec(VecId::POSITION), j as usize))
                };
                self.rest = ends.iter().map(|[a, b]| (x(*a) - x(*b)).norm()).collect();
            }
            let _ = self
                .data
                .put(r.rest_lengths, Value::Reals(self.rest.clone()));
        } else {
            self.rest = vec![0.0; ends.len()];
        }
        self.dir = vec![Vec3::zeros(); ends.len()];
        self.inv_len = vec![0.0; ends.len()];
        self.ends = ends;
        self.input = e.inputs;
        self.output = Some(e.output);
    }

    /// Whether edge `i` under output force `f` has geometric stiffness.
    fn stiff(&self, f: f64) -> bool {
        self.gs == 1 || (self.gs == 2 && f < 0.0)
    }

    /// The geometric stiffness block of edge `i` (on the (a, a) position; (a, b) is its
    /// opposite).
    fn block(&self, i: usize, f: f64) -> Mat3 {
        match self.kind {
            Kind::SquareDistance => Mat3::identity() * (2.0 * f),
            _ => {
                let u = self.dir[i];
                (Mat3::identity() - u * u.transpose()) * (f * self.inv_len[i])
            }
        }
    }
}

impl_component!(DistanceMapping, |s| s.class(), init);

impl Mapping for DistanceMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.ends.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        for (i, [(ma, a), (mb, b)]) in self.ends.iter().enumerate() {
            let pa = get3(x_in.get(*ma as usize), *a as usize);
            let pb = get3(x_in.get(*mb as usize), *b as usize);
            let d = pb - pa;
            match self.kind {
                Kind::SquareDistance => {
                    x_out[i] = d.norm_squared();
                    self.dir[i] = d * 2.0;
                }
                _ => {
                    let l = d.norm();
                    x_out[i] = l - self.rest[i];
                    if l > f64::EPSILON {
                        self.inv_len[i] = 1.0 / l;
                        self.dir[i] = d / l;
                    } else {
                        // SOFA's arbitrary direction for a zero-length edge
                        self.inv_len[i] = 0.0;
                        let p = 1.0 / 3f64.sqrt();
                        self.dir[i] = Vec3::new(p, p, p);
                    }
                }
            }
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        for (i, [(ma, a), (mb, b)]) in self.ends.iter().enumerate() {
            let va = get3(v_in.get(*ma as usize), *a as usize);
            let vb = get3(v_in.get(*mb as usize), *b as usize);
            let u = self.dir[i];
            // the sparse row's product, its entries summed in column order as SOFA's J·v
            let (first, fs, second, ss) = if (ma, a) <= (mb, b) {
                (va, -1.0, vb, 1.0)
            } else {
                (vb, 1.0, va, -1.0)
            };
            let mut s = 0.0;
            for c in 0..3 {
                s += fs * u[c] * first[c];
            }
            for c in 0..3 {
                s += ss * u[c] * second[c];
            }
            v_out[i] = s;
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        for (i, [(ma, a), (mb, b)]) in self.ends.iter().enumerate() {
            let g = self.dir[i] * f_out[i];
            canape_types::add3(&mut f_in[*ma as usize], *a as usize, &-g);
            canape_types::add3(&mut f_in[*mb as usize], *b as usize, &g);
        }
    }
    fn apply_djt(&self, dx_in: &MapInputs<'_>, f_out: &[f64], df_in: &mut [Vec<f64>], k: f64) {
        if self.gs == 0 {
            return;
        }
        for (i, [(ma, a), (mb, b)]) in self.ends.iter().enumerate() {
            let f = f_out.get(i).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            let dx = get3(dx_in.get(*mb as usize), *b as usize)
                - get3(dx_in.get(*ma as usize), *a as usize);
            let df = self.block(i, f) * k * dx;
            canape_types::add3(&mut df_in[*ma as usize], *a as usize, &-df);
            canape_types::add3(&mut df_in[*mb as usize], *b as usize, &df);
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (i, [(ma, a), (mb, b)]) in self.ends.iter().enumerate() {
            for c in 0..3 {
                out.push(JEntry {
                    row: i as u32,
                    input: *ma,
                    col: 3 * a + c as u32,
                    val: -self.dir[i][c],
                });
                out.push(JEntry {
                    row: i as u32,
                    input: *mb,
                    col: 3 * b + c as u32,
                    val: self.dir[i][c],
                });
            }
        }
    }
    fn geometric_stiffness(&self, f_out: &[f64], out: &mut Vec<KEntry>) {
        if self.gs == 0 {
            return;
        }
        for (i, [(ma, a), (mb, b)]) in self.ends.iter().enumerate() {
            let f = f_out.get(i).copied().unwrap_or(0.0);
            if !self.stiff(f) {
                continue;
            }
            let blk = self.block(i, f);
            for ((ir, r), (ic, c), s) in [
                ((*ma, *a), (*ma, *a), 1.0),
                ((*ma, *a), (*mb, *b), -1.0),
                ((*mb, *b), (*ma, *a), -1.0),
                ((*mb, *b), (*mb, *b), 1.0),
            ] {
                for p in 0..3 {
                    for q in 0..3 {
                        out.push(KEntry {
                            in_row: ir,
                            row: 3 * r + p as u32,
                            in_col: ic,
                            col: 3 * c + q as u32,
                            val: s * blk[(p, q)],
                        });
                    }
                }
            }
        }
    }
}
