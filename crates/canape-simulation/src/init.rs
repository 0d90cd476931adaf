//! Scene initialisation: resolve Data links and call every component's `init`, top-down in
//! document order (SOFA's InitVisitor). Link sources that are not yet initialised (forward
//! references to loaders, engines, topologies, states) are initialised first, on demand.

use canape_core::component::{MapInputs, Role};
use canape_core::data::Value;
use canape_core::diag::{Diagnostic, Diagnostics};
use canape_core::scene::{ComponentId, DataLink, InitContext, NodeId, Scene, Slot, Target};
use canape_core::state::VecId;

/// All components of active nodes, depth-first in document order (node's own components first,
/// then its children, as SOFA visits them).
pub fn document_order(scene: &Scene) -> Vec<ComponentId> {
    let mut out = Vec::new();
    if scene.nodes.is_empty() {
        return out;
    }
    fn rec(scene: &Scene, n: NodeId, out: &mut Vec<ComponentId>) {
        let node = scene.node(n);
        if !node.activated {
            return;
        }
        out.extend(node.components.iter().copied());
        for c in &node.children {
            rec(scene, *c, out);
        }
    }
    rec(scene, scene.root(), &mut out);
    out
}

/// Initialise every component of the scene.
pub fn init_scene(scene: &mut Scene, diags: &mut Diagnostics) {
    let order = document_order(scene);
    let mut visiting = Vec::new();
    for id in order {
        init_component(scene, id, diags, &mut visiting);
    }
}

/// Initialise the states that the links in Data `keys` of component `id` name (a state, or a
/// node whose state is meant; several links per Data allowed), with the mappings of their nodes
/// (a mapped state gets its size from its mapping).
fn init_linked_states(
    scene: &mut Scene,
    id: ComponentId,
    keys: &[&str],
    diags: &mut Diagnostics,
    visiting: &mut Vec<ComponentId>,
) {
    let node = scene.info(id).node;
    for key in keys {
        let Some(Value::Str(l)) = scene.component(id).and_then(|c| c.read_data(key)) else {
            continue;
        };
        for word in l.split_whitespace() {
            let Some(p) = word.strip_prefix('@') else {
                continue;
            };
            let target = match scene.resolve_path(node, Some(id), p) {
                Some(Target::Component(c)) => Some(c),
                Some(Target::Node(n)) => scene.node_components(n, Role::State).next(),
                None => None,
            };
            let Some(c) = target.filter(|c| *c != id) else {
                continue;
            };
            init_component(scene, c, diags, visiting);
            let n = scene.info(c).node;
            let maps: Vec<ComponentId> = scene.node_components(n, Role::Mapping).collect();
            for m in maps {
                init_component(scene, m, diags, visiting);
            }
        }
    }
}

fn is_initialized(scene: &Scene, id: ComponentId) -> bool {
    scene.info(id).initialized
}

