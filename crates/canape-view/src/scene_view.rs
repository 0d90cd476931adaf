//! What the page draws, computed from a simulation: vertex sources (states and visual meshes),
//! drawables over them (boundary surfaces of volume meshes, lines, points, boxes) tagged with
//! SOFA's VisualStyle flag that shows them, the scene-graph tree, the Data of a component, the
//! binary frame of positions, and ray picking for the mouse spring.
//!
//! The topology part (indices) is sent once and again only when it changes; a frame carries only
//! positions and per-vertex scalars.

use canape::Simulation;
use canape_core::component::Role;
use canape_core::data::{DataKind, Value};
use canape_core::mesh::Mesh;
use canape_core::scene::{ComponentId, NodeId, Scene, Slot};
use canape_core::state::VecId;
use serde_json::{json, Value as Json};

/// Where a vertex source's positions come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SourceKind {
    /// A MechanicalObject (slot in `Scene::states`).
    State(usize),
    /// A visual model's mesh (slot in `Scene::passives`).
    Visual(usize),
    /// The contacts of the last collision stage: for each, its point on the first object and
    /// that point moved along the contact normal by the contact distance (a varying count).
    Contacts,
}

/// A set of vertices whose positions stream in frames.
#[derive(Clone, Debug)]
pub struct Source {
    pub kind: SourceKind,
    pub name: String,
    /// Force fields that colour this source (nodal scalars), by slot.
    pub scalar_fields: Vec<usize>,
    /// Triangles of the source's surface (outward where the volume is known), for picking.
    pub triangles: Vec<[u32; 3]>,
    /// Whether the source is integrated by a solver (only those can be grabbed).
    pub grabbable: bool,
}

