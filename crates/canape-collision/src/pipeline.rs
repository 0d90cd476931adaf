//! CollisionPipeline (Sofa/Component/Collision/Detection/Algorithm/CollisionPipeline.cpp):
//! each step, from the collision models' current positions, the broad phase keeps the pairs of
//! models that may collide and whose bounding boxes come within the alarm distance
//! (BruteForceBroadPhase), the narrow phase tests the element pairs whose boxes do
//! (BVHNarrowPhase) with the intersection method, and the contact manager (CollisionResponse)
//! hands each pair's contacts to its response, created the first time the pair touches: a
//! penalty force field (BarycentricPenalityContact + PenalityContactForceField) or, with
//! `FrictionContactConstraint`, a Lagrangian contact constraint (FrictionContact).
//!
//! Contacts come out in a fixed order: model pairs in model order, element pairs in index
//! order, then SOFA's output id.

use crate::bvh::{boxes_meet, Bvh};
use crate::intersect::{dispatch, intersect, Geometry, Output, Params};
use crate::lagrangian::ContactConstraint;
use crate::penalty::PenaltyContactForceField;
use crate::settings::Method;
use canape_core::collision::{
    CollisionChanges, CollisionModel, CollisionPipeline, CollisionShape, Contact,
};
use canape_core::component::{Component, Passive, Role};
use canape_core::data::{base_fields, DataKind, DataTable};
use canape_core::scene::{AnyComponent, ComponentId, InitContext, NodeId, Scene, Slot, Target};
use canape_core::state::{MechanicalObject, VecId};
use canape_types::Vec3;

/// A model taking part in one detection.
#[derive(Clone, Debug)]
struct Entry {
    model: ComponentId,
    passive: usize,
    state: ComponentId,
    node: NodeId,
    /// Positions of the state (refreshed each step).
    x: Vec<Vec3>,
    /// Element boxes (min, max), enlarged by the model's proximity.
    boxes: Vec<(Vec3, Vec3)>,
    bbox: (Vec3, Vec3),
    /// The hierarchy of the element boxes.
    bvh: Bvh,
    /// Number of elements.
    count: usize,
    /// Sphere radii per element (empty for other shapes).
    radii: Vec<f64>,
}

/// The response of one pair of models.
#[derive(Clone, Debug)]
struct Response {
    ff: ComponentId,
    /// The collision stage that last gave it contacts.
    stamp: u64,
}

/// SOFA's CollisionPipeline with its broad phase, narrow phase, intersection method and
/// contact manager (found beside it or above it at init).
#[derive(Clone)]
pub struct Pipeline {
    data: DataTable,
    /// A SubCollisionPipeline: its models and configuration come from its links, and the
    /// CompositeCollisionPipeline naming it runs it.
    sub: bool,
    /// The models of a SubCollisionPipeline, in the order given.
    listed: Option<Vec<ComponentId>>,
    node: Option<NodeId>,
    params: Option<Params>,
    response: String,
    /// The Lagrangian response's friction coefficient and tolerance (FrictionContactConstraint:
    /// `responseParams` mu, default 0.8, and tol), when it is the response.
    lagrangian: Option<(f64, f64)>,
    entries: Vec<Entry>,
    /// Each model pair's response, by the pair's models.
    responses: std::collections::BTreeMap<[ComponentId; 2], Response>,
    /// The narrow phase's buffers on one thread (kept between steps: no allocation once the
    /// contact count is stable).
    scratch: Scratch,
    /// The model pairs to test this step (entry indices, the intersection method's order).
    jobs: Vec<(usize, usize)>,
    /// The broad phase's model order along x and its pairs.
    sweep: Vec<usize>,
    model_pairs: Vec<(usize, usize)>,
    /// Count of collision stages run (stamps the responses given contacts).
    stamp: u64,
    /// Whether the gathered models can make any pair at all.
    any_pair: bool,
    last_count: usize,
    /// SOFA's contact map keys: each model's id, given the first time it is in a pair with
    /// contacts (first model, then second) and kept (helper::map_ptr_stable_compare).
    model_ids: std::collections::BTreeMap<ComponentId, u32>,
}

