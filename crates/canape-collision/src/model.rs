//! Collision models (Sofa/Component/Collision/Geometry): PointCollisionModel,
//! LineCollisionModel, TriangleCollisionModel and SphereCollisionModel. Each names its context
//! state and takes its elements from the context topology at init; the pipeline reads the
//! state's positions when it collides.

use canape_core::collision::{CollisionModel, CollisionParams, CollisionShape};
use canape_core::component::{Component, Passive, Role};
use canape_core::data::{base_fields, DataKind, DataTable};
use canape_core::scene::{ComponentId, InitContext};

/// The Data of every collision model (core/CollisionModel), then the shape's own.
fn model_data(shape: CollisionShape) -> DataTable {
    let mut d = base_fields(DataTable::new())
        .with("active", DataKind::Bool, "1", "flag indicating if this collision model is active and should be included in default collision detections")
        .with("moving", DataKind::Bool, "1", "flag indicating if this object is changing position between iterations")
        .with("simulated", DataKind::Bool, "1", "flag indicating if this object is controlled by a simulation")
        .with("selfCollision", DataKind::Bool, "0", "flag indication if the object can self collide")
        .with("proximity", DataKind::Real, "0", "Distance to the actual (visual) surface")
        .alias(&["contactDistance"])
        .with("contactStiffness", DataKind::Real, "10", "Contact stiffness")
        .with("contactFriction", DataKind::Real, "0", "Contact friction coefficient (dry or viscous or unused depending on the contact method)")
        .with("contactRestitution", DataKind::Real, "0", "Contact coefficient of restitution")
        .with("contactResponse", DataKind::Str, "", "if set, indicate to the ContactManager that this model should use the given class of contacts")
        .with("color", DataKind::Words, "1 0 0 1", "color used to display the collision model if requested")
        .with("group", DataKind::Ints(0), "", "IDs of the groups containing this model. No collision can occur between collision models included in a common group (e.g. allowing the same object to have multiple collision models)")
        .with("numberOfContacts", DataKind::Int, "0", "Number of Contacts attached to the collision model (output)")
        .with("topology", DataKind::Str, "", "link to the topology container");
    match shape {
        CollisionShape::Sphere => {
            d = d
                .with("radius", DataKind::Real, "1", "Default radius")
                .with("listRadius", DataKind::Reals(0), "", "Radius of each sphere")
                .with("showImpostors", DataKind::Bool, "1", "Draw spheres as impostors instead of \"real\" spheres")
        }
        CollisionShape::Triangle | CollisionShape::Line | CollisionShape::Point => {
            d = d
                .with("bothSide", DataKind::Bool, "0", "activate collision on both side of the point/line/triangle model (when surface normals are defined on these primitives)")
                .with("computeNormals", DataKind::Bool, "1", "set to false to disable computation of triangles normal")
                .with("displayFreePosition", DataKind::Bool, "0", "Display Collision Model Points free position(in green)")
        }
    }
    d
}

/// What LocalMinDistance's normal cones read around an element (LocalMinDistance::testValidity):
/// the topology's triangles and edges, the triangles and edges around each vertex, the
/// triangles around each edge of a line model, and the model's own switches.
#[derive(Clone, Debug, Default)]
pub struct Adjacency {
    pub triangles: Vec<[u32; 3]>,
    pub edges: Vec<[u32; 2]>,
    /// Per vertex: the triangles (indices into `triangles`) and edges around it, in order.
    pub vertex_triangles: Vec<Vec<u32>>,
    pub vertex_edges: Vec<Vec<u32>>,
    /// Per edge of a line model: the triangles around it, in order.
    pub edge_triangles: Vec<Vec<u32>>,
    /// A point model is filtered only when a LineCollisionModel sits in its node or above.
    pub line_model_near: bool,
    pub both_side: bool,
}

