//! Reflective Data fields: every component declares its Data (SOFA's name, type, default, help)
//! in a [`DataTable`]; values parse from attribute strings; a Data may instead be linked to another
//! component's Data (`@path.data`), resolved by the scene builder before the component's `init`.
//!
//! Components read their parameters from the table through typed handles declared with
//! [`data_schema!`](crate::data_schema) (see [`typed`]), or by name in `init` (string lookups
//! happen only there, never inside a time step). Every write bumps the field's version: after an
//! edit a component is told which Data changed.

mod typed;

use std::fmt;
pub use typed::{ChangedData, Data, DataType, Flag, Int, Ints, Real, Reals, Text, Words};

/// Why a Data value was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DataError {
    #[error("'{0}' is not a boolean (expected 0, 1, true or false)")]
    NotBool(String),
    #[error("'{0}' is not an integer")]
    NotInt(String),
    #[error("'{0}' is not a number")]
    NotNumber(String),
    #[error("'{0}' is not a non-negative integer index (nor a range A-B or A-B-step)")]
    NotIndex(String),
    #[error("the range '{0}' gives more than {max} indices", max = crate::state::MAX_POINTS)]
    RangeTooLong(String),
    #[error("{given} {what} {verb}, expected a multiple of {width}")]
    NotMultiple {
        given: usize,
        what: &'static str,
        verb: &'static str,
        width: usize,
    },
    #[error("{given} numbers {verb}, expected {n}")]
    WrongCount {
        given: usize,
        verb: &'static str,
        n: usize,
    },
    #[error("no Data named '{0}'")]
    NoSuchData(String),
}

impl From<DataError> for String {
    fn from(e: DataError) -> String {
        e.to_string()
    }
}

/// The type of a Data field, which decides how attribute strings parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    Bool,
    Int,
    Real,
    Str,
    /// A file name, resolved against the scene's folder and data paths by the loader.
    File,
    /// A list of reals, grouped by `width` (3 for a list of Vec3, 0 for free length).
    Reals(usize),
    /// Exactly `n` reals (a Vec3 such as a translation, a box corner).
    Vector(usize),
    /// A list of non-negative integers (indices), grouped by `width`.
    Ints(usize),
    /// A whitespace-separated list of words (e.g. display flags).
    Words,
}

/// A Data value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Real(f64),
    Str(String),
    Reals(Vec<f64>),
    Ints(Vec<u32>),
    Words(Vec<String>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{}", if *b { 1 } else { 0 }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(r) => write!(f, "{r}"),
            Value::Str(s) => write!(f, "{s}"),
            Value::Reals(v) => write_list(f, v.iter()),
            Value::Ints(v) => write_list(f, v.iter()),
            Value::Words(v) => write_list(f, v.iter()),
        }
    }
}

fn write_list<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    it: impl Iterator<Item = T>,
) -> fmt::Result {
    for (i, x) in it.enumerate() {
        if i > 0 {
            write!(f, " ")?;
        }
        write!(f, "{x}")?;
    }
    Ok(())
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter(|t| !t.is_empty())
}

/// Parse a SOFA real: accepts `inf`, `nan` only explicitly; `1e-9`, `.5`, `5.` as C does.
pub fn parse_real(t: &str) -> Option<f64> {
    let t = t.trim();
    t.parse::<f64>().ok().or_else(|| {
        // C's strtod accepts a trailing 'f' or a leading '+'
        t.trim_end_matches('f').parse::<f64>().ok()
    })
}

/// The numbers of a word written without spaces between them, as a C++ stream reads them
/// (SOFA reads vectors with `>>`): `0-0.707107` is 0 then −0.707107. Each number is the
/// longest prefix of the form sign? digits (. digits)? (e sign? digits)?; None unless the
/// whole word is read that way.
fn glued_numbers(t: &str) -> Option<Vec<f64>> {
    let b = t.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        let int_end = digits(i);
        let mut end = int_end;
        let mut any = int_end > i;
        if end < b.len() && b[end] == b'.' {
            let frac_end = digits(end + 1);
            any |= frac_end > end + 1;
            end = frac_end;
        }
        if !any {
            return None;
        }
        if end < b.len() && matches!(b[end], b'e' | b'E') {
            let mut k = end + 1;
            if k < b.len() && matches!(b[k], b'+' | b'-') {
                k += 1;
            }
            let exp_end = digits(k);
            if exp_end > k {
                end = exp_end;
            }
        }
        out.push(t[start..end].parse::<f64>().ok()?);
        i = end;
    }
    Some(out)
}

