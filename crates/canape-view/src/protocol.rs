//! Messages between the page and the server.
//!
//! The page sends small JSON commands; every one is validated here (known type, known fields
//! only, types, finite numbers, sizes, ranges that do not need the scene) before it reaches the
//! simulation thread. A message that fails is answered with an `error` message and changes
//! nothing. The server sends JSON text (hello, topology, status, Data, notices, errors) and binary
//! frames of positions (see `scene_view::encode_frame`).

use serde_json::{Map, Value};

/// Largest message the page may send (bytes).
pub const MAX_MESSAGE: usize = 64 * 1024;
/// Longest Data value text accepted.
const MAX_TEXT: usize = 4096;

/// A validated command from the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Play,
    Pause,
    Step,
    Reset,
    SetDt(f64),
    SetRealtime(bool),
    /// Show a component's Data.
    Select(u32),
    /// Show a node's context Data (gravity, dt).
    SelectNode(u32),
    SetData {
        component: u32,
        data: String,
        value: String,
    },
    SetNodeData {
        node: u32,
        data: String,
        value: String,
    },
    /// Start pulling the surface point under a ray (world origin and direction).
    Grab {
        origin: [f64; 3],
        dir: [f64; 3],
    },
    /// Move the pulled point's target along a new ray.
    Drag {
        origin: [f64; 3],
        dir: [f64; 3],
    },
    Release,
    SetGrabStiffness(f64),
    /// A key pressed (`down`) or released with Ctrl held: sent to the scene's controllers as
    /// SOFA's runSofa does (KeypressedEvent / KeyreleasedEvent).
    Key {
        key: char,
        down: bool,
    },
    /// Plot one number of a component's Data over time (`index` into its values); replaces the
    /// previous watch (one per viewer session).
    Watch {
        component: u32,
        data: String,
        index: u32,
    },
    /// Stop the plot.
    Unwatch,
}

