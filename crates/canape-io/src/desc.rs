//! Scene description: the XML tree turned into nodes and objects with source positions, after
//! `<include>` and `Objects/<Tag>.xml` macro expansion (SOFA's XML.cpp `includeNode`).

use crate::files::FileResolver;
use crate::xml::{self, XmlAttr, XmlElement};
use canape_core::diag::{Diagnostic, Diagnostics, SourceLoc};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An attribute as written, with its position.
#[derive(Clone, Debug)]
pub struct AttrDesc {
    pub name: String,
    pub value: String,
    pub loc: SourceLoc,
}

/// A component declaration.
#[derive(Clone, Debug)]
pub struct ObjectDesc {
    pub class: String,
    pub attrs: Vec<AttrDesc>,
    pub loc: SourceLoc,
    /// Folder of the file it was written in (file names resolve from there first).
    pub dir: PathBuf,
}

impl ObjectDesc {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value.as_str())
    }
}

/// A node declaration with its children in document order.
#[derive(Clone, Debug)]
pub struct NodeDesc {
    pub attrs: Vec<AttrDesc>,
    pub loc: SourceLoc,
    pub items: Vec<Item>,
}

impl NodeDesc {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value.as_str())
    }
    pub fn name(&self) -> &str {
        self.attr("name").unwrap_or("Node")
    }
}

#[derive(Clone, Debug)]
pub enum Item {
    Node(NodeDesc),
    Object(ObjectDesc),
}

/// Reads scene files into descriptions.
pub struct DescReader<'a> {
    pub resolver: &'a FileResolver,
    /// Whether a tag names a known component (otherwise an `Objects/<Tag>.xml` macro is tried).
    pub is_component: &'a dyn Fn(&str) -> bool,
    pub diags: Diagnostics,
    depth: usize,
    /// Included files read so far (a budget bounds the total work of nested includes).
    includes: usize,
    /// Nodes nested so far, across included files.
    node_depth: usize,
    /// Whether the include budget or depth error was reported (once each: a runaway include
    /// would otherwise report thousands).
    budget_reported: bool,
    depth_reported: bool,
}

/// The most included files one scene may read (all includes together).
pub const MAX_INCLUDES: usize = 1000;

impl<'a> DescReader<'a> {
    pub fn new(resolver: &'a FileResolver, is_component: &'a dyn Fn(&str) -> bool) -> Self {
        DescReader {
            resolver,
            is_component,
            diags: Diagnostics::default(),
            depth: 0,
            includes: 0,
            node_depth: 0,
            budget_reported: false,
            depth_reported: false,
        }
    }

    /// Read a scene file. Errors (unreadable file, malformed XML) are returned as diagnostics.
    pub fn read_file(&mut self, path: &Path) -> Result<NodeDesc, Diagnostic> {
        let text =
            crate::files::read_capped(path, crate::files::MAX_SCENE_FILE_BYTES).map_err(|e| {
                Diagnostic::error(format!("cannot read scene file '{}': {e}", path.display()))
            })?;
        let text = String::from_utf8_lossy(&text);
        self.read_str(&text, path)
    }

