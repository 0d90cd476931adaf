//! Diagnostics: errors, warnings and notes about a scene, each with the file, line and component
//! path it concerns and, where one exists, a suggestion. Loading never panics: problems become
//! diagnostics and the scene loads wherever SOFA's would.

use std::fmt;
use std::sync::Arc;

/// Where in a scene file something was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLoc {
    pub file: Arc<str>,
    pub line: u32,
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

/// One message about the scene.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub loc: Option<SourceLoc>,
    /// Path and class of the component concerned, e.g. `/root/Liver/FEM (TetrahedronFEMForceField)`.
    pub component: Option<String>,
    pub suggestion: Option<String>,
}

impl Diagnostic {
    pub fn new(severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            message: message.into(),
            loc: None,
            component: None,
            suggestion: None,
        }
    }
    pub fn error(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, message)
    }
    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, message)
    }
    pub fn note(message: impl Into<String>) -> Self {
        Self::new(Severity::Note, message)
    }
    pub fn at(mut self, loc: Option<SourceLoc>) -> Self {
        self.loc = loc;
        self
    }
    pub fn on(mut self, component: impl Into<String>) -> Self {
        self.component = Some(component.into());
        self
    }
    pub fn suggest(mut self, s: impl Into<String>) -> Self {
        self.suggestion = Some(s.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{sev}")?;
        if let Some(l) = &self.loc {
            write!(f, ": {l}")?;
        }
        if let Some(c) = &self.component {
            write!(f, ": {c}")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(s) = &self.suggestion {
            write!(f, " ({s})")?;
        }
        Ok(())
    }
}

/// An ordered list of diagnostics.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }
    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Error)
    }
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }
}

/// "did you mean 'a' or 'b'?" for a list of suggestions (None when it is empty).
pub fn did_you_mean(suggestions: &[&str]) -> Option<String> {
    (!suggestions.is_empty()).then(|| {
        let names: Vec<String> = suggestions.iter().map(|s| format!("'{s}'")).collect();
        format!("did you mean {}?", names.join(" or "))
    })
}

/// Levenshtein distance, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidates to `name` (at most `max`), nearest first; ties keep candidate order.
pub fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let lower = name.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| {
            let cl = c.to_lowercase();
            let d = if cl.contains(&lower) || lower.contains(&cl) {
                edit_distance(name, c).min(2)
            } else {
                edit_distance(name, c)
            };
            (d, c)
        })
        .filter(|(d, c)| *d <= (c.len().max(name.len()) / 2).max(2))
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(max).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let c = closest(
            "TetrahedronFEMForcefield",
            [
                "TetrahedronFEMForceField",
                "HexahedronFEMForceField",
                "UniformMass",
            ],
            2,
        );
        assert_eq!(c[0], "TetrahedronFEMForceField");
        assert!(!c.contains(&"UniformMass"));
    }

    #[test]
    fn display() {
        let d = Diagnostic::warning("unknown attribute 'youngModulu'")
            .at(Some(SourceLoc {
                file: "a.scn".into(),
                line: 4,
            }))
            .on("/root/FEM (TetrahedronFEMForceField)")
            .suggest("did you mean 'youngModulus'?");
        assert_eq!(
            d.to_string(),
            "warning: a.scn:4: /root/FEM (TetrahedronFEMForceField): unknown attribute 'youngModulu' (did you mean 'youngModulus'?)"
        );
    }
}
