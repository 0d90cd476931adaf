//! The pipeline's configuration components: the broad and narrow phases
//! (BruteForceBroadPhase, BVHNarrowPhase), the intersection methods
//! (MinProximityIntersection, NewProximityIntersection, DiscreteIntersection, LocalMinDistance,
//! CCDTightInclusionIntersection)
//! and the contact
//! manager (CollisionResponse). They hold Data; the pipeline reads them at init.

use canape_core::component::{Component, Passive, Reaction, Role};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, Flag, Int, Real, Reals, Text, Words,
};
use canape_core::scene::InitContext;

/// Which intersection method the pipeline uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    MinProximity,
    NewProximity,
    Discrete,
    /// LocalMinDistance: MinProximity's closest points, kept only inside the cones the
    /// surfaces' normals allow.
    LocalMin,
    /// CCDTightInclusionIntersection: continuous detection between the positions at the start
    /// of the step and the free motion's (triangle–point and line–line).
    Ccd,
}

/// What CCDTightInclusionIntersection's bounding boxes cover besides the positions
/// (`continuousCollisionType`; the narrow phase always tests towards the free positions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Continuous {
    /// The positions only.
    None,
    /// x + v·dt.
    Inertia,
    /// The free motion's positions.
    FreeMotion,
}

impl Continuous {
    /// SOFA's option names, or their index.
    pub fn parse(s: &str) -> Option<Continuous> {
        match s.trim() {
            "None" | "0" => Some(Continuous::None),
            "Inertia" | "1" => Some(Continuous::Inertia),
            "FreeMotion" | "2" => Some(Continuous::FreeMotion),
            _ => None,
        }
    }
}

canape_core::data_schema! {
    /// The proximity methods' distances (MinProximityIntersection, NewProximityIntersection,
    /// LocalMinDistance), after the base Data.
    pub struct ProximityData {
        alarm_distance: Real = ("alarmDistance", DataKind::Real, "1", "Proximity detection distance"),
        contact_distance: Real = ("contactDistance", DataKind::Real, "0.5", "Distance below which a contact is created"),
    }
}

canape_core::data_schema! {
    /// What MinProximityIntersection adds to [`ProximityData`].
    pub struct MinProximityData {
        use_line_line: Flag = ("useLineLine", DataKind::Bool, "1", "Line-line collision detection enabled"),
        use_sphere_triangle: Flag = ("useSphereTriangle", DataKind::Bool, "1", "activate Sphere-Triangle intersection tests"),
        use_point_point: Flag = ("usePointPoint", DataKind::Bool, "1", "activate Point-Point intersection tests"),
        use_surface_normals: Flag = ("useSurfaceNormals", DataKind::Bool, "0", "Compute the norms of the Detection Outputs by considering the normals of the surfaces involved."),
        use_line_point: Flag = ("useLinePoint", DataKind::Bool, "1", "activate Line-Point intersection tests"),
    }
}

canape_core::data_schema! {
    /// What NewProximityIntersection adds to [`ProximityData`].
    pub struct NewProximityData {
        use_line_line: Flag = ("useLineLine", DataKind::Bool, "0", "Line-line collision detection enabled"),
    }
}

canape_core::data_schema! {
    /// What CCDTightInclusionIntersection adds to [`ProximityData`]
    /// (Sofa/Component/Collision/Detection/Intersection/.../CCDTightInclusionIntersection.cpp).
    pub struct CcdData {
        continuous_collision_type: Text = ("continuousCollisionType", DataKind::Str, "None", "Data used for continuous collision detection taken into {'None','Inertia','FreeMotion'}. If 'None' then no CCD is used, if 'Inertia' then only inertia will be used to compute the collision detection and if 'FreeMotion' then the free motion will be used. Note that if 'FreeMotion' is selected, you cannot use the option 'parallelCollisionDetectionAndFreeMotion' in the FreeMotionAnimationLoop"),
        tolerance: Real = ("tolerance", DataKind::Real, "1e-10", "tolerance used by the tight inclusion CCD algorithm"),
        max_iterations: Int = ("maxIterations", DataKind::Int, "1000", "maxIterations used by the tight inclusion CCD algorithm"),
    }
}

canape_core::data_schema! {
    /// What LocalMinDistance adds to [`ProximityData`].
    pub struct LocalMinData {
        filter_intersection: Flag = ("filterIntersection", DataKind::Bool, "1", "Activate LMD filter"),
        angle_cone: Real = ("angleCone", DataKind::Real, "0", "Filtering cone extension angle"),
        cone_factor: Real = ("coneFactor", DataKind::Real, "0.5", "Factor for filtering cone angle computation"),
        use_lmd_filters: Flag = ("useLMDFilters", DataKind::Bool, "0", "Use external cone computation"),
    }
}