/// Why a message from the page was refused. The Display text is what the page is sent.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The message is longer than [`MAX_MESSAGE`].
    #[error("message too large")]
    TooLarge,
    /// The message is not JSON (the Display text carries the parser's).
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("a command must be a JSON object")]
    NotAnObject,
    #[error("a command needs a string 'type'")]
    MissingType,
    #[error("unknown command type '{shown}'")]
    UnknownCommand {
        /// The type's first 40 characters.
        shown: String,
    },
    #[error("unexpected field '{shown}' in '{command}'")]
    UnexpectedField {
        /// The field's first 40 characters.
        shown: String,
        command: String,
    },
    #[error("missing field '{name}'")]
    MissingField { name: &'static str },
    #[error("'{name}' must be a number")]
    NotANumber { name: &'static str },
    #[error("'{name}' must be finite")]
    NotFinite { name: &'static str },
    #[error("'{name}' must be a non-negative integer")]
    NotAnId { name: &'static str },
    #[error("'{name}' must be a string")]
    NotText { name: &'static str },
    #[error("'{name}' is longer than {max} bytes")]
    TextTooLong { name: &'static str, max: usize },
    #[error("'{name}' contains control characters")]
    ControlCharacters { name: &'static str },
    #[error("'{name}' must be a boolean")]
    NotABoolean { name: &'static str },
    #[error("'{name}' must be one character")]
    NotOneCharacter { name: &'static str },
    #[error("'{name}' must be an array of 3 numbers")]
    NotAVector { name: &'static str },
    #[error("'{name}' must hold 3 finite numbers")]
    NonFiniteVector { name: &'static str },
    #[error("'{name}' must be a non-zero direction")]
    ZeroDirection { name: &'static str },
    /// A number outside the interval the command accepts (`range` as shown, e.g. "(0, 10]").
    #[error("'{name}' must be in {range}")]
    OutOfRange {
        name: &'static str,
        range: &'static str,
    },
}

fn field<'a>(o: &'a Map<String, Value>, name: &'static str) -> Result<&'a Value, ProtocolError> {
    o.get(name).ok_or(ProtocolError::MissingField { name })
}

fn number(o: &Map<String, Value>, name: &'static str) -> Result<f64, ProtocolError> {
    let v = field(o, name)?
        .as_f64()
        .ok_or(ProtocolError::NotANumber { name })?;
    if !v.is_finite() {
        return Err(ProtocolError::NotFinite { name });
    }
    Ok(v)
}

fn id(o: &Map<String, Value>, name: &'static str) -> Result<u32, ProtocolError> {
    field(o, name)?
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or(ProtocolError::NotAnId { name })
}

fn text(o: &Map<String, Value>, name: &'static str) -> Result<String, ProtocolError> {
    let s = field(o, name)?
        .as_str()
        .ok_or(ProtocolError::NotText { name })?;
    if s.len() > MAX_TEXT {
        return Err(ProtocolError::TextTooLong {
            name,
            max: MAX_TEXT,
        });
    }
    if s.chars().any(|c| c.is_control() && c != '\t') {
        return Err(ProtocolError::ControlCharacters { name });
    }
    Ok(s.to_string())
}

fn boolean(o: &Map<String, Value>, name: &'static str) -> Result<bool, ProtocolError> {
    field(o, name)?
        .as_bool()
        .ok_or(ProtocolError::NotABoolean { name })
}

fn vec3(o: &Map<String, Value>, name: &'static str) -> Result<[f64; 3], ProtocolError> {
    let a = field(o, name)?
        .as_array()
        .filter(|a| a.len() == 3)
        .ok_or(ProtocolError::NotAVector { name })?;
    let mut out = [0.0; 3];
    for (k, v) in a.iter().enumerate() {
        out[k] = v
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or(ProtocolError::NonFiniteVector { name })?;
    }
    Ok(out)
}

fn ray(o: &Map<String, Value>) -> Result<([f64; 3], [f64; 3]), ProtocolError> {
    let origin = vec3(o, "origin")?;
    let dir = vec3(o, "dir")?;
    let n = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
    if n.is_nan() || n <= 1e-12 {
        return Err(ProtocolError::ZeroDirection { name: "dir" });
    }
    Ok((origin, dir.map(|v| v / n)))
}

/// Parse and validate one text message from the page.
pub fn parse_command(msg: &str) -> Result<Command, ProtocolError> {
    if msg.len() > MAX_MESSAGE {
        return Err(ProtocolError::TooLarge);
    }
    let v: Value = serde_json::from_str(msg).map_err(ProtocolError::NotJson)?;
    let o = v.as_object().ok_or(ProtocolError::NotAnObject)?;
    let ty = o
        .get("type")
        .and_then(Value::as_str)
        .ok_or(ProtocolError::MissingType)?;
    let (allowed, cmd): (&[&str], Command) = match ty {
        "play" => (&[], Command::Play),
        "pause" => (&[], Command::Pause),
        "step" => (&[], Command::Step),
        "reset" => (&[], Command::Reset),
        "release" => (&[], Command::Release),
        "unwatch" => (&[], Command::Unwatch),
        "watch" => (
            &["component", "data", "index"],
            Command::Watch {
                component: id(o, "component")?,
                data: text(o, "data")?,
                index: id(o, "index")?,
            },
        ),
        "set_dt" => {
            let dt = number(o, "dt")?;
            if !(dt > 0.0 && dt <= 10.0) {
                return Err(ProtocolError::OutOfRange {
                    name: "dt",
                    range: "(0, 10]",
                });
            }
            (&["dt"], Command::SetDt(dt))
        }
        "key" => {
            let k = text(o, "key")?;
            let mut chars = k.chars();
            let (Some(key), None) = (chars.next(), chars.next()) else {
                return Err(ProtocolError::NotOneCharacter { name: "key" });
            };
            let down = boolean(o, "down")?;
            (&["key", "down"], Command::Key { key, down })
        }
        "set_realtime" => {
            let on = boolean(o, "on")?;
            (&["on"], Command::SetRealtime(on))
        }
        "select" => (&["component"], Command::Select(id(o, "component")?)),
        "select_node" => (&["node"], Command::SelectNode(id(o, "node")?)),
        "set_data" => (
            &["component", "data", "value"],
            Command::SetData {
                component: id(o, "component")?,
                data: text(o, "data")?,
                value: text(o, "value")?,
            },
        ),
        "set_node_data" => (
            &["node", "data", "value"],
            Command::SetNodeData {
                node: id(o, "node")?,
                data: text(o, "data")?,
                value: text(o, "value")?,
            },
        ),
        "grab" => {
            let (origin, dir) = ray(o)?;
            (&["origin", "dir"], Command::Grab { origin, dir })
        }
        "drag" => {
            let (origin, dir) = ray(o)?;
            (&["origin", "dir"], Command::Drag { origin, dir })
        }
        "set_grab_stiffness" => {
            let k = number(o, "stiffness")?;
            if !(0.0..=1e12).contains(&k) {
                return Err(ProtocolError::OutOfRange {
                    name: "stiffness",
                    range: "[0, 1e12]",
                });
            }
            (&["stiffness"], Command::SetGrabStiffness(k))
        }
        other => {
            let shown: String = other.chars().take(40).collect();
            return Err(ProtocolError::UnknownCommand { shown });
        }
    };
    if let Some(extra) = o
        .keys()
        .find(|k| *k != "type" && !allowed.contains(&k.as_str()))
    {
        let shown: String = extra.chars().take(40).collect();
        return Err(ProtocolError::UnexpectedField {
            shown,
            command: ty.to_string(),
        });
    }
    Ok(cmd)
}

/// An error message for the page.
pub fn error_message(msg: &str) -> String {
    serde_json::json!({"type": "error", "message": msg}).to_string()
}

/// An edit the simulation refused: the page reverts the field and shows why next to it.
pub fn refused_message(target: &str, id: u32, data: &str, why: &str) -> String {
    serde_json::json!({"type": "refused", "target": target, "id": id, "data": data, "message": why})
        .to_string()
}

/// A notice (information) for the page.
pub fn notice_message(msg: &str) -> String {
    serde_json::json!({"type": "notice", "message": msg}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_commands_parse_and_check_their_fields() {
        assert_eq!(
            parse_command(r#"{"type":"watch","component":3,"data":"position","index":70}"#).ok(),
            Some(Command::Watch {
                component: 3,
                data: "position".into(),
                index: 70
            })
        );
        assert_eq!(
            parse_command(r#"{"type":"unwatch"}"#).ok(),
            Some(Command::Unwatch)
        );
        for bad in [
            r#"{"type":"watch","component":3,"data":"position","index":-1}"#,
            r#"{"type":"watch","component":3,"data":"position"}"#,
            r#"{"type":"watch","component":3,"data":7,"index":0}"#,
            r#"{"type":"unwatch","index":0}"#,
        ] {
            assert!(parse_command(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn valid_commands_parse() {
        assert_eq!(
            parse_command(r#"{"type":"play"}"#).ok(),
            Some(Command::Play)
        );
        assert_eq!(
            parse_command(r#"{"type":"set_dt","dt":0.02}"#).ok(),
            Some(Command::SetDt(0.02))
        );
        assert_eq!(
            parse_command(
                r#"{"type":"set_data","component":3,"data":"youngModulus","value":"2000"}"#
            )
            .ok(),
            Some(Command::SetData {
                component: 3,
                data: "youngModulus".into(),
                value: "2000".into()
            })
        );
        assert_eq!(
            parse_command(r#"{"type":"key","key":"a","down":true}"#).ok(),
            Some(Command::Key {
                key: 'a',
                down: true
            })
        );
        assert!(parse_command(r#"{"type":"key","key":"ab","down":true}"#).is_err());
        match parse_command(r#"{"type":"grab","origin":[0,0,10],"dir":[0,0,-2]}"#) {
            Ok(Command::Grab { dir, .. }) => assert_eq!(dir, [0.0, 0.0, -1.0]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refusals_read_as_the_page_is_told() {
        let long = format!(
            r#"{{"type":"set_data","component":1,"data":"x","value":"{}"}}"#,
            "1".repeat(5000)
        );
        let huge = "x".repeat(MAX_MESSAGE + 1);
        for (msg, text) in [
            (huge.as_str(), "message too large"),
            ("[]", "a command must be a JSON object"),
            (r#"{"type":42}"#, "a command needs a string 'type'"),
            (r#"{"type":"shutdown"}"#, "unknown command type 'shutdown'"),
            (
                r#"{"type":"play","extra":1}"#,
                "unexpected field 'extra' in 'play'",
            ),
            (r#"{"type":"set_dt"}"#, "missing field 'dt'"),
            (r#"{"type":"set_dt","dt":"0.1"}"#, "'dt' must be a number"),
            (r#"{"type":"set_dt","dt":-1}"#, "'dt' must be in (0, 10]"),
            (
                r#"{"type":"set_grab_stiffness","stiffness":-5}"#,
                "'stiffness' must be in [0, 1e12]",
            ),
            (
                r#"{"type":"select","component":-1}"#,
                "'component' must be a non-negative integer",
            ),
            (
                r#"{"type":"watch","component":3,"data":7,"index":0}"#,
                "'data' must be a string",
            ),
            (long.as_str(), "'value' is longer than 4096 bytes"),
            (
                r#"{"type":"set_data","component":1,"data":"a\u0000b","value":"1"}"#,
                "'data' contains control characters",
            ),
            (
                r#"{"type":"key","key":"ab","down":true}"#,
                "'key' must be one character",
            ),
            (
                r#"{"type":"set_realtime","on":"yes"}"#,
                "'on' must be a boolean",
            ),
            (
                r#"{"type":"grab","origin":[0,0],"dir":[0,0,1]}"#,
                "'origin' must be an array of 3 numbers",
            ),
            (
                r#"{"type":"grab","origin":[0,0,"x"],"dir":[0,0,1]}"#,
                "'origin' must hold 3 finite numbers",
            ),
            (
                r#"{"type":"grab","origin":[0,0,0],"dir":[0,0,0]}"#,
                "'dir' must be a non-zero direction",
            ),
        ] {
            assert_eq!(parse_command(msg).unwrap_err().to_string(), text, "{msg}");
        }
        let e = parse_command("{").unwrap_err().to_string();
        let parser = serde_json::from_str::<Value>("{").unwrap_err();
        assert_eq!(e, format!("not JSON: {parser}"));
    }

    #[test]
    fn hostile_or_malformed_commands_are_refused() {
        let bad = [
            "",
            "null",
            "[]",
            "{}",
            r#"{"type":42}"#,
            r#"{"type":"shutdown"}"#,
            r#"{"type":"eval","code":"1"}"#,
            r#"{"type":"play","extra":1}"#,
            r#"{"type":"set_dt","dt":-1}"#,
            r#"{"type":"set_dt","dt":"0.1"}"#,
            r#"{"type":"set_dt","dt":1e400}"#,
            r#"{"type":"set_dt"}"#,
            r#"{"type":"select","component":-1}"#,
            r#"{"type":"select","component":1.5}"#,
            r#"{"type":"select","component":99999999999}"#,
            r#"{"type":"grab","origin":[0,0],"dir":[0,0,1]}"#,
            r#"{"type":"grab","origin":[0,0,0],"dir":[0,0,0]}"#,
            r#"{"type":"grab","origin":[0,0,"x"],"dir":[0,0,1]}"#,
            r#"{"type":"set_data","component":1,"data":"a\u0000b","value":"1"}"#,
            r#"{"type":"set_grab_stiffness","stiffness":-5}"#,
            r#"{"type":"set_realtime","on":"yes"}"#,
        ];
        for b in bad {
            assert!(parse_command(b).is_err(), "accepted: {b}");
        }
        let long = format!(
            r#"{{"type":"set_data","component":1,"data":"x","value":"{}"}}"#,
            "1".repeat(5000)
        );
        assert!(parse_command(&long).is_err());
        let huge = "x".repeat(MAX_MESSAGE + 1);
        assert!(parse_command(&huge).is_err());
    }
}
