//! Typed Data: a component declares its Data once with [`data_schema!`](crate::data_schema),
//! which builds the reflective table (SOFA's name, kind, default, help) and a struct of typed
//! handles ([`Data<T>`]) to its fields. The value lives once, in the table; the component reads
//! it through its handle (`self.data.get(self.d.young)`: an index, no name lookup, its Rust type
//! checked at compile time), and every write bumps the field's version, so that after an edit a
//! component is told exactly which of its Data changed ([`ChangedData`]) and reacts to those
//! ([`Reaction`](crate::component::Reaction)).

use super::{DataKind, DataTable, Value};
use std::marker::PhantomData;

/// The Rust view of one [`DataKind`]: what a typed handle reads.
pub trait DataType {
    /// What reading the Data gives (a copy for scalars, a slice for lists).
    type Ref<'a>;
    /// Whether a field of `kind` holds values of this type.
    fn accepts(kind: DataKind) -> bool;
    /// Read the value (a value of another shape, which a table of this kind never holds, reads
    /// as the type's empty value).
    fn read(v: &Value) -> Self::Ref<'_>;
}

/// A real number (`DataKind::Real`).
pub struct Real;
/// An integer (`DataKind::Int`).
pub struct Int;
/// A boolean (`DataKind::Bool`).
pub struct Flag;
/// A text or file name (`DataKind::Str`, `DataKind::File`).
pub struct Text;
/// A list of reals (`DataKind::Reals`, `DataKind::Vector`).
pub struct Reals;
/// A list of indices (`DataKind::Ints`).
pub struct Ints;
/// A list of words (`DataKind::Words`).
pub struct Words;

impl DataType for Real {
    type Ref<'a> = f64;
    fn accepts(kind: DataKind) -> bool {
        kind == DataKind::Real
    }
    fn read(v: &Value) -> f64 {
        match v {
            Value::Real(r) => *r,
            _ => 0.0,
        }
    }
}

impl DataType for Int {
    type Ref<'a> = i64;
    fn accepts(kind: DataKind) -> bool {
        kind == DataKind::Int
    }
    fn read(v: &Value) -> i64 {
        match v {
            Value::Int(i) => *i,
            _ => 0,
        }
    }
}

impl DataType for Flag {
    type Ref<'a> = bool;
    fn accepts(kind: DataKind) -> bool {
        kind == DataKind::Bool
    }
    fn read(v: &Value) -> bool {
        matches!(v, Value::Bool(true))
    }
}

impl DataType for Text {
    type Ref<'a> = &'a str;
    fn accepts(kind: DataKind) -> bool {
        matches!(kind, DataKind::Str | DataKind::File)
    }
    fn read(v: &Value) -> &str {
        match v {
            Value::Str(s) => s,
            _ => "",
        }
    }
}

impl DataType for Reals {
    type Ref<'a> = &'a [f64];
    fn accepts(kind: DataKind) -> bool {
        matches!(kind, DataKind::Reals(_) | DataKind::Vector(_))
    }
    fn read(v: &Value) -> &[f64] {
        match v {
            Value::Reals(r) => r,
            _ => &[],
        }
    }
}

impl DataType for Ints {
    type Ref<'a> = &'a [u32];
    fn accepts(kind: DataKind) -> bool {
        matches!(kind, DataKind::Ints(_))
    }
    fn read(v: &Value) -> &[u32] {
        match v {
            Value::Ints(r) => r,
            _ => &[],
        }
    }
}

impl DataType for Words {
    type Ref<'a> = &'a [String];
    fn accepts(kind: DataKind) -> bool {
        kind == DataKind::Words
    }
    fn read(v: &Value) -> &[String] {
        match v {
            Value::Words(r) => r,
            _ => &[],
        }
    }
}

/// A typed handle to one Data field of a component's table: the field's index, fixed when the
/// schema declared it.
pub struct Data<T> {
    index: usize,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for Data<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Data<T> {}
impl<T> std::fmt::Debug for Data<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Data#{}", self.index)
    }
}
impl<T> PartialEq for Data<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Data<T> {}

impl<T> Data<T> {
    /// The field's index in its table.
    pub fn index(self) -> usize {
        self.index
    }
}

impl DataTable {
    /// Declare a field and return its typed handle (used by [`data_schema!`](crate::data_schema)).
    /// Panics when `T` cannot hold values of `kind`: a programming error in a schema, caught by
    /// the schema's own test (every component is constructed by the registry's tests).
    pub fn declare<T: DataType>(
        self,
        name: &'static str,
        kind: DataKind,
        default: &'static str,
        help: &'static str,
    ) -> (Self, Data<T>) {
        assert!(
            T::accepts(kind),
            "Data '{name}': the schema's Rust type does not hold {kind:?}"
        );
        let index = self.fields().len();
        (
            self.with(name, kind, default, help),
            Data {
                index,
                _type: PhantomData,
            },
        )
    }

