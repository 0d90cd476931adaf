//! Mechanical mappings besides BarycentricMapping: IdentityMapping, SubsetMapping (linear,
//! Sofa/Component/Mapping/Linear/.../IdentityMapping.inl, SubsetMapping.inl) and RigidMapping
//! (Rigid3 frames carrying points, Sofa/Component/Mapping/NonLinear/.../RigidMapping.inl).
//! Each resolves its input(s) and output at init, checks their DOF types, and exposes its
//! Jacobian (and geometric stiffness where SOFA has one) for assembled solvers.

use crate::base_data;
use crate::mapping::barycentric::resolve_end;
use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext, Scene, Slot};
use canape_core::state::VecId;
use canape_types::dof::{quat_of, rigid3_inverse_rotate, rigid3_rotate, set_quat};
use canape_types::{get3, DataTypes, DofType, Rigid3Types, Vec3};

/// The Data every mapping has (SOFA's BaseMapping and Mapping).
pub fn mapping_data(t: DataTable) -> DataTable {
    base_data(t)
        .with("input", DataKind::Str, "", "Input object(s) to map")
        .with("output", DataKind::Str, "", "Output object to map")
        .with("mapForces", DataKind::Bool, "1", "Are forces mapped ?")
        .with(
            "mapConstraints",
            DataKind::Bool,
            "1",
            "Are constraints mapped ?",
        )
        .with("mapMasses", DataKind::Bool, "1", "Are masses mapped ?")
        .with(
            "mapMatrices",
            DataKind::Bool,
            "0",
            "Are matrix explicit mapped?",
        )
        .with(
            "applyRestPosition",
            DataKind::Bool,
            "0",
            "set to true to apply this mapping to restPosition at init",
        )
}

/// The input states and output state of a mapping, resolved from its `input`/`output` links
/// (several space-separated inputs for multi-mappings; defaults: the parent node's state and
/// this node's), with the DOF type of each.
pub struct Ends {
    pub inputs: Vec<ComponentId>,
    pub in_dofs: Vec<DofType>,
    pub output: ComponentId,
    pub out_dof: DofType,
}

/// Resolve a mapping's ends; reports a clear error and returns None when one is missing or is
/// not a MechanicalObject.
pub fn resolve_ends(ctx: &mut InitContext<'_>, data: &DataTable) -> Option<Ends> {
    let scene: &Scene = ctx.scene;
    let links: Vec<&str> = data.str("input").split_whitespace().collect();
    let links = if links.is_empty() { vec![""] } else { links };
    let mut inputs = Vec::new();
    let mut in_dofs = Vec::new();
    for l in links {
        let Some(c) = resolve_end(scene, ctx.node, ctx.id, l, "..", true) else {
            ctx.error(format!(
                "cannot find the mapping's input '{}' (a MechanicalObject, or a node holding one)",
                if l.is_empty() { "@.." } else { l }
            ));
            return None;
        };
        let Some(st) = scene.state(c) else {
            ctx.error(format!(
                "the mapping's input '{l}' is not a MechanicalObject"
            ));
            return None;
        };
        inputs.push(c);
        in_dofs.push(st.dof);
    }
    let out = data.str("output");
    let Some(output) = resolve_end(scene, ctx.node, ctx.id, out, ".", false) else {
        ctx.error(format!(
            "cannot find the mapping's output '{}' (a MechanicalObject or a visual model in this node)",
            if out.is_empty() { "@." } else { out }
        ));
        return None;
    };
    // a visual model (OglModel) takes 3D points: positions only go down to it
    let out_dof = match scene.state(output) {
        Some(st) => st.dof,
        None if crate::mapping::barycentric::end_positions(scene, output).is_some() => {
            DofType::Vec3
        }
        None => {
            ctx.error("the mapping's output is neither a MechanicalObject nor a visual model");
            return None;
        }
    };
    if inputs.contains(&output) {
        ctx.error("the mapping's output is one of its inputs (a cycle in the mapping graph)");
        return None;
    }
    Some(Ends {
        inputs,
        in_dofs,
        output,
        out_dof,
    })
}

/// Number of points of a state.
fn points_of(scene: &Scene, id: ComponentId) -> usize {
    scene.state(id).map_or(0, |s| s.size())
}

// ---------------------------------------------------------------------------------------------
// IdentityMapping

/// IdentityMapping: out[i] = in[i] (Vec→Vec of the same size, Rigid3→Rigid3, Rigid3→Vec3 center).
#[derive(Clone)]
pub struct IdentityMapping {
    data: DataTable,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    in_dof: DofType,
    out_dof: DofType,
    n: usize,
    template: String,
}

