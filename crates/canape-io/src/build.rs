//! Build a [`Scene`] from a description: create components through the registry, set Data from
//! attributes, record Data links (resolved at init), expand `src="@loader"` autolinks, resolve
//! file names, add a DefaultAnimationLoop when missing. Every problem becomes a diagnostic with
//! file, line and component path; loading goes on wherever SOFA's would.

use crate::desc::{Item, NodeDesc, ObjectDesc};
use crate::files::FileResolver;
use canape_core::component::Role;
use canape_core::data::{parse_bool, parse_real, DataKind};
use canape_core::diag::{closest, did_you_mean, Diagnostic, Diagnostics};
use canape_core::registry::{Lookup, Registry};
use canape_core::scene::{split_data_link, ComponentId, DataLink, NodeId, Scene, Target};
use canape_types::Vec3;
use std::collections::BTreeMap;

/// Attributes handled by the loader itself rather than as Data.
const STRUCTURAL: &[&str] = &["name", "type", "template", "src"];

/// Data that hold object links (paths), not values.
const OBJECT_LINKS: &[&str] = &[
    "input",
    "output",
    "topology",
    "mstate",
    "linearSystem",
    "geometryState",
    "linearSolver",
    "odeSolver",
    "newtonSolver",
    "preconditioner",
    "orderingMethod",
    "object1",
    "object2",
    "external_rest_shape",
    "preconditionerSystem",
    "collisionModels",
    "subCollisionPipelines",
    "broadPhaseDetection",
    "narrowPhaseDetection",
    "intersectionMethod",
    "contactManager",
];

/// Loader Data that `src` does not autolink (SOFA flags them non-autolink).
const NO_AUTOLINK: &[&str] = &[
    "filename",
    "name",
    "translation",
    "rotation",
    "scale3d",
    "transformation",
    "printLog",
    "tags",
    "listening",
    "bbox",
    "componentState",
];

pub struct Builder<'a> {
    pub registry: &'a Registry,
    pub resolver: &'a FileResolver,
    pub scene: Scene,
    pub diags: Diagnostics,
    src_links: Vec<(ComponentId, String)>,
    inert_seen: Vec<String>,
    /// Folders added by AddDataRepository, searched after the resolver's (as SOFA appends them).
    added_dirs: Vec<std::path::PathBuf>,
}

impl<'a> Builder<'a> {
    pub fn new(registry: &'a Registry, resolver: &'a FileResolver) -> Self {
        Builder {
            registry,
            resolver,
            scene: {
                let mut scene = Scene::new();
                let read: canape_core::scene::MeshReader =
                    |path| crate::loaders::read_mesh_file(path).map_err(Into::into);
                scene.mesh_reader = Some(read);
                scene
            },
            diags: Diagnostics::default(),
            src_links: Vec::new(),
            inert_seen: Vec::new(),
            added_dirs: Vec::new(),
        }
    }

    /// A builder that adds to an existing scene (see [`Builder::build_under`]).
    pub fn on_scene(registry: &'a Registry, resolver: &'a FileResolver, scene: Scene) -> Self {
        Builder {
            scene,
            ..Builder::new(registry, resolver)
        }
    }

    /// Build a node description as a new child of `parent` (a subtree added to a running
    /// simulation); links resolve in the whole scene. Returns the scene, the new node and the
    /// diagnostics. The new components are not initialised.
    pub fn build_under(mut self, parent: NodeId, d: &NodeDesc) -> (Scene, NodeId, Diagnostics) {
        self.node(d, Some(parent));
        let id = *self
            .scene
            .node(parent)
            .children
            .last()
            .expect("the node just built");
        self.expand_src_links();
        (self.scene, id, self.diags)
    }

    /// Build the objects and child nodes of a node description into the existing node `node`
    /// (components added to a node of a running simulation); the description's own name and
    /// attributes are not used. Links resolve in the whole scene. The new components are not
    /// initialised.
    pub fn build_into(mut self, node: NodeId, d: &NodeDesc) -> (Scene, Diagnostics) {
        let mut counters: BTreeMap<String, usize> = BTreeMap::new();
        for item in &d.items {
            match item {
                Item::Node(n) => self.node(n, Some(node)),
                Item::Object(o) => self.object(o, node, &mut counters),
            }
        }
        self.expand_src_links();
        (self.scene, self.diags)
    }

