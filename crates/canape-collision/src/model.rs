//! Collision models (Sofa/Component/Collision/Geometry): PointCollisionModel,
//! LineCollisionModel, TriangleCollisionModel (and TriangleOctreeCollisionModel, the triangle
//! model RayTraceNarrowPhase traces rays in), SphereCollisionModel and the CollisionOBBCapsule
//! plugin's OBBCollisionModel (one oriented box per Rigid3 frame: centre the frame's position,
//! axes its orientation's, half-sizes `extents`). Each names its context
//! state and takes its elements from the context topology at init; the pipeline reads the
//! state's positions when it collides.

use crate::response::{OwnResponse, ResponseError};
use canape_core::collision::{CollisionModel, CollisionParams, CollisionShape};
use canape_core::component::{Passive, Reaction, Role};
use canape_core::data::{
    base_fields, ChangedData, DataKind, DataTable, Flag, Int, Ints, Real, Reals, Text, Words,
};
use canape_core::scene::{ComponentId, InitContext};
use canape_types::Vec3;

canape_core::data_schema! {
    /// The Data of every collision model (core/CollisionModel), after the base Data.
    pub struct ModelData {
        active: Flag = ("active", DataKind::Bool, "1", "flag indicating if this collision model is active and should be included in default collision detections"),
        moving: Flag = ("moving", DataKind::Bool, "1", "flag indicating if this object is changing position between iterations"),
        simulated: Flag = ("simulated", DataKind::Bool, "1", "flag indicating if this object is controlled by a simulation"),
        self_collision: Flag = ("selfCollision", DataKind::Bool, "0", "flag indication if the object can self collide"),
        proximity: Real = ("proximity", DataKind::Real, "0", "Distance to the actual (visual) surface") alias ["contactDistance"],
        contact_stiffness: Real = ("contactStiffness", DataKind::Real, "10", "Contact stiffness"),
        contact_friction: Real = ("contactFriction", DataKind::Real, "0", "Contact friction coefficient (dry or viscous or unused depending on the contact method)"),
        contact_restitution: Real = ("contactRestitution", DataKind::Real, "0", "Contact coefficient of restitution"),
        contact_response: Text = ("contactResponse", DataKind::Str, "", "if set, indicate to the ContactManager that this model should use the given class of contacts"),
        color: Words = ("color", DataKind::Words, "1 0 0 1", "color used to display the collision model if requested"),
        group: Ints = ("group", DataKind::Ints(0), "", "IDs of the groups containing this model. No collision can occur between collision models included in a common group (e.g. allowing the same object to have multiple collision models)"),
        number_of_contacts: Int = ("numberOfContacts", DataKind::Int, "0", "Number of Contacts attached to the collision model (output)"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

canape_core::data_schema! {
    /// What SphereCollisionModel adds to [`ModelData`].
    pub struct SphereData {
        radius: Real = ("radius", DataKind::Real, "1", "Default radius"),
        list_radius: Reals = ("listRadius", DataKind::Reals(0), "", "Radius of each sphere"),
        show_impostors: Flag = ("showImpostors", DataKind::Bool, "1", "Draw spheres as impostors instead of \"real\" spheres"),
    }
}

canape_core::data_schema! {
    /// What the point, line and triangle models add to [`ModelData`].
    pub struct SurfaceData {
        both_side: Flag = ("bothSide", DataKind::Bool, "0", "activate collision on both side of the point/line/triangle model (when surface normals are defined on these primitives)"),
        compute_normals: Flag = ("computeNormals", DataKind::Bool, "1", "set to false to disable computation of triangles normal"),
        display_free_position: Flag = ("displayFreePosition", DataKind::Bool, "0", "Display Collision Model Points free position(in green)"),
    }
}

canape_core::data_schema! {
    /// What OBBCollisionModel adds to [`ModelData`] (CollisionOBBCapsule/geometry/OBBModel.inl):
    /// the half-sizes of each box along its frame's axes, and those of the boxes beyond the
    /// list.
    pub struct ObbData {
        extents: Reals = ("extents", DataKind::Reals(3), "", "Extents in x,y and z directions"),
        default_extent: Real = ("defaultExtent", DataKind::Real, "1", "Default extent"),
    }
}

/// The shape's own Data.
#[derive(Clone, Copy, Debug)]
enum ShapeData {
    Sphere(SphereData),
    Surface(SurfaceData),
    Obb(ObbData),
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
    /// Typed handles to the Data in `data`.
    d: ModelData,
    ds: ShapeData,
    params: CollisionParams,
    state: Option<ComponentId>,
    len: usize,
    edges: Vec<[u32; 2]>,
    triangles: Vec<[u32; 3]>,
    /// Feature ownership flags of each triangle (see `intersect::triangle_flags`).
    flags: Vec<u8>,
    /// Sphere radii: `listRadius`, and `radius` for the spheres beyond it.
    radii: Vec<f64>,
    /// Box half-sizes: `extents`, and `defaultExtent` on each axis for the boxes beyond it.
    extents: Vec<Vec3>,
    default_extent: f64,
    default_radius: f64,
    adjacency: Adjacency,
    /// A TriangleOctreeCollisionModel (a triangle model RayTraceNarrowPhase traces rays in).
    octree: bool,
    /// Its own `contactResponse`, when set (it takes precedence over the contact manager's).
    response: Option<OwnResponse>,
    /// How many times it was initialised (an edit of its name or group re-initialises it: the
    /// pipeline then chooses its pairs' responses again).
    inits: u64,
}

impl GeometryModel {
    pub fn new(shape: CollisionShape) -> Self {
        let (data, d) = ModelData::declare(base_fields(DataTable::new()));
        let (data, ds) = match shape {
            CollisionShape::Sphere => {
                let (data, ds) = SphereData::declare(data);
                (data, ShapeData::Sphere(ds))
            }
            CollisionShape::Triangle | CollisionShape::Line | CollisionShape::Point => {
                let (data, ds) = SurfaceData::declare(data);
                (data, ShapeData::Surface(ds))
            }
            CollisionShape::Obb => {
                let (data, ds) = ObbData::declare(data);
                (data, ShapeData::Obb(ds))
            }
        };
        GeometryModel {
            shape,
            data,
            d,
            ds,
            params: CollisionParams::default(),
            state: None,
            len: 0,
            edges: Vec::new(),
            triangles: Vec::new(),
            flags: Vec::new(),
            radii: Vec::new(),
            default_radius: 1.0,
            extents: Vec::new(),
            default_extent: 1.0,
            adjacency: Adjacency::default(),
            octree: false,
            response: None,
            inits: 0,
        }
    }

    /// A TriangleOctreeCollisionModel: a triangle model that RayTraceNarrowPhase tests by
    /// rays (with TriangleOctreeModel's `drawOctree` Data, for display only).
    pub fn octree() -> Self {
        let mut m = GeometryModel::new(CollisionShape::Triangle);
        m.data = std::mem::take(&mut m.data).with(
            "drawOctree",
            DataKind::Bool,
            "0",
            "draw the octree structure",
        );
        m.octree = true;
        m
    }

    /// Whether this is a TriangleOctreeCollisionModel.
    pub fn is_octree(&self) -> bool {
        self.octree
    }

    /// The neighbourhoods LocalMinDistance's cones read.
    pub fn adjacency(&self) -> &Adjacency {
        &self.adjacency
    }

    /// Its own contact response (`contactResponse`), when set.
    pub fn own_response(&self) -> Option<&OwnResponse> {
        self.response.as_ref()
    }

    /// How many times it was initialised.
    pub fn inits(&self) -> u64 {
        self.inits
    }

    /// Set its own contact response (as `contactResponse` does; for models built in code).
    pub fn set_own_response(&mut self, text: &str) -> Vec<ResponseError> {
        if text.trim().is_empty() {
            self.response = None;
            return Vec::new();
        }
        let (kind, errors) = crate::response::parse(text);
        self.response = Some(OwnResponse {
            text: text.trim().to_string(),
            kind,
        });
        errors
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
            CollisionShape::Point | CollisionShape::Sphere | CollisionShape::Obb => points,
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

impl GeometryModel {
    /// SOFA's class name of this model.
    fn sofa_class(&self) -> &'static str {
        match self.shape {
            CollisionShape::Point => "PointCollisionModel",
            CollisionShape::Line => "LineCollisionModel",
            CollisionShape::Triangle if self.octree => "TriangleOctreeCollisionModel",
            CollisionShape::Triangle => "TriangleCollisionModel",
            CollisionShape::Sphere => "SphereCollisionModel",
            CollisionShape::Obb => "OBBCollisionModel",
        }
    }

    /// The contact stiffness the Data give (a non-finite one falls back to SOFA's default).
    fn contact_stiffness(&self) -> f64 {
        let stiffness = self.data.get(self.d.contact_stiffness);
        if stiffness.is_finite() {
            stiffness
        } else {
            10.0
        }
    }

    /// `contactStiffness` and `contactFriction` (read by the pipeline from the model's
    /// parameters at each detection) take effect in place; the rest re-initialises.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        if changed.has(d.contact_response) {
            return Reaction::Refused(vec![
                "contactResponse cannot change while the simulation runs (the contact responses already made are of the first kind)".to_string(),
            ]);
        }
        if !changed.only(&[d.contact_stiffness.index(), d.contact_friction.index()]) {
            return Reaction::Reinit;
        }
        self.params.contact_stiffness = self.contact_stiffness();
        self.params.contact_friction = self.data.get(self.d.contact_friction);
        Reaction::Updated
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.inits += 1;
        let (t, d) = (&self.data, &self.d);
        let proximity = t.get(d.proximity);
        self.params = CollisionParams {
            active: t.get(d.active),
            moving: t.get(d.moving),
            simulated: t.get(d.simulated),
            self_collision: t.get(d.self_collision),
            group: t.get(d.group).iter().map(|&g| g as i64).collect(),
            proximity: if proximity.is_finite() {
                proximity
            } else {
                0.0
            },
            contact_stiffness: self.contact_stiffness(),
            contact_friction: t.get(d.contact_friction),
        };
        let own = t.get(d.contact_response).to_string();
        for e in self.set_own_response(&own) {
            ctx.warn(format!("contactResponse: {e}"));
        }
        if self
            .response
            .as_ref()
            .and_then(|r| r.kind)
            .is_some_and(|k| k.is_lagrangian())
        {
            crate::response::check_free_motion(ctx, "contactResponse");
        }
        self.state = ctx.scene.context_state(ctx.node);
        let Some(state) = ctx.state() else {
            ctx.error("a collision model needs a MechanicalObject in its node or above it: it is not used");
            self.len = 0;
            return;
        };
        if self.shape == CollisionShape::Obb && state.dof.coord_size() != 7 {
            ctx.error(format!(
                "OBBCollisionModel needs a Rigid3 state; its state holds {}: it is not used",
                state.dof.name()
            ));
            self.state = None;
            return;
        }
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
                if let ShapeData::Sphere(ds) = self.ds {
                    self.radii = self.data.get(ds.list_radius).to_vec();
                    self.default_radius = self.data.get(ds.radius);
                }
            }
            CollisionShape::Obb => {
                // one box per frame of the state (OBBCollisionModel::doResize: the boxes
                // beyond `extents` get `defaultExtent` on every axis)
                self.len = points;
                if let ShapeData::Obb(ds) = self.ds {
                    self.extents = self
                        .data
                        .get(ds.extents)
                        .chunks_exact(3)
                        .map(|c| Vec3::new(c[0], c[1], c[2]))
                        .collect();
                    self.default_extent = self.data.get(ds.default_extent);
                }
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
        self.adjacency.both_side = match self.ds {
            ShapeData::Surface(ds) => self.data.get(ds.both_side),
            ShapeData::Sphere(_) | ShapeData::Obb(_) => false,
        };
        let scene = ctx.scene;
        self.adjacency.line_model_near =
            scene.lineage(ctx.node).iter().any(|n| {
                scene.node(*n).components.iter().any(|c| {
                    scene.component(*c).map(|c| c.class_name()) == Some("LineCollisionModel")
                })
            });
    }
}

canape_core::impl_component!(GeometryModel, |s| s.sofa_class(), init, data_changed);

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
    fn extent(&self, i: usize) -> Vec3 {
        self.extents
            .get(i)
            .copied()
            .unwrap_or(Vec3::repeat(self.default_extent))
    }
    fn triangle_flags(&self) -> &[u8] {
        &self.flags
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;
    use canape_core::diag::Diagnostics;
    use canape_core::scene::{AnyComponent, Scene};
    use canape_core::state::{MechanicalObject, VecId};
    use canape_types::DofType;

    /// A model of `shape` over a state of three points, initialised with `attrs` in a scene of
    /// its own.
    fn init_model(shape: CollisionShape, attrs: &[(&str, &str)]) -> GeometryModel {
        let mut scene = Scene::new();
        let root = scene.add_node("root", None);
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.resize(3);
        mo.vec_mut(VecId::POSITION)
            .copy_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        scene.add_component(root, "dofs", AnyComponent::State(mo), None);
        let mut m = GeometryModel::new(shape);
        for (k, v) in attrs {
            m.data_mut().set_str(k, v).unwrap();
        }
        let id = scene.add_component(
            root,
            "model",
            AnyComponent::Passive(Box::new(m.clone())),
            None,
        );
        let mut diags = Diagnostics::default();
        let mut ctx = InitContext {
            scene: &mut scene,
            node: root,
            id,
            diags: &mut diags,
        };
        m.init(&mut ctx);
        assert!(diags.is_empty(), "{attrs:?}: {diags:?}");
        m
    }

    /// What the pipeline reads of a model: its parameters (the reals as bits) and radii.
    fn seen(m: &GeometryModel) -> (String, u64, u64, Vec<u64>) {
        let p = m.params();
        let radii = (0..3).map(|i| m.radius(i).to_bits()).collect();
        (
            format!("{p:?}"),
            p.contact_stiffness.to_bits(),
            p.contact_friction.to_bits(),
            radii,
        )
    }

    /// Editing contactStiffness or contactFriction of an initialised collision model updates
    /// the parameters the pipeline reads to exactly what an init with the new values gives;
    /// other Data re-initialise it.
    #[test]
    fn edits_update_in_place_contact_stiffness_and_friction() {
        for shape in [CollisionShape::Point, CollisionShape::Sphere] {
            let before = [("contactStiffness", "25"), ("radius", "0.5")];
            let before = if shape == CollisionShape::Sphere {
                &before[..]
            } else {
                &before[..1]
            };
            for after in [
                &[("contactStiffness", "123.5")][..],
                &[("contactFriction", "0.3")],
                &[("contactStiffness", "inf"), ("contactFriction", "0.1")],
            ] {
                let mut m = init_model(shape, before);
                let old = seen(&m);
                let versions = m.data().versions();
                for (k, v) in after {
                    m.data_mut().set_str(k, v).unwrap();
                }
                let changed = m.data().changed_since(&versions);
                assert_eq!(m.data_changed(&changed), Reaction::Updated, "{after:?}");
                let want = init_model(shape, &[before, after].concat());
                assert_eq!(seen(&m), seen(&want), "{shape:?} {after:?}");
                assert_ne!(seen(&m), old, "{after:?} changed nothing");
            }
            let mut m = init_model(shape, before);
            let versions = m.data().versions();
            m.data_mut().set_str("proximity", "0.2").unwrap();
            m.data_mut().set_str("contactStiffness", "3").unwrap();
            let changed = m.data().changed_since(&versions);
            assert_eq!(m.data_changed(&changed), Reaction::Reinit);
        }
    }
}
