//! File lookup as SOFA's DataRepository does it: relative to the scene (or the included file),
//! then each folder of `SOFA_DATA_PATH` (colon-separated) and of `--data-path`, then — when the
//! scene lies in a SOFA-like tree (an ancestor holding both `share/` and `examples/`) — those two.

use crate::error::FileReadError;
use std::path::{Path, PathBuf};

/// Where to look for files named in a scene.
#[derive(Clone, Debug, Default)]
pub struct FileResolver {
    pub data_paths: Vec<PathBuf>,
}

impl FileResolver {
    /// Resolver with `SOFA_DATA_PATH` from the environment plus `extra` folders.
    pub fn from_env(extra: &[PathBuf]) -> Self {
        let mut data_paths = Vec::new();
        if let Ok(v) = std::env::var("SOFA_DATA_PATH") {
            data_paths.extend(v.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
        }
        data_paths.extend(extra.iter().cloned());
        FileResolver { data_paths }
    }

    /// Candidate folders for a file referenced from `base_dir`, in lookup order.
    pub fn search_dirs(&self, base_dir: &Path) -> Vec<PathBuf> {
        // an empty base (a scene named without folder) is the working directory
        let base_dir = if base_dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base_dir
        };
        let mut dirs = vec![base_dir.to_path_buf()];
        dirs.extend(self.data_paths.iter().cloned());
        let mut cur = Some(base_dir);
        while let Some(d) = cur {
            if d.join("share").is_dir() && d.join("examples").is_dir() {
                dirs.push(d.join("share"));
                dirs.push(d.join("examples"));
                break;
            }
            cur = d.parent();
        }
        dirs
    }

    /// Resolve `name` referenced from a file in `base_dir`.
    pub fn resolve(&self, name: &str, base_dir: &Path) -> Option<PathBuf> {
        let p = Path::new(name);
        if p.is_absolute() {
            return p.is_file().then(|| p.to_path_buf());
        }
        self.search_dirs(base_dir)
            .into_iter()
            .map(|d| d.join(p))
            .find(|c| c.is_file())
    }
}

/// Largest mesh or data file a loader reads (larger ones are refused with a message rather
/// than exhausting memory).
pub const MAX_DATA_FILE_BYTES: u64 = 2 << 30;
/// Largest scene file (or included file) the reader reads.
pub const MAX_SCENE_FILE_BYTES: u64 = 256 << 20;

/// Read a whole file, refusing one larger than `cap` bytes — by its size when the file system
/// knows it, else (pipes, devices) once `cap` bytes were read.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, FileReadError> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    if f.metadata().map(|m| m.len() > cap).unwrap_or(false) {
        return Err(FileReadError::TooLarge { cap });
    }
    let mut buf = Vec::new();
    f.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(FileReadError::TooLarge { cap });
    }
    Ok(buf)
}

/// A piece of file content for a message: at most 60 characters, control characters escaped
/// (nothing read from a file reaches a terminal or a page as is).
pub fn excerpt(s: &str) -> String {
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k == 60 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    #[test]
    fn oversized_and_endless_files_are_refused() {
        let dir = std::env::temp_dir().join(format!("canape-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("mesh.obj");
        std::fs::write(&f, vec![b'v'; 1000]).unwrap();
        assert_eq!(read_capped(&f, 1000).unwrap().len(), 1000);
        let e = read_capped(&f, 999).unwrap_err();
        assert!(matches!(e, FileReadError::TooLarge { cap: 999 }), "{e:?}");
        assert!(e.to_string().contains("larger than"), "{e}");
        // a device whose size is unknown: stopped after the cap
        if Path::new("/dev/zero").exists() {
            assert!(read_capped(Path::new("/dev/zero"), 4096).is_err());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn excerpts_are_short_and_escaped() {
        let e = excerpt(&format!("\x1b[31mred\n{}", "x".repeat(500)));
        assert!(e.chars().count() <= 61 + 12, "{e}");
        assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
        assert!(e.ends_with('…'));
        assert_eq!(excerpt("$MeshFormat"), "$MeshFormat");
    }
}
