//! The HTTP side: a small server on `std::net` that serves the page's own three files from memory
//! and upgrades `/ws` to a WebSocket (tungstenite). Nothing is read from disk, so no request can
//! reach another file; on loopback the Host header must name the server (DNS rebinding); beyond
//! loopback the page and the WebSocket need the server's random token (`?token=`), whatever the
//! connection's address; the WebSocket's Origin must be the page's own. A request head must
//! arrive within `HEAD_DEADLINE`; a WebSocket that answers no ping for `IDLE_TIMEOUT` is closed;
//! commands go through a bounded queue.

use crate::protocol::{error_message, parse_command, Command, MAX_MESSAGE};
use crate::session::Shared;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");

/// Most simultaneous connections (tabs and page loads).
const MAX_CONNECTIONS: usize = 64;
const MAX_REQUEST: usize = 16 * 1024;
/// Time a client has to send a whole request head (slow clients cannot hold slots).
const HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// A WebSocket is pinged this often; one silent (no message, no pong) for `IDLE_TIMEOUT` is
/// closed (browsers answer pings by themselves, so an open tab stays).
const PING_EVERY: Duration = Duration::from_secs(20);
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The page's files: (path, content type, body).
fn asset(path: &str) -> Option<(&'static str, &'static str)> {
    match path {
        "/" | "/index.html" => Some(("text/html; charset=utf-8", INDEX_HTML)),
        "/app.js" => Some(("text/javascript; charset=utf-8", APP_JS)),
        "/style.css" => Some(("text/css; charset=utf-8", STYLE_CSS)),
        _ => None,
    }
}

/// A parsed request head.
#[derive(Debug)]
struct Request {
    method: String,
    path: String,
    /// The `token` query parameter, if any.
    token: Option<String>,
    headers: Vec<(String, String)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(stream: &mut TcpStream) -> Result<Request, u16> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    let start = Instant::now();
    loop {
        if start.elapsed() > HEAD_DEADLINE {
            return Err(408);
        }
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(end);
            break;
        }
        if buf.len() > MAX_REQUEST {
            return Err(431);
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Err(400),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => return Err(408),
        }
    }
    let text = std::str::from_utf8(&buf).map_err(|_| 400u16)?;
    let mut lines = text.split("\r\n");
    let first = lines.next().ok_or(400u16)?;
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(400);
    };
    if !version.starts_with("HTTP/1.") {
        return Err(505);
    }
    let mut headers = Vec::new();
    for l in lines {
        let (k, v) = l.split_once(':').ok_or(400u16)?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let target = target.split('#').next().unwrap_or("");
    let (path, token) = split_token(target);
    let (path, token) = (path.to_string(), token.map(str::to_string));
    Ok(Request {
        method: method.to_string(),
        path,
        token,
        headers,
    })
}