impl IdentityMapping {
    pub fn new(template: &str) -> Self {
        IdentityMapping {
            data: mapping_data(DataTable::new()),
            input: Vec::new(),
            output: None,
            in_dof: DofType::Vec3,
            out_dof: DofType::Vec3,
            n: 0,
            template: template.to_string(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        if e.inputs.len() != 1 {
            ctx.error("IdentityMapping maps one input");
            return;
        }
        let (i, o) = (e.in_dofs[0], e.out_dof);
        let ok = i == o || (i == DofType::Rigid3 && o == DofType::Vec3);
        if !ok || !template_fits(&self.template, i, o) {
            ctx.error(format!(
                "IdentityMapping cannot map {} to {} (supported: the same type, or Rigid3d to Vec3d)",
                i.name(),
                o.name()
            ));
            return;
        }
        self.n = points_of(ctx.scene, e.inputs[0]);
        self.in_dof = i;
        self.out_dof = o;
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

/// Whether a mapping template (`Vec3,Vec1`, or empty) names these input and output types.
pub fn template_fits(template: &str, i: DofType, o: DofType) -> bool {
    let parts: Vec<&str> = template.split(',').map(str::trim).collect();
    if template.trim().is_empty() || parts.len() != 2 {
        return true;
    }
    DofType::from_template(parts[0]) == Some(i) && DofType::from_template(parts[1]) == Some(o)
}

impl_component!(IdentityMapping, "IdentityMapping", init);

impl Mapping for IdentityMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.n)
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let x = x_in.get(0);
        let (ci, co) = (self.in_dof.coord_size(), self.out_dof.coord_size());
        for (o, i) in x_out.chunks_exact_mut(co).zip(x.chunks_exact(ci)) {
            o.copy_from_slice(&i[..co]);
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let v = v_in.get(0);
        let (di, d) = (self.in_dof.deriv_size(), self.out_dof.deriv_size());
        for (o, i) in v_out.chunks_exact_mut(d).zip(v.chunks_exact(di)) {
            o.copy_from_slice(&i[..d]);
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        let (di, d) = (self.in_dof.deriv_size(), self.out_dof.deriv_size());
        for (i, o) in f_in[0].chunks_exact_mut(di).zip(f_out.chunks_exact(d)) {
            for k in 0..d {
                i[k] += o[k];
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        let (di, d) = (self.in_dof.deriv_size(), self.out_dof.deriv_size());
        for p in 0..self.n {
            for k in 0..d {
                out.push(JEntry {
                    row: (p * d + k) as u32,
                    input: 0,
                    col: (p * di + k) as u32,
                    val: 1.0,
                });
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SubsetMapping

/// SubsetMapping: out[j] = in[indices[j]] (same type).
/// SubsetMapping (one input) and SubsetMultiMapping (several inputs, SOFA's
/// Sofa/Component/Mapping/Linear/.../SubsetMultiMapping.inl): each output point copies one point
/// of one input, (input, index) per output point.
#[derive(Clone)]
pub struct SubsetMapping {
    data: DataTable,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    dof: DofType,
    /// The inputs' DOF type: the output's, or Rigid3 for a Vec3 output (the centers).
    in_dof: DofType,
    /// (input, point) of each output point.
    pairs: Vec<(u32, u32)>,
    kind: SubsetKind,
}

/// Which of the subset mappings: one input and indices, several inputs and `indexPairs`, or
/// several inputs concatenated whole (IdentityMultiMapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SubsetKind {
    Subset,
    SubsetMulti,
    IdentityMulti,
}

impl SubsetMapping {
    pub fn new() -> Self {
        let data = mapping_data(DataTable::new())
            .with(
                "indices",
                DataKind::Ints(1),
                "",
                "list of input indices",
            )
            .with(
                "first",
                DataKind::Int,
                "-1",
                "first index (use if indices are sequential)",
            )
            .with(
                "last",
                DataKind::Int,
                "-1",
                "last index (use if indices are sequential)",
            )
            .with(
                "radius",
                DataKind::Real,
                "1e-5",
                "search radius to find corresponding points in case no indices are given",
            )
            .with(
                "handleTopologyChange",
                DataKind::Bool,
                "1",
                "Enable support of topological changes for indices (disable if it is linked from SubsetTopologicalMapping::pointD2S)",
            )
            .with(
                "resizeToModel",
                DataKind::Bool,
                "0",
                "true if I_out should be resized to match the output size",
            )
            .with("topology", DataKind::Str, "", "link to the topology container");
        SubsetMapping {
            data,
            input: Vec::new(),
            output: None,
            dof: DofType::Vec3,
            in_dof: DofType::Vec3,
            pairs: Vec::new(),
            kind: SubsetKind::Subset,
        }
    }

    /// SubsetMultiMapping: `indexPairs` gives (input, point) for each output point.
    pub fn multi() -> Self {
        let data = mapping_data(DataTable::new()).with(
            "indexPairs",
            DataKind::Ints(2),
            "",
            "list of couples (parent index + index in the parent)",
        );
        SubsetMapping {
            kind: SubsetKind::SubsetMulti,
            data,
            ..Self::new()
        }
    }

    /// IdentityMultiMapping: the output is every input's points, in input order.
    pub fn identity_multi() -> Self {
        SubsetMapping {
            kind: SubsetKind::IdentityMulti,
            data: mapping_data(DataTable::new()),
            ..Self::new()
        }
    }

    fn init_multi(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        // the same type, or Rigid3 centers to Vec3 points (SOFA's <Rigid3, Vec3> variant)
        let in_dof = e.in_dofs[0];
        let fits = in_dof == e.out_dof || (in_dof == DofType::Rigid3 && e.out_dof == DofType::Vec3);
        if let Some(d) = e.in_dofs.iter().find(|d| **d != in_dof || !fits) {
            ctx.error(format!(
                "{} maps inputs of one type to an output of the same type, or Rigid3d centers to Vec3d ({} to {} given)",
                canape_core::component::Component::class_name(self),
                d.name(),
                e.out_dof.name()
            ));
            return;
        }
        self.in_dof = in_dof;
        let counts: Vec<u32> = e
            .inputs
            .iter()
            .map(|c| points_of(ctx.scene, *c) as u32)
            .collect();
        let raw: Vec<u32> = if self.kind == SubsetKind::IdentityMulti {
            counts
                .iter()
                .enumerate()
                .flat_map(|(k, &n)| (0..n).flat_map(move |i| [k as u32, i]))
                .collect()
        } else {
            self.data.ints("indexPairs").to_vec()
        };
        let mut pairs = Vec::with_capacity(raw.len() / 2);
        for p in raw.chunks_exact(2) {
            let (k, i) = (p[0], p[1]);
            match counts.get(k as usize) {
                None => {
                    ctx.error(format!(
                        "SubsetMultiMapping: indexPairs names input {k}, but the mapping has {} inputs",
                        counts.len()
                    ));
                    return;
                }
                Some(&n) if i >= n => {
                    ctx.error(format!(
                        "SubsetMultiMapping: point {i} is out of input {k}'s {n} points"
                    ));
                    return;
                }
                _ => pairs.push((k, i)),
            }
        }
        self.pairs = pairs;
        self.dof = e.out_dof;
        self.input = e.inputs;
        self.output = Some(e.output);
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if self.kind != SubsetKind::Subset {
            return self.init_multi(ctx);
        }
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        if e.in_dofs[0] != e.out_dof || e.inputs.len() != 1 {
            ctx.error(format!(
                "SubsetMapping maps one input to an output of the same type ({} to {} given)",
                e.in_dofs[0].name(),
                e.out_dof.name()
            ));
            return;
        }
        let n_in = points_of(ctx.scene, e.inputs[0]) as u32;
        let mut idx = self.data.ints("indices").to_vec();
        let (first, last) = (self.data.int("first"), self.data.int("last"));
        if idx.is_empty() && first >= 0 && last >= first {
            idx = (first as u32..=last as u32).collect();
        }
        if idx.is_empty() {
            // no indices: each output point takes the input point at its position (SOFA's
            // postInit search within `radius`)
            let dof = e.out_dof;
            let cs = dof.coord_size();
            let Some(si) = ctx.scene.state(e.inputs[0]) else {
                return;
            };
            let xo =
                crate::mapping::barycentric::end_positions(ctx.scene, e.output).unwrap_or_default();
            let r = self.data.real("radius");
            let xi = si.vec(VecId::POSITION);
            for p in xo.chunks_exact(cs) {
                let found = xi.chunks_exact(cs).position(|q| {
                    let d2: f64 = q
                        .iter()
                        .zip(p)
                        .take(3)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum();
                    d2 <= r * r
                });
                match found {
                    Some(k) => idx.push(k as u32),
                    None => {
                        ctx.error("SubsetMapping: no indices given and an output point matches no input point");
                        return;
                    }
                }
            }
        }
        if let Some(&bad) = idx.iter().find(|&&i| i >= n_in) {
            ctx.error(format!(
                "SubsetMapping: index {bad} is out of the input's {n_in} points"
            ));
            return;
        }
        self.pairs = idx.into_iter().map(|i| (0, i)).collect();
        self.dof = e.out_dof;
        self.in_dof = e.out_dof;
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

impl Default for SubsetMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl_component!(
    SubsetMapping,
    |s| match s.kind {
        SubsetKind::Subset => "SubsetMapping",
        SubsetKind::SubsetMulti => "SubsetMultiMapping",
        SubsetKind::IdentityMulti => "IdentityMultiMapping",
    },
    init
);

impl Mapping for SubsetMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.pairs.len())
    }
    // each output point copies the first values of its input point (all of them when the
    // types are the same, a rigid's center for a Vec3 output)
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let (c, ic) = (self.dof.coord_size(), self.in_dof.coord_size());
        for (o, &(k, i)) in x_out.chunks_exact_mut(c).zip(&self.pairs) {
            let (x, i) = (x_in.get(k as usize), i as usize);
            o.copy_from_slice(&x[i * ic..i * ic + c]);
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let (d, id) = (self.dof.deriv_size(), self.in_dof.deriv_size());
        for (j, &(k, i)) in self.pairs.iter().enumerate() {
            let (v, i) = (v_in.get(k as usize), i as usize);
            v_out[j * d..(j + 1) * d].copy_from_slice(&v[i * id..i * id + d]);
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        let (d, id) = (self.dof.deriv_size(), self.in_dof.deriv_size());
        for (j, &(k, i)) in self.pairs.iter().enumerate() {
            let (f, i) = (&mut f_in[k as usize], i as usize);
            for c in 0..d {
                f[i * id + c] += f_out[j * d + c];
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        let (d, id) = (self.dof.deriv_size(), self.in_dof.deriv_size());
        for (j, &(k, i)) in self.pairs.iter().enumerate() {
            for c in 0..d {
                out.push(JEntry {
                    row: (j * d + c) as u32,
                    input: k,
                    col: (i as usize * id + c) as u32,
                    val: 1.0,
                });
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// RigidMapping

/// RigidMapping (Rigid3d → Vec3d): each output point is a point fixed in one rigid frame,
/// out_i = c_k + R_k p_i. v_i = v_k + ω_k × r_i (r_i = R_k p_i); forces up: f_k += f_i,
/// τ_k += r_i × f_i. Geometric stiffness (optional, `geometricStiffness` 1 or 2):
/// K_k = Σ [f_i]× [r_i]× on the rotational block.
#[derive(Clone)]
pub struct RigidMapping {
    data: DataTable,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    /// Local coordinates of the points.
    points: Vec<Vec3>,
    /// Rigid frame of each point.
    frame: Vec<u32>,
    /// R_k p_i at the last apply.
    rotated: Vec<Vec3>,
    /// Rigid3 output (SOFA's RigidMapping<Rigid3, Rigid3>): each output frame's orientation in
    /// its rigid's frame; empty for points.
    orient: Vec<nalgebra::Quaternion<f64>>,
    /// Rigid2d → Vec2d (SOFA's RigidMapping<Rigid2, Vec2>): frames (x, y, θ), points (x, y);
    /// `points` and `rotated` hold them with z = 0.
    planar: bool,
    gs: u32,
    n_in: usize,
}

impl RigidMapping {
    pub fn new() -> Self {
        let data = mapping_data(DataTable::new())
            .with(
                "initialPoints",
                DataKind::Reals(0),
                "",
                "Local Coordinates of the points",
            )
            .alias(&["points"])
            .with(
                "index",
                DataKind::Int,
                "0",
                "input DOF index used when rigidIndexPerPoint is not given",
            )
            .with(
                "fileRigidMapping",
                DataKind::Str,
                "",
                "Filename of the points",
            )
            .alias(&["filename"])
            .with(
                "useX0",
                DataKind::Bool,
                "0",
                "Use x0 instead of local copy of initial positions (to support topo changes)",
            )
            .with(
                "indexFromEnd",
                DataKind::Bool,
                "0",
                "input DOF index starts from the end of input DOFs vector",
            )
            .with(
                "rigidIndexPerPoint",
                DataKind::Ints(1),
                "",
                "For each mapped point, the index of the Rigid it is mapped from",
            )
            .with(
                "globalToLocalCoords",
                DataKind::Bool,
                "0",
                "are the output DOFs initially expressed in global coordinates",
            )
            .with(
                "geometricStiffness",
                DataKind::Str,
                "0",
                "Method used to compute the geometric stiffness: None (0), Exact (1), Stabilized (2)",
            );
        RigidMapping {
            data,
            input: Vec::new(),
            output: None,
            points: Vec::new(),
            frame: Vec::new(),
            rotated: Vec::new(),
            orient: Vec::new(),
            planar: false,
            gs: 0,
            n_in: 0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        let rigid_out = e.out_dof == DofType::Rigid3;
        self.planar = e.in_dofs[0] == DofType::Rigid2 && e.out_dof == DofType::Vec2;
        if !self.planar
            && (e.in_dofs[0] != DofType::Rigid3
                || !(e.out_dof == DofType::Vec3 || rigid_out)
                || e.inputs.len() != 1)
        {
            ctx.error(format!(
                "RigidMapping maps a Rigid3d state to a Vec3d or Rigid3d state, or Rigid2d to Vec2d ({} to {} given)",
                e.in_dofs[0].name(),
                e.out_dof.name()
            ));
            return;
        }
        if self.data.str("fileRigidMapping").trim() != "" {
            ctx.warn("fileRigidMapping is not read yet: the output's positions are used");
        }
        self.gs = match parse_gs(self.data.str("geometricStiffness")) {
            Some(g) => g,
            None => {
                ctx.warn(format!(
                    "geometricStiffness '{}' is not None, Exact, Stabilized, 0, 1 or 2: None is used",
                    self.data.str("geometricStiffness")
                ));
                0
            }
        };
        let scene = ctx.scene;
        let Some(si) = scene.state(e.inputs[0]) else {
            return;
        };
        if self.planar && self.gs != 0 {
            ctx.warn("geometricStiffness is not computed for Rigid2d → Vec2d (SOFA neither)");
            self.gs = 0;
        }
        let out_x = crate::mapping::barycentric::end_positions(scene, e.output).unwrap_or_default();
        let out_x0 = scene
            .state(e.output)
            .map_or_else(|| out_x.clone(), |s| s.vec(VecId::REST_POSITION).to_vec());
        // planar frames as 3D ones (rotation θ about z), planar points with z = 0
        let planar_frames: Vec<[f64; 7]> = if self.planar {
            si.vec(VecId::POSITION)
                .chunks_exact(3)
                .map(|f| {
                    let (s, c) = (f[2] / 2.0).sin_cos();
                    [f[0], f[1], 0.0, 0.0, 0.0, s, c]
                })
                .collect()
        } else {
            Vec::new()
        };
        let xin: &[[f64; 7]] = if self.planar {
            &planar_frames
        } else {
            Rigid3Types::coords(si.vec(VecId::POSITION))
        };
        self.n_in = xin.len();
        if self.n_in == 0 {
            ctx.error("RigidMapping: the input state has no rigid frame");
            return;
        }
        let cs = if rigid_out {
            7
        } else if self.planar {
            2
        } else {
            3
        };
        let given = self.data.reals("initialPoints");
        if !given.len().is_multiple_of(cs) {
            ctx.error(format!(
                "initialPoints has {} numbers: the output's coordinates have {cs} each",
                given.len()
            ));
            return;
        }
        let use_x0 = self.data.bool("useX0");
        let src: Vec<f64> = if !given.is_empty() {
            given.to_vec()
        } else if use_x0 {
            out_x0
        } else {
            out_x
        };
        let n = src.len() / cs;
        let per_point = self.data.ints("rigidIndexPerPoint");
        let index = self.data.int("index").max(0) as usize;
        let from_end = self.data.bool("indexFromEnd");
        let fixed = if from_end {
            self.n_in.saturating_sub(1 + index)
        } else {
            index
        };
        if !per_point.is_empty() && per_point.len() != n {
            ctx.warn(format!(
                "rigidIndexPerPoint has {} entries for {n} points: ignored, as in SOFA (index {fixed} is used)",
                per_point.len()
            ));
        }
        self.frame = (0..n)
            .map(|i| {
                if per_point.len() == n {
                    per_point[i]
                } else {
                    fixed as u32
                }
            })
            .collect();
        if let Some(&bad) = self.frame.iter().find(|&&k| k as usize >= self.n_in) {
            ctx.error(format!(
                "RigidMapping: rigid index {bad} is out of the input's {} frames",
                self.n_in
            ));
            self.frame.clear();
            return;
        }
        let g2l = self.data.bool("globalToLocalCoords") && given.is_empty() && !use_x0;
        self.points = src
            .chunks_exact(cs)
            .zip(&self.frame)
            .map(|(p, &k)| {
                let p = Vec3::new(p[0], p[1], p.get(2).copied().unwrap_or(0.0));
                if g2l {
                    let c = &xin[k as usize];
                    rigid3_inverse_rotate(c, &(p - Vec3::new(c[0], c[1], c[2])))
                } else {
                    p
                }
            })
            .collect();
        // output frames' orientations, in their rigid's frame when globalToLocalCoords
        self.orient = if rigid_out {
            src.chunks_exact(7)
                .zip(&self.frame)
                .map(|(c, &k)| {
                    let q = quat_of(c.try_into().expect("7 values"));
                    if g2l {
                        let qi = quat_of(&xin[k as usize]);
                        qi.conjugate() / qi.norm_squared() * q
                    } else {
                        q
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        self.rotated = vec![Vec3::zeros(); n];
        self.input = e.inputs;
        self.output = Some(e.output);
    }

    /// Derivative size of the output (3: points, 6: frames).
    fn out_ds(&self) -> usize {
        if self.orient.is_empty() {
            3
        } else {
            6
        }
    }

    /// The rotational block of rigid k's geometric stiffness under output forces `f` (only the
    /// outputs' linear forces turn with the rigid: a frame's torque maps with a constant J).
    fn k_blocks(&self, f: &[f64]) -> Vec<canape_types::Mat3> {
        let ds = self.out_ds();
        let mut ks = vec![canape_types::Mat3::zeros(); self.n_in];
        for (i, (&k, r)) in self.frame.iter().zip(&self.rotated).enumerate() {
            let fi = Vec3::new(f[ds * i], f[ds * i + 1], f[ds * i + 2]);
            ks[k as usize] += fi.cross_matrix() * r.cross_matrix();
        }
        if self.gs == 2 {
            for k in ks.iter_mut() {
                let s = (*k + k.transpose()) * 0.5;
                let eig = s.symmetric_eigen();
                let mut w = eig.eigenvalues;
                if w.iter().any(|v| *v > 0.0) {
                    w.iter_mut().for_each(|v| *v = v.min(0.0));
                    *k = eig.eigenvectors
                        * canape_types::Mat3::from_diagonal(&w)
                        * eig.eigenvectors.transpose();
                } else {
                    *k = s;
                }
            }
        }
        ks
    }
}

/// SOFA's geometricStiffness option: a name or an index.
pub fn parse_gs(t: &str) -> Option<u32> {
    match t.trim() {
        "None" | "0" | "" | "false" => Some(0),
        "Exact" | "1" | "true" => Some(1),
        "Stabilized" | "2" => Some(2),
        _ => None,
    }
}

impl Default for RigidMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl_component!(RigidMapping, "RigidMapping", init);

impl Mapping for RigidMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.points.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        if self.planar {
            let f = x_in.get(0);
            for (i, (p, &k)) in self.points.iter().zip(&self.frame).enumerate() {
                let k = k as usize;
                let (s, c) = f[3 * k + 2].sin_cos();
                let r = Vec3::new(c * p.x - s * p.y, s * p.x + c * p.y, 0.0);
                self.rotated[i] = r;
                x_out[2 * i] = f[3 * k] + r.x;
                x_out[2 * i + 1] = f[3 * k + 1] + r.y;
            }
            return;
        }
        let xin = Rigid3Types::coords(x_in.get(0));
        let cs = if self.orient.is_empty() { 3 } else { 7 };
        for (i, (p, &k)) in self.points.iter().zip(&self.frame).enumerate() {
            let c = &xin[k as usize];
            let r = rigid3_rotate(c, p);
            self.rotated[i] = r;
            x_out[cs * i] = r.x + c[0];
            x_out[cs * i + 1] = r.y + c[1];
            x_out[cs * i + 2] = r.z + c[2];
            if let Some(ql) = self.orient.get(i) {
                // the frame turns with its rigid: q = q_rigid ⊗ q_local (SOFA's RigidCoord mult)
                let q = quat_of(c) * ql;
                let out: &mut [f64; 7] = (&mut x_out[7 * i..7 * i + 7]).try_into().expect("7");
                set_quat(out, &q);
            }
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        if self.planar {
            let v = v_in.get(0);
            for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
                let k = k as usize;
                let w = v[3 * k + 2];
                v_out[2 * i] = v[3 * k] - w * r.y;
                v_out[2 * i + 1] = v[3 * k + 1] + w * r.x;
            }
            return;
        }
        let vin = Rigid3Types::derivs(v_in.get(0));
        let ds = self.out_ds();
        for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
            let d = &vin[k as usize];
            let w = Vec3::new(d[3], d[4], d[5]);
            let v = Vec3::new(d[0], d[1], d[2]) + w.cross(r);
            v_out[ds * i] = v.x;
            v_out[ds * i + 1] = v.y;
            v_out[ds * i + 2] = v.z;
            if ds == 6 {
                v_out[6 * i + 3..6 * i + 6].copy_from_slice(&d[3..6]);
            }
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        if self.planar {
            let fin = &mut f_in[0];
            for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
                let k = k as usize;
                let (fx, fy) = (f_out[2 * i], f_out[2 * i + 1]);
                fin[3 * k] += fx;
                fin[3 * k + 1] += fy;
                fin[3 * k + 2] += r.x * fy - r.y * fx;
            }
            return;
        }
        let fin = Rigid3Types::derivs_mut(&mut f_in[0]);
        let ds = self.out_ds();
        for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
            let f = Vec3::new(f_out[ds * i], f_out[ds * i + 1], f_out[ds * i + 2]);
            let mut t = r.cross(&f);
            if ds == 6 {
                // a frame's torque goes up unchanged
                t += Vec3::new(f_out[6 * i + 3], f_out[6 * i + 4], f_out[6 * i + 5]);
            }
            let d = &mut fin[k as usize];
            d[0] += f.x;
            d[1] += f.y;
            d[2] += f.z;
            d[3] += t.x;
            d[4] += t.y;
            d[5] += t.z;
        }
    }
    fn apply_djt(&self, dx_in: &MapInputs<'_>, f_out: &[f64], df_in: &mut [Vec<f64>], k: f64) {
        if self.gs == 0 {
            return;
        }
        let ks = self.k_blocks(f_out);
        let dx = Rigid3Types::derivs(dx_in.get(0));
        let df = Rigid3Types::derivs_mut(&mut df_in[0]);
        for (j, kb) in ks.iter().enumerate() {
            let dth = Vec3::new(dx[j][3], dx[j][4], dx[j][5]);
            let t = kb * dth * k;
            df[j][3] += t.x;
            df[j][4] += t.y;
            df[j][5] += t.z;
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        if self.planar {
            for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
                // [I | (−r_y, r_x)ᵀ]
                for (a, w) in [(0u32, -r.y), (1, r.x)] {
                    let row = 2 * i as u32 + a;
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 3 * k + a,
                        val: 1.0,
                    });
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 3 * k + 2,
                        val: w,
                    });
                }
            }
            return;
        }
        let ds = self.out_ds();
        for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
            // [I | -[r]×], and [0 | I] for a frame's rotation
            let m = -r.cross_matrix();
            for a in 0..3 {
                let row = (ds * i + a) as u32;
                out.push(JEntry {
                    row,
                    input: 0,
                    col: 6 * k + a as u32,
                    val: 1.0,
                });
                // zeros kept: the assembled pattern does not depend on the values
                for b in 0..3 {
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 6 * k + 3 + b as u32,
                        val: m[(a, b)],
                    });
                }
            }
            if ds == 6 {
                for a in 0..3 {
                    out.push(JEntry {
                        row: (6 * i + 3 + a) as u32,
                        input: 0,
                        col: 6 * k + 3 + a as u32,
                        val: 1.0,
                    });
                }
            }
        }
    }
    fn geometric_stiffness(&self, f_out: &[f64], out: &mut Vec<KEntry>) {
        if self.gs == 0 {
            return;
        }
        for (k, kb) in self.k_blocks(f_out).iter().enumerate() {
            for a in 0..3 {
                for b in 0..3 {
                    out.push(KEntry {
                        in_row: 0,
                        row: (6 * k + 3 + a) as u32,
                        in_col: 0,
                        col: (6 * k + 3 + b) as u32,
                        val: kb[(a, b)],
                    });
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SkinningMapping

/// SkinningMapping (Rigid3d → Vec3d), linear blend skinning
/// (Sofa/Component/Mapping/Linear/.../SkinningMapping.inl): each point follows up to `nbRef`
/// frames with weights w (given, or 1/d² to the nearest frames' rest centers, largest first),
/// renormalised to sum 1: out = Σ w (c_k + R_k R_k0ᵀ (x0 − c_k0)). With r = w R_k R_k0ᵀ(x0 − c_k0):
/// J = [w I | −[r]×] per frame, forces up f_k += w f, τ_k += r × f. No geometric stiffness, as in
/// SOFA. A point's list of frames ends at its first weight ≤ 0, as SOFA reads it.
#[derive(Clone)]
pub struct SkinningMapping {
    data: DataTable,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    /// Per point, (frame, weight, weighted local position).
    refs: Vec<Vec<(u32, f64, Vec3)>>,
    /// Per point and frame, r = R_k × (weighted local position) at the last apply.
    rotated: Vec<Vec<Vec3>>,
}

impl Default for SkinningMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl SkinningMapping {
    pub fn new() -> Self {
        let data = mapping_data(DataTable::new())
            .with(
                "initPos",
                DataKind::Reals(3),
                "",
                "initial child coordinates in the world reference frame",
            )
            .with(
                "nbRef",
                DataKind::Ints(0),
                "4",
                "Number of primitives influencing each point",
            )
            .with(
                "indices",
                DataKind::Ints(0),
                "",
                "parent indices for each child",
            )
            .with(
                "weight",
                DataKind::Reals(0),
                "",
                "influence weights of the Dofs",
            )
            .with("showFromIndex", DataKind::Int, "0", "Displayed From Index")
            .with("showWeights", DataKind::Bool, "0", "Show influence");
        SkinningMapping {
            data,
            input: Vec::new(),
            output: None,
            refs: Vec::new(),
            rotated: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.refs.clear();
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        if e.in_dofs != [DofType::Rigid3] || e.out_dof != DofType::Vec3 {
            ctx.error(format!(
                "SkinningMapping maps one Rigid3d input to a Vec3d output ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        let scene = ctx.scene;
        let Some(si) = scene.state(e.inputs[0]) else {
            return;
        };
        let frames: Vec<[f64; 7]> = Rigid3Types::coords(si.vec(VecId::REST_POSITION)).to_vec();
        if frames.is_empty() {
            ctx.error("SkinningMapping: the input has no frame");
            return;
        }
        let out_x = crate::mapping::barycentric::end_positions(scene, e.output).unwrap_or_default();
        let given = self.data.reals("initPos");
        let x0: Vec<f64> = if given.len() == out_x.len() && !given.is_empty() {
            given.to_vec()
        } else {
            out_x
        };
        let n = x0.len() / 3;
        let nb = self.data.ints("nbRef").first().copied().unwrap_or(4).max(1) as usize;
        let (idx, w) = (
            self.data.ints("indices").to_vec(),
            self.data.reals("weight").to_vec(),
        );
        let center = |k: usize| Vec3::new(frames[k][0], frames[k][1], frames[k][2]);
        let mut refs = Vec::with_capacity(n);
        for i in 0..n {
            let p = get3(&x0, i);
            // given weights (nbRef per point, flat), else the nearest frames by 1/d²
            let mut list: Vec<(u32, f64)> = if idx.len() == n * nb && w.len() == n * nb {
                (0..nb).map(|j| (idx[i * nb + j], w[i * nb + j])).collect()
            } else {
                let mut best: Vec<(u32, f64)> = Vec::with_capacity(nb);
                for k in 0..frames.len() {
                    let d2 = (p - center(k)).norm_squared();
                    let wk = if d2 > 0.0 { 1.0 / d2 } else { f64::MAX };
                    // insertion in decreasing weight; a later frame goes first on a tie
                    let at = best
                        .iter()
                        .position(|&(_, b)| b <= wk)
                        .unwrap_or(best.len());
                    if at < nb {
                        best.insert(at, (k as u32, wk));
                        best.truncate(nb);
                    }
                }
                best
            };
            if let Some(&(k, _)) = list.iter().find(|(k, _)| *k as usize >= frames.len()) {
                ctx.error(format!(
                    "SkinningMapping: point {i} names frame {k}, the input has {}",
                    frames.len()
                ));
                return;
            }
            // a point's frames end at its first weight ≤ 0 (SOFA's loops)
            if let Some(end) = list.iter().position(|&(_, wk)| wk <= 0.0) {
                list.truncate(end);
            }
            let sum: f64 = list.iter().map(|(_, wk)| wk).sum();
            let mut r = Vec::with_capacity(list.len());
            for (k, wk) in list {
                let wk = if sum != 0.0 { wk / sum } else { wk };
                let f = &frames[k as usize];
                let local = rigid3_inverse_rotate(f, &(p - center(k as usize))) * wk;
                r.push((k, wk, local));
            }
            refs.push(r);
        }
        self.rotated = refs.iter().map(|r| vec![Vec3::zeros(); r.len()]).collect();
        self.refs = refs;
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

impl_component!(SkinningMapping, "SkinningMapping", init);

impl Mapping for SkinningMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.refs.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let xin = Rigid3Types::coords(x_in.get(0));
        for (i, refs) in self.refs.iter().enumerate() {
            let mut o = Vec3::zeros();
            for (j, &(k, w, local)) in refs.iter().enumerate() {
                let c = &xin[k as usize];
                let r = rigid3_rotate(c, &local);
                self.rotated[i][j] = r;
                o += Vec3::new(c[0], c[1], c[2]) * w + r;
            }
            x_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let vin = Rigid3Types::derivs(v_in.get(0));
        for (i, refs) in self.refs.iter().enumerate() {
            let mut o = Vec3::zeros();
            for (j, &(k, w, _)) in refs.iter().enumerate() {
                let d = &vin[k as usize];
                let om = Vec3::new(d[3], d[4], d[5]);
                o += Vec3::new(d[0], d[1], d[2]) * w + om.cross(&self.rotated[i][j]);
            }
            v_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        let fin = Rigid3Types::derivs_mut(&mut f_in[0]);
        for (i, refs) in self.refs.iter().enumerate() {
            let f = get3(f_out, i);
            for (j, &(k, w, _)) in refs.iter().enumerate() {
                let t = self.rotated[i][j].cross(&f);
                let d = &mut fin[k as usize];
                for c in 0..3 {
                    d[c] += w * f[c];
                    d[3 + c] += t[c];
                }
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (i, refs) in self.refs.iter().enumerate() {
            for (j, &(k, w, _)) in refs.iter().enumerate() {
                let m = -self.rotated[i][j].cross_matrix();
                for a in 0..3 {
                    let row = (3 * i + a) as u32;
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 6 * k + a as u32,
                        val: w,
                    });
                    for b in 0..3 {
                        out.push(JEntry {
                            row,
                            input: 0,
                            col: 6 * k + 3 + b as u32,
                            val: m[(a, b)],
                        });
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// BeamLinearMapping

/// BeamLinearMapping (Rigid3d → Vec3d): points along a chain of beams between consecutive
/// frames (Sofa/Component/Mapping/Linear/.../BeamLinearMapping.inl). A point has parametric
/// coordinates (b + t, y, z): beam b, position t along it, y and z across, all in units of the
/// beam's length L_b (given so with `localCoord`, the default; otherwise computed from the
/// positions in frame 0's axes along the chain). With s = 3t² − 2t³ (SOFA's blend),
/// r0 = L_b R_b (t, y, z) and r1 = L_b R_{b+1} (t − 1, y, z):
/// out = (1 − s)(c_b + r0) + s(c_{b+1} + r1). The Jacobian is that of this map (SOFA's assembled
/// J leaves the translation blocks unweighted; its applyJ, followed here, weighs them).
#[derive(Clone)]
pub struct BeamLinearMapping {
    data: DataTable,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    /// Per point: (beam, t, y, z).
    points: Vec<(u32, f64, f64, f64)>,
    lengths: Vec<f64>,
    /// Per point at the last apply: r0, r1.
    rotated: Vec<(Vec3, Vec3)>,
}

impl Default for BeamLinearMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl BeamLinearMapping {
    pub fn new() -> Self {
        let data = mapping_data(DataTable::new()).with(
            "localCoord",
            DataKind::Bool,
            "1",
            "true if initial coordinates are in the beam local coordinate system (i.e. a point at (10,0,0) is on the DOF number 10, whereas if this is false it is at whatever position on the beam where the distance from the initial DOF is 10)",
        );
        BeamLinearMapping {
            data,
            input: Vec::new(),
            output: None,
            points: Vec::new(),
            lengths: Vec::new(),
            rotated: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.points.clear();
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        if e.in_dofs != [DofType::Rigid3] || e.out_dof != DofType::Vec3 {
            ctx.error(format!(
                "BeamLinearMapping maps one Rigid3d input to a Vec3d output ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        let scene = ctx.scene;
        let Some(si) = scene.state(e.inputs[0]) else {
            return;
        };
        let frames = Rigid3Types::coords(si.vec(VecId::POSITION));
        let n = frames.len();
        if n < 2 {
            ctx.error("BeamLinearMapping needs at least two frames (one beam)");
            return;
        }
        let c = |k: usize| Vec3::new(frames[k][0], frames[k][1], frames[k][2]);
        let mut lengths: Vec<f64> = (0..n - 1).map(|k| (c(k) - c(k + 1)).norm()).collect();
        lengths.push(lengths[n - 2]);
        if let Some(k) = lengths.iter().position(|l| *l <= 0.0) {
            ctx.error(format!("beam {k} has zero length"));
            return;
        }
        let x = crate::mapping::barycentric::end_positions(scene, e.output).unwrap_or_default();
        let local = self.data.bool("localCoord");
        let mut points = Vec::with_capacity(x.len() / 3);
        for p in x.chunks_exact(3) {
            let mut q = Vec3::new(p[0], p[1], p[2]);
            if !local {
                // along the chain in frame 0's axes, then in units of the beam's length
                q = rigid3_inverse_rotate(&frames[0], &(q - c(0)));
                let mut j = 0;
                while j < n && q.x >= lengths[j] {
                    q.x -= lengths[j];
                    j += 1;
                }
                let j = j.min(n - 1);
                q /= lengths[j];
                q.x += j as f64;
            }
            let b = (q.x.floor().max(0.0) as usize).min(n - 2);
            points.push((b as u32, q.x - b as f64, q.y, q.z));
        }
        self.rotated = vec![(Vec3::zeros(), Vec3::zeros()); points.len()];
        self.points = points;
        self.lengths = lengths;
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

/// SOFA's blend along a beam: s = 3t² − 2t³.
fn beam_blend(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

impl_component!(BeamLinearMapping, "BeamLinearMapping", init);

impl Mapping for BeamLinearMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.points.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let xin = Rigid3Types::coords(x_in.get(0));
        for (i, &(b, t, y, z)) in self.points.iter().enumerate() {
            let b = b as usize;
            let l = self.lengths[b];
            let (f0, f1) = (&xin[b], &xin[b + 1]);
            let r0 = rigid3_rotate(f0, &Vec3::new(t, y, z)) * l;
            let r1 = rigid3_rotate(f1, &Vec3::new(t - 1.0, y, z)) * l;
            self.rotated[i] = (r0, r1);
            let s = beam_blend(t);
            let o = (Vec3::new(f0[0], f0[1], f0[2]) + r0) * (1.0 - s)
                + (Vec3::new(f1[0], f1[1], f1[2]) + r1) * s;
            x_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let vin = Rigid3Types::derivs(v_in.get(0));
        for (i, &(b, t, _, _)) in self.points.iter().enumerate() {
            let b = b as usize;
            let (r0, r1) = self.rotated[i];
            let s = beam_blend(t);
            let vel = |d: &[f64; 6], r: &Vec3| {
                Vec3::new(d[0], d[1], d[2]) + Vec3::new(d[3], d[4], d[5]).cross(r)
            };
            let o = vel(&vin[b], &r0) * (1.0 - s) + vel(&vin[b + 1], &r1) * s;
            v_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        let fin = Rigid3Types::derivs_mut(&mut f_in[0]);
        for (i, &(b, t, _, _)) in self.points.iter().enumerate() {
            let b = b as usize;
            let (r0, r1) = self.rotated[i];
            let s = beam_blend(t);
            let f = get3(f_out, i);
            for (k, w, r) in [(b, 1.0 - s, r0), (b + 1, s, r1)] {
                let tq = r.cross(&f) * w;
                for c in 0..3 {
                    fin[k][c] += w * f[c];
                    fin[k][3 + c] += tq[c];
                }
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (i, &(b, t, _, _)) in self.points.iter().enumerate() {
            let (r0, r1) = self.rotated[i];
            let s = beam_blend(t);
            for (k, w, r) in [(b, 1.0 - s, r0), (b + 1, s, r1)] {
                let m = -r.cross_matrix() * w;
                for a in 0..3 {
                    let row = (3 * i + a) as u32;
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 6 * k + a as u32,
                        val: w,
                    });
                    for c in 0..3 {
                        out.push(JEntry {
                            row,
                            input: 0,
                            col: 6 * k + 3 + c as u32,
                            val: m[(a, c)],
                        });
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CenterOfMassMapping

/// CenterOfMassMapping (Rigid3d or Vec3d → Vec3d): one output point, the input's center of mass
/// Σ m_i c_i / Σ m_i, with each point's mass from the mass component of the input's node (SOFA's
/// getElementMass; here the diagonal of M): J = (m_i / M) I on each point's translation
/// (Sofa/Component/Mapping/Linear/.../CenterOfMassMapping.inl).
#[derive(Clone)]
pub struct CenterOfMassMapping {
    data: DataTable,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    in_dof: DofType,
    /// m_i / M per input point.
    weights: Vec<f64>,
}

impl Default for CenterOfMassMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl CenterOfMassMapping {
    pub fn new() -> Self {
        CenterOfMassMapping {
            data: mapping_data(DataTable::new()),
            input: Vec::new(),
            output: None,
            in_dof: DofType::Rigid3,
            weights: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.weights.clear();
        let Some(e) = resolve_ends(ctx, &self.data) else {
            return;
        };
        let in_dof = e.in_dofs[0];
        if e.inputs.len() != 1
            || !matches!(in_dof, DofType::Rigid3 | DofType::Vec3)
            || e.out_dof != DofType::Vec3
        {
            ctx.error(format!(
                "CenterOfMassMapping maps one Rigid3d or Vec3d input to a Vec3d output ({} to {} given)",
                in_dof.name(),
                e.out_dof.name()
            ));
            return;
        }
        let scene = ctx.scene;
        let n = points_of(scene, e.inputs[0]);
        let ds = in_dof.deriv_size();
        // the point masses: the diagonal of the mass of the input's node
        let node = scene.info(e.inputs[0]).node;
        let mass = scene
            .node_components(node, canape_core::component::Role::Mass)
            .find_map(|c| match scene.info(c).slot {
                Slot::Mass(i) => scene.masses[i].as_deref(),
                _ => None,
            });
        let Some(mass) = mass else {
            ctx.error("CenterOfMassMapping: the input's node has no mass to weigh its points");
            return;
        };
        let mut diag = vec![0.0; n * ds];
        mass.add_mdx(&mut diag, &vec![1.0; n * ds], 1.0);
        let m: Vec<f64> = (0..n).map(|i| diag[i * ds]).collect();
        let total: f64 = m.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            ctx.error(format!("CenterOfMassMapping: the total mass is {total}"));
            return;
        }
        self.weights = m.iter().map(|mi| mi / total).collect();
        self.in_dof = in_dof;
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

impl_component!(CenterOfMassMapping, "CenterOfMassMapping", init);

impl Mapping for CenterOfMassMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(usize::from(!self.weights.is_empty()))
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let (x, cs) = (x_in.get(0), self.in_dof.coord_size());
        let mut c = Vec3::zeros();
        for (i, w) in self.weights.iter().enumerate() {
            c += Vec3::new(x[cs * i], x[cs * i + 1], x[cs * i + 2]) * *w;
        }
        x_out[..3].copy_from_slice(c.as_slice());
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let (v, ds) = (v_in.get(0), self.in_dof.deriv_size());
        let mut c = Vec3::zeros();
        for (i, w) in self.weights.iter().enumerate() {
            c += Vec3::new(v[ds * i], v[ds * i + 1], v[ds * i + 2]) * *w;
        }
        v_out[..3].copy_from_slice(c.as_slice());
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        let ds = self.in_dof.deriv_size();
        for (i, w) in self.weights.iter().enumerate() {
            for c in 0..3 {
                f_in[0][ds * i + c] += w * f_out[c];
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        let ds = self.in_dof.deriv_size();
        for c in 0..3 {
            for (i, w) in self.weights.iter().enumerate() {
                out.push(JEntry {
                    row: c as u32,
                    input: 0,
                    col: (ds * i + c) as u32,
                    val: *w,
                });
            }
        }
    }
}

/// Slot of a state component, for tests.
pub fn state_slot(scene: &Scene, id: ComponentId) -> Option<usize> {
    match scene.info(id).slot {
        Slot::State(i) => Some(i),
        _ => None,
    }
}
