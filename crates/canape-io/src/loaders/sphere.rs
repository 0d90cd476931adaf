//! SphereLoader and its `.sph` parser.

use super::{loader_data, read_file, scale3d, LoaderData};
use crate::error::MeshReadError;
use canape_core::component::Loader;
use canape_core::data::{DataKind, DataTable, Reals, Value};
use canape_core::mesh::flatten_points;
use canape_core::scene::InitContext;
use canape_core::state::apply_transform;

/// Parse a SOFA `.sph` sphere file: `sphe <id> x y z r` lines.
pub fn parse_sph(text: &str) -> Result<(Vec<[f64; 3]>, Vec<f64>), MeshReadError> {
    let mut pos = Vec::new();
    let mut rad = Vec::new();
    for (ln, l) in text.lines().enumerate() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.first() == Some(&"sphe") {
            if t.len() < 6 {
                return Err(MeshReadError::at_line(
                    ln + 1,
                    "'sphe' needs an index, 3 coordinates and a radius",
                ));
            }
            let v: Vec<f64> = t[2..6]
                .iter()
                .map(|x| x.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| MeshReadError::at_line(ln + 1, "bad number"))?;
            pos.push([v[0], v[1], v[2]]);
            rad.push(v[3]);
        }
    }
    Ok((pos, rad))
}

canape_core::data_schema! {
    /// What SphereLoader adds to the loader Data.
    pub struct SphereData {
        position: Reals => ("position", DataKind::Reals(3), "Sphere centers"),
        list_radius: Reals => ("listRadius", DataKind::Reals(0), "Radius of each sphere"),
    }
}

/// SphereLoader: sphere centres and radii from a `.sph` file.
#[derive(Clone)]
pub struct SphereLoader {
    data: DataTable,
    /// Typed handles to the loader Data in `data` (declared by `loader_data`).
    dl: LoaderData,
    /// Typed handles to its own Data.
    d: SphereData,
}

impl Default for SphereLoader {
    fn default() -> Self {
        Self::new()
    }
}

impl SphereLoader {
    pub fn new() -> Self {
        let (data, dl) = loader_data(DataTable::new());
        let (data, d) = SphereData::declare(data);
        SphereLoader { data, dl, d }
    }
}

impl SphereLoader {
    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(text) = read_file(ctx, &self.data, self.dl.filename) else {
            return;
        };
        match parse_sph(&text) {
            Ok((p, r)) => {
                let mut pos = flatten_points(&p);
                apply_transform(
                    &mut pos,
                    &scale3d(&self.data, self.dl),
                    self.data.get(self.dl.rotation),
                    self.data.get(self.dl.translation),
                );
                let _ = self.data.put(self.d.position, Value::Reals(pos));
                let _ = self.data.put(self.d.list_radius, Value::Reals(r));
            }
            Err(e) => ctx.error(format!(
                "cannot load '{}': {e}",
                self.data.get(self.dl.filename)
            )),
        }
    }
}

canape_core::impl_component!(SphereLoader, "SphereLoader", init);

impl Loader for SphereLoader {}
