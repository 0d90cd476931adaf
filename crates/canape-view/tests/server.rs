//! The viewer's server without a browser: only the page's files are served (path traversal and
//! foreign hosts refused), the WebSocket refuses other origins, hostile messages are answered
//! with errors and change nothing, and several clients see the same simulation.

mod common;
use common::start_server;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

fn raw(addr: std::net::SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn status_line(resp: &str) -> &str {
    resp.lines().next().unwrap_or("")
}

#[test]
fn only_the_page_is_served() {
    let server = start_server(None);
    let a = server.addr;
    let host = format!("127.0.0.1:{}", a.port());
    let get = |path: &str| raw(a, &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n"));
    assert!(status_line(&get("/")).contains("200"));
    assert!(get("/").contains("<canvas id=\"canvas\">"));
    assert!(status_line(&get("/app.js")).contains("200"));
    for p in [
        "/../Cargo.toml",
        "/..%2f..%2fCargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/app.js/../../../../etc/passwd",
        "//etc/passwd",
        "/assets/app.js",
        "/src/lib.rs",
        "/C:/Windows/win.ini",
    ] {
        let r = get(p);
        assert!(status_line(&r).contains("404"), "{p}: {}", status_line(&r));
        assert!(
            !r.contains("[package]") && !r.contains("root:"),
            "{p} leaked a file"
        );
    }
    // other methods, foreign Host headers (DNS rebinding), garbage
    assert!(
        status_line(&raw(a, &format!("POST / HTTP/1.1\r\nHost: {host}\r\n\r\n"))).contains("405")
    );
    assert!(
        status_line(&raw(a, "GET / HTTP/1.1\r\nHost: attacker.example\r\n\r\n")).contains("421")
    );
    assert!(status_line(&raw(a, "NONSENSE\r\n\r\n")).contains("400"));
    let huge = format!(
        "GET / HTTP/1.1\r\nHost: {host}\r\nX: {}\r\n\r\n",
        "a".repeat(40_000)
    );
    assert!(status_line(&raw(a, &huge)).contains("431"));
    // the page's security headers
    let r = get("/");
    assert!(r.contains("Content-Security-Policy: default-src 'none'"));
    // a WebSocket from another site's page is refused
    let ws = raw(
        a,
        &format!("GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://attacker.example\r\n\r\n"),
    );
    assert!(status_line(&ws).contains("403"), "{}", status_line(&ws));
    server.stop();
}

type Ws = WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

fn connect(addr: std::net::SocketAddr) -> Ws {
    let (ws, _) = tungstenite::connect(format!("ws://127.0.0.1:{}/ws", addr.port())).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    }
    ws
}

/// Read until a text message of type `ty` satisfying `pred` arrives; frames are skipped.
fn until(ws: &mut Ws, ty: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(30), "no '{ty}' message");
        if let Message::Text(t) = ws.read().unwrap() {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["type"] == ty && pred(&v) {
                return v;
            }
        }
    }
}

/// Id of the first component of a class in the scene tree of the hello message.
fn find_class(node: &Value, class: &str) -> Option<u64> {
    node["components"]
        .as_array()?
        .iter()
        .find(|c| c["class"] == class)
        .and_then(|c| c["id"].as_u64())
        .or_else(|| {
            node["children"]
                .as_array()?
                .iter()
                .find_map(|n| find_class(n, class))
        })
}

fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).unwrap();
}

