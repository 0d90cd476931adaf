//! The `canape` command: run a scene headless, view it in the browser, run SOFA's regression
//! lists, benchmark scenes.
//!
//! This file holds the command line and its dispatch; each subcommand is implemented in its
//! module: `run`, `view`, `regress`, `bench` (with the scaling and falling-balls benchmarks),
//! `python` (Python scenes, run by the user's interpreter) and `load` (scene loading shared by
//! `run` and `view`).

mod bench;
mod load;
mod python;
mod regress;
mod run;
mod view;

use bench::{bench, falling, scaling};
use regress::regress;
use run::{run, Output};
use view::view;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "canape",
    version,
    about = "Canapé: SOFA scenes, simulated in Rust"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scene headless (the bundled demo beam when no scene is given).
    #[command(after_help = EXIT_CODES)]
    Run {
        scene: Option<PathBuf>,
        /// Number of steps.
        #[arg(short = 'n', long = "steps", default_value_t = 100)]
        steps: usize,
        /// Override the root dt (a positive, finite number of seconds).
        #[arg(long, value_parser = positive_dt)]
        dt: Option<f64>,
        /// Worker threads for the stiffness products (results are bit-identical run to run for a given count).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: u16,
        /// Do not run a scene that loaded with errors (parts of it dropped): exit with code 4.
        #[arg(long)]
        strict: bool,
        /// Write the states SOFA's regression test records, in SOFA's WriteState format.
        #[arg(long = "write-states")]
        write_states: Option<PathBuf>,
        /// Also record states under mappings.
        #[arg(long)]
        mapped: bool,
        /// Record before every step instead of at T=0 and the start of the last step (the final
        /// state is always recorded too).
        #[arg(long = "every-step", conflicts_with = "every")]
        every_step: bool,
        /// Record every N steps (and T=0 and the final state): the states of --write-states and
        /// the frames of --vtk. Without it, --vtk writes every step.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        every: Option<u64>,
        /// Write a VTK series per simulated state for ParaView: DIR/<k>_<name>_<frame>.vtu with
        /// the context topology's cells and the velocity, and DIR/<k>_<name>.pvd (rewritten
        /// after each frame, so a stopped run keeps what it wrote).
        #[arg(long)]
        vtk: Option<PathBuf>,
        /// Write a CSV table (time, then each number of each --data) at the moments --vtk
        /// writes frames (every step, or every N with --every), flushed row by row.
        #[arg(long, requires = "data")]
        csv: Option<PathBuf>,
        /// A Data for --csv, as a SOFA link path: /node/object.position (repeatable).
        #[arg(long, requires = "csv")]
        data: Vec<String>,
        /// Extra folders where scene files are looked up.
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// Watch, steer and poke a scene in the browser (the bundled demo when no scene is given).
    View {
        scene: Option<PathBuf>,
        /// Port (0 picks a free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Address to listen on. Anything but loopback needs --allow-remote, and the page then
        /// needs the random token printed in its URL.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Allow listening beyond loopback (anyone with the printed URL, token included, can
        /// watch and control the simulation).
        #[arg(long = "allow-remote")]
        allow_remote: bool,
        /// Do not open a browser; only print the URL.
        #[arg(long = "no-open")]
        no_open: bool,
        /// Start paused, whatever the scene says. Without --paused or --play, the scene's root
        /// `animate` decides, as in runSofa: animate="1" plays once a page connects, otherwise
        /// the simulation waits for Animate.
        #[arg(long, conflicts_with = "play")]
        paused: bool,
        /// Start playing once a page connects, whatever the scene says.
        #[arg(long)]
        play: bool,
        /// Override the root dt.
        #[arg(long)]
        dt: Option<f64>,
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// Run the scenes of a SOFA regression list and score them with SOFA's metric.
    Regress {
        list: PathBuf,
        /// Folder holding `references/` ($REGRESSION_DIR); found from the list's location if omitted.
        #[arg(long)]
        refs: Option<PathBuf>,
        /// Only scenes whose path contains one of these comma-separated patterns.
        #[arg(long)]
        only: Option<String>,
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// Time scenes per step (median, spread, phases, peak memory, linear iterations) next to SOFA's times.
    Bench {
        scenes: Vec<PathBuf>,
        /// Timed steps per scene (default: SOFA's count with --suite, else 200).
        #[arg(short = 'n', long = "steps")]
        steps: Option<usize>,
        /// Untimed steps first.
        #[arg(long, default_value_t = 10)]
        warmup: usize,
        /// Worker threads for the stiffness products.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// SOFA's perf list (`perf.scenes`): bench every scene Canapé supports.
        #[arg(long)]
        suite: Option<PathBuf>,
        /// SOFA's times on this machine kind (default: sofa-here.tsv beside the suite, or found from the scene path).
        #[arg(long = "sofa-times")]
        sofa_times: Option<PathBuf>,
        /// Write results as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Run the scaling benchmark on generated corotational beams instead (element counts,
        /// comma-separated; e.g. 10000,100000).
        #[arg(long, value_delimiter = ',')]
        scaling: Vec<usize>,
        /// With --scaling: only these element kinds (tetra, hexa; comma-separated).
        #[arg(
            long = "scaling-elements",
            value_delimiter = ',',
            default_value = "tetra,hexa"
        )]
        scaling_elements: Vec<String>,
        /// With --scaling: only these solvers (cg, direct; comma-separated).
        #[arg(
            long = "scaling-solvers",
            value_delimiter = ',',
            default_value = "cg,direct"
        )]
        scaling_solvers: Vec<String>,
        /// Run the collision scaling benchmark instead: N balls, each with its own solver,
        /// falling on a floor and piling up (counts, comma-separated; e.g. 100,1000).
        #[arg(long, value_delimiter = ',')]
        falling: Vec<usize>,
        #[arg(long = "data-path")]
        data_path: Vec<PathBuf>,
    },
    /// List the component classes a scene can name: role, implementing file, description.
    Components {
        /// Print docs/components.md (a Markdown table) instead of a plain list.
        #[arg(long)]
        markdown: bool,
        /// Print every class's Data (name, kind, default or output, aliases, help), or only
        /// CLASS's.
        #[arg(long, value_name = "CLASS", num_args = 0..=1, default_missing_value = "")]
        data: Option<String>,
    },
}