/// Everything static about the picture.
#[derive(Clone, Debug, Default)]
pub struct View {
    pub sources: Vec<Source>,
    pub drawables: Vec<Json>,
    pub flags: Vec<(&'static str, bool)>,
}

/// SOFA's VisualStyle flags the page toggles, with SOFA's defaults (only visual models shown).
const FLAGS: [(&str, &str, bool); 7] = [
    ("visual", "VisualModels", true),
    ("behavior", "BehaviorModels", false),
    ("forcefields", "ForceFields", false),
    ("collision", "CollisionModels", false),
    ("mappings", "Mappings", false),
    ("wireframe", "Wireframe", false),
    // not a SOFA flag: the contact points and normals of the collision stage
    ("contacts", "Contacts", false),
];

/// Read the first VisualStyle's `displayFlags` (showX / hideX words, showAll/hideAll).
pub fn display_flags(scene: &Scene) -> Vec<(&'static str, bool)> {
    let mut flags: Vec<(&'static str, bool)> = FLAGS.iter().map(|(k, _, d)| (*k, *d)).collect();
    let words: Vec<String> = scene
        .component_ids()
        .filter(|c| scene.info(*c).class == "VisualStyle")
        .find_map(|id| {
            scene
                .component(id)
                .and_then(|c| match c.data().value("displayFlags") {
                    Some(Value::Words(w)) => Some(w.clone()),
                    _ => None,
                })
        })
        .unwrap_or_default();
    for w in words {
        let (on, rest) = if let Some(r) = w.strip_prefix("show") {
            (true, r)
        } else if let Some(r) = w.strip_prefix("hide") {
            (false, r)
        } else {
            continue;
        };
        for (k, (_, sofa, _)) in flags.iter_mut().zip(FLAGS.iter()) {
            let all = rest == "All" && k.0 != "wireframe";
            // showVisual covers showVisualModels; showBehavior covers showBehaviorModels
            if all || sofa.starts_with(rest) || rest.starts_with(sofa) {
                k.1 = on;
            }
        }
    }
    flags
}

/// Boundary faces of a volume mesh (faces used by one element), oriented away from their
/// element, in a deterministic order. A mesh without volume elements gives its triangles and
/// quads as they are (those of a volume mesh, such as a grid's or a loader's faces, include
/// interior ones and are not drawn).
pub fn surface_triangles(mesh: &Mesh, pts: &[[f64; 3]]) -> Vec<[u32; 3]> {
    let p = |i: u32| pts.get(i as usize).copied().unwrap_or([0.0; 3]);
    let mut faces: Vec<([u32; 4], Vec<u32>, [f64; 3])> = Vec::new();
    let centroid = |idx: &[u32]| {
        let mut c = [0.0; 3];
        for &i in idx {
            let q = p(i);
            for k in 0..3 {
                c[k] += q[k] / idx.len() as f64;
            }
        }
        c
    };
    for t in &mesh.tetrahedra {
        let c = centroid(t);
        for q in canape_core::mesh::TETRA_FACES {
            let f: Vec<u32> = q.iter().map(|&k| t[k]).collect();
            let mut key = [f[0], f[1], f[2], u32::MAX];
            key[..3].sort_unstable();
            faces.push((key, f, c));
        }
    }
    for h in &mesh.hexahedra {
        let c = centroid(h);
        for q in canape_core::mesh::HEXA_FACES {
            let f: Vec<u32> = q.iter().map(|&k| h[k]).collect();
            let mut key = [f[0], f[1], f[2], f[3]];
            key.sort_unstable();
            faces.push((key, f, c));
        }
    }
    faces.sort_by_key(|f| f.0); // stable: equal keys keep element order
    let mut out = Vec::new();
    let mut i = 0;
    while i < faces.len() {
        let mut j = i + 1;
        while j < faces.len() && faces[j].0 == faces[i].0 {
            j += 1;
        }
        if j - i == 1 {
            let (_, f, c) = &faces[i];
            for tri in fan(f) {
                out.push(orient_away(tri, c, &p));
            }
        }
        i = j;
    }
    if mesh.tetrahedra.is_empty() && mesh.hexahedra.is_empty() {
        for t in &mesh.triangles {
            out.push(*t);
        }
        for q in &mesh.quads {
            out.extend(fan(q));
        }
    }
    out
}

fn fan(f: &[u32]) -> Vec<[u32; 3]> {
    (1..f.len() - 1).map(|k| [f[0], f[k], f[k + 1]]).collect()
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn orient_away(t: [u32; 3], c: &[f64; 3], p: &impl Fn(u32) -> [f64; 3]) -> [u32; 3] {
    let n = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
    if dot(n, sub(p(t[0]), *c)) < 0.0 {
        [t[0], t[2], t[1]]
    } else {
        t
    }
}

fn state_points(scene: &Scene, slot: usize) -> Vec<[f64; 3]> {
    scene.states[slot]
        .as_ref()
        .map(|s| canape_core::mesh::group_points(s.vec(VecId::POSITION)))
        .unwrap_or_default()
}

/// The topology of the state's node that describes its points: the most volumetric one whose
/// point count matches.
fn state_mesh(scene: &Scene, node: NodeId, n: usize) -> Option<&Mesh> {
    let rank = |m: &Mesh| {
        if !m.tetrahedra.is_empty() {
            4
        } else if !m.hexahedra.is_empty() {
            3
        } else if !m.triangles.is_empty() || !m.quads.is_empty() {
            2
        } else if !m.edges.is_empty() {
            1
        } else {
            0
        }
    };
    scene
        .context_topologies(node)
        .into_iter()
        .filter_map(|t| scene.topology(t).map(|t| t.mesh()))
        .filter(|m| m.nb_points() == n && rank(m) > 0)
        .max_by_key(|m| rank(m))
}

fn has_role(scene: &Scene, node: NodeId, role: Role) -> bool {
    scene.node_components(node, role).next().is_some()
}

/// Build the static description of what to draw.
pub fn build_view(sim: &Simulation) -> View {
    let scene = &sim.scene;
    let mut view = View {
        flags: display_flags(scene),
        ..View::default()
    };
    let order = canape_simulation::init::document_order(scene);
    for id in order {
        let info = scene.info(id);
        match info.slot {
            Slot::State(slot) => {
                let Some(st) = scene.states[slot].as_ref() else {
                    continue;
                };
                if st.dof.coord_size() != 3 {
                    continue;
                }
                let n = st.size();
                let pts = state_points(scene, slot);
                let simulated = sim.is_simulated_state(slot);
                let src = view.sources.len();
                let node = info.node;
                let scalar_fields: Vec<usize> = scene
                    .node_components(node, Role::ForceField)
                    .filter_map(|f| match scene.info(f).slot {
                        Slot::ForceField(k) => Some(k),
                        _ => None,
                    })
                    .filter(|&k| {
                        scene.force_fields[k]
                            .as_ref()
                            .is_some_and(|f| f.nodal_scalars(st.vec(VecId::POSITION)).is_some())
                    })
                    .collect();
                let mut triangles = Vec::new();
                if let Some(mesh) = state_mesh(scene, node, n) {
                    triangles = surface_triangles(mesh, &pts);
                    // the FEM draws its elements under "force fields", a collision model its
                    // triangles under "collision" (as SOFA does); a bare state under "behaviour"
                    let mut flags = Vec::new();
                    if has_role(scene, node, Role::ForceField) {
                        flags.push(("forcefields", [0.85, 0.55, 0.25]));
                    }
                    if has_role(scene, node, Role::Collision) {
                        flags.push(("collision", [0.35, 0.75, 0.45]));
                    }
                    if flags.is_empty() {
                        flags.push(("behavior", [0.85, 0.55, 0.25]));
                    }
                    if !triangles.is_empty() {
                        let tris: Vec<u32> = triangles.iter().flatten().copied().collect();
                        for (flag, color) in flags {
                            view.drawables.push(json!({
                                "kind": "surface", "source": src, "flag": flag,
                                "tris": tris, "color": color,
                                "colored": flag == "forcefields" && !scalar_fields.is_empty(),
                                "scalar_floor": scalar_fields.first().and_then(|&k| scene.force_fields[k].as_ref()).map_or(0.0, |f| f.nodal_scalar_floor()),
                            }));
                        }
                    } else if !mesh.edges.is_empty() {
                        let flag = flags[0].0;
                        view.drawables.push(json!({
                            "kind": "lines", "source": src, "flag": flag,
                            "lines": mesh.edges.iter().flatten().collect::<Vec<_>>(),
                            "color": [0.8, 0.8, 0.3],
                        }));
                    }
                }
                // springs and other drawn edges of the node's force fields
                let mut edges = Vec::new();
                for f in scene.node_components(node, Role::ForceField) {
                    if let Slot::ForceField(k) = scene.info(f).slot {
                        if let Some(ff) = scene.force_fields[k].as_ref() {
                            edges.extend(ff.draw_edges());
                        }
                    }
                }
                if !edges.is_empty() {
                    view.drawables.push(json!({
                        "kind": "lines", "source": src, "flag": "forcefields",
                        "lines": edges.iter().flatten().collect::<Vec<_>>(), "color": [0.9, 0.9, 0.2],
                    }));
                }
                view.drawables.push(json!({
                    "kind": "points", "source": src,
                    "flag": if simulated { "behavior" } else { "mappings" },
                    "points": Json::Null, "color": if simulated { [0.9, 0.9, 0.9] } else { [0.3, 0.8, 1.0] },
                    "size": 3,
                }));
                // point and sphere collision models: their points under "collision"
                // (spheres at their radius: the largest of the model's radii)
                let mut point_model = false;
                let mut sphere_radius: Option<f64> = None;
                for c in scene.node_components(node, Role::Collision) {
                    let Slot::Passive(k) = scene.info(c).slot else {
                        continue;
                    };
                    let Some(m) = scene.passives[k].as_ref().and_then(|p| p.collision_model())
                    else {
                        continue;
                    };
                    match m.shape() {
                        canape_core::collision::CollisionShape::Point => point_model = true,
                        canape_core::collision::CollisionShape::Sphere => {
                            let r = (0..n.max(1)).map(|i| m.radius(i)).fold(0.0, f64::max);
                            sphere_radius = Some(sphere_radius.unwrap_or(0.0).max(r));
                        }
                        _ => {}
                    }
                }
                if let Some(r) = sphere_radius {
                    view.drawables.push(json!({
                        "kind": "points", "source": src, "flag": "collision",
                        "points": Json::Null, "color": [0.35, 0.75, 0.45], "size": 6,
                        "radius": r,
                    }));
                } else if point_model {
                    view.drawables.push(json!({
                        "kind": "points", "source": src, "flag": "collision",
                        "points": Json::Null, "color": [0.35, 0.75, 0.45], "size": 6,
                    }));
                }
                // fixed points
                let mut fixed = Vec::new();
                for c in scene.node_components(node, Role::ProjectiveConstraint) {
                    if let Slot::Projective(k) = scene.info(c).slot {
                        if let Some(pc) = scene.projective[k].as_ref() {
                            let mut d: Vec<u32> = pc
                                .fixed_scalar_dofs(3)
                                .iter()
                                .filter(|s| *s % 3 == 0)
                                .map(|s| (s / 3) as u32)
                                .filter(|&i| (i as usize) < n)
                                .collect();
                            fixed.append(&mut d);
                        }
                    }
                }
                if !fixed.is_empty() {
                    view.drawables.push(json!({
                        "kind": "points", "source": src, "flag": "behavior",
                        "points": fixed, "color": [1.0, 0.2, 0.2], "size": 7,
                    }));
                }
                view.sources.push(Source {
                    kind: SourceKind::State(slot),
                    name: scene.node_path(node) + "/" + &info.name,
                    scalar_fields,
                    triangles,
                    grabbable: simulated,
                });
            }
            Slot::Passive(slot) => {
                let Some(mesh) = scene.passives[slot].as_ref().and_then(|p| p.visual_mesh()) else {
                    continue;
                };
                let tris = surface_triangles(mesh, &mesh.points);
                if tris.is_empty() {
                    continue;
                }
                let src = view.sources.len();
                view.drawables.push(json!({
                    "kind": "surface", "source": src, "flag": "visual",
                    "tris": tris.iter().flatten().collect::<Vec<_>>(),
                    "color": [0.75, 0.75, 0.8], "colored": false,
                }));
                view.sources.push(Source {
                    kind: SourceKind::Visual(slot),
                    name: scene.node_path(info.node) + "/" + &info.name,
                    scalar_fields: Vec::new(),
                    triangles: tris,
                    grabbable: false,
                });
            }
            Slot::Engine(k) if info.class == "BoxROI" => {
                let Some(e) = scene.engines[k].as_ref() else {
                    continue;
                };
                if !e.data().bool("drawBoxes") {
                    continue;
                }
                for b in e.data().reals("box").chunks_exact(6) {
                    view.drawables.push(json!({
                        "kind": "box", "flag": "behavior",
                        "min": [b[0].min(b[3]), b[1].min(b[4]), b[2].min(b[5])],
                        "max": [b[0].max(b[3]), b[1].max(b[4]), b[2].max(b[5])],
                        "color": [0.2, 1.0, 0.4],
                    }));
                }
            }
            _ => {}
        }
    }
    if scene
        .passives
        .iter()
        .flatten()
        .any(|p| p.is_collision_pipeline())
    {
        let src = view.sources.len();
        view.drawables.push(json!({
            "kind": "pairs", "source": src, "flag": "contacts", "color": [1.0, 0.35, 0.2],
        }));
        view.drawables.push(json!({
            "kind": "points", "source": src, "flag": "contacts",
            "points": Json::Null, "color": [1.0, 0.9, 0.2], "size": 5,
        }));
        view.sources.push(Source {
            kind: SourceKind::Contacts,
            name: "contacts".into(),
            scalar_fields: Vec::new(),
            triangles: Vec::new(),
            grabbable: false,
        });
    }
    view
}

/// The contacts' display segments: each contact's point on its first state and that point
/// moved along the normal by the contact distance.
fn contact_segments(scene: &Scene) -> Vec<f64> {
    let mut out = Vec::new();
    for ff in scene.force_fields.iter().flatten() {
        let contacts = ff.contacts();
        if contacts.is_empty() {
            continue;
        }
        let Some(it) = ff.interaction() else { continue };
        let Some(st) = scene.state(it.first) else {
            continue;
        };
        let (x, stride) = (st.vec(VecId::POSITION), st.dof.coord_size());
        for c in contacts {
            let mut p = [0.0; 3];
            for (i, w) in c.first.iter() {
                for k in 0..3 {
                    p[k] += w * x.get(stride * i + k).copied().unwrap_or(0.0);
                }
            }
            out.extend_from_slice(&p);
            for k in 0..3 {
                out.push(p[k] + c.normal[k] * c.distance);
            }
        }
    }
    out
}

/// The topology message.
pub fn topology_message(view: &View, version: u64) -> String {
    let sources: Vec<Json> = view
        .sources
        .iter()
        .map(|s| json!({"name": s.name, "grabbable": s.grabbable}))
        .collect();
    let flags: serde_json::Map<String, Json> = view
        .flags
        .iter()
        .map(|(k, v)| (k.to_string(), Json::Bool(*v)))
        .collect();
    json!({
        "type": "topology", "version": version, "sources": sources,
        "drawables": view.drawables, "flags": flags,
    })
    .to_string()
}

/// Current positions of a source, as a flat xyz list.
pub fn source_positions<'a>(sim: &'a Simulation, s: &Source) -> std::borrow::Cow<'a, [f64]> {
    match s.kind {
        SourceKind::State(k) => sim.scene.states[k]
            .as_ref()
            .map(|st| std::borrow::Cow::Borrowed(st.vec(VecId::POSITION)))
            .unwrap_or_default(),
        SourceKind::Visual(k) => sim.scene.passives[k]
            .as_ref()
            .and_then(|p| p.visual_mesh())
            .map(|m| std::borrow::Cow::Owned(canape_core::mesh::flatten_points(&m.points)))
            .unwrap_or_default(),
        SourceKind::Contacts => std::borrow::Cow::Owned(contact_segments(&sim.scene)),
    }
}

/// Binary frame: `CNP1`, u32 sequence, f64 time, u32 number of sources, then per source u32
/// vertex count, xyz as f32, u32 scalar count (0 or the vertex count) and the scalars as f32.
/// Little-endian throughout.
pub fn encode_frame(sim: &Simulation, view: &View, seq: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(b"CNP1");
    b.extend_from_slice(&seq.to_le_bytes());
    b.extend_from_slice(&sim.time().to_le_bytes());
    b.extend_from_slice(&(view.sources.len() as u32).to_le_bytes());
    for s in &view.sources {
        let x = source_positions(sim, s);
        let n = x.len() / 3;
        b.extend_from_slice(&(n as u32).to_le_bytes());
        for v in x.iter() {
            b.extend_from_slice(&(*v as f32).to_le_bytes());
        }
        let scalars = s.scalar_fields.first().and_then(|&k| {
            sim.scene.force_fields[k]
                .as_ref()
                .and_then(|f| f.nodal_scalars(&x))
        });
        match scalars {
            Some(sc) if sc.len() == n => {
                b.extend_from_slice(&(n as u32).to_le_bytes());
                for v in sc {
                    b.extend_from_slice(&(v as f32).to_le_bytes());
                }
            }
            _ => b.extend_from_slice(&0u32.to_le_bytes()),
        }
    }
    b
}

/// Nearest point of a grabbable source's surface hit by a ray: (source, vertex, distance along
/// the ray). Falls back to the point closest to the ray (within 2 % of the scene size) for
/// sources without a surface.
pub fn pick(
    sim: &Simulation,
    view: &View,
    origin: [f64; 3],
    dir: [f64; 3],
) -> Option<(usize, usize, f64)> {
    let mut best: Option<(usize, usize, f64)> = None;
    for (si, s) in view.sources.iter().enumerate() {
        if !s.grabbable {
            continue;
        }
        let x = source_positions(sim, s);
        let p = |i: u32| {
            let i = i as usize;
            [x[3 * i], x[3 * i + 1], x[3 * i + 2]]
        };
        for t in &s.triangles {
            if t.iter().any(|&i| 3 * i as usize + 2 >= x.len()) {
                continue;
            }
            let (a, b, c) = (p(t[0]), p(t[1]), p(t[2]));
            if let Some(d) = ray_triangle(origin, dir, a, b, c) {
                if best.is_none_or(|(_, _, bd)| d < bd) {
                    let hit = [
                        origin[0] + d * dir[0],
                        origin[1] + d * dir[1],
                        origin[2] + d * dir[2],
                    ];
                    let v = *t
                        .iter()
                        .min_by(|&&i, &&j| {
                            let di = norm2(sub(p(i), hit));
                            let dj = norm2(sub(p(j), hit));
                            di.total_cmp(&dj)
                        })
                        .expect("three vertices");
                    best = Some((si, v as usize, d));
                }
            }
        }
    }
    if best.is_some() {
        return best;
    }
    // points only: closest to the ray
    let (lo, hi) = bounds(sim, view);
    let size = norm2(sub(hi, lo)).sqrt().max(1e-9);
    let mut best_pt: Option<(usize, usize, f64, f64)> = None;
    for (si, s) in view.sources.iter().enumerate() {
        if !s.grabbable || !s.triangles.is_empty() {
            continue;
        }
        let x = source_positions(sim, s);
        for (i, q) in x.chunks_exact(3).enumerate() {
            let w = sub([q[0], q[1], q[2]], origin);
            let t = dot(w, dir);
            if t <= 0.0 {
                continue;
            }
            let d2 = norm2(w) - t * t;
            if d2.sqrt() <= 0.02 * size && best_pt.is_none_or(|(_, _, bd, _)| d2 < bd) {
                best_pt = Some((si, i, d2, t));
            }
        }
    }
    best_pt.map(|(s, i, _, t)| (s, i, t))
}

fn norm2(a: [f64; 3]) -> f64 {
    dot(a, a)
}

/// Möller–Trumbore; distance along the (unit) ray, both faces.
fn ray_triangle(o: [f64; 3], d: [f64; 3], a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> Option<f64> {
    let e1 = sub(b, a);
    let e2 = sub(c, a);
    let p = cross(d, e2);
    let det = dot(e1, p);
    if det.abs() < 1e-300 {
        return None;
    }
    let inv = 1.0 / det;
    let s = sub(o, a);
    let u = dot(s, p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = cross(s, e1);
    let v = dot(d, q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = dot(e2, q) * inv;
    (t > 0.0).then_some(t)
}

/// Bounding box of all sources.
pub fn bounds(sim: &Simulation, view: &View) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for s in &view.sources {
        for q in source_positions(sim, s).chunks_exact(3) {
            for k in 0..3 {
                if q[k].is_finite() {
                    lo[k] = lo[k].min(q[k]);
                    hi[k] = hi[k].max(q[k]);
                }
            }
        }
    }
    if lo[0] > hi[0] {
        return ([0.0; 3], [0.0; 3]);
    }
    (lo, hi)
}

/// The scene graph as a tree of nodes and components.
pub fn tree(scene: &Scene) -> Json {
    fn rec(scene: &Scene, n: NodeId) -> Json {
        let node = scene.node(n);
        let comps: Vec<Json> = node
            .components
            .iter()
            .map(|&c| {
                let i = scene.info(c);
                json!({"id": c.index(), "class": i.class, "name": i.name, "role": format!("{:?}", i.role)})
            })
            .collect();
        let children: Vec<Json> = node.children.iter().map(|&c| rec(scene, c)).collect();
        json!({"id": n.index(), "name": node.name, "active": node.activated, "components": comps, "children": children})
    }
    if scene.nodes.is_empty() {
        return Json::Null;
    }
    rec(scene, scene.root())
}

fn kind_name(k: DataKind) -> String {
    match k {
        DataKind::Bool => "bool".into(),
        DataKind::Int => "int".into(),
        DataKind::Real => "real".into(),
        DataKind::Str => "string".into(),
        DataKind::File => "file".into(),
        DataKind::Reals(w) => format!("reals({w})"),
        DataKind::Vector(n) => format!("vec{n}"),
        DataKind::Ints(w) => format!("ints({w})"),
        DataKind::Words => "words".into(),
    }
}

/// Whether a Data value is small and simple enough to edit in the panel.
fn editable_kind(k: DataKind, v: &Value) -> bool {
    match (k, v) {
        (DataKind::Bool | DataKind::Int | DataKind::Real | DataKind::Str, _) => true,
        (DataKind::Vector(_), _) => true,
        (DataKind::Reals(_), Value::Reals(r)) => r.len() <= 12,
        (DataKind::Ints(_), Value::Ints(r)) => r.len() <= 12,
        _ => false,
    }
}

/// The numbers a component's Data holds now, for the plot: a state's vectors (position,
/// velocity, force, rest_position) live, any other numeric Data from its table. None when the
/// component or the Data is gone or holds no numbers.
pub fn data_numbers(sim: &Simulation, id: ComponentId, data: &str) -> Option<Vec<f64>> {
    let scene = &sim.scene;
    scene.check_component(id).ok()?;
    if let Slot::State(j) = scene.info(id).slot {
        let v = match data {
            "position" => Some(VecId::POSITION),
            "velocity" => Some(VecId::VELOCITY),
            "force" => Some(VecId::FORCE),
            "rest_position" => Some(VecId::REST_POSITION),
            _ => None,
        };
        if let (Some(v), Some(st)) = (v, scene.states[j].as_ref()) {
            return Some(st.vec(v).to_vec());
        }
    }
    let c = scene.component(id)?;
    match c.data().value(data)? {
        Value::Bool(b) => Some(vec![f64::from(u8::from(*b))]),
        Value::Int(i) => Some(vec![*i as f64]),
        Value::Real(r) => Some(vec![*r]),
        Value::Reals(r) => Some(r.clone()),
        Value::Ints(r) => Some(r.iter().map(|&i| f64::from(i)).collect()),
        Value::Str(_) | Value::Words(_) => None,
    }
}

/// The Data of one component, for the panel.
pub fn component_data(sim: &Simulation, id: ComponentId) -> Option<Json> {
    let scene = &sim.scene;
    scene.check_component(id).ok()?;
    let info = scene.info(id);
    let c = scene.component(id)?;
    let role_editable = canape::is_editable_role(info.role);
    let fields: Vec<Json> = c
        .data()
        .fields()
        .iter()
        .map(|f| {
            let text = f.value.to_string();
            let count = match &f.value {
                Value::Reals(v) => v.len(),
                Value::Ints(v) => v.len(),
                Value::Words(v) => v.len(),
                _ => 1,
            };
            let shown = if text.len() > 300 {
                let cut: String = text.chars().take(300).collect();
                format!("{cut} … ({count} values)")
            } else {
                text
            };
            json!({
                "name": f.name, "value": shown, "default": f.default_text, "help": f.help,
                "kind": kind_name(f.kind), "set": f.is_set, "link": f.link,
                "editable": role_editable && !f.output && editable_kind(f.kind, &f.value),
            })
        })
        .collect();
    Some(json!({
        "type": "data", "component": id.index(), "class": info.class, "name": info.name,
        "path": scene.node_path(info.node), "role": format!("{:?}", info.role),
        "line": info.loc.as_ref().map(|l| l.to_string()),
        "editable": role_editable, "fields": fields,
    }))
}

/// A node's context Data (gravity, dt); editable on the root, as SOFA takes them from there.
pub fn node_data(sim: &Simulation, n: NodeId) -> Option<Json> {
    sim.scene.check_node(n).ok()?;
    let node = sim.scene.node(n);
    let root = n == sim.scene.root();
    let g = node.gravity;
    let fields = vec![
        json!({"name": "gravity", "value": format!("{} {} {}", g.x, g.y, g.z), "default": "0 -9.81 0",
               "help": "Gravity in the world coordinate system (SOFA uses the root's)", "kind": "vec3", "editable": root}),
        json!({"name": "dt", "value": if root { sim.dt.to_string() } else { node.dt.to_string() }, "default": "0.01",
               "help": "Time step (SOFA uses the root's)", "kind": "real", "editable": root}),
        json!({"name": "activated", "value": if node.activated {"1"} else {"0"}, "default": "1",
               "help": "to activate or deactivate the node", "kind": "bool", "editable": false}),
    ];
    Some(json!({
        "type": "node_data", "node": n.index(), "name": node.name, "path": sim.scene.node_path(n),
        "fields": fields,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_of_a_cube_of_tetrahedra_is_twelve_outward_triangles() {
        let mut mesh = Mesh::default(); // tetrahedra filled below
        let pts: Vec<[f64; 3]> = (0..8)
            .map(|i| [(i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64])
            .collect();
        // SOFA's hexahedron numbering: 0 (0,0,0) 1 (1,0,0) 2 (1,1,0) 3 (0,1,0), 4..7 at z = 1
        let hexa = [0u32, 1, 3, 2, 4, 5, 7, 6];
        mesh.tetrahedra = canape_core::mesh::hexa_to_tetras(hexa, false).to_vec();
        let tris = surface_triangles(&mesh, &pts);
        assert_eq!(tris.len(), 12);
        for t in &tris {
            let p = |i: u32| pts[i as usize];
            let n = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
            let c = [0.5, 0.5, 0.5];
            assert!(dot(n, sub(p(t[0]), c)) > 0.0, "inward face {t:?}");
        }
        // the same cube as one hexahedron: 6 quads, 12 triangles, outward
        let hm = Mesh {
            hexahedra: vec![hexa],
            ..Mesh::default()
        };
        let ht = surface_triangles(&hm, &pts);
        assert_eq!(ht.len(), 12);
        for t in &ht {
            let p = |i: u32| pts[i as usize];
            let n = cross(sub(p(t[1]), p(t[0])), sub(p(t[2]), p(t[0])));
            assert!(dot(n, sub(p(t[0]), [0.5, 0.5, 0.5])) > 0.0);
        }
    }

    #[test]
    fn fem_surface_under_force_fields_and_collision_surface_under_collision() {
        let scene = r#"<Node name="root" dt="0.01">
  <VisualStyle displayFlags="showForceFields"/>
  <Node name="beam">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="10" tolerance="1e-9" threshold="1e-9"/>
    <RegularGridTopology name="grid" min="0 0 0" max="4 1 1" n="5 2 2"/>
    <MechanicalObject/>
    <UniformMass totalMass="1"/>
    <HexahedronFEMForceField youngModulus="1000" poissonRatio="0.3"/>
    <BoxROI name="box" box="-0.1 -0.1 -0.1 0.1 1.1 1.1" drawBoxes="1"/>
    <FixedProjectiveConstraint indices="@box.indices"/>
    <TriangleCollisionModel/>
  </Node>
</Node>"#;
        let sim = canape::load_scene_str(
            scene,
            "t.scn",
            &std::env::temp_dir(),
            &canape::LoadOptions::default(),
        )
        .unwrap();
        let view = build_view(&sim);
        let flags: Vec<(&str, &str)> = view
            .drawables
            .iter()
            .map(|d| (d["kind"].as_str().unwrap(), d["flag"].as_str().unwrap()))
            .collect();
        assert!(flags.contains(&("surface", "forcefields")), "{flags:?}");
        assert!(flags.contains(&("surface", "collision")), "{flags:?}");
        assert!(flags.contains(&("points", "behavior")), "{flags:?}");
        assert!(flags.contains(&("box", "behavior")), "{flags:?}");
        // 4×1×1 hexahedra: 18 boundary quads, 36 triangles
        let surface = view
            .drawables
            .iter()
            .find(|d| d["flag"] == "forcefields")
            .unwrap();
        assert_eq!(surface["tris"].as_array().unwrap().len(), 36 * 3);
        // the scene's VisualStyle: force fields on, behaviour off, visual models on by default
        assert!(view.flags.contains(&("forcefields", true)));
        assert!(view.flags.contains(&("behavior", false)));
        assert!(view.flags.contains(&("visual", true)));
        // fixed points are drawn
        assert!(
            view.drawables
                .iter()
                .any(|d| d["kind"] == "points"
                    && d["points"].as_array().is_some_and(|p| p.len() == 4))
        );
    }

    #[test]
    fn contacts_are_drawn_as_points_and_normals() {
        let scene = r#"<Node name="root" gravity="0 -9.81 0" dt="0.01">
  <CollisionPipeline/>
  <BruteForceBroadPhase/>
  <BVHNarrowPhase/>
  <MinProximityIntersection alarmDistance="0.5" contactDistance="0.1"/>
  <CollisionResponse/>
  <Node name="ball">
    <EulerImplicitSolver/>
    <CGLinearSolver iterations="50" tolerance="1e-12" threshold="1e-20"/>
    <MechanicalObject position="0.2 0.5 -0.3"/>
    <UniformMass totalMass="1"/>
    <SphereCollisionModel radius="0.3"/>
  </Node>
  <Node name="floor">
    <MechanicalObject position="-5 0 -5  5 0 -5  5 0 5  -5 0 5"/>
    <MeshTopology triangles="0 2 1  0 3 2"/>
    <TriangleCollisionModel simulated="0" moving="0"/>
  </Node>
</Node>"#;
        let mut sim = canape::load_scene_str(
            scene,
            "c.scn",
            &std::env::temp_dir(),
            &canape::LoadOptions::default(),
        )
        .unwrap();
        let view = build_view(&sim);
        let k = view
            .sources
            .iter()
            .position(|s| s.kind == SourceKind::Contacts)
            .expect("a contacts source");
        assert!(view
            .drawables
            .iter()
            .any(|d| d["kind"] == "pairs" && d["source"] == k && d["flag"] == "contacts"));
        // the ball's sphere model is drawn under "collision", at its radius
        assert!(view.drawables.iter().any(|d| d["kind"] == "points"
            && d["flag"] == "collision"
            && d["radius"].as_f64() == Some(0.3)));
        assert!(source_positions(&sim, &view.sources[k]).is_empty());
        for _ in 0..20 {
            sim.step();
        }
        let seg = source_positions(&sim, &view.sources[k]).into_owned();
        assert!(!seg.is_empty() && seg.len().is_multiple_of(6), "{seg:?}");
        for s in seg.chunks(6) {
            // from the point on the floor, upwards, by the rest distance 0.1 + 0.3
            assert!(s[1].abs() < 1e-12, "{s:?}");
            assert!((s[4] - s[1] - 0.4).abs() < 1e-12 && (s[0] - s[3]).abs() < 1e-12);
        }
    }

    #[test]
    fn ray_hits_the_near_face() {
        let d = ray_triangle(
            [0.2, 0.2, 5.0],
            [0.0, 0.0, -1.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0],
        );
        assert_eq!(d, Some(4.0));
        assert!(ray_triangle(
            [2.0, 2.0, 5.0],
            [0.0, 0.0, -1.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0]
        )
        .is_none());
    }
}