#[test]
fn hostile_messages_change_nothing_and_tabs_agree() {
    let server = start_server(None);
    let mut a = connect(server.addr);
    let mut b = connect(server.addr);
    let hello = until(&mut a, "hello", |_| true);
    assert!(hello["tree"]["components"].is_array());
    until(&mut a, "topology", |_| true);
    let s0 = until(&mut a, "status", |_| true);
    assert_eq!(s0["steps"], json!(0));
    assert_eq!(s0["playing"], json!(false));
    let n_components = {
        fn count(n: &Value) -> usize {
            n["components"].as_array().unwrap().len()
                + n["children"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(count)
                    .sum::<usize>()
        }
        count(&hello["tree"])
    };

    let hostile = [
        "not json".to_string(),
        "{}".into(),
        r#"{"type":"exec","cmd":"rm -rf /"}"#.into(),
        r#"{"type":"set_dt","dt":-1}"#.into(),
        r#"{"type":"set_dt","dt":"NaN"}"#.into(),
        r#"{"type":"step","x":1}"#.into(),
        r#"{"type":"select","component":4294967295}"#.into(),
        json!({"type":"set_data","component": n_components + 5,"data":"youngModulus","value":"1"})
            .to_string(),
        r#"{"type":"set_data","component":0,"data":"nope","value":"1"}"#.into(),
        r#"{"type":"set_node_data","node":1,"data":"gravity","value":"0 0 0"}"#.into(),
        r#"{"type":"set_node_data","node":0,"data":"gravity","value":"0 nan 0"}"#.into(),
        r#"{"type":"grab","origin":[0,0,0],"dir":[0,0,0]}"#.into(),
        format!(
            r#"{{"type":"set_data","component":1,"data":"x","value":"{}"}}"#,
            "9".repeat(10_000)
        ),
    ];
    for h in &hostile {
        a.send(Message::text(h.clone())).unwrap();
        let e = until(&mut a, "error", |_| true);
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{h}");
    }
    // editing a component the simulation cannot re-initialise is refused too
    let state_id = find_class(&hello["tree"], "MechanicalObject").unwrap();
    send(
        &mut a,
        json!({"type":"set_data","component":state_id,"data":"position","value":"0 0 0"}),
    );
    until(&mut a, "error", |_| true);
    // a bad value for a real Data keeps the old value
    let fem = find_class(&hello["tree"], "TetrahedronFEMForceField").unwrap();
    send(
        &mut a,
        json!({"type":"set_data","component":fem,"data":"poissonRatio","value":"0.7"}),
    );
    until(&mut a, "error", |_| true);
    send(&mut a, json!({"type":"select","component":fem}));
    let d = until(&mut a, "data", |_| true);
    let nu = d["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "poissonRatio")
        .unwrap()["value"]
        .clone();
    assert_eq!(nu, json!("0.35"), "a refused value must not stick");
    // a binary message is refused
    a.send(Message::binary(vec![1u8, 2, 3])).unwrap();
    until(&mut a, "error", |_| true);

    // nothing moved: still paused at step 0
    let s = until(&mut a, "status", |_| true);
    assert_eq!(s["steps"], json!(0));
    assert_eq!(s["time"], json!(0.0));

    // one tab steps, both see the same time
    send(&mut a, json!({"type":"step"}));
    send(&mut a, json!({"type":"step"}));
    let sa = until(&mut a, "status", |v| v["steps"] == json!(2));
    let sb = until(&mut b, "status", |v| v["steps"] == json!(2));
    assert_eq!(sa["time"], sb["time"]);
    assert!(sa["time"].as_f64().unwrap() > 0.0);
    assert_eq!(server.clients(), 2);
    // an oversize message closes only that connection
    let _ = a.send(Message::text("x".repeat(200_000)));
    send(&mut b, json!({"type":"step"}));
    until(&mut b, "status", |v| v["steps"] == json!(3));
    server.stop();
}

#[test]
fn beyond_loopback_the_page_and_socket_need_the_token() {
    let sim = canape::load_scene_str(
        canape::DEMO_SCENE,
        "demo_beam.scn",
        &std::env::temp_dir(),
        &canape::LoadOptions::default(),
    )
    .unwrap();
    let server = canape_view::Server::start(sim, "demo", "0.0.0.0", 0, true).unwrap();
    let token = server.token.clone().expect("a token beyond loopback");
    assert!(token.len() >= 32 && server.url().contains(&format!("?token={token}")));
    let a: std::net::SocketAddr = format!("127.0.0.1:{}", server.addr.port()).parse().unwrap();
    // even on loopback, even with a foreign Host (DNS rebinding), only the token opens the page
    let get =
        |path: &str, host: &str| raw(a, &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n"));
    assert!(status_line(&get("/", "attacker.example")).contains("403"));
    assert!(status_line(&get("/?token=wrong", "127.0.0.1")).contains("403"));
    assert!(status_line(&get(&format!("/?token={token}"), "192.168.1.9:80")).contains("200"));
    // the socket too
    let url = format!("ws://127.0.0.1:{}/ws", server.addr.port());
    assert!(tungstenite::connect(url.as_str()).is_err());
    let (mut ws, _) = tungstenite::connect(format!("{url}?token={token}")).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    }
    until(&mut ws, "hello", |_| true);
    drop(ws);
    server.stop();
}

#[test]
fn a_slow_request_head_is_cut_off() {
    let server = start_server(None);
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let t0 = Instant::now();
    // one header line, then silence: the server answers 408 and closes within its deadline
    s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(status_line(&out).contains("408"), "{out}");
    assert!(t0.elapsed() < Duration::from_secs(15));
    server.stop();
}

#[test]
fn nothing_runs_before_the_first_page_connects() {
    let sim = canape::load_scene_str(
        canape::DEMO_SCENE,
        "demo_beam.scn",
        &std::env::temp_dir(),
        &canape::LoadOptions::default(),
    )
    .unwrap();
    // started playing, but no page yet: no steps
    let server = canape_view::Server::start(sim, "demo", "127.0.0.1", 0, false).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let mut ws = connect(server.addr);
    let first = until(&mut ws, "status", |_| true);
    assert!(first["steps"].as_u64().unwrap() < 5, "{first}");
    // once a page is there, it runs
    let later = until(&mut ws, "status", |v| v["steps"].as_u64().unwrap() > 20);
    assert_eq!(later["playing"], true);
    drop(ws);
    server.stop();
}