/// Initialise one component (and, first, what it depends on).
pub fn init_component(
    scene: &mut Scene,
    id: ComponentId,
    diags: &mut Diagnostics,
    visiting: &mut Vec<ComponentId>,
) {
    if is_initialized(scene, id) || visiting.contains(&id) {
        return;
    }
    visiting.push(id);
    let node = scene.info(id).node;
    let role = scene.info(id).role;

    // dependencies from the context
    match role {
        Role::State => {
            for t in scene.context_topologies(node) {
                init_component(scene, t, diags, visiting);
            }
        }
        Role::Engine
            if matches!(scene.info(id).slot, Slot::Engine(i)
                if scene.engines[i].as_ref().is_some_and(|e| !e.reads_context_state())) => {}
        Role::Mass
        | Role::ForceField
        | Role::ProjectiveConstraint
        | Role::Engine
        | Role::Mapping => {
            if let Some(s) = scene.context_state(node) {
                init_component(scene, s, diags, visiting);
            }
        }
        _ => {}
    }
    match role {
        // an interaction's states (object1, object2) are initialised before it, wherever they
        // sit in the document
        Role::ForceField => init_linked_states(
            scene,
            id,
            &["object1", "object2", "external_rest_shape"],
            diags,
            visiting,
        ),
        // a Lagrangian constraint's states (BilateralLagrangianConstraint's object1, object2)
        Role::Constraint => init_linked_states(scene, id, &["object1", "object2"], diags, visiting),
        // an engine reading two states (NearestPointROI's object1, object2)
        Role::Engine => init_linked_states(scene, id, &["object1", "object2"], diags, visiting),
        // a mapping's inputs (`input`, or the parent node's state) before the mapping
        Role::Mapping => {
            if let Some(s) = scene.node(node).parent.and_then(|p| scene.context_state(p)) {
                init_component(scene, s, diags, visiting);
            }
            init_linked_states(scene, id, &["input"], diags, visiting);
        }
        _ => {}
    }

    // pull Data links, each resolved here once (its source initialised first)
    for k in 0..scene.info(id).data_links.len() {
        let mut link = scene.info(id).data_links[k].clone();
        let resolved = scene.resolve_data_link(node, id, &link);
        if let Ok(Target::Component(src)) = resolved {
            if src != id {
                init_component(scene, src, diags, visiting);
            }
        }
        link.source = resolved.as_ref().ok().copied();
        scene.info_mut(id).data_links[k].source = link.source;
        let (data, link_text) = (&link.data, &link.text);
        match resolved.and_then(|_| scene.read_data_link(&link)) {
            Ok(mut v) => {
                // 3D points linked into a state of another type (a grid's positions as Rigid3
                // centers): converted as SOFA converts them
                if let (Some(st), Some(3)) = (scene.state(id), scene.link_width(&link)) {
                    let coord = matches!(data.as_str(), "position" | "x" | "rest_position" | "x0");
                    if st.dof != canape_types::DofType::Vec3 && coord {
                        if let Value::Reals(r) = &v {
                            let pts: Vec<[f64; 3]> = r.as_chunks::<3>().0.to_vec();
                            v = Value::Reals(canape_core::state::points_as_coords(st.dof, &pts));
                        }
                    }
                }
                let label = scene.component_label(id);
                let loc = scene.info(id).loc.clone();
                if let Some(c) = scene.component_mut(id) {
                    if let Err(e) = c.data_mut().set_value(data, v) {
                        diags.push(
                            Diagnostic::error(format!(
                                "Data '{data}' linked to '{link_text}': {e}"
                            ))
                            .at(loc)
                            .on(label),
                        );
                    }
                }
            }
            Err(e) => {
                let d = Diagnostic::error(format!("broken link in Data '{data}': {e}"))
                    .at(scene.info(id).loc.clone())
                    .on(scene.component_label(id));
                diags.push(d);
            }
        }
    }

    let slot = scene.info(id).slot;
    match slot {
        Slot::State(i) => {
            let mut st = scene.states[i].take().expect("state slot");
            let pts = {
                let ctx = InitContext {
                    scene,
                    node,
                    id,
                    diags,
                };
                ctx.topology_where(|m| !m.points.is_empty())
                    .map(|t| t.mesh().points.clone())
            };
            // the node's own topology (SOFA's getMeshTopology(Local)): the last one declared
            let in_node = scene
                .node_components(node, Role::Topology)
                .last()
                .and_then(|t| scene.topology(t))
                .is_some_and(|t| !t.mesh().points.is_empty());
            for w in st.init_from_data(pts.as_deref(), in_node) {
                diags.push(
                    Diagnostic::warning(w)
                        .at(scene.info(id).loc.clone())
                        .on(scene.component_label(id)),
                );
            }
            for (vid, what) in [(VecId::POSITION, "position"), (VecId::VELOCITY, "velocity")] {
                if let Some(k) = st.vec(vid).iter().position(|v| !v.is_finite()) {
                    diags.push(
                        Diagnostic::error(format!(
                            "{what} contains a non-finite value (NaN or infinity) at point {}",
                            k / st.dof.coord_size()
                        ))
                        .at(scene.info(id).loc.clone())
                        .on(scene.component_label(id)),
                    );
                }
            }
            scene.states[i] = Some(st);
        }
        Slot::TopoMapping(i) => init_topological_mapping(scene, id, i, diags),
        Slot::Mapping(i) => {
            generic_init(scene, id, slot, diags);
            init_mapping_output(scene, id, i, diags);
        }
        _ => generic_init(scene, id, slot, diags),
    }
    scene.info_mut(id).initialized = true;
    visiting.pop();
}