/// Buffers of one model pair's narrow phase.
#[derive(Clone, Default)]
struct Scratch {
    outputs: Vec<Output>,
    /// Candidate element pairs and the descent's stack.
    cand: Vec<(u32, u32)>,
    stack: Vec<(u32, u32)>,
    /// Per output id, the output kept (sorted by id).
    best: Vec<(i64, usize)>,
    keep: Vec<bool>,
    contacts: Vec<Contact>,
}

/// One model pair ready for the narrow phase: both geometries in the intersection method's
/// order, their hierarchies, and the response's constants. Plain data (shared by threads).
struct Job<'a> {
    g1: Geometry<'a>,
    g2: Geometry<'a>,
    bvh: [&'a Bvh; 2],
    boxes: [&'a [(Vec3, Vec3)]; 2],
    /// Alarm distance plus both proximities: element boxes closer than this are tested.
    gap: f64,
    /// Contact distance plus both proximities, and the product of the contact stiffnesses.
    d0: f64,
    k: f64,
    /// Contacts for the Lagrangian response (FrictionContact's selection: every output but
    /// near-duplicates) rather than the penalty one (the closest output per id).
    lagrangian: bool,
}

/// Below this many candidate element pairs a model pair's tests stay on one thread.
const PARALLEL_MIN_CANDIDATES: usize = 4096;

/// Threads available here: a simulation's pool when the step runs in one, else 1.
fn threads() -> usize {
    match rayon::current_thread_index() {
        Some(_) => rayon::current_num_threads(),
        None => 1,
    }
}

/// The narrow phase of one model pair into `sc.contacts`: element pairs whose boxes meet (the
/// hierarchies' descent), tested in index order (split over threads when there are many, the
/// outputs concatenated in that order), sorted by (elements, id), one contact per output id
/// (the closest: BarycentricPenalityContact::setDetectionOutputs keeps an earlier one unless a
/// later one is strictly closer), with the penalty response's rest distance and stiffness.
fn narrow(params: &Params, job: &Job, sc: &mut Scratch, threads: usize) {
    use rayon::prelude::*;
    sc.outputs.clear();
    sc.contacts.clear();
    sc.cand.clear();
    job.bvh[0].pairs(
        job.bvh[1],
        job.boxes[0],
        job.boxes[1],
        job.gap,
        &mut sc.stack,
        &mut sc.cand,
    );
    sc.cand.sort_unstable();
    if threads > 1 && sc.cand.len() >= PARALLEL_MIN_CANDIDATES {
        let chunk = sc.cand.len().div_ceil(4 * threads);
        let parts: Vec<Vec<Output>> = sc
            .cand
            .par_chunks(chunk)
            .map(|ch| {
                let mut out = Vec::new();
                for &(i, j) in ch {
                    intersect(params, &job.g1, i as usize, &job.g2, j as usize, &mut out);
                }
                out
            })
            .collect();
        for p in parts {
            sc.outputs.extend(p);
        }
    } else {
        for &(i, j) in &sc.cand {
            intersect(
                params,
                &job.g1,
                i as usize,
                &job.g2,
                j as usize,
                &mut sc.outputs,
            );
        }
    }
    if sc.outputs.is_empty() {
        return;
    }
    sc.outputs.sort_by_key(|x| (x.elems, x.id));
    sc.keep.clear();
    if job.lagrangian {
        // FrictionContact::setDetectionOutputs: an output is dropped when a kept one has both
        // points within 1e-4 (squared distances summed below SOFA's float 1e-8)
        const CLOSE: f64 = 1e-8_f32 as f64;
        let mut kept: Vec<usize> = Vec::new();
        for (k, o) in sc.outputs.iter().enumerate() {
            let dup = kept.iter().any(|&q| {
                let p = &sc.outputs[q];
                (p.positions[0] - o.positions[0]).norm_squared()
                    + (p.positions[1] - o.positions[1]).norm_squared()
                    < CLOSE
            });
            sc.keep.push(!dup);
            if !dup {
                kept.push(k);
            }
        }
    } else {
        sc.best.clear();
        for (k, o) in sc.outputs.iter().enumerate() {
            match sc.best.binary_search_by(|(id, _)| id.cmp(&o.id)) {
                Ok(p) => {
                    if o.value < sc.outputs[sc.best[p].1].value {
                        sc.best[p].1 = k;
                    }
                }
                Err(p) => sc.best.insert(p, (o.id, k)),
            }
        }
        sc.keep.resize(sc.outputs.len(), false);
        for &(_, k) in &sc.best {
            sc.keep[k] = true;
        }
    }
    // the penalty response: rest distance = contact distance + proximities (+ radii of sphere
    // centres), stiffness = product of the models' contactStiffness divided by that distance
    // (BarycentricPenalityContact)
    for (o, _) in sc.outputs.iter().zip(&sc.keep).filter(|(_, k)| **k) {
        let rf = if job.g1.shape == CollisionShape::Sphere {
            job.g1
                .radii
                .get(o.elems[0] as usize)
                .copied()
                .unwrap_or(0.0)
        } else {
            0.0
        };
        let rs = if job.g2.shape == CollisionShape::Sphere {
            job.g2
                .radii
                .get(o.elems[1] as usize)
                .copied()
                .unwrap_or(0.0)
        } else {
            0.0
        };
        let distance = job.d0 + rf + rs;
        sc.contacts.push(Contact {
            first: o.points[0],
            second: o.points[1],
            normal: o.normal,
            distance,
            stiffness: if distance != 0.0 {
                job.k / distance
            } else {
                job.k
            },
            elements: o.elems,
        });
    }
}

/// The job of the model pair (f, s) of `entries`, in that order.
fn job<'a>(
    scene: &'a Scene,
    entries: &'a [Entry],
    params: &Params,
    f: usize,
    s: usize,
    lagrangian: bool,
) -> Option<Job<'a>> {
    let (ef, es) = (&entries[f], &entries[s]);
    let (mf, ms) = (model_of(scene, ef.passive)?, model_of(scene, es.passive)?);
    let (pf, ps) = (mf.params().proximity, ms.params().proximity);
    let geometry = |e: &'a Entry, m: &'a dyn CollisionModel, prox: f64| Geometry {
        shape: m.shape(),
        x: &e.x,
        edges: m.edges(),
        triangles: m.triangles(),
        flags: m.triangle_flags(),
        radii: &e.radii,
        adjacency: adjacency_of(m),
        proximity: prox,
        len: e.count,
    };
    let gap = if params.method == Method::Discrete {
        0.0
    } else {
        params.alarm
    };
    Some(Job {
        g1: geometry(ef, mf, pf),
        g2: geometry(es, ms, ps),
        bvh: [&ef.bvh, &es.bvh],
        boxes: [&ef.boxes, &es.boxes],
        gap: gap + pf + ps,
        d0: params.contact + pf + ps,
        k: mf.params().contact_stiffness * ms.params().contact_stiffness,
        lagrangian,
    })
}

