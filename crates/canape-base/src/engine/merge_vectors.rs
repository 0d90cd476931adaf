//! MergeVectors (Sofa/Component/Engine/Generate/src/sofa/component/engine/generate/
//! MergeVectors.inl): `output` is `input1`, `input2`, … `input<nbInputs>` one after the
//! other. The inputs are lists of numbers (reals, or indices for the integer templates).

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Value};
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
}

impl Default for MergeVectors {
    fn default() -> Self {
        Self::new(DataKind::Reals(0))
    }
}

impl MergeVectors {
    /// A merger of lists of `kind` (`DataKind::Reals(0)` or `DataKind::Ints(0)`).
    pub fn new(kind: DataKind) -> Self {
        let mut data = base_data(DataTable::new()).with(
            "nbInputs",
            DataKind::Int,
            "2",
            "Number of input vectors",
        );
        for name in INPUTS {
            data = data.with(name, kind, "", "Input vector");
        }
        let data = data.output("output", kind, "Output vector");
        MergeVectors { data }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let nb = self.data.int("nbInputs");
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
        let ignored: Vec<&str> = INPUTS[n..]
            .iter()
            .copied()
            .filter(|name| self.data.is_set(name))
            .collect();
        if !ignored.is_empty() {
            ctx.warn(format!(
                "{} set beyond nbInputs = {n}: not merged",
                ignored.join(", ")
            ));
        }
        let out = match self.data.field("output").map(|f| f.kind) {
            Some(DataKind::Ints(_)) => Value::Ints(
                INPUTS[..n]
                    .iter()
                    .flat_map(|name| self.data.ints(name).iter().copied())
                    .collect(),
            ),
            _ => Value::Reals(
                INPUTS[..n]
                    .iter()
                    .flat_map(|name| self.data.reals(name).iter().copied())
                    .collect(),
            ),
        };
        let _ = self.data.set_value("output", out);
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