/// The numbers of one word of a vector: a number, or numbers glued together by their signs
/// (as a C++ stream reads them), appended to `out`.
pub fn push_word_numbers(out: &mut Vec<f64>, t: &str) -> Result<(), DataError> {
    match parse_real(t) {
        Some(v) => out.push(v),
        None => out.extend(glued_numbers(t).ok_or_else(|| DataError::NotNumber(t.to_string()))?),
    }
    Ok(())
}

/// Parse a SOFA boolean (`1`, `0`, `true`, `false`, case-insensitive).
pub fn parse_bool(t: &str) -> Option<bool> {
    match t.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        other => other.parse::<i64>().ok().map(|i| i != 0),
    }
}

impl DataKind {
    /// Parse `text` as a value of this kind, or say why it cannot be.
    pub fn parse(self, text: &str) -> Result<Value, DataError> {
        match self {
            DataKind::Bool => parse_bool(text)
                .map(Value::Bool)
                .ok_or_else(|| DataError::NotBool(text.to_string())),
            DataKind::Int => {
                let t = text.trim();
                t.parse::<i64>()
                    .ok()
                    .or_else(|| parse_real(t).filter(|r| r.fract() == 0.0).map(|r| r as i64))
                    .map(Value::Int)
                    .ok_or_else(|| DataError::NotInt(text.to_string()))
            }
            DataKind::Real => {
                // SOFA reads the first number of the string
                let first = tokens(text).next().unwrap_or("");
                parse_real(first)
                    .map(Value::Real)
                    .ok_or_else(|| DataError::NotNumber(text.to_string()))
            }
            DataKind::Str | DataKind::File => Ok(Value::Str(text.trim().to_string())),
            DataKind::Words => Ok(Value::Words(tokens(text).map(str::to_string).collect())),
            DataKind::Reals(w) => {
                let mut out = Vec::new();
                for t in tokens(text) {
                    push_word_numbers(&mut out, t)?;
                }
                if w > 1 && out.len() % w != 0 {
                    return Err(DataError::NotMultiple {
                        given: out.len(),
                        what: "numbers",
                        verb: "given",
                        width: w,
                    });
                }
                Ok(Value::Reals(out))
            }
            DataKind::Vector(n) => {
                let mut out = Vec::new();
                for t in tokens(text) {
                    push_word_numbers(&mut out, t)?;
                }
                if out.len() != n {
                    return Err(DataError::WrongCount {
                        given: out.len(),
                        verb: "given",
                        n,
                    });
                }
                Ok(Value::Reals(out))
            }
            DataKind::Ints(w) => {
                let mut out = Vec::new();
                for t in tokens(text) {
                    if let Ok(v) = t.parse::<u32>() {
                        out.push(v);
                        continue;
                    }
                    // SOFA's index lists also read "A-B" (A to B) and "A-B-step"
                    let parts: Vec<Option<u32>> = t.split('-').map(|p| p.parse().ok()).collect();
                    let range = match parts[..] {
                        [Some(a), Some(b)] => Some((a, b, 1)),
                        [Some(a), Some(b), Some(step)] if step > 0 => Some((a, b, step)),
                        _ => None,
                    };
                    let Some((a, b, step)) = range else {
                        return Err(DataError::NotIndex(t.to_string()));
                    };
                    let count = (a.abs_diff(b) / step) as usize + 1;
                    if out.len() + count > crate::state::MAX_POINTS {
                        return Err(DataError::RangeTooLong(t.to_string()));
                    }
                    out.extend((0..count as u32).map(|k| {
                        if a <= b {
                            a + k * step
                        } else {
                            a - k * step
                        }
                    }));
                }
                if w > 1 && out.len() % w != 0 {
                    return Err(DataError::NotMultiple {
                        given: out.len(),
                        what: "indices",
                        verb: "given",
                        width: w,
                    });
                }
                Ok(Value::Ints(out))
            }
        }
    }