impl Default for Pipeline {
    fn default() -> Self {
        Self::new()
    }
}

impl Pipeline {
    pub fn new() -> Self {
        Self::with_kind(false)
    }

    /// A SubCollisionPipeline (run by a CompositeCollisionPipeline).
    pub fn sub() -> Self {
        Self::with_kind(true)
    }

    fn with_kind(sub: bool) -> Self {
        let mut data = base_fields(DataTable::new())
            .with(
                "verbose",
                DataKind::Bool,
                "0",
                "Display extra informations at each computation step. (default=false)",
            )
            .with(
                "draw",
                DataKind::Bool,
                "0",
                "Draw detected collisions. (default=false)",
            )
            .with("depth", DataKind::Int, "6", "Max depth of bounding trees")
            .with(
                "broadPhaseDetection",
                DataKind::Str,
                "",
                "link to the broad phase",
            )
            .with(
                "narrowPhaseDetection",
                DataKind::Str,
                "",
                "link to the narrow phase",
            )
            .with(
                "intersectionMethod",
                DataKind::Str,
                "",
                "link to the intersection method",
            )
            .with(
                "contactManager",
                DataKind::Str,
                "",
                "link to the contact manager",
            );
        if sub {
            data = data.with(
                "collisionModels",
                DataKind::Str,
                "",
                "list of collision models to consider in this pipeline",
            );
        }
        Pipeline {
            data,
            sub,
            listed: None,
            node: None,
            params: None,
            response: String::new(),
            lagrangian: None,
            entries: Vec::new(),
            responses: Default::default(),
            scratch: Scratch::default(),
            jobs: Vec::new(),
            sweep: Vec::new(),
            model_pairs: Vec::new(),
            stamp: 0,
            any_pair: false,
            last_count: 0,
            model_ids: Default::default(),
        }
    }

