//! A tolerant XML reader for SOFA scenes. SOFA parses with tinyxml2, which accepts `<` and bare
//! `&` inside attribute values (`template="Data<int>"`, `responseParams="mu=0.5&epsilon=10"`);
//! strict XML parsers reject such files. This reader accepts them, keeps line numbers for every
//! element and attribute, and reports real structural errors (unclosed or mismatched tags) with
//! their line.

use std::fmt;

/// An attribute with the line it was written on.
#[derive(Clone, Debug, PartialEq)]
pub struct XmlAttr {
    pub name: String,
    pub value: String,
    pub line: u32,
}

/// An element and its children (text content is ignored: SOFA scenes carry none).
#[derive(Clone, Debug, PartialEq)]
pub struct XmlElement {
    pub tag: String,
    pub attrs: Vec<XmlAttr>,
    pub children: Vec<XmlElement>,
    pub line: u32,
}

impl XmlElement {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value.as_str())
    }
}

/// A structural error with its line.
#[derive(Clone, Debug, PartialEq)]
pub struct XmlError {
    pub line: u32,
    pub message: String,
}

impl fmt::Display for XmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Decode character references and the five XML entities; anything else is kept literally.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail.find(';').filter(|&e| e <= 12);
        let mut consumed = 0;
        if let Some(e) = end {
            let ent = &tail[1..e];
            let ch = match ent {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ if ent.starts_with("#x") || ent.starts_with("#X") => {
                    u32::from_str_radix(&ent[2..], 16)
                        .ok()
                        .and_then(char::from_u32)
                }
                _ if ent.starts_with('#') => ent[1..].parse::<u32>().ok().and_then(char::from_u32),
                _ => None,
            };
            if let Some(c) = ch {
                out.push(c);
                consumed = e + 1;
            }
        }
        if consumed == 0 {
            out.push('&');
            consumed = 1;
        }
        rest = &tail[consumed..];
    }
    out.push_str(rest);
    out
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
    line: u32,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }
    fn starts_with(&self, p: &str) -> bool {
        self.s[self.pos..].starts_with(p.as_bytes())
    }
    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        if c == b'\n' {
            self.line += 1;
        }
        self.pos += 1;
        Some(c)
    }
    fn skip_until(&mut self, end: &str) -> bool {
        while self.pos < self.s.len() {
            if self.starts_with(end) {
                for _ in 0..end.len() {
                    self.bump();
                }
                return true;
            }
            self.bump();
        }
        false
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_ascii_whitespace()) {
            self.bump();
        }
    }
    fn name(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() || c == b'>' || c == b'/' || c == b'=' {
                break;
            }
            self.bump();
        }
        String::from_utf8_lossy(&self.s[start..self.pos]).into_owned()
    }
}

/// The deepest nesting of elements a document may have.
pub const MAX_DEPTH: usize = 1000;

