//! docs/components.md is the registry's class index as `canape components --markdown` prints
//! it, and every file it names exists.

use std::path::Path;

#[test]
fn the_component_index_is_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/components.md"))
        .expect("docs/components.md exists");
    let generated = canape::registry::components_markdown();
    assert!(
        doc == generated,
        "docs/components.md is out of date: run `cargo run --release -- components --markdown > docs/components.md`"
    );
    for c in canape::registry::class_index() {
        let file = c
            .file
            .unwrap_or_else(|| panic!("{}: no file found (cannot be created?)", c.class));
        assert!(
            root.join(&file).is_file(),
            "{}: {file} does not exist",
            c.class
        );
    }
}