/// After a mapping's init (SOFA's Mapping::init): its output state takes the size the mapping
/// defines, then positions (and, with `applyRestPosition`, rest positions) and velocities are
/// mapped down once.
fn init_mapping_output(scene: &mut Scene, id: ComponentId, i: usize, diags: &mut Diagnostics) {
    let Some(m) = scene.mappings[i].as_ref() else {
        return;
    };
    let Some(out) = m.output() else {
        return;
    };
    let j = match scene.info(out).slot {
        Slot::State(j) => j,
        Slot::Passive(p) => {
            // a visual model given no points of its own takes the mapping's size, as SOFA's
            // mappings resize their output (TubularMapping into an empty OglModel)
            if let (Some(n), Some(mesh)) = (
                m.output_size(),
                scene.passives[p].as_mut().and_then(|v| v.visual_mesh_mut()),
            ) {
                if mesh.points.is_empty() && n <= canape_core::state::MAX_POINTS {
                    mesh.points = vec![[0.0; 3]; n];
                }
            }
            return;
        }
        _ => return,
    };
    let idx: Option<Vec<usize>> = m
        .inputs()
        .iter()
        .map(|c| match scene.info(*c).slot {
            Slot::State(k) => Some(k),
            _ => None,
        })
        .collect();
    let Some(idx) = idx else {
        return;
    };
    if idx.is_empty() {
        return;
    }
    if idx.contains(&j) {
        diags.push(
            Diagnostic::error(
                "the mapping's output is also one of its inputs (a cycle in the mapping graph)",
            )
            .at(scene.info(id).loc.clone())
            .on(scene.component_label(id)),
        );
        return;
    }
    let size = m.output_size();
    let rest = m.applies_rest_position();
    if let (Some(n), Some(old)) = (size, scene.states[j].as_ref().map(|s| s.size())) {
        // Growing a state keeps every index its components hold valid; shrinking one whose
        // force fields were already set up for more points would leave them indexing past its
        // end (SOFA resizes anyway and reads out of bounds). Masses and constraints loop over
        // the points the state has, as SOFA's UniformMass keeps its per-point mass.
        let out_node = scene.info(out).node;
        let set_up: Vec<String> = scene
            .node(out_node)
            .components
            .iter()
            .filter(|&&c| c != out && c != id && scene.info(c).initialized)
            .filter(|&&c| matches!(scene.info(c).slot, Slot::ForceField(_)))
            .map(|&c| scene.component_label(c))
            .collect();
        if n < old && !set_up.is_empty() {
            diags.push(
                Diagnostic::error(format!(
                    "the mapping defines {n} points but its output {} has {old}, and {} already use them: the output is not shrunk (the mapping fills its first {n} points)",
                    scene.component_label(out),
                    set_up.join(", ")
                ))
                    .at(scene.info(id).loc.clone())
                    .on(scene.component_label(id)),
            );
        } else if old != n {
            if let Some(st) = scene.states[j].as_mut() {
                st.resize(n);
            }
        }
    }
    let mut m = scene.mappings[i].take().unwrap();
    let mut ids = vec![(VecId::POSITION, VecId::POSITION)];
    if rest {
        ids.push((VecId::REST_POSITION, VecId::REST_POSITION));
    }
    for (vin, vout) in ids {
        let Some(st) = scene.states[j].as_mut() else {
            break;
        };
        let mut x = st.take(vout);
        m.apply(&MapInputs::new(&scene.states, &idx, vin), &mut x);
        scene.states[j].as_mut().unwrap().put(vout, x);
    }
    if rest {
        // leave the cached quantities at the current positions
        if let Some(st) = scene.states[j].as_mut() {
            let mut x = st.take(VecId::POSITION);
            m.apply(
                &MapInputs::new(&scene.states, &idx, VecId::POSITION),
                &mut x,
            );
            scene.states[j].as_mut().unwrap().put(VecId::POSITION, x);
        }
    }
    if let Some(st) = scene.states[j].as_mut() {
        let mut v = st.take(VecId::VELOCITY);
        m.apply_j(
            &MapInputs::new(&scene.states, &idx, VecId::VELOCITY),
            &mut v,
        );
        scene.states[j].as_mut().unwrap().put(VecId::VELOCITY, v);
    }
    scene.mappings[i] = Some(m);
}

macro_rules! take_init_put {
    ($scene:expr, $vec:ident, $i:expr, $id:expr, $diags:expr) => {{
        let node = $scene.info($id).node;
        if let Some(mut c) = $scene.$vec[$i].take() {
            {
                let mut ctx = InitContext {
                    scene: &*$scene,
                    node,
                    id: $id,
                    diags: $diags,
                };
                c.init(&mut ctx);
            }
            $scene.$vec[$i] = Some(c);
        }
    }};
}