    /// Build the whole scene from its root node description.
    pub fn build(mut self, root: &NodeDesc) -> (Scene, Diagnostics) {
        self.node(root, None);
        self.expand_src_links();
        let root_id = self.scene.root();
        let has_loop = self
            .scene
            .node_components(root_id, Role::AnimationLoop)
            .next()
            .is_some();
        if !has_loop {
            if let Some(e) = self.registry.get("DefaultAnimationLoop") {
                if let Ok(c) = (e.create)(e.class, "") {
                    let id = self
                        .scene
                        .add_component(root_id, "DefaultAnimationLoop", c, None);
                    // SOFA inserts it first in the root
                    self.scene.move_component_first(id);
                }
            }
            self.diags.push(Diagnostic::warning("the scene has no animation loop: a DefaultAnimationLoop was added to the root, as SOFA does").on(self.scene.node_path(root_id)));
        }
        if !self.inert_seen.is_empty() {
            self.diags.push(Diagnostic::note(format!(
                "not simulated yet: {} are loaded and shown in the graph but take no part in collision",
                self.inert_seen.join(", ")
            )));
        }
        (self.scene, self.diags)
    }

    fn node(&mut self, d: &NodeDesc, parent: Option<NodeId>) {
        let id = self.scene.add_node(d.name(), parent);
        self.scene.node_mut(id).loc = Some(d.loc.clone());
        for a in &d.attrs {
            if parent.is_some() && (a.name == "gravity" || a.name == "dt") {
                let path = self.scene.node_path(id);
                self.diags.push(
                    Diagnostic::note(format!("'{}' on a child node is ignored: SOFA takes gravity and dt from the root node", a.name))
                        .at(Some(a.loc.clone()))
                        .on(path),
                );
                continue;
            }
            let n = self.scene.node_mut(id);
            match a.name.as_str() {
                "gravity" => {
                    let v: Vec<f64> = a.value.split_whitespace().filter_map(parse_real).collect();
                    if v.len() == 3 && v.iter().all(|x| x.is_finite()) {
                        n.gravity = Vec3::new(v[0], v[1], v[2]);
                    } else {
                        let path = self.scene.node_path(id);
                        self.diags.push(
                            Diagnostic::warning(format!(
                                "gravity '{}' is not 3 finite numbers; kept {:?}",
                                a.value,
                                self.scene.node(id).gravity.as_slice()
                            ))
                            .at(Some(a.loc.clone()))
                            .on(path),
                        );
                    }
                }
                "dt" => match parse_real(&a.value) {
                    Some(v) if v > 0.0 && v.is_finite() => n.dt = v,
                    _ => {
                        let path = self.scene.node_path(id);
                        self.diags.push(
                            Diagnostic::warning(format!(
                                "dt '{}' is not a positive, finite number; kept {}",
                                a.value,
                                self.scene.node(id).dt
                            ))
                            .at(Some(a.loc.clone()))
                            .on(path),
                        );
                    }
                },
                "activated" => n.activated = parse_bool(&a.value).unwrap_or(true),
                "animate" if parent.is_none() => self.scene.animate = parse_bool(&a.value),
                _ => {}
            }
        }
        // children inherit context Data set on this node
        let mut counters: BTreeMap<String, usize> = BTreeMap::new();
        for item in &d.items {
            match item {
                Item::Node(n) => {
                    let cid = {
                        // inherit gravity/dt from this node at creation
                        self.node(n, Some(id));
                        *self.scene.node(id).children.last().unwrap()
                    };
                    let _ = cid;
                }
                Item::Object(o) => self.object(o, id, &mut counters),
            }
        }
    }

    /// A mapping (SOFA's class names end in "Mapping"; topological mappings aside) that could
    /// not be created: the node's state is not integrated as an independent state.
    fn note_missing_mapping(&mut self, node: NodeId, class: &str) {
        if class.ends_with("Mapping") && !class.ends_with("TopologicalMapping") {
            self.scene.node_mut(node).missing_mapping = true;
        }
    }

    /// SOFA's Gravity component (MechanicalLoad/Gravity.cpp) is a context object: it sets the
    /// gravity of its node (default 0 0 0). The root's gravity is the one masses use here, so
    /// a Gravity at the root replaces it; elsewhere it is reported and ignored.
    fn gravity_object(&mut self, o: &ObjectDesc, node: NodeId) {
        let path = self.scene.node_path(node);
        let loc = Some(o.loc.clone());
        let text = o.attr("gravity").unwrap_or("0 0 0");
        let v: Vec<f64> = text.split_whitespace().filter_map(parse_real).collect();
        if v.len() != 3 || v.iter().any(|x| !x.is_finite()) {
            self.diags.push(
                Diagnostic::error(format!(
                    "Gravity: gravity '{text}' is not 3 finite numbers; ignored"
                ))
                .at(loc)
                .on(path),
            );
            return;
        }
        if self.scene.node(node).parent.is_some() {
            self.diags.push(
                Diagnostic::warning("a Gravity component below the root is ignored: the root's gravity acts on every node here")
                    .at(loc)
                    .on(path),
            );
            return;
        }
        self.scene.node_mut(node).gravity = Vec3::new(v[0], v[1], v[2]);
    }

