//! The scene-graph tree and the Data of a component or node, for the page's panel and plot.

use canape::Simulation;
use canape_core::data::{DataKind, Value};
use canape_core::scene::{ComponentId, NodeId, Scene, Slot};
use canape_core::state::VecId;
use serde_json::{json, Value as Json};

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