fn respond(stream: &mut TcpStream, code: u16, reason: &str, ctype: &str, body: &[u8], extra: &str) {
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n{extra}Connection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

fn error_response(stream: &mut TcpStream, code: u16) {
    let reason = match code {
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    };
    let body = format!("{code} {reason}\n");
    respond(
        stream,
        code,
        reason,
        "text/plain; charset=utf-8",
        body.as_bytes(),
        "",
    );
}

/// Whether a Host header names this server on loopback (its bound address, 127.0.0.1,
/// localhost or [::1]).
fn host_allowed(host: &str, local: &SocketAddr) -> bool {
    let port = local.port();
    let own = match local {
        SocketAddr::V4(a) => format!("{}:{port}", a.ip()),
        SocketAddr::V6(a) => format!("[{}]:{port}", a.ip()),
    };
    [
        own,
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ]
    .iter()
    .any(|h| h.eq_ignore_ascii_case(host))
}

/// The `token` query parameter of a path, and the path without its query.
fn split_token(path: &str) -> (&str, Option<&str>) {
    match path.split_once('?') {
        Some((p, q)) => (p, q.split('&').find_map(|kv| kv.strip_prefix("token="))),
        None => (path, None),
    }
}

/// Serve one connection: a page file, or the WebSocket.
pub fn handle_connection(
    mut stream: TcpStream,
    shared: Arc<Shared>,
    commands: SyncSender<(u64, Command)>,
    local: SocketAddr,
    token: Option<&str>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let req = match read_request(&mut stream) {
        Ok(r) => r,
        Err(code) => return error_response(&mut stream, code),
    };
    let host = req.header("host").unwrap_or("").to_string();
    let (path, given) = (req.path.as_str(), req.token.as_deref());
    match token {
        // beyond loopback: the token, whatever the Host (the bind also answers on loopback)
        Some(t) => {
            if (path == "/" || path == "/index.html" || path == "/ws") && given != Some(t) {
                return error_response(&mut stream, 403);
            }
        }
        None => {
            if !host_allowed(&host, &local) {
                return error_response(&mut stream, 421);
            }
        }
    }
    if req.method != "GET" && req.method != "HEAD" {
        return error_response(&mut stream, 405);
    }
    if path == "/ws" {
        return websocket(stream, &req, &host, shared, commands);
    }
    match asset(path) {
        Some((ctype, body)) => {
            let csp = format!(
                "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws://{host}\r\n"
            );
            let body: &[u8] = if req.method == "HEAD" {
                b""
            } else {
                body.as_bytes()
            };
            respond(&mut stream, 200, "OK", ctype, body, &csp);
        }
        None => error_response(&mut stream, 404),
    }
}

fn websocket(
    mut stream: TcpStream,
    req: &Request,
    host: &str,
    shared: Arc<Shared>,
    commands: SyncSender<(u64, Command)>,
) {
    let upgrade = req
        .header("upgrade")
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    let key = req.header("sec-websocket-key");
    let version = req.header("sec-websocket-version");
    let (true, Some(key), Some("13")) = (upgrade, key, version) else {
        return error_response(&mut stream, 400);
    };
    // a page from another site may not drive the simulation
    if let Some(origin) = req.header("origin") {
        if origin != format!("http://{host}") {
            return error_response(&mut stream, 403);
        }
    }
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let _ = stream.set_read_timeout(Some(Duration::from_millis(10)));
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let mut ws = WebSocket::from_raw_socket(stream, Role::Server, Some(config));
    let (client, inbox) = shared.register();
    let _ = serve_socket(&mut ws, client, &inbox, &shared, &commands);
    shared.unregister(client);
    let _ = ws.close(None);
    let _ = ws.flush();
}

fn serve_socket(
    ws: &mut WebSocket<TcpStream>,
    client: u64,
    inbox: &std::sync::mpsc::Receiver<tungstenite::Utf8Bytes>,
    shared: &Shared,
    commands: &SyncSender<(u64, Command)>,
) -> Result<(), tungstenite::Error> {
    let (hello, mut topo_sent) = {
        let l = shared.latest.lock().expect("latest");
        (l.hello.clone(), 0u64)
    };
    ws.send(Message::Text(hello))?;
    let mut sent_seq = 0u64;
    let (mut heard, mut pinged) = (Instant::now(), Instant::now());
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        if heard.elapsed() > IDLE_TIMEOUT {
            return Ok(());
        }
        if pinged.elapsed() > PING_EVERY {
            ws.send(Message::Ping(Vec::new().into()))?;
            pinged = Instant::now();
        }
        let msg = ws.read();
        if msg.is_ok() {
            heard = Instant::now();
        }
        match msg {
            Ok(Message::Text(t)) => match parse_command(t.as_str()) {
                Ok(cmd) => match commands.try_send((client, cmd)) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => ws.send(Message::text(error_message(
                        "the simulation is busy: command dropped (too many queued)",
                    )))?,
                    Err(TrySendError::Disconnected(_)) => return Ok(()),
                },
                Err(e) => ws.send(Message::text(error_message(&e.to_string())))?,
            },
            Ok(Message::Binary(_)) => ws.send(Message::text(error_message(
                "binary messages are not accepted",
            )))?,
            Ok(Message::Close(_)) => return Ok(()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(tungstenite::Error::Capacity(_)) | Err(tungstenite::Error::Protocol(_)) => {
                // oversize or malformed frame: say so and close this connection only
                let _ = ws.send(Message::text(error_message(
                    "malformed or oversize WebSocket message: connection closed",
                )));
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        while let Ok(m) = inbox.try_recv() {
            ws.send(Message::Text(m))?;
        }
        // the latest frame only: a slow page skips frames
        let latest = {
            let l = shared.latest.lock().expect("latest");
            (l.seq > sent_seq).then(|| l.clone())
        };
        if let Some(l) = latest {
            if l.topo_version != topo_sent {
                ws.send(Message::Text(l.topology.clone()))?;
                topo_sent = l.topo_version;
            }
            // the frame first: a page that sees a status has the positions it describes
            ws.send(Message::Binary(l.frame.clone()))?;
            ws.send(Message::Text(l.status.clone()))?;
            sent_seq = l.seq;
        }
    }
}

/// Accept connections until `shared.stop` is set.
pub fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    commands: SyncSender<(u64, Command)>,
    token: Option<String>,
) {
    let local = match listener.local_addr() {
        Ok(a) => a,
        Err(_) => return,
    };
    let _ = listener.set_nonblocking(true);
    let active = Arc::new(AtomicUsize::new(0));
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                let _ = stream.set_nonblocking(false);
                if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                    error_response(&mut stream, 503);
                    continue;
                }
                active.fetch_add(1, Ordering::Relaxed);
                let (shared, commands, active) = (shared.clone(), commands.clone(), active.clone());
                let token = token.clone();
                std::thread::spawn(move || {
                    handle_connection(stream, shared, commands, local, token.as_deref());
                    active.fetch_sub(1, Ordering::Relaxed);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_pages_files_exist() {
        assert!(asset("/").is_some());
        assert!(asset("/app.js").is_some());
        for p in [
            "/../Cargo.toml",
            "/%2e%2e/etc/passwd",
            "//etc/passwd",
            "/app.js/../../x",
            "/src/lib.rs",
            "",
        ] {
            assert!(asset(p).is_none(), "{p}");
        }
    }

    #[test]
    fn host_check_on_loopback() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert!(host_allowed("127.0.0.1:8080", &local));
        assert!(host_allowed("localhost:8080", &local));
        assert!(!host_allowed("evil.example:8080", &local));
        assert!(!host_allowed("127.0.0.1:9999", &local));
        // another loopback address the server is bound to answers its own URL
        let other: SocketAddr = "127.0.0.2:8080".parse().unwrap();
        assert!(host_allowed("127.0.0.2:8080", &other));
        assert_eq!(split_token("/ws?a=1&token=abc"), ("/ws", Some("abc")));
        assert_eq!(split_token("/app.js"), ("/app.js", None));
    }
}