    /// The intersection parameters in use (after init), if the pipeline found a method.
    pub fn params(&self) -> Option<&Params> {
        self.params.as_ref()
    }
}

/// The component a link names when it is one of `classes`, else the first component of one
/// of `classes` in `node` or its ancestors (nearest first).
fn find_setting(
    ctx: &InitContext<'_>,
    link: &str,
    classes: &[&str],
) -> Option<(ComponentId, &'static str)> {
    let scene = ctx.scene;
    if !link.trim().is_empty() {
        if let Some(Target::Component(c)) = ctx.linked(link) {
            let class = scene.component(c)?.class_name();
            return classes.contains(&class).then_some((c, class));
        }
        return None;
    }
    for n in scene.lineage(ctx.node) {
        for &c in &scene.node(n).components {
            let Some(comp) = scene.component(c) else {
                continue;
            };
            let class = comp.class_name();
            if classes.contains(&class) {
                return Some((c, class));
            }
        }
    }
    None
}

impl Component for Pipeline {
    fn class_name(&self) -> &'static str {
        if self.sub {
            "SubCollisionPipeline"
        } else {
            "CollisionPipeline"
        }
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.node = Some(ctx.node);
        let scene = ctx.scene;
        let method_link = self.data.str("intersectionMethod").to_string();
        let manager_link = self.data.str("contactManager").to_string();
        if self.sub {
            let mut listed = Vec::new();
            for l in self.data.str("collisionModels").split_whitespace() {
                match ctx.linked(l) {
                    Some(Target::Component(c)) if matches!(scene.info(c).slot, Slot::Passive(i) if model_of(scene, i).is_some()) => {
                        listed.push(c)
                    }
                    _ => ctx.error(format!("collisionModels: '{l}' names no collision model")),
                }
            }
            self.listed = Some(listed);
        }
        let method = find_setting(
            ctx,
            &method_link,
            &[
                "MinProximityIntersection",
                "NewProximityIntersection",
                "DiscreteIntersection",
                "LocalMinDistance",
            ],
        );
        self.params = match method {
            None => {
                ctx.warn("no intersection method (MinProximityIntersection, NewProximityIntersection, DiscreteIntersection, LocalMinDistance) beside the pipeline: no collision is detected");
                None
            }
            Some((id, class)) => {
                let d = scene.component(id).map(|c| c.data());
                let real = |n: &str, default: f64| {
                    d.and_then(|d| d.field(n).map(|_| d.real(n)))
                        .filter(|v| v.is_finite())
                        .unwrap_or(default)
                };
                let flag = |n: &str, default: bool| {
                    d.and_then(|d| d.field(n).map(|_| d.bool(n)))
                        .unwrap_or(default)
                };
                let method = match class {
                    "MinProximityIntersection" => Method::MinProximity,
                    "NewProximityIntersection" => Method::NewProximity,
                    "LocalMinDistance" => Method::LocalMin,
                    _ => Method::Discrete,
                };
                Some(Params {
                    method,
                    alarm: real("alarmDistance", 1.0),
                    contact: real("contactDistance", 0.5),
                    use_line_line: flag("useLineLine", method == Method::MinProximity),
                    use_line_point: flag("useLinePoint", true),
                    use_point_point: flag("usePointPoint", true),
                    use_sphere_triangle: flag("useSphereTriangle", true),
                    use_surface_normals: flag("useSurfaceNormals", false),
                    cone_filter: method == Method::LocalMin
                        && flag("filterIntersection", true)
                        && !flag("useLMDFilters", false),
                    angle_cone: real("angleCone", 0.0),
                    cone_factor: real("coneFactor", 0.5),
                })
            }
        };
        let manager = find_setting(
            ctx,
            &manager_link,
            &["CollisionResponse", "RuleBasedContactManager"],
        );
        if let Some((id, _)) = manager {
            let rules = scene
                .component(id)
                .filter(|c| c.class_name() == "RuleBasedContactManager")
                .and_then(|c| c.read_data("rules"))
                .map(|v| v.to_string())
                .unwrap_or_default();
            if !rules.trim().is_empty() && rules.trim() != "default" {
                ctx.warn(format!("RuleBasedContactManager rules '{}' are not applied yet: every pair of models gets the default response", rules.trim()));
            }
        }
        let manager_params = manager
            .as_ref()
            .and_then(|(id, _)| scene.component(*id))
            .and_then(|c| c.read_data("responseParams"))
            .map(|v| v.to_string());
        self.response = match manager {
            Some((id, _)) => scene
                .component(id)
                .and_then(|c| c.read_data("response"))
                .map(|v| v.to_string())
                .unwrap_or_else(|| "PenalityContactForceField".to_string()),
            None => {
                ctx.warn("no contact manager (CollisionResponse) beside the pipeline: contacts get no response");
                String::new()
            }
        };
        let penalty = matches!(
            self.response.as_str(),
            "PenalityContactForceField" | "default" | "BarycentricPenalityContact"
        );
        self.lagrangian = None;
        if self.response == "FrictionContactConstraint" {
            let text = manager_params.unwrap_or_default();
            let (mut mu, mut tol) = (0.8, 0.0);
            for part in text.split('&').filter(|p| !p.trim().is_empty()) {
                let (k, v) = part.split_once('=').unwrap_or((part, ""));
                match (k.trim(), v.trim().parse::<f64>()) {
                    ("mu", Ok(x)) if x >= 0.0 && x.is_finite() => mu = x,
                    ("tol", Ok(x)) if x >= 0.0 && x.is_finite() => tol = x,
                    _ => ctx.warn(format!(
                        "responseParams '{part}' is not understood (FrictionContactConstraint takes mu=… and tol=…, non-negative): ignored"
                    )),
                }
            }
            self.lagrangian = Some((mu, tol));
            let root_loop = scene
                .node_components(scene.root(), Role::AnimationLoop)
                .next()
                .map(|c| scene.info(c).class);
            if root_loop != Some("FreeMotionAnimationLoop") {
                ctx.warn("FrictionContactConstraint makes Lagrangian contact constraints, which only FreeMotionAnimationLoop solves: with this animation loop contacts get no response");
            }
        } else if !self.response.is_empty() && !penalty {
            ctx.warn(format!(
                "contact response '{}' is not implemented yet (only PenalityContactForceField): contacts get no response",
                self.response
            ));
            self.params = None;
        }
    }
}