impl Adjacency {
    /// The neighbourhoods of a mesh of `points` points, for a line model over `line_edges`.
    pub fn build(
        points: usize,
        triangles: Vec<[u32; 3]>,
        edges: Vec<[u32; 2]>,
        line_edges: &[[u32; 2]],
    ) -> Self {
        let mut vertex_triangles = vec![Vec::new(); points];
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                if let Some(l) = vertex_triangles.get_mut(v as usize) {
                    l.push(t as u32);
                }
            }
        }
        let mut vertex_edges = vec![Vec::new(); points];
        for (e, ed) in edges.iter().enumerate() {
            for &v in ed {
                if let Some(l) = vertex_edges.get_mut(v as usize) {
                    l.push(e as u32);
                }
            }
        }
        let key = |a: u32, b: u32| (a.min(b), a.max(b));
        let mut around: std::collections::BTreeMap<(u32, u32), Vec<u32>> = Default::default();
        for (t, tri) in triangles.iter().enumerate() {
            for k in 0..3 {
                around
                    .entry(key(tri[k], tri[(k + 1) % 3]))
                    .or_default()
                    .push(t as u32);
            }
        }
        let edge_triangles = line_edges
            .iter()
            .map(|e| around.get(&key(e[0], e[1])).cloned().unwrap_or_default())
            .collect();
        Adjacency {
            triangles,
            edges,
            vertex_triangles,
            vertex_edges,
            edge_triangles,
            line_model_near: false,
            both_side: false,
        }
    }
}

/// A collision model of one element kind over its context state.
#[derive(Clone)]
pub struct GeometryModel {
    shape: CollisionShape,
    data: DataTable,
    params: CollisionParams,
    state: Option<ComponentId>,
    len: usize,
    edges: Vec<[u32; 2]>,
    triangles: Vec<[u32; 3]>,
    /// Feature ownership flags of each triangle (see `intersect::triangle_flags`).
    flags: Vec<u8>,
    /// Sphere radii: `listRadius`, and `radius` for the spheres beyond it.
    radii: Vec<f64>,
    default_radius: f64,
    adjacency: Adjacency,
}

impl GeometryModel {
    pub fn new(shape: CollisionShape) -> Self {
        GeometryModel {
            shape,
            data: model_data(shape),
            params: CollisionParams::default(),
            state: None,
            len: 0,
            edges: Vec::new(),
            triangles: Vec::new(),
            flags: Vec::new(),
            radii: Vec::new(),
            default_radius: 1.0,
            adjacency: Adjacency::default(),
        }
    }

    /// The neighbourhoods LocalMinDistance's cones read.
    pub fn adjacency(&self) -> &Adjacency {
        &self.adjacency
    }

    /// A model built in code (tests, applications): its state and elements given directly.
    pub fn with_elements(
        shape: CollisionShape,
        state: ComponentId,
        params: CollisionParams,
        points: usize,
        edges: Vec<[u32; 2]>,
        triangles: Vec<[u32; 3]>,
        radii: Vec<f64>,
    ) -> Self {
        let mut m = GeometryModel::new(shape);
        m.params = params;
        m.state = Some(state);
        m.len = match shape {
            CollisionShape::Point | CollisionShape::Sphere => points,
            CollisionShape::Line => edges.len(),
            CollisionShape::Triangle => triangles.len(),
        };
        m.edges = edges;
        m.flags = crate::intersect::triangle_flags(&triangles);
        m.triangles = triangles;
        m.default_radius = radii.last().copied().unwrap_or(1.0);
        m.radii = radii;
        m
    }
}

