//! Linear mechanical mappings: IdentityMapping, SubsetMapping (Sofa/Component/Mapping/Linear/
//! .../IdentityMapping.inl, SubsetMapping.inl), CenterOfMassMapping, and what every mapping's
//! init shares (its Data, resolving its input(s) and output). RigidMapping is in
//! `nonlinear::rigid`, SkinningMapping and BeamLinearMapping in `skinning`. Each exposes its
//! Jacobian (and geometric stiffness where SOFA has one) for assembled solvers.

use crate::base_data;
use crate::mapping::barycentric::resolve_end;
use canape_core::component::{JEntry, MapInputs, Mapping};
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Ints, Real, Text};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext, Scene, Slot};
use canape_core::state::VecId;
use canape_types::{DofType, Vec3};

canape_core::data_schema! {
    /// The Data every mapping has (SOFA's BaseMapping and Mapping), after the base Data.
    pub struct MappingData {
        input: Text = ("input", DataKind::Str, "", "Input object(s) to map"),
        output: Text = ("output", DataKind::Str, "", "Output object to map"),
        map_forces: Flag = ("mapForces", DataKind::Bool, "1", "Are forces mapped ?"),
        map_constraints: Flag = ("mapConstraints", DataKind::Bool, "1", "Are constraints mapped ?"),
        map_masses: Flag = ("mapMasses", DataKind::Bool, "1", "Are masses mapped ?"),
        map_matrices: Flag = ("mapMatrices", DataKind::Bool, "0", "Are matrix explicit mapped?"),
        apply_rest_position: Flag = ("applyRestPosition", DataKind::Bool, "0", "set to true to apply this mapping to restPosition at init"),
    }
}

/// The base Data and every mapping's Data ([`MappingData`]), with their typed handles.
pub fn mapping_base(t: DataTable) -> (DataTable, MappingData) {
    MappingData::declare(base_data(t))
}

/// The Data every mapping has (SOFA's BaseMapping and Mapping), for the mappings that read
/// their Data by name.
pub fn mapping_data(t: DataTable) -> DataTable {
    mapping_base(t).0
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
    resolve_links(ctx, data.str("input"), data.str("output"))
}

/// Resolve a mapping's ends from its `input`/`output` Data read through their typed handles.
pub fn resolve_mapping_ends(
    ctx: &mut InitContext<'_>,
    data: &DataTable,
    m: MappingData,
) -> Option<Ends> {
    resolve_links(ctx, data.get(m.input), data.get(m.output))
}

/// Resolve a mapping's ends from its `input` (space-separated links) and `output` link texts.
fn resolve_links(ctx: &mut InitContext<'_>, input: &str, out: &str) -> Option<Ends> {
    let scene: &Scene = ctx.scene;
    let links: Vec<&str> = input.split_whitespace().collect();
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
    /// Typed handles to the Data in `data`.
    m: MappingData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    in_dof: DofType,
    out_dof: DofType,
    n: usize,
    template: String,
}

impl IdentityMapping {
    pub fn new(template: &str) -> Self {
        let (data, m) = mapping_base(DataTable::new());
        IdentityMapping {
            data,
            m,
            input: Vec::new(),
            output: None,
            in_dof: DofType::Vec3,
            out_dof: DofType::Vec3,
            n: 0,
            template: template.to_string(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
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
    /// Typed handles to the mapping Data in `data` (the variant's own are in `kind`).
    m: MappingData,
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
/// several inputs concatenated whole (IdentityMultiMapping); with the typed handles to the
/// variant's own Data.
#[derive(Clone, Copy, Debug)]
enum SubsetKind {
    Subset(SubsetData),
    SubsetMulti(Data<Ints>),
    IdentityMulti,
}

canape_core::data_schema! {
    /// SubsetMapping's own Data (after [`MappingData`]).
    struct SubsetData {
        indices: Ints = ("indices", DataKind::Ints(1), "", "list of input indices"),
        first: Int = ("first", DataKind::Int, "-1", "first index (use if indices are sequential)"),
        last: Int = ("last", DataKind::Int, "-1", "last index (use if indices are sequential)"),
        radius: Real = ("radius", DataKind::Real, "1e-5", "search radius to find corresponding points in case no indices are given"),
        handle_topology_change: Flag = ("handleTopologyChange", DataKind::Bool, "1", "Enable support of topological changes for indices (disable if it is linked from SubsetTopologicalMapping::pointD2S)"),
        resize_to_model: Flag = ("resizeToModel", DataKind::Bool, "0", "true if I_out should be resized to match the output size"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

canape_core::data_schema! {
    /// SubsetMultiMapping's own Data (after [`MappingData`]).
    struct SubsetMultiData {
        index_pairs: Ints = ("indexPairs", DataKind::Ints(2), "", "list of couples (parent index + index in the parent)"),
    }
}

impl SubsetMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = SubsetData::declare(data);
        SubsetMapping {
            data,
            m,
            input: Vec::new(),
            output: None,
            dof: DofType::Vec3,
            in_dof: DofType::Vec3,
            pairs: Vec::new(),
            kind: SubsetKind::Subset(d),
        }
    }

    /// SubsetMultiMapping: `indexPairs` gives (input, point) for each output point.
    pub fn multi() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = SubsetMultiData::declare(data);
        SubsetMapping {
            kind: SubsetKind::SubsetMulti(d.index_pairs),
            data,
            m,
            ..Self::new()
        }
    }

    /// IdentityMultiMapping: the output is every input's points, in input order.
    pub fn identity_multi() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        SubsetMapping {
            kind: SubsetKind::IdentityMulti,
            data,
            m,
            ..Self::new()
        }
    }

    fn init_multi(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
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
        let raw: Vec<u32> = match self.kind {
            SubsetKind::SubsetMulti(index_pairs) => self.data.get(index_pairs).to_vec(),
            _ => counts
                .iter()
                .enumerate()
                .flat_map(|(k, &n)| (0..n).flat_map(move |i| [k as u32, i]))
                .collect(),
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
        let SubsetKind::Subset(d) = self.kind else {
            return self.init_multi(ctx);
        };
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
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
        let mut idx = self.data.get(d.indices).to_vec();
        let (first, last) = (self.data.get(d.first), self.data.get(d.last));
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
            let r = self.data.get(d.radius);
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
        SubsetKind::Subset(_) => "SubsetMapping",
        SubsetKind::SubsetMulti(_) => "SubsetMultiMapping",
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
// CenterOfMassMapping

/// CenterOfMassMapping (Rigid3d or Vec3d → Vec3d): one output point, the input's center of mass
/// Σ m_i c_i / Σ m_i, with each point's mass from the mass component of the input's node (SOFA's
/// getElementMass; here the diagonal of M): J = (m_i / M) I on each point's translation
/// (Sofa/Component/Mapping/Linear/.../CenterOfMassMapping.inl).
#[derive(Clone)]
pub struct CenterOfMassMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
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
        let (data, m) = mapping_base(DataTable::new());
        CenterOfMassMapping {
            data,
            m,
            input: Vec::new(),
            output: None,
            in_dof: DofType::Rigid3,
            weights: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.weights.clear();
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
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