impl Passive for Pipeline {
    fn role(&self) -> Role {
        Role::Collision
    }
    fn is_collision_pipeline(&self) -> bool {
        // a sub-pipeline runs when its composite does
        !self.sub
    }
    fn collision_pipeline(&mut self) -> Option<&mut dyn CollisionPipeline> {
        Some(self)
    }
}

fn model_of(scene: &Scene, i: usize) -> Option<&dyn CollisionModel> {
    scene.passives[i].as_ref()?.collision_model()
}

/// Whether two models may collide (core/CollisionModel::canCollideWith): models of one node
/// only with self-collision, and never two sharing a group.
fn can_collide(scene: &Scene, a: &Entry, b: &Entry) -> bool {
    let (Some(ma), Some(mb)) = (model_of(scene, a.passive), model_of(scene, b.passive)) else {
        return false;
    };
    let (pa, pb) = (ma.params(), mb.params());
    if !pa.simulated && !pb.simulated {
        return false;
    }
    if a.node == b.node {
        return false;
    }
    !pa.group.iter().any(|g| pb.group.contains(g))
}

impl Pipeline {
    /// Refresh the models taking part and their positions and boxes.
    fn gather(&mut self, scene: &Scene) {
        let Some(root) = self.node else { return };
        let mut k = 0;
        let listed = self.listed.take();
        match &listed {
            Some(l) => {
                for &id in l {
                    self.gather_one(scene, id, None, &mut k);
                }
            }
            None => {
                for id in scene.component_ids() {
                    self.gather_one(scene, id, Some(root), &mut k);
                }
            }
        }
        self.listed = listed;
        self.entries.truncate(k);
        // geometry only when some pair can collide: models of two nodes, one simulated
        // (a scene whose models all sit in one node, as most FEM examples, pays nothing)
        let e = &self.entries;
        let simulated =
            |x: &Entry| model_of(scene, x.passive).is_some_and(|m| m.params().simulated);
        self.any_pair = e.iter().any(simulated) && e.iter().any(|x| x.node != e[0].node);
        if !self.any_pair {
            return;
        }
        for e in &mut self.entries {
            if let (Some(st), Some(m)) = (scene.state(e.state), model_of(scene, e.passive)) {
                update_geometry(e, st, m);
            }
        }
    }