impl Component for GeometryModel {
    fn class_name(&self) -> &'static str {
        match self.shape {
            CollisionShape::Point => "PointCollisionModel",
            CollisionShape::Line => "LineCollisionModel",
            CollisionShape::Triangle => "TriangleCollisionModel",
            CollisionShape::Sphere => "SphereCollisionModel",
        }
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        let d = &self.data;
        let stiffness = d.real("contactStiffness");
        let proximity = d.real("proximity");
        self.params = CollisionParams {
            active: d.bool("active"),
            moving: d.bool("moving"),
            simulated: d.bool("simulated"),
            self_collision: d.bool("selfCollision"),
            group: d.ints("group").iter().map(|&g| g as i64).collect(),
            proximity: if proximity.is_finite() {
                proximity
            } else {
                0.0
            },
            contact_stiffness: if stiffness.is_finite() {
                stiffness
            } else {
                10.0
            },
            contact_friction: d.real("contactFriction"),
        };
        self.state = ctx.scene.context_state(ctx.node);
        let Some(state) = ctx.state() else {
            ctx.error("a collision model needs a MechanicalObject in its node or above it: it is not used");
            self.len = 0;
            return;
        };
        if state.dof.coord_size() < 3 {
            ctx.error(format!(
                "a collision model needs 3D positions; its state holds {}: it is not used",
                state.dof.name()
            ));
            self.state = None;
            return;
        }
        let points = state.size();
        let mesh = ctx.topology().map(|t| t.mesh());
        let in_range = |ids: &[u32]| ids.iter().all(|&i| (i as usize) < points);
        match self.shape {
            CollisionShape::Point => self.len = points,
            CollisionShape::Sphere => {
                // one sphere per point of the state, whatever its size later (a mapping may
                // size the state after this model's init)
                self.len = points;
                self.radii = self.data.reals("listRadius").to_vec();
                self.default_radius = self.data.real("radius");
            }
            CollisionShape::Line => {
                let Some(mesh) = mesh else {
                    ctx.error("LineCollisionModel needs a topology with edges (or triangles) in its context: it is not used");
                    return;
                };
                let mut edges = mesh.edges.clone();
                if edges.is_empty() {
                    let mut tris = mesh.triangles.clone();
                    tris.extend(quad_triangles(&mesh.quads));
                    edges = canape_core::mesh::edges_from_triangles(&tris);
                }
                if !in_range(edges.as_flattened()) {
                    ctx.error(format!("the topology's edges use points beyond the state's {points}: the model is not used"));
                    return;
                }
                self.len = edges.len();
                self.edges = edges;
            }
            CollisionShape::Triangle => {
                let Some(mesh) = mesh else {
                    ctx.error("TriangleCollisionModel needs a topology with triangles in its context: it is not used");
                    return;
                };
                let mut tris = mesh.triangles.clone();
                tris.extend(quad_triangles(&mesh.quads));
                if !in_range(tris.as_flattened()) {
                    ctx.error(format!("the topology's triangles use points beyond the state's {points}: the model is not used"));
                    return;
                }
                // ownership flags of the real triangles; those made from quads own nothing
                self.flags = crate::intersect::triangle_flags(&mesh.triangles);
                self.flags.resize(tris.len(), 0);
                self.len = tris.len();
                self.triangles = tris;
            }
        }
        // LocalMinDistance's neighbourhoods (built once; cheap next to the mesh itself)
        if let Some(mesh) = mesh {
            let tris = mesh.triangles.clone();
            let edges = if mesh.edges.is_empty() {
                canape_core::mesh::edges_from_triangles(&tris)
            } else {
                mesh.edges.clone()
            };
            self.adjacency = Adjacency::build(points, tris, edges, &self.edges);
        }
        self.adjacency.both_side = self.data.bool("bothSide");
        let scene = ctx.scene;
        self.adjacency.line_model_near =
            scene.lineage(ctx.node).iter().any(|n| {
                scene.node(*n).components.iter().any(|c| {
                    scene.component(*c).map(|c| c.class_name()) == Some("LineCollisionModel")
                })
            });
    }
}

/// The two triangles SOFA's triangle collision model takes from a quad, after the real
/// triangles (TriangleCollisionModel: (q1 q2 q0) and (q3 q0 q2)).
fn quad_triangles(quads: &[[u32; 4]]) -> impl Iterator<Item = [u32; 3]> + '_ {
    quads
        .iter()
        .flat_map(|q| [[q[1], q[2], q[0]], [q[3], q[0], q[2]]])
}

impl Passive for GeometryModel {
    fn role(&self) -> Role {
        Role::Collision
    }
    fn collision_model(&self) -> Option<&dyn CollisionModel> {
        Some(self)
    }
}

impl CollisionModel for GeometryModel {
    fn shape(&self) -> CollisionShape {
        self.shape
    }
    fn state(&self) -> Option<ComponentId> {
        self.state
    }
    fn params(&self) -> &CollisionParams {
        &self.params
    }
    fn len(&self) -> usize {
        self.len
    }
    fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }
    fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }
    fn radius(&self, i: usize) -> f64 {
        self.radii.get(i).copied().unwrap_or(self.default_radius)
    }
    fn triangle_flags(&self) -> &[u8] {
        &self.flags
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}