    /// Read scene text as if it were the file `path` (relative names resolve from its folder).
    pub fn read_str(&mut self, text: &str, path: &Path) -> Result<NodeDesc, Diagnostic> {
        let file: Arc<str> = path.display().to_string().into();
        let root = xml::parse(text).map_err(|e| {
            Diagnostic::error(format!("malformed XML: {}", e.message)).at(Some(SourceLoc {
                file: file.clone(),
                line: e.line,
            }))
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        if root.tag != "Node" {
            return Err(Diagnostic::error(format!(
                "the root element is <{}>; a SOFA scene starts with <Node>",
                root.tag
            ))
            .at(Some(SourceLoc {
                file,
                line: root.line,
            })));
        }
        Ok(self.node(&root, &file, &dir))
    }

    fn loc(file: &Arc<str>, line: u32) -> SourceLoc {
        SourceLoc {
            file: file.clone(),
            line,
        }
    }

    fn attrs(a: &[XmlAttr], file: &Arc<str>) -> Vec<AttrDesc> {
        a.iter()
            .map(|x| AttrDesc {
                name: x.name.clone(),
                value: x.value.clone(),
                loc: Self::loc(file, x.line),
            })
            .collect()
    }

    /// An object's attributes, with SOFA's older form of a Data as a child element,
    /// `<Attribute type="name"><Data value="…"/></Attribute>` (SOFA's XML reader takes the
    /// value of each `Data` child); other child elements of an object are reported.
    fn object_attrs(&mut self, c: &XmlElement, file: &Arc<str>) -> Vec<AttrDesc> {
        let mut attrs = Self::attrs(&c.attrs, file);
        for ch in &c.children {
            let name = ch.attr("type").filter(|_| ch.tag == "Attribute");
            let Some(name) = name else {
                self.diags.push(
                    Diagnostic::warning(format!(
                        "<{}> inside <{}> is ignored (an object's children can only be <Attribute type=\"…\"><Data value=\"…\"/></Attribute>)",
                        ch.tag, c.tag
                    ))
                    .at(Some(Self::loc(file, ch.line))),
                );
                continue;
            };
            for d in ch.children.iter().filter(|d| d.tag == "Data") {
                if let Some(v) = d.attr("value") {
                    attrs.push(AttrDesc {
                        name: name.to_string(),
                        value: v.to_string(),
                        loc: Self::loc(file, d.line),
                    });
                }
            }
        }
        attrs
    }

    fn node(&mut self, el: &XmlElement, file: &Arc<str>, dir: &Path) -> NodeDesc {
        let mut n = NodeDesc {
            attrs: Self::attrs(&el.attrs, file),
            loc: Self::loc(file, el.line),
            items: Vec::new(),
        };
        // includes can nest nodes beyond one file's depth: the same bound across files
        if self.node_depth >= xml::MAX_DEPTH {
            self.diags.push(
                Diagnostic::error(format!(
                    "nodes nested more than {} deep (through includes): the deeper ones are dropped",
                    xml::MAX_DEPTH
                ))
                .at(Some(Self::loc(file, el.line))),
            );
            return n;
        }
        self.node_depth += 1;
        for c in &el.children {
            self.child(c, file, dir, &mut n.items);
        }
        self.node_depth -= 1;
        n
    }

    fn child(&mut self, c: &XmlElement, file: &Arc<str>, dir: &Path, items: &mut Vec<Item>) {
        match c.tag.as_str() {
            "Node" => items.push(Item::Node(self.node(c, file, dir))),
            "include" => {
                let Some(href) = c.attr("href") else {
                    self.diags.push(
                        Diagnostic::error("<include> without href")
                            .at(Some(Self::loc(file, c.line))),
                    );
                    return;
                };
                let repl: Vec<(String, String)> = c
                    .attrs
                    .iter()
                    .filter(|a| a.name != "href")
                    .map(|a| (a.name.clone(), a.value.clone()))
                    .collect();
                self.include(href, &repl, c, file, dir, items);
            }
            "Object" => {
                let class = c.attr("type").unwrap_or("").to_string();
                let attrs = self
                    .object_attrs(c, file)
                    .into_iter()
                    .filter(|a| a.name != "type")
                    .collect();
                items.push(Item::Object(ObjectDesc {
                    class,
                    attrs,
                    loc: Self::loc(file, c.line),
                    dir: dir.to_path_buf(),
                }));
            }
            tag => {
                if !(self.is_component)(tag) {
                    let macro_file = format!("Objects/{tag}.xml");
                    if self.resolver.resolve(&macro_file, dir).is_some() {
                        let repl: Vec<(String, String)> = c
                            .attrs
                            .iter()
                            .map(|a| (a.name.clone(), a.value.clone()))
                            .collect();
                        self.include(&macro_file, &repl, c, file, dir, items);
                        return;
                    }
                }
                let attrs = self.object_attrs(c, file);
                items.push(Item::Object(ObjectDesc {
                    class: tag.to_string(),
                    attrs,
                    loc: Self::loc(file, c.line),
                    dir: dir.to_path_buf(),
                }));
            }
        }
    }

    fn include(
        &mut self,
        href: &str,
        repl: &[(String, String)],
        c: &XmlElement,
        file: &Arc<str>,
        dir: &Path,
        items: &mut Vec<Item>,
    ) {
        let here = Some(Self::loc(file, c.line));
        if self.includes >= MAX_INCLUDES {
            if !self.budget_reported {
                self.budget_reported = true;
                self.diags.push(
                    Diagnostic::error(format!(
                        "include '{href}' not read: the scene already included {MAX_INCLUDES} files (an include repeated many times?); further includes are skipped"
                    ))
                    .at(here),
                );
            }
            return;
        }
        if self.depth > 16 {
            if !self.depth_reported {
                self.depth_reported = true;
                self.diags.push(
                    Diagnostic::error(format!(
                        "include '{href}' nested too deeply (recursive include?); further ones are skipped"
                    ))
                    .at(here),
                );
            }
            return;
        }
        let Some(path) = self.resolver.resolve(href, dir) else {
            let looked: Vec<String> = self
                .resolver
                .search_dirs(dir)
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            self.diags.push(
                Diagnostic::error(format!("included file '{href}' not found"))
                    .at(here)
                    .suggest(format!(
                        "looked in: {}; set SOFA_DATA_PATH or --data-path",
                        looked.join(", ")
                    )),
            );
            return;
        };
        self.includes += 1;
        let text = match crate::files::read_capped(&path, crate::files::MAX_SCENE_FILE_BYTES) {
            Ok(t) => String::from_utf8_lossy(&t).into_owned(),
            Err(e) => {
                self.diags.push(
                    Diagnostic::error(format!(
                        "cannot read included file '{}': {e}",
                        path.display()
                    ))
                    .at(here),
                );
                return;
            }
        };
        let ifile: Arc<str> = path.display().to_string().into();
        let mut root = match xml::parse(&text) {
            Ok(r) => r,
            Err(e) => {
                self.diags.push(
                    Diagnostic::error(format!("malformed XML in included file: {}", e.message))
                        .at(Some(Self::loc(&ifile, e.line))),
                );
                return;
            }
        };
        let name = repl
            .iter()
            .find(|(k, _)| k == "name")
            .map(|(_, v)| v.clone());
        let attr_repl: Vec<(String, String)> =
            repl.iter().filter(|(k, _)| k != "name").cloned().collect();
        replace_attrs(&mut root, &attr_repl);
        let idir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.depth += 1;
        let root_name = root.attr("name").unwrap_or("").to_string();
        if root.tag == "Node"
            && (root_name == "Group" || root_name == "_Group_" || root_name == "_Merge_")
        {
            for ch in &root.children {
                self.child(ch, &ifile, &idir, items);
            }
        } else if root.tag == "Node" {
            let mut n = self.node(&root, &ifile, &idir);
            if let Some(nm) = name {
                if let Some(a) = n.attrs.iter_mut().find(|a| a.name == "name") {
                    a.value = nm;
                } else {
                    n.attrs.push(AttrDesc {
                        name: "name".into(),
                        value: nm,
                        loc: Self::loc(file, c.line),
                    });
                }
            }
            items.push(Item::Node(n));
        } else {
            self.child(&root, &ifile, &idir, items);
        }
        self.depth -= 1;
    }
}

/// Replace, in every element that already has it, attribute `k` by `v` (`Elem__attr` only in
/// elements named `Elem`).
fn replace_attrs(el: &mut XmlElement, repl: &[(String, String)]) {
    let ename = el.attr("name").unwrap_or("").to_string();
    for (k, v) in repl {
        let (target, attr) = match k.split_once("__") {
            Some((e, a)) => (Some(e), a),
            None => (None, k.as_str()),
        };
        if target.is_some_and(|t| t != ename) {
            continue;
        }
        if let Some(a) = el.attrs.iter_mut().find(|a| a.name == attr) {
            a.value = v.clone();
        }
    }
    for c in &mut el.children {
        replace_attrs(c, repl);
    }
}