canape_core::data_schema! {
    /// What RuleBasedContactManager adds before [`ResponseData`].
    pub struct RulesData {
        rules: Text = ("rules", DataKind::Str, "", "Ordered list of rules, each with a triplet of strings. The first two define either the name of the collision model or its group number. * are wildcards. The last string define the response algorithm to use for this pair of models"),
        variables: Words = ("variables", DataKind::Words, "", "Define a list of variables to be used inside the rules"),
    }
}

canape_core::data_schema! {
    /// The contact managers' Data (CollisionResponse, RuleBasedContactManager).
    pub struct ResponseData {
        response: Text = ("response", DataKind::Str, "PenalityContactForceField", "contact response class"),
        response_params: Text = ("responseParams", DataKind::Str, "", "contact response parameters (syntax: name1=value1&name2=value2&...)"),
        mu: Real = ("mu", DataKind::Real, "0", "friction coefficient (Lagrangian responses)"),
        epsilon: Real = ("epsilon", DataKind::Real, "0", "restitution (Lagrangian responses)"),
    }
}

canape_core::data_schema! {
    /// The broad phases' Data (BruteForceBroadPhase, ParallelBruteForceBroadPhase).
    pub struct BroadPhaseData {
        bounding_box: Reals = ("box", DataKind::Reals(0), "", "if not empty, objects that do not intersect this bounding-box will be ignored"),
    }
}

/// A configuration component of the pipeline, identified by its class. It has no code of its
/// own reading its Data: the pipeline reads them at its init.
#[derive(Clone)]
pub struct Setting {
    class: &'static str,
    data: DataTable,
}

impl Setting {
    pub fn new(class: &'static str) -> Self {
        let data = base_fields(DataTable::new());
        let data = match class {
            "MinProximityIntersection" => {
                MinProximityData::declare(ProximityData::declare(data).0).0
            }
            "NewProximityIntersection" => {
                NewProximityData::declare(ProximityData::declare(data).0).0
            }
            "LocalMinDistance" => LocalMinData::declare(ProximityData::declare(data).0).0,
            "CCDTightInclusionIntersection" => CcdData::declare(ProximityData::declare(data).0).0,
            "CollisionResponse" => ResponseData::declare(data).0,
            "RuleBasedContactManager" => ResponseData::declare(RulesData::declare(data).0).0,
            "RayTraceNarrowPhase" => data.with(
                "draw",
                DataKind::Bool,
                "0",
                "enable/disable display of results",
            ),
            "BruteForceBroadPhase" | "ParallelBruteForceBroadPhase" => {
                BroadPhaseData::declare(data).0
            }
            _ => data,
        };
        Setting { class, data }
    }

    pub fn class(&self) -> &'static str {
        self.class
    }
}

// the class name comes from the instance and there is no init: impl_component! has no arm for
// that, so the accessors are written out
impl Component for Setting {
    fn class_name(&self) -> &'static str {
        self.class
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        if self.class != "CCDTightInclusionIntersection" {
            return;
        }
        let kind = self.data.str("continuousCollisionType");
        if Continuous::parse(kind).is_none() {
            ctx.error(format!("continuousCollisionType '{kind}' is not one of None, Inertia, FreeMotion (or 0, 1, 2): None is used"));
        }
        // the root finder refines every box near a contact down to the tolerance, or until
        // maxIterations boxes: without either bound a query can take unbounded time and memory
        let (tol, iters) = (self.data.real("tolerance"), self.data.int("maxIterations"));
        if (tol.is_nan() || tol <= 0.0) && iters <= 0 {
            ctx.warn(format!("tolerance {tol} and maxIterations {iters}: the root finder has no bound on its refinement and a near contact can take unbounded time and memory; set a positive tolerance (default 1e-10) or maxIterations (default 1000)"));
        }
        crate::response::check_loop(ctx, || {
            "CCDTightInclusionIntersection tests each element's motion towards its free position, which only FreeMotionAnimationLoop computes: with this animation loop the free positions are not those of this step".to_string()
        });
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    /// Edited while running: the simulation then has the collision pipelines read their
    /// settings again. A contact manager's response kind cannot change once the scene runs
    /// (the pairs' responses already made are of the old kind).
    fn data_changed(&mut self, changed: &ChangedData) -> Reaction {
        let touched: Vec<&str> = changed
            .names(&self.data)
            .into_iter()
            .filter(|n| matches!(*n, "response" | "responseParams" | "rules" | "variables"))
            .collect();
        if !touched.is_empty() {
            return Reaction::Refused(vec![format!(
                "{} cannot change while the simulation runs (the contact responses already made are of the first kind)",
                touched.join(", ")
            )]);
        }
        Reaction::Updated
    }
}

impl Passive for Setting {
    fn role(&self) -> Role {
        Role::Collision
    }
}
