//! File lookup as SOFA's DataRepository does it: relative to the scene (or the included file),
//! then each folder of `SOFA_DATA_PATH` (colon-separated) and of `--data-path`, then — when the
//! scene lies in a SOFA-like tree (an ancestor holding both `share/` and `examples/`) — those two.

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