    /// The value of this kind used when nothing parses (empty list, zero, false).
    pub fn empty(self) -> Value {
        match self {
            DataKind::Bool => Value::Bool(false),
            DataKind::Int => Value::Int(0),
            DataKind::Real => Value::Real(0.0),
            DataKind::Str | DataKind::File => Value::Str(String::new()),
            DataKind::Reals(_) | DataKind::Vector(_) => Value::Reals(Vec::new()),
            DataKind::Ints(_) => Value::Ints(Vec::new()),
            DataKind::Words => Value::Words(Vec::new()),
        }
    }

    /// Convert a value coming through a link into this kind when shapes are compatible.
    pub fn coerce(self, v: Value) -> Result<Value, DataError> {
        let v = self.coerce_kind(v)?;
        // a linked list must still fit this Data's shape
        match (self, &v) {
            (DataKind::Reals(w), Value::Reals(r)) if w > 1 && r.len() % w != 0 => {
                Err(DataError::NotMultiple {
                    given: r.len(),
                    what: "numbers",
                    verb: "received",
                    width: w,
                })
            }
            (DataKind::Vector(n), Value::Reals(r)) if r.len() != n => Err(DataError::WrongCount {
                given: r.len(),
                verb: "received",
                n,
            }),
            (DataKind::Ints(w), Value::Ints(r)) if w > 1 && r.len() % w != 0 => {
                Err(DataError::NotMultiple {
                    given: r.len(),
                    what: "indices",
                    verb: "received",
                    width: w,
                })
            }
            _ => Ok(v),
        }
    }

    fn coerce_kind(self, v: Value) -> Result<Value, DataError> {
        match (self, v) {
            (DataKind::Reals(_) | DataKind::Vector(_), Value::Ints(i)) => {
                Ok(Value::Reals(i.into_iter().map(f64::from).collect()))
            }
            (DataKind::Ints(_), Value::Reals(r)) => Ok(Value::Ints(
                r.into_iter().map(|x| x.max(0.0) as u32).collect(),
            )),
            (DataKind::Real, Value::Reals(r)) if !r.is_empty() => Ok(Value::Real(r[0])),
            (DataKind::Real, Value::Int(i)) => Ok(Value::Real(i as f64)),
            (DataKind::Int, Value::Real(r)) => Ok(Value::Int(r as i64)),
            (k, v) => {
                let same = matches!(
                    (k, &v),
                    (DataKind::Bool, Value::Bool(_))
                        | (DataKind::Int, Value::Int(_))
                        | (DataKind::Real, Value::Real(_))
                        | (DataKind::Str | DataKind::File, Value::Str(_))
                        | (DataKind::Reals(_) | DataKind::Vector(_), Value::Reals(_))
                        | (DataKind::Ints(_), Value::Ints(_))
                        | (DataKind::Words, Value::Words(_))
                );
                if same {
                    Ok(v)
                } else {
                    // last resort: print and re-parse
                    k.parse(&v.to_string())
                }
            }
        }
    }
}

/// One declared Data field.
#[derive(Clone, Debug)]
pub struct DataField {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: DataKind,
    pub value: Value,
    pub default_text: &'static str,
    pub help: &'static str,
    /// Set explicitly by the scene (attribute or link), as opposed to left at its default.
    pub is_set: bool,
    /// A link to another component's Data, as written (`@../loader.position`).
    pub link: Option<String>,
    /// Output of an engine or loader (may be the source of autolinks).
    pub output: bool,
    /// Bumped by every write that changes the value ([`DataField::assign`]): what change
    /// tracking compares.
    pub version: u64,
}

impl DataField {
    /// Set the value (already of the field's kind); the version moves only when the value does.
    pub fn assign(&mut self, v: Value) {
        if v != self.value {
            self.value = v;
            self.version += 1;
        }
        self.is_set = true;
    }
}

