//! The pipeline's configuration components: the broad and narrow phases
//! (BruteForceBroadPhase, BVHNarrowPhase), the intersection methods
//! (MinProximityIntersection, NewProximityIntersection, DiscreteIntersection, LocalMinDistance)
//! and the contact
//! manager (CollisionResponse). They hold Data; the pipeline reads them at init.

use canape_core::component::{Component, Passive, Role};
use canape_core::data::{base_fields, DataKind, DataTable};

/// Which intersection method the pipeline uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    MinProximity,
    NewProximity,
    Discrete,
    /// LocalMinDistance: MinProximity's closest points, kept only inside the cones the
    /// surfaces' normals allow.
    LocalMin,
}

/// A configuration component of the pipeline, identified by its class.
#[derive(Clone)]
pub struct Setting {
    class: &'static str,
    data: DataTable,
}

impl Setting {
    pub fn new(class: &'static str) -> Self {
        let mut data = base_fields(DataTable::new());
        match class {
            "MinProximityIntersection" | "NewProximityIntersection" => {
                data = data
                    .with(
                        "alarmDistance",
                        DataKind::Real,
                        "1",
                        "Proximity detection distance",
                    )
                    .with(
                        "contactDistance",
                        DataKind::Real,
                        "0.5",
                        "Distance below which a contact is created",
                    )
                    .with(
                        "useLineLine",
                        DataKind::Bool,
                        if class == "MinProximityIntersection" {
                            "1"
                        } else {
                            "0"
                        },
                        "Line-line collision detection enabled",
                    );
                if class == "MinProximityIntersection" {
                    data = data
                        .with("useSphereTriangle", DataKind::Bool, "1", "activate Sphere-Triangle intersection tests")
                        .with("usePointPoint", DataKind::Bool, "1", "activate Point-Point intersection tests")
                        .with("useSurfaceNormals", DataKind::Bool, "0", "Compute the norms of the Detection Outputs by considering the normals of the surfaces involved.")
                        .with("useLinePoint", DataKind::Bool, "1", "activate Line-Point intersection tests");
                }
            }
            "LocalMinDistance" => {
                data = data
                    .with(
                        "alarmDistance",
                        DataKind::Real,
                        "1",
                        "Proximity detection distance",
                    )
                    .with(
                        "contactDistance",
                        DataKind::Real,
                        "0.5",
                        "Distance below which a contact is created",
                    )
                    .with(
                        "filterIntersection",
                        DataKind::Bool,
                        "1",
                        "Activate LMD filter",
                    )
                    .with(
                        "angleCone",
                        DataKind::Real,
                        "0",
                        "Filtering cone extension angle",
                    )
                    .with(
                        "coneFactor",
                        DataKind::Real,
                        "0.5",
                        "Factor for filtering cone angle computation",
                    )
                    .with(
                        "useLMDFilters",
                        DataKind::Bool,
                        "0",
                        "Use external cone computation",
                    );
            }
            "CollisionResponse" | "RuleBasedContactManager" => {
                if class == "RuleBasedContactManager" {
                    data = data
                        .with("rules", DataKind::Str, "", "Ordered list of rules, each with a triplet of strings. The first two define either the name of the collision model or its group number. * are wildcards. The last string define the response algorithm to use for this pair of models")
                        .with("variables", DataKind::Words, "", "Define a list of variables to be used inside the rules");
                }
                data = data
                    .with(
                        "response",
                        DataKind::Str,
                        "PenalityContactForceField",
                        "contact response class",
                    )
                    .with(
                        "responseParams",
                        DataKind::Str,
                        "",
                        "contact response parameters (syntax: name1=value1&name2=value2&...)",
                    )
                    .with(
                        "mu",
                        DataKind::Real,
                        "0",
                        "friction coefficient (Lagrangian responses)",
                    )
                    .with(
                        "epsilon",
                        DataKind::Real,
                        "0",
                        "restitution (Lagrangian responses)",
                    );
            }
            "BruteForceBroadPhase" | "ParallelBruteForceBroadPhase" => {
                data = data.with(
                    "box",
                    DataKind::Reals(0),
                    "",
                    "if not empty, objects that do not intersect this bounding-box will be ignored",
                );
            }
            _ => {}
        }
        Setting { class, data }
    }

    pub fn class(&self) -> &'static str {
        self.class
    }
}

impl Component for Setting {
    fn class_name(&self) -> &'static str {
        self.class
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
}

impl Passive for Setting {
    fn role(&self) -> Role {
        Role::Collision
    }
}