    fn object(&mut self, o: &ObjectDesc, node: NodeId, counters: &mut BTreeMap<String, usize>) {
        let path = self.scene.node_path(node);
        let loc = Some(o.loc.clone());
        if o.class.is_empty() {
            self.diags.push(
                Diagnostic::error("<Object> without a type")
                    .at(loc)
                    .on(path),
            );
            return;
        }
        if o.class == "Gravity" {
            self.gravity_object(o, node);
            return;
        }
        if o.class == "AddDataRepository" || o.class == "AddResourceRepository" {
            // SOFA adds the folder as the component is created: files named after it are
            // looked up there too
            let dir = o.dir.join(o.attr("path").unwrap_or("").trim());
            if dir.is_dir() {
                self.added_dirs.push(dir);
            } else {
                self.diags.push(
                    Diagnostic::warning(format!(
                        "{}: folder '{}' not found; no folder added",
                        o.class,
                        dir.display()
                    ))
                    .at(loc.clone())
                    .on(path.clone()),
                );
            }
        }
        let mut template = o.attr("template").unwrap_or("").to_string();
        // SOFA deduces a component's template from its context's mechanical state
        // (`template="Vec1"` on the state makes its UniformMass a UniformMass<Vec1>); mappings
        // take theirs from their two ends, at init; solvers and preconditioners are templated
        // on matrix types, not on the state's (a CGLinearSolver beside a Rigid3 state is still
        // SOFA's default GraphScattered one)
        let state_templated = !(o.class == "MechanicalObject"
            || o.class.ends_with("Mapping")
            || o.class.ends_with("Solver")
            || o.class.ends_with("Preconditioner"));
        if template.is_empty() && state_templated {
            let ctx = self
                .scene
                .context_state(node)
                .and_then(|s| self.scene.state(s));
            if let Some(dof) = ctx.map(|s| s.dof) {
                if dof != canape_core::types::DofType::Vec3 {
                    template = dof.name().to_string();
                }
            }
        }
        let entry = match self.registry.lookup(&o.class) {
            Lookup::Found(e) => e,
            Lookup::Renamed { new, old } => {
                self.diags.push(
                    Diagnostic::warning(format!("'{old}' is the former name of '{}'", new.class))
                        .at(loc.clone())
                        .on(path.clone())
                        .suggest(format!("write <{} …/>", new.class)),
                );
                new
            }
            Lookup::Removed(msg) => {
                self.diags.push(
                    Diagnostic::error(format!("component '{}' cannot be created: {msg}", o.class))
                        .at(loc)
                        .on(path),
                );
                return;
            }
            Lookup::Unknown { suggestions } => {
                let mut d = Diagnostic::error(format!(
                    "unknown component '{}': not created (the scene loads without it)",
                    o.class
                ))
                .at(loc)
                .on(path);
                if let Some(hint) = did_you_mean(&suggestions) {
                    d = d.suggest(hint);
                }
                self.diags.push(d);
                self.note_missing_mapping(node, &o.class);
                return;
            }
        };
        let class = entry.class;
        let comp = match (entry.create)(entry.class, &template) {
            Ok(c) => c,
            Err(e) => {
                self.diags
                    .push(Diagnostic::error(format!("{class}: {e}")).at(loc).on(path));
                self.note_missing_mapping(node, class);
                return;
            }
        };
        if entry.inert
            && comp.role() == Role::Collision
            && !self.inert_seen.iter().any(|c| c == class)
        {
            self.inert_seen.push(class.to_string());
        }
        let name = match o.attr("name") {
            Some(n) => n.to_string(),
            None => {
                let k = counters.entry(class.to_string()).or_insert(0);
                *k += 1;
                format!("{class}{k}")
            }
        };
        let id = self.scene.add_component(node, &name, comp, loc.clone());
        let label = self.scene.component_label(id);
        let is_mo = class == "MechanicalObject";
        let mut translation: Option<[f64; 3]> = None;
        let mut rotation: Option<[f64; 3]> = None;
        let mut scale: Option<[f64; 3]> = None;
        for a in &o.attrs {
            if STRUCTURAL.contains(&a.name.as_str()) {
                if a.name == "src" {
                    if a.value.trim().starts_with('@') {
                        self.src_links.push((id, a.value.trim().to_string()));
                    } else {
                        self.diags.push(
                            Diagnostic::warning(format!("src='{}' must start with '@'", a.value))
                                .at(Some(a.loc.clone()))
                                .on(label.clone()),
                        );
                    }
                }
                continue;
            }
            if is_mo {
                let axis = |n: &str| match n {
                    "dx" | "rx" | "sx" => Some(0),
                    "dy" | "ry" | "sy" => Some(1),
                    "dz" | "rz" | "sz" => Some(2),
                    _ => None,
                };
                if let Some(k) = axis(&a.name) {
                    // SOFA reads these with atof: the leading number of the text (old scenes
                    // write a whole derivative vector in `dx`; only its first number counts)
                    let first = a.value.split_whitespace().next().unwrap_or("");
                    let v = match (parse_real(&a.value), parse_real(first)) {
                        (Some(v), _) => v,
                        (None, Some(v)) => {
                            self.diags.push(
                                Diagnostic::warning(format!(
                                    "'{}' has several numbers; as SOFA, only the first ({v}) is the {} transform",
                                    a.name,
                                    match a.name.as_bytes()[0] {
                                        b'd' => "translation",
                                        b'r' => "rotation",
                                        _ => "scale",
                                    }
                                ))
                                .at(Some(a.loc.clone()))
                                .on(label.clone()),
                            );
                            v
                        }
                        (None, None) => {
                            self.diags.push(
                                Diagnostic::warning(format!(
                                    "could not read '{}' as a number for '{}'",
                                    a.value, a.name
                                ))
                                .at(Some(a.loc.clone()))
                                .on(label.clone()),
                            );
                            continue;
                        }
                    };
                    let slot = match a.name.as_bytes()[0] {
                        b'd' => translation.get_or_insert([0.0; 3]),
                        b'r' => rotation.get_or_insert([0.0; 3]),
                        _ => scale.get_or_insert([1.0; 3]),
                    };
                    slot[k] = v;
                    continue;
                }
                if a.name == "scale" {
                    if let Some(v) = parse_real(&a.value) {
                        scale = Some([v; 3]);
                        continue;
                    }
                }
            }
            self.set_attr(id, &label, a);
        }
        if let Some(c) = self.scene.component_mut(id) {
            for (n, v) in [
                ("translation", translation),
                ("rotation", rotation),
                ("scale3d", scale),
            ] {
                if let Some(v) = v {
                    let _ = c
                        .data_mut()
                        .set_value(n, canape_core::data::Value::Reals(v.to_vec()));
                }
            }
        }
        // resolve file names now (relative to the file the component was written in)
        let files: Vec<(String, String)> = self
            .scene
            .component(id)
            .map(|c| {
                c.data()
                    .fields()
                    .iter()
                    .filter(|f| f.kind == DataKind::File && f.is_set)
                    .map(|f| (f.name.to_string(), c.data().str(f.name).to_string()))
                    .collect()
            })
            .unwrap_or_default();
        for (dname, fname) in files {
            if fname.is_empty() {
                continue;
            }
            let resolved = self.resolver.resolve(&fname, &o.dir).or_else(|| {
                let p = std::path::Path::new(&fname);
                self.added_dirs
                    .iter()
                    .map(|d| d.join(p))
                    .find(|c| !p.is_absolute() && c.is_file())
            });
            let value = match resolved {
                Some(p) => p.display().to_string(),
                None => {
                    let looked: Vec<String> = self
                        .resolver
                        .search_dirs(&o.dir)
                        .iter()
                        .chain(&self.added_dirs)
                        .map(|d| d.display().to_string())
                        .collect();
                    self.diags.push(
                        Diagnostic::error(format!("file '{fname}' not found"))
                            .at(o
                                .attrs
                                .iter()
                                .find(|a| a.name == dname)
                                .map(|a| a.loc.clone())
                                .or(loc.clone()))
                            .on(label.clone())
                            .suggest(format!(
                                "looked in: {}; set SOFA_DATA_PATH or use --data-path",
                                looked.join(", ")
                            )),
                    );
                    String::new()
                }
            };
            if let Some(c) = self.scene.component_mut(id) {
                let _ = c
                    .data_mut()
                    .set_value(&dname, canape_core::data::Value::Str(value));
            }
        }
    }

