//! CollisionPipeline (Sofa/Component/Collision/Detection/Algorithm/CollisionPipeline.cpp):
//! each step, from the collision models' current positions, the broad phase keeps the pairs of
//! models that may collide and whose bounding boxes come within the alarm distance
//! (BruteForceBroadPhase), the narrow phase tests the element pairs whose boxes do
//! (BVHNarrowPhase) with the intersection method, and the contact manager (CollisionResponse,
//! or RuleBasedContactManager with its rules; the models' own `contactResponse` first, see
//! `crate::response`) hands each pair's contacts to its response, created the first time the
//! pair touches: a
//! penalty force field (BarycentricPenalityContact + PenalityContactForceField), with
//! `StickContactForceField` springs that glue the contact points (BarycentricStickContact), or,
//! with `FrictionContactConstraint` (or `AugmentedLagrangianResponseConstraint`), a Lagrangian
//! contact constraint (FrictionContact, AugmentedLagrangianResponse).
//!
//! Contacts come out in a fixed order: model pairs in model order, element pairs in index
//! order, then SOFA's output id.
//!
//! This file holds the component and its configuration; the narrow phase of one model pair is
//! in `narrow`, and each step's gathering, broad phase and responses in `detection`.

mod composite;
mod detection;
mod narrow;
mod ray_trace;

pub use composite::CompositePipeline;

use crate::bvh::Bvh;
use crate::intersect::{Output, Params};
use crate::response::{self, Chooser, ResponseKind};
use crate::settings::{Continuous, Method};
use canape_core::collision::{CollisionChanges, CollisionModel, CollisionPipeline, Contact};
use canape_core::component::{Passive, Role};
use canape_core::data::{base_fields, DataKind, DataTable, Flag, Int, Text};
use canape_core::scene::{ComponentId, InitContext, NodeId, Scene, Slot};
use canape_types::Vec3;

canape_core::data_schema! {
    /// CollisionPipeline's Data (after the base Data).
    pub struct PipelineData {
        verbose: Flag = ("verbose", DataKind::Bool, "0", "Display extra informations at each computation step. (default=false)"),
        draw: Flag = ("draw", DataKind::Bool, "0", "Draw detected collisions. (default=false)"),
        depth: Int = ("depth", DataKind::Int, "6", "Max depth of bounding trees"),
        broad_phase_detection: Text = ("broadPhaseDetection", DataKind::Str, "", "link to the broad phase"),
        narrow_phase_detection: Text = ("narrowPhaseDetection", DataKind::Str, "", "link to the narrow phase"),
        intersection_method: Text = ("intersectionMethod", DataKind::Str, "", "link to the intersection method"),
        contact_manager: Text = ("contactManager", DataKind::Str, "", "link to the contact manager"),
    }
}

canape_core::data_schema! {
    /// What SubCollisionPipeline adds to [`PipelineData`].
    pub struct SubPipelineData {
        collision_models: Text = ("collisionModels", DataKind::Str, "", "list of collision models to consider in this pipeline"),
    }
}

/// A model taking part in one detection.
#[derive(Clone, Debug)]
struct Entry {
    model: ComponentId,
    passive: usize,
    state: ComponentId,
    node: NodeId,
    /// Positions of the state (refreshed each step).
    x: Vec<Vec3>,
    /// Free-motion positions (continuous detection only; empty otherwise).
    x_free: Vec<Vec3>,
    /// x + v·dt, the far end of the boxes with `continuousCollisionType="Inertia"`.
    x_far: Vec<Vec3>,
    /// Element boxes (min, max), enlarged by the model's proximity.
    boxes: Vec<(Vec3, Vec3)>,
    bbox: (Vec3, Vec3),
    /// The hierarchy of the element boxes.
    bvh: Bvh,
    /// Number of elements.
    count: usize,
    /// Sphere radii per element (empty for other shapes).
    radii: Vec<f64>,
    /// Box frames per element (empty for other shapes).
    frames: Vec<crate::intersect::obb::Frame>,
}

