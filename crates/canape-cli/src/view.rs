//! `canape view`: the scene in the browser viewer.

use crate::load::load_or_demo;
use crate::python::view_python;
use canape::LoadOptions;
use std::path::PathBuf;
use std::process::ExitCode;

#[allow(clippy::too_many_arguments)]
pub(crate) fn view(
    scene: Option<PathBuf>,
    port: u16,
    host: String,
    allow_remote: bool,
    no_open: bool,
    (paused, play): (bool, bool),
    dt: Option<f64>,
    data_path: Vec<PathBuf>,
) -> ExitCode {
    let loopback = host
        .parse::<std::net::IpAddr>()
        .map(|a| a.is_loopback())
        .unwrap_or(host == "localhost");
    if !loopback && !allow_remote {
        eprintln!("error: --host {host} listens beyond this machine's loopback: add --allow-remote to do so (the page will need the token printed in its URL)");
        return ExitCode::from(2);
    }
    if !loopback {
        eprintln!("warning: listening on {host}: anyone with the URL below (its token included) can watch and control the simulation");
    }
    let opts = LoadOptions {
        data_paths: data_path,
        dt,
        threads: 1,
    };
    if let Some(code) = view_python(scene.as_deref(), &host, port, no_open, play) {
        return code;
    }
    let Some((label, sim)) = load_or_demo(scene.as_deref(), &opts) else {
        return ExitCode::from(2);
    };
    // runSofa starts paused unless the root says animate="1"
    let paused = paused || !(play || sim.scene.animate == Some(true));
    let server = match canape_view::Server::start(sim, &label, &host, port, paused) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot listen on {host}:{port}: {e}");
            if e.kind() == std::io::ErrorKind::AddrInUse {
                eprintln!("help: another program uses this port; try --port 0 (any free port) or another number");
            }
            return ExitCode::from(2);
        }
    };
    let url = server.url();
    println!("scene: {label}");
    println!("Canapé viewer at {url}  (Ctrl-C to stop)");
    if !no_open && !canape_view::open_browser(&url) {
        println!("(no browser found to open: open the address above yourself)");
    }
    server.wait();
    ExitCode::SUCCESS
}
