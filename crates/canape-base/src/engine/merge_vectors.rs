//! MergeVectors (Sofa/Component/Engine/Generate/src/sofa/component/engine/generate/
//! MergeVectors.inl): `output` is `input1`, `input2`, … `input<nbInputs>` one after the
//! other. The inputs are lists of numbers (reals, or indices for the integer templates).

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{Data, DataKind, DataTable, DataType, Int, Ints, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;

/// The input Data declared (SOFA creates `nbInputs` of them; here they exist up to this many).
pub const MAX_INPUTS: usize = 8;

const INPUTS: [&str; MAX_INPUTS] = [
    "input1", "input2", "input3", "input4", "input5", "input6", "input7", "input8",
];

/// The list kind of a MergeVectors template: indices for `int`/`unsigned` element types,
/// reals for `double`/`float` and the Vec/Rigid types (and by default). None for others.
pub fn list_kind(template: &str) -> Option<DataKind> {
    let t = template.to_ascii_lowercase();
    let inner = t
        .trim()
        .trim_start_matches("data<")
        .trim_start_matches("vector<")
        .trim_end_matches('>');
    if inner.contains("int") || inner.contains("unsigned") {
        Some(DataKind::Ints(0))
    } else if inner.is_empty()
        || ["double", "float", "vec", "rigid", "real"]
            .iter()
            .any(|k| inner.contains(k))
    {
        Some(DataKind::Reals(0))
    } else {
        None
    }
}

/// MergeVectors: the concatenation of its inputs.
#[derive(Clone)]
pub struct MergeVectors {
    data: DataTable,
    /// Typed handle to `nbInputs`.
    nb_inputs: Data<Int>,
    /// Typed handles to the inputs and the output, of the template's kind.
    lists: Lists,
}

/// The inputs and the output of a MergeVectors, lists of reals or of indices.
#[derive(Clone, Copy, Debug)]
enum Lists {
    Reals([Data<Reals>; MAX_INPUTS], Data<Reals>),
    Ints([Data<Ints>; MAX_INPUTS], Data<Ints>),
}

/// Declare the inputs (`input1`…) and the output, lists of `kind` read as `T`.
fn declare_lists<T: DataType>(
    data: DataTable,
    kind: DataKind,
) -> (DataTable, [Data<T>; MAX_INPUTS], Data<T>) {
    let mut data = data;
    let inputs = std::array::from_fn(|k| {
        let (t, h) = std::mem::take(&mut data).declare::<T>(INPUTS[k], kind, "", "Input vector");
        data = t;
        h
    });
    let (data, output) = data.declare_output::<T>("output", kind, "Output vector");
    (data, inputs, output)
}

impl Default for MergeVectors {
    fn default() -> Self {
        Self::new(DataKind::Reals(0))
    }
}

impl MergeVectors {
    /// A merger of lists of `kind` (`DataKind::Reals(0)` or `DataKind::Ints(0)`).
    pub fn new(kind: DataKind) -> Self {
        let (data, nb_inputs) = base_data(DataTable::new()).declare::<Int>(
            "nbInputs",
            DataKind::Int,
            "2",
            "Number of input vectors",
        );
        let (data, lists) = match kind {
            DataKind::Ints(_) => {
                let (data, inputs, output) = declare_lists::<Ints>(data, kind);
                (data, Lists::Ints(inputs, output))
            }
            _ => {
                let (data, inputs, output) = declare_lists::<Reals>(data, kind);
                (data, Lists::Reals(inputs, output))
            }
        };
        MergeVectors {
            data,
            nb_inputs,
            lists,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let nb = self.data.get(self.nb_inputs);
        let n = match usize::try_from(nb) {
            Ok(n) if n <= MAX_INPUTS => n,
            _ => {
                ctx.error(format!(
                    "nbInputs = {nb} is not supported (0 to {MAX_INPUTS}): the first {MAX_INPUTS} inputs are merged"
                ));
                if nb < 0 {
                    0
                } else {
                    MAX_INPUTS
                }
            }
        };
        let ignored: Vec<&str> = (n..MAX_INPUTS)
            .filter(|&k| match self.lists {
                Lists::Reals(inputs, _) => self.data.was_set(inputs[k]),
                Lists::Ints(inputs, _) => self.data.was_set(inputs[k]),
            })
            .map(|k| INPUTS[k])
            .collect();
        if !ignored.is_empty() {
            ctx.warn(format!(
                "{} set beyond nbInputs = {n}: not merged",
                ignored.join(", ")
            ));
        }
        match self.lists {
            Lists::Ints(inputs, output) => {
                let out = inputs[..n]
                    .iter()
                    .flat_map(|&h| self.data.get(h).iter().copied())
                    .collect();
                let _ = self.data.put(output, Value::Ints(out));
            }
            Lists::Reals(inputs, output) => {
                let out = inputs[..n]
                    .iter()
                    .flat_map(|&h| self.data.get(h).iter().copied())
                    .collect();
                let _ = self.data.put(output, Value::Reals(out));
            }
        }
    }
}

impl_component!(MergeVectors, "MergeVectors", init);

impl Engine for MergeVectors {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: DataKind, attrs: &[(&str, &str)]) -> (usize, MergeVectors) {
        let mut e = MergeVectors::new(kind);
        let n = crate::engine::test_support::init_alone(&mut e, attrs);
        (n, e)
    }

    #[test]
    fn concatenates_in_order() {
        let (n, e) = run(
            DataKind::Reals(0),
            &[("input1", "1 2 3"), ("input2", "4.5 5 6")],
        );
        assert_eq!(n, 0);
        assert_eq!(e.data.reals("output"), &[1.0, 2.0, 3.0, 4.5, 5.0, 6.0]);
        let (n, e) = run(
            DataKind::Ints(0),
            &[
                ("nbInputs", "3"),
                ("input1", "4 2"),
                ("input3", "7"),
                ("input4", "9"),
            ],
        );
        // input4 is beyond nbInputs: warned about and left out
        assert_eq!(n, 1);
        assert_eq!(e.data.ints("output"), &[4, 2, 7]);
        let (n, _) = run(DataKind::Ints(0), &[("nbInputs", "9")]);
        assert_eq!(n, 1);
    }

    #[test]
    fn template_kinds() {
        assert_eq!(list_kind("Data<int>"), Some(DataKind::Ints(0)));
        assert_eq!(list_kind("vector<unsigned int>"), Some(DataKind::Ints(0)));
        assert_eq!(list_kind("Data<double>"), Some(DataKind::Reals(0)));
        assert_eq!(list_kind("Vec3d"), Some(DataKind::Reals(0)));
        assert_eq!(list_kind(""), Some(DataKind::Reals(0)));
        assert_eq!(list_kind("Data<string>"), None);
    }
}