    /// Take model `id` into the entries at `k` (and advance it) when it is an active
    /// collision model (under `root` when given) of an activated node.
    fn gather_one(&mut self, scene: &Scene, id: ComponentId, root: Option<NodeId>, k: &mut usize) {
        {
            if scene.check_component(id).is_err() {
                return;
            }
            let info = scene.info(id);
            let Slot::Passive(p) = info.slot else {
                return;
            };
            let Some(m) = model_of(scene, p) else {
                return;
            };
            let Some(state) = m.state() else { return };
            if !m.params().active || scene.check_component(state).is_err() {
                return;
            }
            // points and spheres: one per point of the state as it is now
            let count = match (m.shape(), scene.state(state)) {
                (CollisionShape::Point | CollisionShape::Sphere, Some(st)) => st.size(),
                _ => m.len(),
            };
            if count == 0 {
                return;
            }
            // under the pipeline's node, in activated nodes only (no allocation: walk up)
            let mut under = root.is_none();
            let mut cur = Some(info.node);
            while let Some(n) = cur {
                let node = scene.node(n);
                if !node.activated {
                    return;
                }
                under |= Some(n) == root;
                cur = node.parent;
            }
            if !under {
                return;
            }
            if scene.state(state).is_none() {
                return;
            }
            if *k == self.entries.len() {
                self.entries.push(Entry {
                    model: id,
                    passive: p,
                    state,
                    node: info.node,
                    x: Vec::new(),
                    boxes: Vec::new(),
                    bbox: (Vec3::zeros(), Vec3::zeros()),
                    bvh: Bvh::default(),
                    count,
                    radii: Vec::new(),
                });
            }
            let e = &mut self.entries[*k];
            e.model = id;
            e.passive = p;
            e.state = state;
            e.node = info.node;
            e.count = count;
            *k += 1;
        }
    }

    /// The pairs of models whose boxes meet within `gap`, as (later, earlier) in the order
    /// of the later model and then of the earlier one.
    fn broad_phase(&mut self, gap: f64) {
        let e = &self.entries;
        self.sweep.clear();
        self.sweep.extend(0..e.len());
        self.sweep
            .sort_by(|&i, &j| e[i].bbox.0.x.total_cmp(&e[j].bbox.0.x).then(i.cmp(&j)));
        self.model_pairs.clear();
        for (k, &i) in self.sweep.iter().enumerate() {
            let hi = e[i].bbox.1.x + gap;
            for &j in &self.sweep[k + 1..] {
                if e[j].bbox.0.x > hi {
                    break;
                }
                if boxes_meet(&e[i].bbox, &e[j].bbox, gap) {
                    self.model_pairs.push((i.max(j), i.min(j)));
                }
            }
        }
        self.model_pairs.sort_unstable();
    }

    /// The response force field of a pair of models, created on its first contact.
    /// Hand a model pair's contacts to its response force field (made on first contact).
    fn respond(
        &mut self,
        scene: &mut Scene,
        f: usize,
        s: usize,
        contacts: &[Contact],
        changes: &mut CollisionChanges,
    ) {
        if let Some(ff) = self.response_for(scene, f, s, changes) {
            if let Some(r) = response_of(scene, ff) {
                r.set_contacts(contacts);
            }
        }
    }

    fn response_for(
        &mut self,
        scene: &mut Scene,
        a: usize,
        b: usize,
        changes: &mut CollisionChanges,
    ) -> Option<ComponentId> {
        let models = [self.entries[a].model, self.entries[b].model];
        if let Some(r) = self.responses.get_mut(&models) {
            if scene.check_component(r.ff).is_ok() {
                r.stamp = self.stamp;
                return Some(r.ff);
            }
        }
        self.responses.remove(&models);
        let (ea, eb) = (&self.entries[a], &self.entries[b]);
        let sa = scene.state(ea.state)?;
        let sb = scene.state(eb.state)?;
        let strides = [
            (sa.dof.coord_size(), sa.dof.deriv_size()),
            (sb.dof.coord_size(), sb.dof.deriv_size()),
        ];
        let simulated =
            |e: &Entry| model_of(scene, e.passive).is_some_and(|m| m.params().simulated);
        let (sim_a, sim_b) = (simulated(ea), simulated(eb));
        let component = match self.lagrangian {
            Some((mu, tol)) => AnyComponent::Passive(Box::new(ContactConstraint::new(
                ea.state, eb.state, strides, mu, tol,
            ))),
            None => AnyComponent::ForceField(Box::new(PenaltyContactForceField::new(
                ea.state,
                eb.state,
                sa.size(),
                strides,
                !sim_a,
                !sim_b,
            ))),
        };
        // SOFA's placement (CollisionResponse::createResponse): beside the simulated model when
        // the other is not simulated, else in the pipeline's node, where a solver above both
        // integrates it (implicitly) and otherwise it acts as an explicit external force
        let node = match (sim_a, sim_b) {
            (true, false) => ea.node,
            (false, true) => eb.node,
            _ => self.node.unwrap_or(ea.node),
        };
        let name = format!(
            "contact_{}_{}",
            scene.info(ea.model).name,
            scene.info(eb.model).name
        );
        let id = scene.add_component(node, &name, component, None);
        changes.added.push(id);
        self.responses.insert(
            models,
            Response {
                ff: id,
                stamp: self.stamp,
            },
        );
        Some(id)
    }
}

