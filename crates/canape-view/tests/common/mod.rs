//! Test harness: a headless Chromium driven over the DevTools protocol (CDP) with tungstenite,
//! and helpers to start a viewer server on a scene.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// SOFA's shared folder beside the repository, if present.
pub fn shared_sofa() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/sofa");
    p.join("examples").is_dir().then_some(p)
}

/// Start a viewer on a scene file (paused) or on the bundled demo.
pub fn start_server(scene: Option<&Path>) -> canape_view::Server {
    let opts = canape::LoadOptions::default();
    let (name, sim) = match scene {
        Some(p) => (
            p.display().to_string(),
            canape::load_scene(p, &opts).expect("scene loads"),
        ),
        None => (
            "bundled demo".to_string(),
            canape::load_scene_str(
                canape::DEMO_SCENE,
                "demo_beam.scn",
                &std::env::temp_dir(),
                &opts,
            )
            .expect("demo loads"),
        ),
    };
    canape_view::Server::start(sim, &name, "127.0.0.1", 0, true).expect("server starts")
}

/// Where Chromium is, if installed. `CANAPE_REQUIRE_BROWSER=1` (set by .ci/run) makes its absence
/// a failure instead of a printed notice.
pub fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|n| {
            std::env::var_os("PATH")
                .map(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join(n))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .find(|p| p.is_file());
    if found.is_none() {
        if std::env::var("CANAPE_REQUIRE_BROWSER").is_ok_and(|v| v == "1") {
            panic!("CANAPE_REQUIRE_BROWSER=1 but no chromium found (apt-get install chromium)");
        }
        eprintln!("notice: no chromium on PATH: browser test not run (install Debian's chromium)");
    }
    found
}

pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next: u64,
    session: String,
    pub events: Vec<Value>,
    _profile: TempDir,
}

pub struct TempDir(pub PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    pub fn launch(exe: &Path, width: u32, height: u32) -> Browser {
        static LAUNCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = LAUNCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let profile =
            std::env::temp_dir().join(format!("canape-chromium-{}-{k}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).unwrap();
        let mut child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--no-first-run",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.display()),
                "about:blank",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium prints its DevTools address");
        let (ws, _) = tungstenite::connect(url.as_str()).expect("CDP connects");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        }
        let mut b = Browser {
            child,
            ws,
            next: 1,
            session: String::new(),
            events: Vec::new(),
            _profile: TempDir(profile),
        };
        let t = b.call_browser("Target.createTarget", json!({"url": "about:blank"}));
        let target = t["targetId"].as_str().unwrap().to_string();
        let s = b.call_browser(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        b.session = s["sessionId"].as_str().unwrap().to_string();
        for m in ["Page.enable", "Runtime.enable", "Log.enable"] {
            b.call(m, json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    fn send_recv(&mut self, mut msg: Value) -> Value {
        let id = self.next;
        self.next += 1;
        msg["id"] = json!(id);
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let m = self.ws.read().expect("CDP message");
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    panic!("CDP {}: {e}", msg["method"]);
                }
                return v["result"].clone();
            }
            if v.get("method").is_some() {
                self.events.push(v);
            }
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send_recv(json!({"method": method, "params": params}))
    }

    /// A command in the page's session.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send_recv(json!({"method": method, "params": params, "sessionId": session}))
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
    }

    /// Evaluate a JavaScript expression and return its value (JSON).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("JavaScript exception in `{expr}`: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Wait until a JavaScript expression is truthy.
    pub fn wait_for(&mut self, expr: &str, timeout: Duration) -> Value {
        self.try_wait_for(expr, timeout)
            .unwrap_or_else(|| panic!("timed out waiting for `{expr}`"))
    }

    /// Wait until a JavaScript expression is truthy; `None` after `timeout`.
    pub fn try_wait_for(&mut self, expr: &str, timeout: Duration) -> Option<Value> {
        let t0 = Instant::now();
        loop {
            let v = self.eval(expr);
            let truthy = !(v.is_null()
                || v == json!(false)
                || v == json!(0)
                || v == json!("")
                || v.is_null());
            if truthy {
                return Some(v);
            }
            if t0.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }

    pub fn mouse(&mut self, kind: &str, x: f64, y: f64, shift: bool, pressed: bool) {
        self.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": "left",
                   "buttons": if pressed { 1 } else { 0 }, "clickCount": 1,
                   "modifiers": if shift { 8 } else { 0 }}),
        );
    }

    pub fn click(&mut self, x: f64, y: f64) {
        self.mouse("mousePressed", x, y, false, true);
        self.mouse("mouseReleased", x, y, false, false);
    }

    /// Click the centre of the element a CSS selector names.
    pub fn click_selector(&mut self, sel: &str) {
        let r = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel:?}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
        ));
        let (x, y) = (
            r[0].as_f64().unwrap_or_else(|| panic!("no element {sel}")),
            r[1].as_f64().unwrap(),
        );
        self.click(x, y);
    }

    pub fn key(&mut self, key: &str, code: &str, vk: u32) {
        let text = if key.len() == 1 { key } else { "" };
        for kind in ["keyDown", "keyUp"] {
            let mut p =
                json!({"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk});
            if kind == "keyDown" && !text.is_empty() {
                p["text"] = json!(text);
            }
            self.call("Input.dispatchKeyEvent", p);
        }
    }

    pub fn insert_text(&mut self, text: &str) {
        self.call("Input.insertText", json!({"text": text}));
    }

    /// Console errors, uncaught exceptions and error log entries seen so far.
    pub fn console_errors(&mut self) -> Vec<String> {
        // drain pending events
        self.eval("1");
        self.events
            .iter()
            .filter_map(|e| {
                let m = e["method"].as_str()?;
                let p = &e["params"];
                match m {
                    "Runtime.exceptionThrown" => {
                        Some(format!("exception: {}", p["exceptionDetails"]))
                    }
                    "Runtime.consoleAPICalled" if p["type"] == "error" || p["type"] == "assert" => {
                        Some(format!("console.{}: {}", p["type"], p["args"]))
                    }
                    "Log.entryAdded" if p["entry"]["level"] == "error" => {
                        Some(format!("log: {}", p["entry"]["text"]))
                    }
                    _ => None,
                }
            })
            .collect()
    }
}

/// Decoded RGBA pixels of a PNG (width, height, data).
pub fn pixels(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    let ch = info.color_type.samples();
    let mut rgba = Vec::with_capacity((info.width * info.height * 4) as usize);
    for px in buf[..info.buffer_size()].chunks(ch) {
        match ch {
            4 => rgba.extend_from_slice(px),
            3 => rgba.extend_from_slice(&[px[0], px[1], px[2], 255]),
            _ => rgba.extend_from_slice(&[px[0], px[0], px[0], 255]),
        }
    }
    (info.width, info.height, rgba)
}

/// Distinct colours and the pixels that differ between two images, inside a rectangle.
pub fn region_stats(
    a: &(u32, u32, Vec<u8>),
    b: Option<&(u32, u32, Vec<u8>)>,
    rect: [u32; 4],
) -> (usize, usize) {
    let mut colours = std::collections::BTreeSet::new();
    let mut differ = 0;
    let [x0, y0, x1, y1] = rect;
    for y in y0..y1.min(a.1) {
        for x in x0..x1.min(a.0) {
            let k = ((y * a.0 + x) * 4) as usize;
            colours.insert([a.2[k], a.2[k + 1], a.2[k + 2]]);
            if let Some(b) = b {
                if a.2[k..k + 3] != b.2[k..k + 3] {
                    differ += 1;
                }
            }
        }
    }
    (colours.len(), differ)
}
