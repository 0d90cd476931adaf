//! Unit tests of the scene graph: link paths, handles, removal.

use super::*;

#[test]
fn data_link_split() {
    assert_eq!(
        split_data_link("@../loader.position"),
        Some(("../loader", "position"))
    );
    assert_eq!(
        split_data_link("@box_roi.indices"),
        Some(("box_roi", "indices"))
    );
    assert_eq!(split_data_link("@[-1].indices"), Some(("[-1]", "indices")));
    assert_eq!(split_data_link("@../dofs"), None);
    assert_eq!(split_data_link("@.."), None);
}

/// Add an empty Vec3 MechanicalObject named `name` to `node`.
fn add_state(s: &mut Scene, node: NodeId, name: &str) -> ComponentId {
    s.add_component(
        node,
        name,
        AnyComponent::State(MechanicalObject::new(canape_types::DofType::Vec3)),
        None,
    )
}

#[test]
fn per_role_lists_follow_additions_removals_and_moves() {
    let mut s = Scene::new();
    let root = s.add_node("root", None);
    let mo = |s: &mut Scene, name: &str| add_state(s, root, name);
    let ids: Vec<ComponentId> = (0..5).map(|k| mo(&mut s, &format!("m{k}"))).collect();
    let scan = |s: &Scene, role: Role| -> Vec<ComponentId> {
        s.node(root)
            .components
            .iter()
            .copied()
            .filter(|c| s.info(*c).role == role)
            .collect()
    };
    let listed = |s: &Scene, role: Role| s.node_components(root, role).collect::<Vec<_>>();
    assert_eq!(listed(&s, Role::State), ids);
    s.remove_component(ids[2]).unwrap();
    s.move_component_first(ids[4]);
    assert_eq!(listed(&s, Role::State), scan(&s, Role::State));
    assert_eq!(
        listed(&s, Role::State),
        vec![ids[4], ids[0], ids[1], ids[3]]
    );
    assert!(listed(&s, Role::Mass).is_empty());
    // an index reused after removal joins the end of its role's list
    let again = mo(&mut s, "again");
    assert_eq!(again.index(), ids[2].index());
    assert_eq!(listed(&s, Role::State), scan(&s, Role::State));
}

#[test]
fn path_resolution() {
    let mut s = Scene::new();
    let root = s.add_node("root", None);
    let a = s.add_node("A", Some(root));
    let b = s.add_node("B", Some(a));
    let mo = s.add_component(
        a,
        "dofs",
        AnyComponent::State(MechanicalObject::new(canape_types::DofType::Vec3)),
        None,
    );
    let mo2 = s.add_component(
        b,
        "x",
        AnyComponent::State(MechanicalObject::new(canape_types::DofType::Vec3)),
        None,
    );
    assert_eq!(
        s.resolve_path(b, None, "../dofs"),
        Some(Target::Component(mo))
    );
    assert_eq!(s.resolve_path(b, None, "dofs"), Some(Target::Component(mo)));
    assert_eq!(
        s.resolve_path(b, None, "/A/dofs"),
        Some(Target::Component(mo))
    );
    assert_eq!(s.resolve_path(b, None, "/root/A/B"), Some(Target::Node(b)));
    assert_eq!(s.resolve_path(b, Some(mo2), "[-1]"), None);
    assert_eq!(s.resolve_path(b, None, ".."), Some(Target::Node(a)));
    assert_eq!(s.resolve_path(b, None, "nothing"), None);
    assert_eq!(s.context_state(b), Some(mo2));
    assert_eq!(s.node_path(b), "/root/A/B");
}

#[test]
fn a_data_link_resolved_once_reads_its_source_and_refuses_it_once_removed() {
    let mut s = Scene::new();
    let root = s.add_node("root", None);
    let mo = |s: &mut Scene, name: &str| add_state(s, root, name);
    let src = mo(&mut s, "src");
    let reader = mo(&mut s, "reader");
    let mut link = DataLink::new("position", "@src.position");
    assert_eq!(link.source_data(), "position");
    // not resolved yet
    assert!(matches!(
        s.read_data_link(&link),
        Err(DataLinkError::Unresolved { .. })
    ));
    link.source = Some(s.resolve_data_link(root, reader, &link).unwrap());
    assert_eq!(link.source, Some(Target::Component(src)));
    assert!(s.read_data_link(&link).is_ok());
    // a path that names nothing is refused at resolution
    let broken = DataLink::new("position", "@nothing.position");
    assert_eq!(
        s.resolve_data_link(root, reader, &broken)
            .unwrap_err()
            .to_string(),
        "link '@nothing.position': no object or node at 'nothing'"
    );
    // the handle is generational: once the source is gone (and its slot reused), the link
    // does not read the newcomer
    s.remove_component(src).unwrap();
    let newcomer = mo(&mut s, "src");
    assert_eq!(newcomer.index(), src.index());
    assert_eq!(
        s.read_data_link(&link).unwrap_err().to_string(),
        "link '@src.position': the component it named was removed"
    );
}