/// The contact response behind a response component (a penalty force field or a Lagrangian
/// contact constraint).
fn response_of(
    scene: &mut Scene,
    id: ComponentId,
) -> Option<&mut dyn canape_core::collision::ContactResponse> {
    match scene.info(id).slot {
        Slot::ForceField(i) => scene.force_fields[i]
            .as_mut()
            .and_then(|f| f.contact_response()),
        Slot::Passive(i) => scene.passives[i]
            .as_mut()
            .and_then(|p| p.contact_response()),
        _ => None,
    }
}

/// Positions, element boxes (grown by the model's proximity, and the radius for spheres) and
/// the refitted hierarchy of one model.
fn update_geometry(e: &mut Entry, st: &MechanicalObject, m: &dyn CollisionModel) {
    let stride = st.dof.coord_size();
    e.x.clear();
    e.x.extend(
        st.vec(VecId::POSITION)
            .chunks_exact(stride)
            .map(|c| Vec3::new(c[0], c[1], c[2])),
    );
    let prox = m.params().proximity;
    e.boxes.clear();
    let x = &e.x;
    let grow = |pts: &mut dyn Iterator<Item = Vec3>, r: f64| {
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for q in pts {
            lo = lo.inf(&q);
            hi = hi.sup(&q);
        }
        (lo.add_scalar(-r), hi.add_scalar(r))
    };
    let ok = |i: u32| (i as usize) < x.len();
    match m.shape() {
        CollisionShape::Point => {
            for q in x {
                e.boxes.push((q.add_scalar(-prox), q.add_scalar(prox)));
            }
        }
        CollisionShape::Sphere => {
            e.radii.clear();
            e.radii.extend((0..x.len()).map(|i| m.radius(i)));
            for (q, r) in x.iter().zip(&e.radii) {
                let r = r + prox;
                e.boxes.push((q.add_scalar(-r), q.add_scalar(r)));
            }
        }
        CollisionShape::Line => {
            for ed in m.edges() {
                if !ed.iter().all(|&i| ok(i)) {
                    e.boxes.push(empty_box());
                    continue;
                }
                e.boxes
                    .push(grow(&mut ed.iter().map(|&i| x[i as usize]), prox));
            }
        }
        CollisionShape::Triangle => {
            for t in m.triangles() {
                if !t.iter().all(|&i| ok(i)) {
                    e.boxes.push(empty_box());
                    continue;
                }
                e.boxes
                    .push(grow(&mut t.iter().map(|&i| x[i as usize]), prox));
            }
        }
    }
    let mut lo = Vec3::repeat(f64::INFINITY);
    let mut hi = Vec3::repeat(f64::NEG_INFINITY);
    for b in &e.boxes {
        lo = lo.inf(&b.0);
        hi = hi.sup(&b.1);
    }
    e.bbox = (lo, hi);
    e.bvh.update(&e.boxes);
}

/// The neighbourhoods LocalMinDistance's cones need, for this crate's models.
fn adjacency_of(m: &dyn CollisionModel) -> Option<&crate::model::Adjacency> {
    m.as_any()?
        .downcast_ref::<crate::model::GeometryModel>()
        .map(|g| g.adjacency())
}