/// Exit codes of `canape run`, shown in its --help.
const EXIT_CODES: &str = "Exit codes:
  0  the scene loaded cleanly and ran every step
  1  the scene could not be loaded at all, or the states could not be written
  2  bad arguments
  3  the simulation diverged (stopped at that step; the states recorded so far are written)
  4  parts of the scene were not loaded (errors above; the rest ran, as in SOFA), or --strict refused to run";

/// Why a `--dt` value was refused (clap shows it after the argument).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum DtArgError {
    #[error("'{0}' is not a number")]
    NotANumber(String),
    #[error("dt must be a positive, finite number of seconds ({0} given)")]
    NotPositive(String),
}

fn positive_dt(s: &str) -> Result<f64, DtArgError> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| DtArgError::NotANumber(s.to_string()))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(DtArgError::NotPositive(s.to_string()))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        None => run(None, 100, None, 1, false, Output::default(), Vec::new()),
        Some(Cmd::Run {
            scene,
            steps,
            dt,
            threads,
            strict,
            write_states,
            mapped,
            every_step,
            every,
            vtk,
            csv,
            data,
            data_path,
        }) => run(
            scene,
            steps,
            dt,
            threads as usize,
            strict,
            Output {
                write_states,
                mapped,
                every_step,
                every: every.map(|n| n as usize),
                vtk,
                csv,
                data,
            },
            data_path,
        ),
        Some(Cmd::View {
            scene,
            port,
            host,
            allow_remote,
            no_open,
            paused,
            play,
            dt,
            data_path,
        }) => view(
            scene,
            port,
            host,
            allow_remote,
            no_open,
            (paused, play),
            dt,
            data_path,
        ),
        Some(Cmd::Components { markdown, data }) => {
            if let Some(class) = data {
                let only = (!class.is_empty()).then_some(class.as_str());
                let tables = canape::registry::data_tables(only);
                if tables.is_empty() {
                    eprintln!(
                        "no component class named '{class}' (`canape components` lists them)"
                    );
                    return ExitCode::from(2);
                }
                print!("{tables}");
            } else if markdown {
                print!("{}", canape::registry::components_markdown());
            } else {
                for c in canape::registry::class_index() {
                    println!(
                        "{:<44} {:<20} {}{}",
                        c.class,
                        c.role,
                        c.file.as_deref().unwrap_or("-"),
                        if c.inert { "  (passive)" } else { "" }
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Some(Cmd::Regress {
            list,
            refs,
            only,
            data_path,
        }) => regress(list, refs, only, data_path),
        Some(Cmd::Bench {
            scenes,
            steps,
            warmup,
            threads,
            suite,
            sofa_times,
            json,
            data_path,
            scaling: sizes,
            scaling_elements,
            scaling_solvers,
            falling: balls,
        }) => {
            if !balls.is_empty() {
                falling(&balls, steps.unwrap_or(100))
            } else if sizes.is_empty() {
                bench(
                    scenes, steps, warmup, threads, suite, sofa_times, json, data_path,
                )
            } else {
                scaling(
                    &sizes,
                    steps.unwrap_or(5),
                    &scaling_elements,
                    &scaling_solvers,
                    threads,
                )
            }
        }
    }
}

#[cfg(test)]
mod error_texts {
    //! The typed errors read as the Strings they replaced (clap shows the text).

    use super::{positive_dt, DtArgError};

    #[test]
    fn dt_errors_read_as_before() {
        assert_eq!(
            positive_dt("fast"),
            Err(DtArgError::NotANumber("fast".into()))
        );
        assert_eq!(
            positive_dt("fast").unwrap_err().to_string(),
            "'fast' is not a number"
        );
        assert_eq!(
            positive_dt(" -0.01").unwrap_err().to_string(),
            "dt must be a positive, finite number of seconds ( -0.01 given)"
        );
        assert_eq!(positive_dt("0.02"), Ok(0.02));
    }
}
