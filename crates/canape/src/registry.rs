//! Every built-in component, registered under its SOFA class name: each component crate
//! registers its own (`register(&mut Registry)`), this collects them.

use canape_core::registry::Registry;

/// Build the registry of all built-in components.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    canape_base::register::register(&mut r);
    canape_collision::register::register(&mut r);
    canape_fem::register::register(&mut r);
    canape_solvers::register::register(&mut r);
    canape_io::register::register(&mut r);
    r
}

/// An instance of a registered class, made with the first template it accepts (none, then
/// Vec3d, Rigid3d, Vec1d, and the element-typed forms of the masses).
fn example(e: &canape_core::registry::Entry) -> Option<canape_core::scene::AnyComponent> {
    [
        "",
        "Vec3d",
        "Rigid3d",
        "Vec1d",
        "Vec3,Hexahedron",
        "Vec3,Tetrahedron",
    ]
    .iter()
    .find_map(|t| (e.create)(e.class, t).ok())
}

/// One registered class, as the component index lists it.
pub struct ClassInfo {
    pub class: &'static str,
    pub role: String,
    /// Passive: held in the graph and read by other components (orderings, preconditioners)
    /// or without effect on the mechanics yet (visual, collision, GUI).
    pub inert: bool,
    /// The implementing type (`canape_fem::tetra::TetrahedronFemForceField`), when the class
    /// can be created without a template.
    pub type_name: Option<&'static str>,
    /// Its source file, from the type's module path (`crates/canape-fem/src/tetra.rs`).
    pub file: Option<String>,
    pub description: &'static str,
}

/// Every registered class in name order, with its role and source file.
pub fn class_index() -> Vec<ClassInfo> {
    let r = registry();
    r.classes()
        .map(|e| {
            let made = example(e);
            let type_name = made.as_ref().map(|c| c.base().type_name());
            let file = type_name.map(|t| {
                let path = t.split('<').next().unwrap_or(t);
                let mut parts: Vec<&str> = path.split("::").collect();
                parts.pop(); // the type
                let krate = parts.remove(0).replace('_', "-");
                if parts.is_empty() {
                    format!("crates/{krate}/src/lib.rs")
                } else {
                    format!("crates/{krate}/src/{}.rs", parts.join("/"))
                }
            });
            ClassInfo {
                class: e.class,
                role: made
                    .as_ref()
                    .map_or("?".to_string(), |c| format!("{:?}", c.role())),
                inert: e.inert,
                type_name,
                file,
                description: e.description,
            }
        })
        .collect()
}

/// Every class's Data as a scene can set them, one line per Data: name, kind, default (or
/// `output`), aliases and help (`canape components --data [CLASS]`). The class is built with the
/// first template it accepts ([`example`]), as in [`class_index`]. Nothing when `only` names no class.
pub fn data_tables(only: Option<&str>) -> String {
    let r = registry();
    let mut out = String::new();
    for e in r.classes().filter(|e| only.is_none_or(|c| c == e.class)) {
        let Some(c) = example(e) else {
            out.push_str(&format!("{}: (needs a template)\n", e.class));
            continue;
        };
        out.push_str(&format!("{}\n", e.class));
        for f in c.base().data().fields() {
            let value = if f.output {
                "output".to_string()
            } else {
                format!("default '{}'", f.default_text)
            };
            let aliases = if f.aliases.is_empty() {
                String::new()
            } else {
                format!(" (alias {})", f.aliases.join(", "))
            };
            out.push_str(&format!(
                "  {} [{:?}] {}{}: {}\n",
                f.name, f.kind, value, aliases, f.help
            ));
        }
    }
    out
}

/// The component index, docs/components.md (`canape components --markdown` prints it; a test
/// checks the file is up to date).
pub fn components_markdown() -> String {
    let index = class_index();
    let mut out = String::from(
        "# Components\n\nEvery class a scene can name, with its role and the file that implements it. \
Generated from the registry by `canape components --markdown > docs/components.md`; \
a test fails when this file is out of date.\n\n",
    );
    let active = index.iter().filter(|c| !c.inert).count();
    out.push_str(&format!(
        "{} classes: {} active, {} passive (held in the graph and read by other components — \
orderings, preconditioners — or without effect on the mechanics yet: visual, collision, GUI).\n\n",
        index.len(),
        active,
        index.len() - active
    ));
    out.push_str("| Class | Role | File | Description |\n|---|---|---|---|\n");
    for c in &index {
        let role = if c.inert {
            format!("{} (passive)", c.role)
        } else {
            c.role.clone()
        };
        let file = c
            .file
            .as_deref()
            .map_or("—".to_string(), |f| format!("[{f}](../{f})"));
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.class,
            role,
            file,
            c.description.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_crate_registers_its_own_classes_and_none_is_lost() {
        let mut counts = Vec::new();
        for (f, probe) in [
            (
                canape_base::register::register as fn(&mut Registry),
                "UniformMass",
            ),
            (canape_fem::register::register, "TetrahedronFEMForceField"),
            (canape_collision::register::register, "CollisionPipeline"),
            (canape_solvers::register::register, "EulerImplicitSolver"),
            (canape_io::register::register, "MeshGmshLoader"),
        ] {
            let mut r = Registry::new();
            f(&mut r);
            assert!(r.get(probe).is_some(), "{probe}");
            counts.push(r.classes().count());
        }
        // no class is registered by two crates, and the facade has them all
        assert_eq!(registry().classes().count(), counts.iter().sum::<usize>());
    }

    #[test]
    fn data_tables_list_each_class_with_its_data() {
        let one = data_tables(Some("UniformMass"));
        assert!(one.starts_with("UniformMass\n"), "{one}");
        assert!(one.contains("  totalMass [Real] default '1': "), "{one}");
        assert!(data_tables(Some("NoSuchClass")).is_empty());
        let all = data_tables(None);
        let classes = all.lines().filter(|l| !l.starts_with(' ')).count();
        assert_eq!(classes, registry().classes().count());
        assert!(
            all.contains("  indices [Ints(0)] output: "),
            "BoxROI's outputs are marked"
        );
    }
}
