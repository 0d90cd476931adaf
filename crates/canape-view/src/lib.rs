//! `canape view`: watch, steer and poke a running simulation in the browser.
//!
//! The `canape` binary serves its own page (HTML, CSS and a small WebGL2 renderer written for
//! Canapé, embedded with `include_str!`: no third-party web code, no build step, no internet) and a
//! WebSocket. The simulation runs on a server thread ([`session`]); positions stream to every tab
//! as binary frames ([`scene_view`]); the page sends validated JSON commands ([`protocol`]); the
//! HTTP part is a few dozen lines on `std::net` ([`server`]).

pub mod protocol;
pub mod scene_view;
pub mod server;
pub mod session;

#[cfg(test)]
mod error_texts;

use canape::Simulation;
use session::{Session, Shared};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A running viewer server.
pub struct Server {
    pub addr: SocketAddr,
    /// Required on the WebSocket (and the page) when the server listens beyond loopback: a
    /// random token printed in the URL, as Jupyter does.
    pub token: Option<String>,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

/// Commands queued for the simulation thread at most; beyond, a client's command is refused
/// with a message (a flooding client cannot grow memory or delay the others for long).
pub const COMMAND_QUEUE: usize = 256;

/// A random token (128 bits from the standard library's per-process random hashing keys and
/// the clock).
fn random_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let part = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now);
        h.write_u64(salt);
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("{:016x}{:016x}", part(1), part(2))
}

impl Server {
    /// Start serving `sim` on `host:port` (port 0 picks a free one).
    pub fn start(
        sim: Simulation,
        scene_name: &str,
        host: &str,
        port: u16,
        paused: bool,
    ) -> std::io::Result<Server> {
        let listener = TcpListener::bind((host, port))?;
        let addr = listener.local_addr()?;
        let token = (!addr.ip().is_loopback()).then(random_token);
        let shared = Arc::new(Shared::default());
        let (tx, rx) = std::sync::mpsc::sync_channel(COMMAND_QUEUE);
        let session = Session::new(sim, scene_name.to_string(), paused);
        let s1 = shared.clone();
        let sim_thread = std::thread::Builder::new()
            .name("canape-sim".into())
            .spawn(move || session.run(s1, rx))?;
        let s2 = shared.clone();
        let tok = token.clone();
        let accept = std::thread::Builder::new()
            .name("canape-http".into())
            .spawn(move || server::accept_loop(listener, s2, tx, tok))?;
        Ok(Server {
            addr,
            token,
            shared,
            threads: vec![sim_thread, accept],
        })
    }

    /// The page's address.
    pub fn url(&self) -> String {
        let host = if self.addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else {
            match self.addr {
                SocketAddr::V6(a) => format!("[{}]", a.ip()),
                SocketAddr::V4(a) => a.ip().to_string(),
            }
        };
        match &self.token {
            Some(t) => format!("http://{host}:{}/?token={t}", self.addr.port()),
            None => format!("http://{host}:{}/", self.addr.port()),
        }
    }

    /// Number of open WebSocket connections.
    pub fn clients(&self) -> usize {
        self.shared.client_count()
    }

    /// Block until the server stops (never, unless `stop` is called from another thread).
    pub fn wait(mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// Stop the simulation and the server threads.
    pub fn stop(mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.cond.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Open a URL in the default browser (best effort; the URL is printed anyway).
pub fn open_browser(url: &str) -> bool {
    let candidates: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(target_os = "windows") {
        &["explorer"]
    } else {
        &["xdg-open", "sensible-browser"]
    };
    candidates.iter().any(|c| {
        std::process::Command::new(c)
            .arg(url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok()
    })
}