/// The Data fields of one component, in declaration order.
#[derive(Clone, Debug, Default)]
pub struct DataTable {
    fields: Vec<DataField>,
    /// Accept attributes that are not declared (kept as text): used by components Canapé loads
    /// without simulating them (visual, collision), so their many display options load quietly.
    open: bool,
    /// Undeclared attributes kept by an open table, in document order.
    pub extra: Vec<(String, String)>,
}

impl DataTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Declare a field with its default written as SOFA would write it.
    pub fn with(
        mut self,
        name: &'static str,
        kind: DataKind,
        default: &'static str,
        help: &'static str,
    ) -> Self {
        // a programming error in a component's declaration (the second field could never be
        // reached by name); every class is constructed by the registry's tests
        assert!(
            self.fields.iter().all(|f| f.name != name),
            "Data '{name}' declared twice"
        );
        let value = kind.parse(default).unwrap_or_else(|_| kind.empty());
        self.fields.push(DataField {
            name,
            aliases: &[],
            kind,
            value,
            default_text: default,
            help,
            is_set: false,
            link: None,
            output: false,
            version: 0,
        });
        self
    }

    /// Make the table accept undeclared attributes (kept as text in `extra`).
    pub fn open(mut self) -> Self {
        self.open = true;
        self
    }

    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Keep an undeclared attribute (only for open tables).
    pub fn set_extra(&mut self, name: &str, text: &str) -> bool {
        if !self.open {
            return false;
        }
        self.extra.push((name.to_string(), text.to_string()));
        true
    }

    /// Declare an output field (engine/loader result).
    pub fn output(mut self, name: &'static str, kind: DataKind, help: &'static str) -> Self {
        self = self.with(name, kind, "", help);
        self.fields.last_mut().unwrap().output = true;
        self
    }

    /// Give the last declared field alternative attribute names.
    pub fn alias(mut self, aliases: &'static [&'static str]) -> Self {
        if let Some(f) = self.fields.last_mut() {
            f.aliases = aliases;
        }
        self
    }

    pub fn fields(&self) -> &[DataField] {
        &self.fields
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields
            .iter()
            .position(|f| f.name == name)
            .or_else(|| self.fields.iter().position(|f| f.aliases.contains(&name)))
    }

    pub fn field(&self, name: &str) -> Option<&DataField> {
        self.index_of(name).map(|i| &self.fields[i])
    }

    pub fn field_mut(&mut self, name: &str) -> Option<&mut DataField> {
        self.index_of(name).map(move |i| &mut self.fields[i])
    }

    /// The field at `index` (from [`DataTable::index_of`], resolved once): how a component
    /// publishes an output during a step without looking its name up.
    pub fn field_at_mut(&mut self, index: usize) -> Option<&mut DataField> {
        self.fields.get_mut(index)
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.field(name).is_some_and(|f| f.is_set)
    }

    /// Set a field from an attribute string.
    pub fn set_str(&mut self, name: &str, text: &str) -> Result<(), DataError> {
        let f = self
            .field_mut(name)
            .ok_or_else(|| DataError::NoSuchData(name.to_string()))?;
        f.assign(f.kind.parse(text)?);
        Ok(())
    }

    /// Set a field from a value (link resolution, programmatic edits).
    pub fn set_value(&mut self, name: &str, v: Value) -> Result<(), DataError> {
        let f = self
            .field_mut(name)
            .ok_or_else(|| DataError::NoSuchData(name.to_string()))?;
        f.assign(f.kind.coerce(v)?);
        Ok(())
    }

    pub fn value(&self, name: &str) -> Option<&Value> {
        self.field(name).map(|f| &f.value)
    }

    pub fn real(&self, name: &str) -> f64 {
        match self.value(name) {
            Some(Value::Real(r)) => *r,
            Some(Value::Int(i)) => *i as f64,
            Some(Value::Reals(v)) if !v.is_empty() => v[0],
            _ => 0.0,
        }
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            Some(Value::Int(i)) => *i,
            Some(Value::Real(r)) => *r as i64,
            Some(Value::Bool(b)) => *b as i64,
            _ => 0,
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.value(name) {
            Some(Value::Bool(b)) => *b,
            Some(Value::Int(i)) => *i != 0,
            _ => false,
        }
    }

    pub fn str(&self, name: &str) -> &str {
        match self.value(name) {
            Some(Value::Str(s)) => s,
            _ => "",
        }
    }

    pub fn reals(&self, name: &str) -> &[f64] {
        match self.value(name) {
            Some(Value::Reals(v)) => v,
            _ => &[],
        }
    }

    pub fn ints(&self, name: &str) -> &[u32] {
        match self.value(name) {
            Some(Value::Ints(v)) => v,
            _ => &[],
        }
    }

    pub fn words(&self, name: &str) -> &[String] {
        match self.value(name) {
            Some(Value::Words(v)) => v,
            _ => &[],
        }
    }

    /// Names of all fields and aliases, for "did you mean" suggestions.
    pub fn all_names(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        for f in &self.fields {
            v.push(f.name);
            v.extend_from_slice(f.aliases);
        }
        v
    }
}

