//! SOFA's WriteState format (`T= t` / `  X= …` / `  V= …`, 6 significant digits as C++ streams
//! print them), gzip-compressed, and its reader (tolerant of gzip streams without trailer).

use crate::error::StateFileError;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::{Read, Write};
use std::path::Path;

/// Format like C++ `operator<<` with the default precision (6) — `%g`.
pub fn fmt_g6(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.5e}", v);
    let (mant, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        let s = format!("{:.*}", decimals, v);
        trim_zeros(&s)
    } else {
        let m = trim_zeros(mant);
        format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// One recorded frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub time: f64,
    pub x: Vec<f64>,
    pub v: Option<Vec<f64>>,
}

/// Text of one frame.
pub fn format_frame(time: f64, x: &[f64], v: Option<&[f64]>) -> String {
    let mut s = format!("T= {}\n  X=", fmt_g6(time));
    for a in x {
        s.push(' ');
        s.push_str(&fmt_g6(*a));
    }
    s.push('\n');
    if let Some(v) = v {
        s.push_str("  V=");
        for a in v {
            s.push(' ');
            s.push_str(&fmt_g6(*a));
        }
        s.push('\n');
    }
    s
}

/// Write frames to a gzip file.
pub fn write_state_file(path: &Path, frames: &[Frame]) -> std::io::Result<()> {
    let f = create_replacing(path)?;
    let mut gz = GzEncoder::new(f, Compression::default());
    for fr in frames {
        gz.write_all(format_frame(fr.time, &fr.x, fr.v.as_deref()).as_bytes())?;
    }
    gz.finish()?;
    Ok(())
}

/// Create `path` for writing, replacing what is there: a file (or a link planted there) is
/// removed and the new file created exclusively, so nothing is ever written through a link; a
/// directory there is an error.
pub fn create_replacing(path: &Path) -> std::io::Result<std::fs::File> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(std::io::Error::other(format!(
                "{} is a directory",
                path.display()
            )))
        }
        Ok(_) => std::fs::remove_file(path)?,
        Err(_) => {}
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// A state's name made safe as a file-name part: letters, digits, '-', '_' and '.' kept, anything
/// else (path separators, control characters) replaced by '_', no leading '.', at most 100
/// characters.
pub fn file_name_part(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    while out.starts_with('.') {
        out.replace_range(0..1, "_");
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// Read a (possibly truncated) gzip file to text.
pub fn read_gz_text(path: &Path) -> std::io::Result<String> {
    let f = std::fs::File::open(path)?;
    let mut d = MultiGzDecoder::new(f);
    let mut buf = Vec::new();
    match d.read_to_end(&mut buf) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !buf.is_empty() => {}
        Err(e) => return Err(e),
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Parse WriteState text into frames.
pub fn parse_frames(text: &str) -> Result<Vec<Frame>, StateFileError> {
    let mut frames: Vec<Frame> = Vec::new();
    for (ln, l) in text.lines().enumerate() {
        let t = l.trim();
        let line = ln + 1;
        let nums = |s: &str| -> Result<Vec<f64>, StateFileError> {
            s.split_whitespace()
                .map(|x| {
                    x.parse::<f64>().map_err(|_| StateFileError::BadNumber {
                        line,
                        token: x.to_string(),
                    })
                })
                .collect()
        };
        if let Some(r) = t.strip_prefix("T=") {
            let time = r
                .trim()
                .parse::<f64>()
                .map_err(|_| StateFileError::BadTime { line })?;
            frames.push(Frame {
                time,
                x: Vec::new(),
                v: None,
            });
        } else if let Some(r) = t.strip_prefix("X=") {
            frames
                .last_mut()
                .ok_or(StateFileError::BeforeTime { line, key: "X=" })?
                .x = nums(r)?;
        } else if let Some(r) = t.strip_prefix("V=") {
            frames
                .last_mut()
                .ok_or(StateFileError::BeforeTime { line, key: "V=" })?
                .v = Some(nums(r)?);
        }
    }
    Ok(frames)
}

/// Round a value as SOFA's comparison does (print at 6 significant digits, parse back).
pub fn round6(v: f64) -> f64 {
    fmt_g6(v).parse().unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g6_matches_cpp_stream_output() {
        for (v, s) in [
            (0.495, "0.495"),
            (-0.979259, "-0.979259"),
            (2.23512345, "2.23512"),
            (1e-5, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00012345678, "0.000123457"),
            (100.0, "100"),
            (-0.0, "-0"),
            (9.9999996, "10"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(fmt_g6(v), s, "{v}");
        }
    }

    #[test]
    fn frames_round_trip() {
        let text = format_frame(0.0, &[1.0, 2.5], Some(&[0.0, -1.0]))
            + &format_frame(0.495, &[1.5, 2.0], None);
        let f = parse_frames(&text).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].v, Some(vec![0.0, -1.0]));
        assert_eq!(f[1].time, 0.495);
        assert_eq!(f[1].v, None);
    }
}