fn generic_init(scene: &mut Scene, id: ComponentId, slot: Slot, diags: &mut Diagnostics) {
    match slot {
        Slot::State(_) | Slot::TopoMapping(_) => unreachable!(),
        Slot::Mass(i) => take_init_put!(scene, masses, i, id, diags),
        Slot::ForceField(i) => take_init_put!(scene, force_fields, i, id, diags),
        Slot::Projective(i) => take_init_put!(scene, projective, i, id, diags),
        Slot::Ode(i) => take_init_put!(scene, odes, i, id, diags),
        Slot::Linear(i) => take_init_put!(scene, linears, i, id, diags),
        Slot::Topology(i) => take_init_put!(scene, topologies, i, id, diags),
        Slot::Engine(i) => take_init_put!(scene, engines, i, id, diags),
        Slot::Loader(i) => take_init_put!(scene, loaders, i, id, diags),
        Slot::Mapping(i) => take_init_put!(scene, mappings, i, id, diags),
        Slot::AnimationLoop(i) => take_init_put!(scene, animation_loops, i, id, diags),
        Slot::Controller(i) => take_init_put!(scene, controllers, i, id, diags),
        Slot::Passive(i) => take_init_put!(scene, passives, i, id, diags),
    }
}

/// A topological mapping reads its `input` topology and fills its `output` topology.
fn init_topological_mapping(scene: &mut Scene, id: ComponentId, i: usize, diags: &mut Diagnostics) {
    let node = scene.info(id).node;
    let label = scene.component_label(id);
    let loc = scene.info(id).loc.clone();
    let (inp, out) = {
        let c = scene.topo_mappings[i]
            .as_ref()
            .expect("topological mapping slot");
        (
            c.data().str("input").to_string(),
            c.data().str("output").to_string(),
        )
    };
    let resolve =
        |scene: &Scene, link: &str, what: &str, diags: &mut Diagnostics| -> Option<ComponentId> {
            let p = link.trim().strip_prefix('@').unwrap_or(link.trim());
            let t = if link.trim().is_empty() {
                None
            } else {
                scene.resolve_path(node, Some(id), p)
            };
            match t {
                Some(Target::Component(c)) if scene.info(c).role == Role::Topology => Some(c),
                Some(Target::Node(n)) => scene.node_components(n, Role::Topology).last(),
                _ => {
                    diags.push(
                        Diagnostic::error(format!("{what} topology '{link}' not found"))
                            .at(loc.clone())
                            .on(label.clone()),
                    );
                    None
                }
            }
        };
    let Some(src) = resolve(scene, &inp, "input", diags) else {
        return;
    };
    let Some(dst) = resolve(scene, &out, "output", diags) else {
        return;
    };
    let mut visiting = vec![id];
    init_component(scene, src, diags, &mut visiting);
    init_component(scene, dst, diags, &mut visiting);
    let mesh = {
        let t = scene.topology(src).expect("input topology");
        let m = scene.topo_mappings[i].as_ref().unwrap();
        for w in m.warnings(t.mesh()) {
            diags.push(Diagnostic::warning(w).at(loc.clone()).on(label.clone()));
        }
        m.map(t.mesh(), t.grid_size())
    };
    if let Slot::Topology(j) = scene.info(dst).slot {
        if let Some(t) = scene.topologies[j].as_mut() {
            // the mapping gives the elements; the output keeps its own points when the mapping
            // gives none (SOFA's topological mappings add elements to the output container)
            let points = std::mem::take(&mut t.mesh_mut().points);
            *t.mesh_mut() = mesh;
            if t.mesh().points.is_empty() {
                t.mesh_mut().points = points;
            }
        }
    }
}