/// The response of one pair of models.
#[derive(Clone, Debug)]
struct Response {
    ff: ComponentId,
    /// What kind of response it is (a pair whose chosen kind changes gets a new one).
    kind: ResponseKind,
    /// The collision stage that last gave it contacts.
    stamp: u64,
}

/// SOFA's CollisionPipeline with its broad phase, narrow phase, intersection method and
/// contact manager (found beside it or above it at init).
#[derive(Clone)]
pub struct Pipeline {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: PipelineData,
    /// SubCollisionPipeline's Data.
    ds: Option<SubPipelineData>,
    /// A SubCollisionPipeline: its models and configuration come from its links, and the
    /// CompositeCollisionPipeline naming it runs it.
    sub: bool,
    /// The models of a SubCollisionPipeline, in the order given.
    listed: Option<Vec<ComponentId>>,
    node: Option<NodeId>,
    params: Option<Params>,
    /// Levels of splits below each model's root cell (`depth`).
    depth: usize,
    /// The contact manager's choice of response for a pair of models.
    chooser: Chooser,
    /// The response chosen for each model pair met so far (no response: `None`), with the
    /// models' init counts it was chosen with.
    kinds: std::collections::BTreeMap<[ComponentId; 2], (Option<ResponseKind>, [u64; 2])>,
    /// The settings read at init (narrow phase, intersection method, contact manager): an
    /// edit of one of them re-initialises the pipeline.
    sources: Vec<ComponentId>,
    /// Whether the narrow phase is RayTraceNarrowPhase (vertices inside the other surface,
    /// found by rays) rather than BVHNarrowPhase.
    ray_trace: bool,
    entries: Vec<Entry>,
    /// Each model pair's response, by the pair's models.
    responses: std::collections::BTreeMap<[ComponentId; 2], Response>,
    /// The narrow phase's buffers on one thread (kept between steps: no allocation once the
    /// contact count is stable).
    scratch: Scratch,
    /// The model pairs to test this step (entry indices, the intersection method's order).
    /// The model pairs to test this step (entry indices, the intersection method's order)
    /// with their response.
    jobs: Vec<(usize, usize, Option<ResponseKind>)>,
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
    stack: crate::bvh::PairScratch,
    /// Per output id, the output kept (sorted by id).
    best: Vec<(i64, usize)>,
    keep: Vec<bool>,
    contacts: Vec<Contact>,
    /// RayTraceNarrowPhase's normals of the two models and its ray queries' stack.
    normals: [ray_trace::Normals; 2],
    ray_stack: Vec<crate::bvh::Span>,
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
        let (data, d) = PipelineData::declare(base_fields(DataTable::new()));
        let (data, ds) = if sub {
            let (data, ds) = SubPipelineData::declare(data);
            (data, Some(ds))
        } else {
            (data, None)
        };
        Pipeline {
            data,
            d,
            ds,
            sub,
            listed: None,
            node: None,
            params: None,
            depth: 6,
            chooser: Chooser::default(),
            kinds: Default::default(),
            ray_trace: false,
            sources: Vec::new(),
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

/// The component Data `data`'s link names (`text`), which must be one of `classes` (a wrong
/// link is reported and the search goes on), else the first component of one of `classes` in
/// the node or its ancestors (nearest first).
fn find_setting(
    ctx: &mut InitContext<'_>,
    data: &'static str,
    text: &str,
    classes: &[&str],
    what: &'static str,
) -> Option<(ComponentId, &'static str)> {
    match ctx.link_class(data, text, classes, what) {
        Ok(Some(c)) => return Some((c, ctx.scene.info(c).class)),
        Ok(None) => {}
        Err(e) => ctx.error(format!("{e}: looking for {what} in this node and above")),
    }
    let scene = ctx.scene;
    for n in scene.lineage(ctx.node) {
        for &c in &scene.node(n).components {
            let class = scene.info(c).class;
            if scene.component(c).is_some() && classes.contains(&class) {
                return Some((c, class));
            }
        }
    }
    None
}

impl Pipeline {
    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.node = Some(ctx.node);
        let depth = self.data.get(self.d.depth);
        if depth < 0 {
            ctx.warn(format!(
                "depth {depth} is negative: 0 is used (one cell over each model's elements)"
            ));
        }
        self.depth = depth.clamp(0, 32) as usize;
        let scene = ctx.scene;
        let method_link = self.data.get(self.d.intersection_method).to_string();
        let narrow_link = self.data.get(self.d.narrow_phase_detection).to_string();
        let narrow = find_setting(
            ctx,
            "narrowPhaseDetection",
            &narrow_link,
            &[
                "BVHNarrowPhase",
                "ParallelBVHNarrowPhase",
                "RayTraceNarrowPhase",
            ],
            "a narrow phase",
        );
        self.ray_trace = narrow.is_some_and(|(_, class)| class == "RayTraceNarrowPhase");
        self.sources.clear();
        self.sources.extend(narrow.map(|(id, _)| id));
        let manager_link = self.data.get(self.d.contact_manager).to_string();
        if let Some(ds) = self.ds {
            let mut listed = Vec::new();
            for l in self.data.get(ds.collision_models).split_whitespace() {
                match ctx.link_collision_model("collisionModels", l) {
                    Ok(Some(c)) => listed.push(c),
                    Ok(None) => {}
                    Err(e) => ctx.error(format!("{e}: it is left out of this pipeline")),
                }
            }
            self.listed = Some(listed);
        }
        let method = find_setting(
            ctx,
            "intersectionMethod",
            &method_link,
            &[
                "MinProximityIntersection",
                "NewProximityIntersection",
                "DiscreteIntersection",
                "LocalMinDistance",
                "CCDTightInclusionIntersection",
            ],
            "an intersection method",
        );
        self.sources.extend(method.map(|(id, _)| id));
        self.params = match method {
            None => {
                ctx.warn("no intersection method (MinProximityIntersection, NewProximityIntersection, DiscreteIntersection, LocalMinDistance, CCDTightInclusionIntersection) beside the pipeline: no collision is detected");
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
                    "CCDTightInclusionIntersection" => Method::Ccd,
                    _ => Method::Discrete,
                };
                // an unknown name is reported by the setting itself
                let continuous = d
                    .filter(|_| method == Method::Ccd)
                    .and_then(|d| {
                        d.field("continuousCollisionType")
                            .map(|_| d.str("continuousCollisionType"))
                    })
                    .and_then(Continuous::parse)
                    .unwrap_or(Continuous::None);
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
                    continuous,
                    ccd_tolerance: real("tolerance", 1e-10),
                    ccd_max_iterations: d
                        .and_then(|d| d.field("maxIterations").map(|_| d.int("maxIterations")))
                        .unwrap_or(1000),
                })
            }
        };
        let manager = find_setting(
            ctx,
            "contactManager",
            &manager_link,
            &["CollisionResponse", "RuleBasedContactManager"],
            "a contact manager",
        );
        self.sources.extend(manager.map(|(id, _)| id));
        self.kinds.clear();
        self.chooser = Chooser::default();
        let Some((manager, class)) = manager else {
            ctx.warn("no contact manager (CollisionResponse) beside the pipeline: contacts get no response");
            return;
        };
        let read = |n: &str| {
            scene
                .component(manager)
                .and_then(|c| c.read_data(n))
                .map(|v| v.to_string())
                .unwrap_or_default()
        };
        // CollisionResponse::getContactResponse: the response, then `?` and its parameters
        let name = read("response");
        let name = if name.trim().is_empty() {
            "PenalityContactForceField".to_string()
        } else {
            name.trim().to_string()
        };
        let params = read("responseParams");
        let text = if params.trim().is_empty() {
            name.clone()
        } else {
            format!("{name}?{}", params.trim())
        };
        let (default, errors) = response::parse(&text);
        for e in errors {
            ctx.warn(e.to_string());
        }
        self.chooser.manager = true;
        self.chooser.default = default;
        if class == "RuleBasedContactManager" {
            self.chooser.rule_based = true;
            let (rules, errors) = response::parse_rules(&read("rules"));
            for e in errors {
                ctx.warn(e.to_string());
            }
            self.chooser.rules = rules;
        }
        if self.chooser.any_lagrangian() {
            let what = match default.is_some_and(|k| k.is_lagrangian()) {
                true => name.as_str(),
                false => "a rule's response",
            };
            response::check_free_motion(ctx, what);
        }
    }

    /// The response of the model pair (f, s) of the entries (chosen on the pair's first
    /// detection and kept).
    fn kind_of(&mut self, scene: &Scene, f: usize, s: usize) -> Option<ResponseKind> {
        let key = [self.entries[f].model, self.entries[s].model];
        let inits = key.map(|m| geometry_of(scene, m).map_or(0, |g| g.inits()));
        // chosen again only when a model was re-initialised since (its name or group edited)
        if let Some((k, at)) = self.kinds.get(&key) {
            if *at == inits {
                return *k;
            }
        }
        let kind = self.choose(scene, key);
        self.kinds.insert(key, (kind, inits));
        kind
    }

    /// The contact manager's choice for the models `key` (first, second).
    fn choose(&self, scene: &Scene, key: [ComponentId; 2]) -> Option<ResponseKind> {
        let view = |m: ComponentId| -> Option<response::ModelView<'_>> {
            let Slot::Passive(i) = scene.info(m).slot else {
                return None;
            };
            let own = geometry_of(scene, m).and_then(|g| g.own_response());
            Some((
                scene.info(m).name.as_str(),
                model_of(scene, i)?.params(),
                own,
            ))
        };
        match (view(key[0]), view(key[1])) {
            (Some(a), Some(b)) => self.chooser.choose(a, b),
            _ => None,
        }
    }

    /// Responses whose pair was chosen again with another kind (a model re-initialised after
    /// an edit of its name or group) go now, kept alive or not; the pair gets its new response
    /// at its next contact.
    fn drop_rechosen(&mut self, scene: &mut Scene, changes: &mut CollisionChanges) {
        let mut gone = Vec::new();
        for (key, r) in &self.responses {
            let inits = key.map(|m| geometry_of(scene, m).map_or(0, |g| g.inits()));
            if self.kinds.get(key).is_some_and(|(_, at)| *at == inits) {
                continue;
            }
            let kind = self.choose(scene, *key);
            self.kinds.insert(*key, (kind, inits));
            if kind != Some(r.kind) {
                gone.push(*key);
            }
        }
        for key in gone {
            if let Some(r) = self.responses.remove(&key) {
                if scene.check_component(r.ff).is_ok() {
                    let slot = scene.info(r.ff).slot;
                    if scene.remove_component(r.ff).is_ok() {
                        changes.removed.push(slot);
                    }
                }
            }
        }
    }
}

/// The collision model of this crate that component `m` is, if it is one.
fn geometry_of(scene: &Scene, m: ComponentId) -> Option<&crate::model::GeometryModel> {
    let Slot::Passive(i) = scene.info(m).slot else {
        return None;
    };
    model_of(scene, i)?
        .as_any()?
        .downcast_ref::<crate::model::GeometryModel>()
}

canape_core::impl_component!(
    Pipeline,
    |s| if s.sub {
        "SubCollisionPipeline"
    } else {
        "CollisionPipeline"
    },
    init
);

impl Passive for Pipeline {
    fn role(&self) -> Role {
        Role::Collision
    }
    fn init_sources(&self) -> Vec<ComponentId> {
        self.sources.clone()
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