    /// Declare an output field (engine or loader result) and return its typed handle.
    pub fn declare_output<T: DataType>(
        self,
        name: &'static str,
        kind: DataKind,
        help: &'static str,
    ) -> (Self, Data<T>) {
        assert!(
            T::accepts(kind),
            "Data '{name}': the schema's Rust type does not hold {kind:?}"
        );
        let index = self.fields().len();
        (
            self.output(name, kind, help),
            Data {
                index,
                _type: PhantomData,
            },
        )
    }

    /// Read a Data through its typed handle.
    pub fn get<T: DataType>(&self, d: Data<T>) -> T::Ref<'_> {
        T::read(&self.fields()[d.index].value)
    }

    /// Whether the scene set this Data (attribute or link), rather than leaving its default.
    pub fn was_set<T>(&self, d: Data<T>) -> bool {
        self.fields()[d.index].is_set
    }

    /// Write a Data through its typed handle (an output published by its component, or a value
    /// computed by the API); the value must have the field's kind.
    pub fn put<T: DataType>(&mut self, d: Data<T>, v: Value) -> Result<(), super::DataError> {
        let f = self
            .field_at_mut(d.index)
            .expect("a typed handle indexes its own table");
        f.assign(f.kind.coerce(v)?);
        Ok(())
    }

    /// The versions of every field, in declaration order: what a component or an engine keeps
    /// to tell later which Data changed ([`DataTable::changed_since`]).
    pub fn versions(&self) -> Vec<u64> {
        self.fields().iter().map(|f| f.version).collect()
    }

    /// The fields written since `versions` was taken.
    pub fn changed_since(&self, versions: &[u64]) -> ChangedData {
        ChangedData {
            fields: self
                .fields()
                .iter()
                .enumerate()
                .filter(|(i, f)| versions.get(*i) != Some(&f.version))
                .map(|(i, _)| i)
                .collect(),
        }
    }
}

/// Which Data fields of a component changed (indices in its table).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangedData {
    fields: Vec<usize>,
}

impl ChangedData {
    /// The changed fields given by index (in increasing order).
    pub fn from_indices(mut fields: Vec<usize>) -> Self {
        fields.sort_unstable();
        fields.dedup();
        ChangedData { fields }
    }
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
    pub fn indices(&self) -> &[usize] {
        &self.fields
    }
    /// Whether the field of `d` changed.
    pub fn has<T>(&self, d: Data<T>) -> bool {
        self.fields.contains(&d.index)
    }
    /// Whether every changed field is among `allowed` (indices from [`Data::index`]).
    pub fn only(&self, allowed: &[usize]) -> bool {
        self.fields.iter().all(|i| allowed.contains(i))
    }
    /// The names of the changed fields in `table`, for messages.
    pub fn names(&self, table: &DataTable) -> Vec<&'static str> {
        self.fields
            .iter()
            .filter_map(|&i| table.fields().get(i).map(|f| f.name))
            .collect()
    }
}

/// Declare a component's Data once: a struct of typed handles and the function that adds the
/// fields to a table, in order. Each entry is
/// `handle: Type = ("sofaName", DataKind::…, "default", "help")`, optionally followed by
/// `alias ["other", …]`; an engine's or loader's result is written with `=>` and no default:
/// `handle: Type => ("sofaName", DataKind::…, "help")`. `Type` is one of [`Real`], [`Int`],
/// [`Flag`], [`Text`], [`Reals`], [`Ints`], [`Words`].
///
/// ```
/// use canape_core::data::{DataKind, DataTable, Real, Reals};
/// canape_core::data_schema! {
///     /// The Data of a spring.
///     pub struct SpringData {
///         stiffness: Real = ("stiffness", DataKind::Real, "100", "spring stiffness"),
///         rest: Reals = ("restLength", DataKind::Reals(0), "", "rest lengths") alias ["length"],
///         energy: Real => ("energy", DataKind::Real, "potential energy"),
///     }
/// }
/// let (mut table, d) = SpringData::declare(DataTable::new());
/// assert_eq!(table.get(d.stiffness), 100.0);
/// table.set_str("length", "1 2").unwrap();
/// assert_eq!(table.get(d.rest), &[1.0, 2.0]);
/// assert!(table.fields()[d.energy.index()].output);
/// ```
#[macro_export]
macro_rules! data_schema {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ident
                $(= ( $($args:expr),+ $(,)? ))?
                $(=> ( $($oargs:expr),+ $(,)? ))?
                $(alias [$($alias:expr),* $(,)?])?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug)]
        $vis struct $name {
            $( $(#[$fmeta])* pub $field: $crate::data::Data<$ty>, )*
        }

        impl $name {
            /// Add these Data to `table` (after the fields it already has) and return their
            /// typed handles.
            pub fn declare(table: $crate::data::DataTable) -> ($crate::data::DataTable, Self) {
                let mut table = table;
                $(
                    $( let (t, $field) = table.declare::<$ty>($($args),+); )?
                    $( let (t, $field) = table.declare_output::<$ty>($($oargs),+); )?
                    table = t;
                    $( table = table.alias(&[$($alias),*]); )?
                )*
                (table, $name { $($field),* })
            }
        }
    };
}