/// Re-initialise one component from its current Data, without pulling its links again (SOFA's
/// `reinit` after a Data was edited). States, topologies and topological mappings are refused:
/// re-initialising them would reset positions or change the topology under the force fields.
/// After engine `src` recomputed its outputs while the simulation runs (an edit of one of its
/// inputs): the Data linked to them are pulled again, as SOFA's engines mark their outputs dirty
/// and their readers update. An engine downstream is re-initialised and passes its own outputs
/// on; a state takes the new positions, velocities or rest positions into its vectors (same
/// number of points); a mass, force field, projective constraint, solver or controller is
/// re-initialised. Other readers (topologies, mappings, visual models) keep what they built at
/// init, with a warning. Returns whether a projective constraint was re-initialised.
pub fn propagate_engine_outputs(
    scene: &mut Scene,
    src: ComponentId,
    diags: &mut Diagnostics,
    depth: usize,
) -> bool {
    let mut projective = false;
    if depth > 32 {
        diags.push(
            Diagnostic::warning("engines linked in a cycle: not propagated further")
                .on(scene.component_label(src)),
        );
        return projective;
    }
    // the Data linked to the engine's outputs, by the links resolved at their init
    let mut readers: Vec<(ComponentId, DataLink)> = Vec::new();
    for dep in scene.component_ids() {
        for link in &scene.info(dep).data_links {
            if link.source == Some(Target::Component(src)) && dep != src {
                readers.push((dep, link.clone()));
            }
        }
    }
    let mut reinit: Vec<ComponentId> = Vec::new();
    for (dep, link) in readers {
        let (data, link) = (link.data.clone(), link);
        let label = scene.component_label(dep);
        let v = match scene.read_data_link(&link) {
            Ok(v) => v,
            Err(e) => {
                diags.push(
                    Diagnostic::error(format!("broken link in Data '{data}': {e}")).on(label),
                );
                continue;
            }
        };
        let link = link.text;
        if let Some(c) = scene.component_mut(dep) {
            if let Err(e) = c.data_mut().set_value(&data, v.clone()) {
                diags.push(
                    Diagnostic::error(format!("Data '{data}' linked to '{link}': {e}")).on(label),
                );
                continue;
            }
        }
        match scene.info(dep).slot {
            Slot::State(i) => {
                let vid = match data.as_str() {
                    "position" | "x" => VecId::POSITION,
                    "velocity" | "v" => VecId::VELOCITY,
                    "rest_position" | "x0" => VecId::REST_POSITION,
                    _ => continue,
                };
                let (Some(st), Value::Reals(r)) = (scene.states[i].as_mut(), &v) else {
                    continue;
                };
                let r = if st.dof != canape_types::DofType::Vec3
                    && vid != VecId::VELOCITY
                    && r.len() == st.size() * 3
                {
                    let pts: Vec<[f64; 3]> = r.as_chunks::<3>().0.to_vec();
                    canape_core::state::points_as_coords(st.dof, &pts)
                } else {
                    r.clone()
                };
                let dst = st.vec_mut(vid);
                if dst.len() == r.len() {
                    dst.copy_from_slice(&r);
                } else {
                    diags.push(
                        Diagnostic::error(format!(
                            "'{link}' now gives {} values for '{data}', the state has {}: not updated (a running state keeps its size)",
                            r.len(),
                            dst.len()
                        ))
                        .on(label),
                    );
                }
            }
            Slot::Engine(_)
            | Slot::Mass(_)
            | Slot::ForceField(_)
            | Slot::Projective(_)
            | Slot::Ode(_)
            | Slot::Linear(_)
            | Slot::Controller(_) => {
                projective |= matches!(scene.info(dep).slot, Slot::Projective(_));
                if !reinit.contains(&dep) {
                    reinit.push(dep);
                }
            }
            _ => diags.push(
                Diagnostic::warning(format!(
                    "Data '{data}' is linked to '{link}', which changed: a {:?} keeps what it built at init",
                    scene.info(dep).role
                ))
                .on(label),
            ),
        }
    }
    for dep in reinit {
        let slot = scene.info(dep).slot;
        generic_init(scene, dep, slot, diags);
        if matches!(slot, Slot::Engine(_)) {
            projective |= propagate_engine_outputs(scene, dep, diags, depth + 1);
        }
    }
    projective
}

/// Why [`reinit_component`] did not re-initialise a component.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReinitError {
    /// States, topologies, topological mappings and loaders are only initialised once.
    #[error("{component} ({class}) cannot be re-initialised while the simulation runs")]
    NotWhileRunning {
        component: String,
        class: &'static str,
    },
}

pub fn reinit_component(
    scene: &mut Scene,
    id: ComponentId,
    diags: &mut Diagnostics,
) -> Result<(), ReinitError> {
    let slot = scene.info(id).slot;
    match slot {
        Slot::State(_) | Slot::Topology(_) | Slot::TopoMapping(_) | Slot::Loader(_) => {
            Err(ReinitError::NotWhileRunning {
                component: scene.component_label(id),
                class: scene.info(id).class,
            })
        }
        _ => {
            generic_init(scene, id, slot, diags);
            Ok(())
        }
    }
}