fn empty_box() -> (Vec3, Vec3) {
    (Vec3::repeat(f64::INFINITY), Vec3::repeat(f64::NEG_INFINITY))
}

impl CollisionPipeline for Pipeline {
    fn collide(&mut self, scene: &mut Scene) -> CollisionChanges {
        let mut changes = CollisionChanges::default();
        let Some(params) = self.params else {
            return changes;
        };
        self.gather(scene);
        let mut count = 0;
        self.stamp += 1;
        // BruteForceBroadPhase's pairs: each model with every earlier one whose box comes
        // within the alarm distance, the later model first (before the intersection method's
        // own ordering of the two shapes), in that order (found by sweep and prune on x)
        let gap = if params.method == Method::Discrete {
            0.0
        } else {
            params.alarm
        };
        if self.any_pair {
            self.broad_phase(gap);
        } else {
            self.model_pairs.clear();
        }
        // the pairs to test, in the broad phase's order
        self.jobs.clear();
        for &(a, b) in &self.model_pairs {
            let (ea, eb) = (&self.entries[a], &self.entries[b]);
            if !can_collide(scene, ea, eb) {
                continue;
            }
            let (Some(ma), Some(mb)) = (model_of(scene, ea.passive), model_of(scene, eb.passive))
            else {
                continue;
            };
            let Some(swap) = dispatch(params.method, &params, ma.shape(), mb.shape()) else {
                continue;
            };
            if !boxes_meet(&ea.bbox, &eb.bbox, gap) {
                continue;
            }
            self.jobs.push(if swap { (b, a) } else { (a, b) });
        }
        let threads = threads();
        let lagrangian = self.lagrangian.is_some();
        if threads > 1 && self.jobs.len() > 1 {
            // model pairs over threads, each with its own buffers; the responses then in order
            use rayon::prelude::*;
            let results: Vec<Vec<Contact>> = {
                let jobs: Vec<Option<Job>> = self
                    .jobs
                    .iter()
                    .map(|&(f, s)| job(scene, &self.entries, &params, f, s, lagrangian))
                    .collect();
                jobs.par_iter()
                    .map_init(Scratch::default, |sc, j| match j {
                        Some(j) => {
                            narrow(&params, j, sc, 1);
                            sc.contacts.clone()
                        }
                        None => Vec::new(),
                    })
                    .collect()
            };
            for (k, contacts) in results.into_iter().enumerate() {
                if contacts.is_empty() {
                    continue;
                }
                let (f, s) = self.jobs[k];
                count += contacts.len();
                self.respond(scene, f, s, &contacts, &mut changes);
            }
        } else {
            for k in 0..self.jobs.len() {
                let (f, s) = self.jobs[k];
                {
                    let Some(j) = job(scene, &self.entries, &params, f, s, lagrangian) else {
                        continue;
                    };
                    narrow(&params, &j, &mut self.scratch, threads);
                }
                if self.scratch.contacts.is_empty() {
                    continue;
                }
                let contacts = std::mem::take(&mut self.scratch.contacts);
                count += contacts.len();
                self.respond(scene, f, s, &contacts, &mut changes);
                self.scratch.contacts = contacts;
            }
        }
        // SOFA's contact map (CollisionResponse::createContacts over the detection outputs,
        // ordered by their models): the pairs with contacts in the order of their models, each
        // model getting an id the first time it is met (first, then second), ids kept; the
        // responses' keys are their models' ids
        for (models, r) in &self.responses {
            if r.stamp != self.stamp {
                continue;
            }
            let mut id = |m: ComponentId| {
                let next = self.model_ids.len() as u32;
                *self.model_ids.entry(m).or_insert(next)
            };
            let key = (id(models[0]), id(models[1]));
            if let Some(resp) = response_of(scene, r.ff) {
                resp.set_order_key(key);
            }
        }
        // responses of pairs that no longer touch keep existing with no contacts (no change to
        // the solver groups for pairs that separate and meet again)
        for r in self.responses.values() {
            if r.stamp != self.stamp.wrapping_sub(1) || scene.check_component(r.ff).is_err() {
                // touched this step, or already emptied
                continue;
            }
            if let Some(resp) = response_of(scene, r.ff) {
                resp.set_contacts(&[]);
            }
        }
        self.last_count = count;
        changes
    }

    fn contact_count(&self) -> usize {
        self.last_count
    }
}

mod composite;
pub use composite::CompositePipeline;
