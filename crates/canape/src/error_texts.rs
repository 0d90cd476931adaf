//! The typed errors read as the Strings they replaced (the command line, Python and tests show
//! the text).

use crate::bench::{perf_suite, PerfSuiteError};
use crate::record::{CsvError, CsvValueError};
use crate::{create_component, CreateError};
use canape_core::data::DataError;

fn texts(cases: &[(&dyn std::error::Error, &str)]) {
    for (e, text) in cases {
        assert_eq!(e.to_string(), *text);
    }
}

#[test]
fn create_errors_read_as_before() {
    let unknown = create_component("UniformMas", "", &[]).unwrap_err();
    assert!(
        matches!(&unknown, CreateError::UnknownClass { class, suggestions }
            if class == "UniformMas" && suggestions.contains(&"UniformMass")),
        "{unknown:?}"
    );
    let no_data = create_component("ConstantForceField", "", &[("forcez", "0 1 0")]).unwrap_err();
    assert!(
        matches!(&no_data, CreateError::NoData { name, suggestions, .. }
            if name == "forcez" && suggestions.contains(&"forces")),
        "{no_data:?}"
    );
    let bad = create_component("ConstantForceField", "", &[("forces", "0 a 0")]).unwrap_err();
    assert!(
        bad.to_string()
            .starts_with("ConstantForceField.forces = '0 a 0': "),
        "{bad}"
    );
    texts(&[
        (
            &CreateError::UnknownClass {
                class: "UniformMas".into(),
                suggestions: vec!["UniformMass", "DiagonalMass"],
            },
            "unknown component class 'UniformMas' (did you mean 'UniformMass' or 'DiagonalMass'?)",
        ),
        (
            &CreateError::UnknownClass {
                class: "Zzz".into(),
                suggestions: vec![],
            },
            "unknown component class 'Zzz'",
        ),
        (
            &CreateError::NoData {
                class: "ConstantForceField".into(),
                name: "forcez".into(),
                suggestions: vec!["forces"],
            },
            "ConstantForceField has no Data 'forcez' (did you mean 'forces'?)",
        ),
        (
            &CreateError::BadValue {
                class: "UniformMass".into(),
                name: "totalMass".into(),
                value: "heavy".into(),
                reason: Box::new(DataError::NotNumber("heavy".into())),
            },
            "UniformMass.totalMass = 'heavy': 'heavy' is not a number",
        ),
        (
            &CreateError::Removed {
                class: "Old".into(),
                reason: "Old was removed in SOFA v23.06".into(),
            },
            "Old was removed in SOFA v23.06",
        ),
    ]);
}

#[test]
fn record_and_bench_errors_read_as_before() {
    let missing = std::path::Path::new("/nonexistent/perf/perf.scenes");
    let e = perf_suite(missing).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot read /nonexistent/perf/perf.scenes: "),
        "{e}"
    );
    texts(&[
        (
            &PerfSuiteError::Location,
            "perf.scenes must lie in <sofa>/perf/",
        ),
        (
            &CsvError::NoData,
            "--csv needs at least one --data PATH.DATA",
        ),
        (
            &CsvError::NotDataPath {
                spec: "/beam".into(),
            },
            "'/beam' is not a Data path (write /node/object.data)",
        ),
        (
            &CsvError::NoComponent {
                spec: "@/beam/dofs.position".into(),
                path: "/beam/dofs".into(),
            },
            "'@/beam/dofs.position': no component at '/beam/dofs'",
        ),
        (
            &CsvError::Value {
                spec: "/beam/dofs.name".into(),
                source: CsvValueError::NotNumeric {
                    data: "name".into(),
                },
            },
            "'/beam/dofs.name': Data 'name' is not numeric",
        ),
        (
            &CsvValueError::NoData {
                data: "posit".into(),
            },
            "no Data 'posit'",
        ),
        (&CsvValueError::Gone, "the component is gone"),
    ]);
}
