//! What the page draws, computed from a simulation: vertex sources (states and visual meshes),
//! drawables over them (boundary surfaces of volume meshes, lines, points, boxes) tagged with
//! SOFA's VisualStyle flag that shows them, the scene-graph tree, the Data of a component, the
//! binary frame of positions, and ray picking for the mouse spring.
//!
//! The topology part (indices) is sent once and again only when it changes; a frame carries only
//! positions and per-vertex scalars.
//!
//! This file holds the picture's description and its building ([`build_view`]); the boundary
//! surfaces and vector helpers are in `geometry`, the topology message and the binary frame in
//! `frame`, ray picking in `pick`, and the scene-graph tree and the Data panel in `panel`.

mod frame;
mod geometry;
mod panel;
mod pick;

pub use frame::{bounds, encode_frame, source_positions, topology_message};
pub use geometry::surface_triangles;
pub use panel::{component_data, data_numbers, node_data, tree};
pub use pick::pick;

use canape::Simulation;
use canape_core::component::Role;
use canape_core::data::Value;
use canape_core::mesh::Mesh;
use canape_core::scene::{NodeId, Scene, Slot};
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

#[cfg(test)]
mod tests {
    use super::geometry::{cross, dot, ray_triangle, sub};
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