    fn set_attr(&mut self, id: ComponentId, label: &str, a: &crate::desc::AttrDesc) {
        let Some(c) = self.scene.component_mut(id) else {
            return;
        };
        let table = c.data_mut();
        let Some(field) = table.field(&a.name) else {
            if table.set_extra(&a.name, &a.value) {
                return;
            }
            if a.name.starts_with('_') || a.name.starts_with("NO") {
                return;
            }
            let names = table.all_names();
            let sugg = closest(&a.name, names.iter().copied(), 2);
            let mut d = Diagnostic::warning(format!(
                "unknown attribute '{}' (value '{}') is ignored",
                a.name, a.value
            ))
            .at(Some(a.loc.clone()))
            .on(label.to_string());
            if let Some(hint) = did_you_mean(&sugg) {
                d = d.suggest(hint);
            }
            self.diags.push(d);
            return;
        };
        let fname = field.name;
        let v = a.value.trim();
        if v.starts_with('@') && !OBJECT_LINKS.contains(&fname) {
            if split_data_link(v).is_some() {
                let info = self.scene.info_mut(id);
                info.data_links.push(DataLink::new(fname, v));
                if let Some(c) = self.scene.component_mut(id) {
                    if let Some(f) = c.data_mut().field_mut(fname) {
                        f.link = Some(v.to_string());
                        f.is_set = true;
                    }
                }
            } else {
                self.diags.push(Diagnostic::error(format!("Data '{fname}' = '{v}': a Data link must name a Data, as in '@path/object.dataName'")).at(Some(a.loc.clone())).on(label.to_string()));
            }
            return;
        }
        if let Err(e) = table.set_str(fname, &a.value) {
            self.diags.push(
                Diagnostic::warning(format!(
                    "could not read value for Data '{fname}': {e}; default '{}' kept",
                    table.field(fname).map(|f| f.default_text).unwrap_or("")
                ))
                .at(Some(a.loc.clone()))
                .on(label.to_string()),
            );
        }
    }