crate::data_schema! {
    /// The Data every SOFA component has (Base/BaseObject).
    pub struct BaseData {
        print_log: Flag = ("printLog", DataKind::Bool, "0", "if true, emits extra messages at runtime."),
        tags: Words = ("tags", DataKind::Words, "", "list of the subsets the object belongs to"),
        bbox: Reals = ("bbox", DataKind::Reals(0), "", "this object bounding box"),
        component_state: Text = ("componentState", DataKind::Str, "Undefined", "The state of the component among (Dirty, Valid, Undefined, Loading, Invalid)."),
        listening: Flag = ("listening", DataKind::Bool, "0", "if true, handle the events, otherwise ignore the events"),
    }
}

crate::data_schema! {
    /// What every SOFA force field adds to [`BaseData`] (ForceField base).
    pub struct ForceFieldData {
        rayleigh_stiffness: Real = ("rayleighStiffness", DataKind::Real, "0", "Rayleigh damping - stiffness matrix coefficient"),
        is_compliance: Flag = ("isCompliance", DataKind::Bool, "0", "Consider the component as a compliance, else as a stiffness"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
        mstate: Text = ("mstate", DataKind::Str, "", "MechanicalState used by this component"),
    }
}

/// Declare the Data every SOFA component has ([`BaseData`]).
pub fn base_fields(t: DataTable) -> DataTable {
    BaseData::declare(t).0
}

/// Base Data plus what every SOFA force field has ([`ForceFieldData`]).
pub fn force_field_fields(t: DataTable) -> DataTable {
    ForceFieldData::declare(base_fields(t)).0
}

crate::data_schema! {
    /// What every SOFA mass adds to the base or force-field Data (Mass base): the Rayleigh mass
    /// coefficient and separate gravity.
    pub struct MassData {
        rayleigh_mass: Real = ("rayleighMass", DataKind::Real, "0", "Rayleigh damping coefficient related to mass"),
        separate_gravity: Flag = ("separateGravity", DataKind::Bool, "0", "add separately gravity to velocity computation"),
    }
}

/// Mass Data ([`MassData`]), added on top of the base or force-field Data.
pub fn mass_fields(t: DataTable) -> DataTable {
    MassData::declare(t).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_ranges() {
        let p = |t: &str| DataKind::Ints(0).parse(t);
        assert_eq!(
            p("3 0-4 9").unwrap(),
            Value::Ints(vec![3, 0, 1, 2, 3, 4, 9])
        );
        assert_eq!(p("0-10-5").unwrap(), Value::Ints(vec![0, 5, 10]));
        assert_eq!(p("4-2").unwrap(), Value::Ints(vec![4, 3, 2]));
        assert!(p("1-x").is_err() && p("0-9-0").is_err() && p("-3").is_err());
        // a range beyond what a state may hold is refused, not allocated
        assert!(p("0-4000000000").is_err());
    }

    #[test]
    fn numbers_glued_by_their_signs_read_as_a_cpp_stream_reads_them() {
        let p = |t: &str| DataKind::Reals(0).parse(t);
        assert_eq!(
            p("0 0-0.25 0.75").unwrap(),
            Value::Reals(vec![0.0, 0.0, -0.25, 0.75])
        );
        assert_eq!(
            p("1e-3-2E+1+.5").unwrap(),
            Value::Reals(vec![1e-3, -20.0, 0.5])
        );
        // what a stream cannot read whole stays an error naming the word
        for bad in ["1-x", "--1", "1e", "-", "."] {
            assert_eq!(p(bad), Err(DataError::NotNumber(bad.to_string())), "{bad}");
        }
        assert_eq!(
            DataKind::Vector(3).parse("1-2 3").unwrap(),
            Value::Reals(vec![1.0, -2.0, 3.0])
        );
    }

    #[test]
    fn parse_kinds() {
        assert_eq!(DataKind::Real.parse("1e-9").unwrap(), Value::Real(1e-9));
        assert_eq!(
            DataKind::Reals(3).parse("1 2 3  4,5 6").unwrap(),
            Value::Reals(vec![1., 2., 3., 4., 5., 6.])
        );
        assert!(DataKind::Reals(3).parse("1 2").is_err());
        assert!(DataKind::Vector(3).parse("1 2 3 4").is_err());
        assert!(DataKind::Vector(3).parse("").is_err());
        assert!(DataKind::Reals(3)
            .coerce(Value::Reals(vec![1.0; 4]))
            .is_err());
        assert!(DataKind::Vector(3)
            .coerce(Value::Reals(vec![1.0; 3]))
            .is_ok());
        assert!(DataKind::Ints(0).parse("1 -2").is_err());
        assert_eq!(DataKind::Bool.parse("true").unwrap(), Value::Bool(true));
        assert!(DataKind::Real.parse("abc").is_err());
    }

    #[test]
    fn table_set_and_alias() {
        let mut t = DataTable::new()
            .with("youngModulus", DataKind::Real, "5000", "E")
            .with("indices", DataKind::Ints(0), "", "i")
            .alias(&["points"]);
        assert_eq!(t.real("youngModulus"), 5000.0);
        assert!(!t.is_set("youngModulus"));
        t.set_str("points", "1 2 3").unwrap();
        assert_eq!(t.ints("indices"), &[1, 2, 3]);
        assert!(t.set_str("youngModulus", "x").is_err());
        t.set_value("youngModulus", Value::Int(3)).unwrap();
        assert_eq!(t.real("youngModulus"), 3.0);
    }

    #[test]
    fn versions_move_only_with_the_value_and_typed_handles_read_it() {
        crate::data_schema! {
            struct Schema {
                young: Real = ("youngModulus", DataKind::Real, "5000", "E"),
                ids: Ints = ("indices", DataKind::Ints(0), "", "i") alias ["points"],
                out: Reals => ("out", DataKind::Reals(3), "o"),
            }
        }
        let (t, h) = Schema::declare(base_fields(DataTable::new()));
        let mut t = t;
        // the handles index the fields after the base Data, in order
        assert_eq!(t.fields()[h.young.index()].name, "youngModulus");
        assert_eq!(t.get(h.young), 5000.0);
        assert!(t.fields()[h.out.index()].output);
        let v0 = t.versions();
        t.set_str("youngModulus", "5000").unwrap();
        assert!(t.changed_since(&v0).is_empty(), "same value: no change");
        assert!(t.was_set(h.young));
        t.set_str("points", "1 2-4").unwrap();
        t.set_str("youngModulus", "7").unwrap();
        let changed = t.changed_since(&v0);
        assert!(changed.has(h.young) && changed.has(h.ids) && !changed.has(h.out));
        assert_eq!(changed.names(&t), vec!["youngModulus", "indices"]);
        assert!(changed.only(&[h.young.index(), h.ids.index()]));
        assert!(!changed.only(&[h.young.index()]));
        assert_eq!(t.get(h.ids), &[1, 2, 3, 4]);
        assert!(matches!(
            t.set_str("youngModulus", "x"),
            Err(DataError::NotNumber(_))
        ));
        t.put(h.out, Value::Reals(vec![1.0, 2.0, 3.0])).unwrap();
        assert!(t.put(h.out, Value::Reals(vec![1.0])).is_err());
        assert_eq!(t.get(h.out), &[1.0, 2.0, 3.0]);
    }
}