/// Parse a document and return its root element.
pub fn parse(text: &str) -> Result<XmlElement, XmlError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut c = Cursor {
        s: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    let mut stack: Vec<XmlElement> = Vec::new();
    let mut root: Option<XmlElement> = None;
    while c.pos < c.s.len() {
        if c.peek() != Some(b'<') {
            c.bump();
            continue;
        }
        let line = c.line;
        if c.starts_with("<!--") {
            if !c.skip_until("-->") {
                return Err(XmlError {
                    line,
                    message: "comment is not closed (missing '-->')".into(),
                });
            }
            continue;
        }
        if c.starts_with("<![CDATA[") {
            if !c.skip_until("]]>") {
                return Err(XmlError {
                    line,
                    message: "CDATA section is not closed".into(),
                });
            }
            continue;
        }
        if c.starts_with("<?") || c.starts_with("<!") {
            if !c.skip_until(">") {
                return Err(XmlError {
                    line,
                    message: "declaration is not closed".into(),
                });
            }
            continue;
        }
        if c.starts_with("</") {
            c.bump();
            c.bump();
            let name = c.name();
            c.skip_ws();
            if c.peek() != Some(b'>') {
                return Err(XmlError {
                    line,
                    message: format!("closing tag </{name}> is not terminated by '>'"),
                });
            }
            c.bump();
            let Some(el) = stack.pop() else {
                return Err(XmlError {
                    line,
                    message: format!("closing tag </{name}> has no opening tag"),
                });
            };
            if el.tag != name {
                return Err(XmlError {
                    line,
                    message: format!(
                        "closing tag </{name}> does not match <{}> opened at line {}",
                        el.tag, el.line
                    ),
                });
            }
            attach(&mut stack, &mut root, el, line)?;
            continue;
        }
        // start tag
        c.bump();
        let tag = c.name();
        if tag.is_empty() {
            return Err(XmlError {
                line,
                message: "'<' is not followed by a tag name".into(),
            });
        }
        let mut el = XmlElement {
            tag,
            attrs: Vec::new(),
            children: Vec::new(),
            line,
        };
        loop {
            c.skip_ws();
            match c.peek() {
                None => {
                    return Err(XmlError {
                        line,
                        message: format!("tag <{}> is not closed (missing '>')", el.tag),
                    })
                }
                Some(b'/') => {
                    c.bump();
                    if c.peek() != Some(b'>') {
                        return Err(XmlError {
                            line: c.line,
                            message: format!("expected '>' after '/' in <{}>", el.tag),
                        });
                    }
                    c.bump();
                    attach(&mut stack, &mut root, el, line)?;
                    break;
                }
                Some(b'>') => {
                    c.bump();
                    if stack.len() >= MAX_DEPTH {
                        // bounded, so that nothing that walks the tree later (building the
                        // scene, dropping it) can run out of stack
                        return Err(XmlError {
                            line,
                            message: format!(
                                "elements nested more than {MAX_DEPTH} deep: a scene this deep is refused"
                            ),
                        });
                    }
                    stack.push(el);
                    break;
                }
                Some(_) => {
                    let aline = c.line;
                    let name = c.name();
                    if name.is_empty() {
                        let bad = c.bump().unwrap_or(b'?') as char;
                        return Err(XmlError {
                            line: aline,
                            message: format!("unexpected '{bad}' in tag <{}>", el.tag),
                        });
                    }
                    c.skip_ws();
                    if c.peek() != Some(b'=') {
                        return Err(XmlError {
                            line: aline,
                            message: format!("attribute '{name}' of <{}> has no value", el.tag),
                        });
                    }
                    c.bump();
                    c.skip_ws();
                    let value = match c.peek() {
                        Some(q @ (b'"' | b'\'')) => {
                            c.bump();
                            let start = c.pos;
                            loop {
                                match c.peek() {
                                    None => {
                                        return Err(XmlError {
                                            line: aline,
                                            message: format!(
                                                "value of attribute '{name}' is not closed"
                                            ),
                                        })
                                    }
                                    Some(ch) if ch == q => break,
                                    _ => {
                                        c.bump();
                                    }
                                }
                            }
                            let v = String::from_utf8_lossy(&c.s[start..c.pos]).into_owned();
                            c.bump();
                            v
                        }
                        _ => {
                            // unquoted value (tolerated)
                            let start = c.pos;
                            while let Some(ch) = c.peek() {
                                if ch.is_ascii_whitespace()
                                    || ch == b'>'
                                    || (ch == b'/' && c.s.get(c.pos + 1) == Some(&b'>'))
                                {
                                    break;
                                }
                                c.bump();
                            }
                            String::from_utf8_lossy(&c.s[start..c.pos]).into_owned()
                        }
                    };
                    if el.attrs.iter().any(|a| a.name == name) {
                        return Err(XmlError {
                            line: aline,
                            message: format!("attribute '{name}' is repeated in <{}>", el.tag),
                        });
                    }
                    el.attrs.push(XmlAttr {
                        name,
                        value: decode_entities(&value),
                        line: aline,
                    });
                }
            }
        }
    }
    if let Some(open) = stack.last() {
        return Err(XmlError {
            line: open.line,
            message: format!("tag <{}> is never closed", open.tag),
        });
    }
    root.ok_or(XmlError {
        line: 1,
        message: "the document has no element".into(),
    })
}

fn attach(
    stack: &mut [XmlElement],
    root: &mut Option<XmlElement>,
    el: XmlElement,
    line: u32,
) -> Result<(), XmlError> {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(el);
        Ok(())
    } else if root.is_none() {
        *root = Some(el);
        Ok(())
    } else {
        Err(XmlError {
            line,
            message: format!(
                "a second root element <{}> was found; a scene has one root <Node>",
                el.tag
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_values_and_lines() {
        let doc = "<?xml version=\"1.0\"?>\n<!-- c -->\n<Node name=\"root\" dt='0.01'>\n  <A template=\"Data<int>\" p=\"mu=0.5&epsilon=10\" q=\"1 &#x0A;2 &amp; 3\"/>\n  <Node name=\"child\">\n  </Node>\n</Node>\n";
        let r = parse(doc).unwrap();
        assert_eq!(r.tag, "Node");
        assert_eq!(r.line, 3);
        let a = &r.children[0];
        assert_eq!(a.attr("template"), Some("Data<int>"));
        assert_eq!(a.attr("p"), Some("mu=0.5&epsilon=10"));
        assert_eq!(a.attr("q"), Some("1 \n2 & 3"));
        assert_eq!(a.line, 4);
        assert_eq!(r.children[1].attr("name"), Some("child"));
    }

    #[test]
    fn structural_errors_have_lines() {
        let e = parse("<Node>\n<A>\n</Node>").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("does not match"));
        let e = parse("<Node>\n<A/>\n").unwrap_err();
        assert!(e.message.contains("never closed"));
        let e = parse("<Node a=\"1></Node>").unwrap_err();
        assert!(e.message.contains("not closed"));
        assert!(parse("").is_err());
    }
}