    /// `src="@loader"`: link every Data of this component that the loader also has (and that
    /// was not given explicitly) to the loader's Data.
    fn expand_src_links(&mut self) {
        let links = std::mem::take(&mut self.src_links);
        for (id, src) in links {
            let node = self.scene.info(id).node;
            let label = self.scene.component_label(id);
            let loc = self.scene.info(id).loc.clone();
            let path = src.trim_start_matches('@');
            let target = match self.scene.resolve_path(node, Some(id), path) {
                Some(Target::Component(t)) => t,
                _ => {
                    // a visual model without its mesh changes nothing in the mechanics: warned,
                    // not an error (collisionMultiple.scn's floor names a path above the root)
                    let visual = self.scene.info(id).role == canape_core::component::Role::Visual;
                    let msg = format!("broken link: src='{src}' names no object");
                    let d = if visual {
                        Diagnostic::warning(format!("{msg}: the visual model stays empty"))
                    } else {
                        Diagnostic::error(msg)
                    };
                    self.diags.push(d.at(loc).on(label));
                    // the position was meant to come from the link: a state stays empty
                    // rather than take the default one point
                    if let Some(f) = self
                        .scene
                        .component_mut(id)
                        .and_then(|c| c.data_mut().field_mut("position"))
                    {
                        f.link = Some(src.clone());
                    }
                    continue;
                }
            };
            let src_fields: Vec<&'static str> = self
                .scene
                .component(target)
                .map(|c| {
                    c.data()
                        .fields()
                        .iter()
                        .filter(|f| !NO_AUTOLINK.contains(&f.name))
                        .map(|f| f.name)
                        .collect()
                })
                .unwrap_or_default();
            let mine: Vec<(&'static str, bool)> = self
                .scene
                .component(id)
                .map(|c| {
                    c.data()
                        .fields()
                        .iter()
                        .map(|f| (f.name, f.is_set))
                        .collect()
                })
                .unwrap_or_default();
            for (name, set) in mine {
                if set || !src_fields.contains(&name) || NO_AUTOLINK.contains(&name) {
                    continue;
                }
                let link = format!("@{path}.{name}");
                self.scene
                    .info_mut(id)
                    .data_links
                    .push(DataLink::new(name, link.clone()));
                if let Some(c) = self.scene.component_mut(id) {
                    if let Some(f) = c.data_mut().field_mut(name) {
                        f.link = Some(link);
                    }
                }
            }
        }
    }
}
