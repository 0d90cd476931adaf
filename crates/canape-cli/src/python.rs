//! Python scenes: `canape run` and `canape view` hand them to the user's interpreter with
//! Canapé's Python package.

use std::process::ExitCode;

/// A Python scene (`createScene(root)`) runs under the user's interpreter with Canapé's Python
/// package (`python -m canape run`); the interpreter is `CANAPE_PYTHON` or `python3`.
pub(crate) fn run_python(
    scene: Option<&std::path::Path>,
    steps: usize,
    threads: usize,
) -> Option<ExitCode> {
    let p = scene?;
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    if !matches!(ext.as_str(), "py" | "py3" | "pyscn" | "py3scn") {
        return None;
    }
    let python = match python_with_package(p)? {
        Ok(py) => py,
        Err(code) => return Some(code),
    };
    let status = std::process::Command::new(&python)
        .args(["-m", "canape", "run"])
        .arg(p)
        .args(["-n", &steps.to_string(), "--threads", &threads.to_string()])
        .status();
    Some(match status {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("error: cannot start {python}: {e}");
            ExitCode::from(1)
        }
    })
}

/// The interpreter for a Python scene (`CANAPE_PYTHON` or `python3`), if it can import Canapé's
/// package; otherwise the refusal, printed.
fn python_with_package(p: &std::path::Path) -> Option<Result<String, ExitCode>> {
    let python = std::env::var("CANAPE_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_package = std::process::Command::new(&python)
        .args(["-c", "import canape._native"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_package {
        eprintln!(
            "error: {} is a Python scene: it runs with Canapé's Python package, which {python} cannot import; install it with `pip install ./python` from Canapé's repository (or set CANAPE_PYTHON to an interpreter that has it)",
            p.display()
        );
        return Some(Err(ExitCode::from(2)));
    }
    Some(Ok(python))
}

/// A Python scene in the viewer: `python -m canape view` under the user's interpreter.
pub(crate) fn view_python(
    scene: Option<&std::path::Path>,
    host: &str,
    port: u16,
    no_open: bool,
    play: bool,
) -> Option<ExitCode> {
    let p = scene?;
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    if !matches!(ext.as_str(), "py" | "py3" | "pyscn" | "py3scn") {
        return None;
    }
    let python = python_with_package(p)?;
    let python = match python {
        Ok(py) => py,
        Err(code) => return Some(code),
    };
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "canape", "view"])
        .arg(p)
        .args(["--host", host, "--port", &port.to_string()]);
    if no_open {
        cmd.arg("--no-open");
    }
    if play {
        cmd.arg("--play");
    }
    Some(match cmd.status() {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("error: cannot start {python}: {e}");
            ExitCode::from(1)
        }
    })
}
