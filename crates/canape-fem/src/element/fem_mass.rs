//! FEMMass ([`FemMass`]): the consistent mass matrix of the elements, with a density
//! interpolated from the nodal values of a NodalMassDensity.

use super::{jacobian, quadrature, shape_functions, Shape};
use crate::common::fem_inputs;
use canape_core::component::Mass;
use canape_core::data::{DataKind, DataTable, MassData, Text};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::mesh::Mesh;
use canape_core::registry::TemplateError;
use canape_core::scene::InitContext;
use canape_types::{get3, Vec3};

canape_core::data_schema! {
    /// FEMMass's own Data (after [`MassData`]).
    struct FemMassData {
        nodal_mass_density: Text = ("nodalMassDensity", DataKind::Str, "", "Link to nodal property: mass density"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// FEMMass: the consistent mass matrix of the elements, with a density interpolated from the
/// nodal values of a NodalMassDensity. Stored as node-to-node scalar entries (each a 3×3 m·I).
#[derive(Clone)]
pub struct FemMass {
    shape: Shape,
    data: DataTable,
    /// Typed handles to the Data in `data`.
    mass: MassData,
    d: FemMassData,
    /// CSR over nodes: for node a, the (b, m_ab) entries.
    ptr: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<f64>,
}

impl FemMass {
    pub fn new(template: &str) -> Result<Self, TemplateError> {
        let shape = Shape::from_template(template)?;
        if shape == Shape::Tetrahedron && !template.contains("Tetrahedron") {
            return Err(TemplateError::ElementMissing {
                class: "FEMMass".to_string(),
            });
        }
        let (data, mass) = MassData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, d) = FemMassData::declare(data);
        Ok(FemMass {
            shape,
            data,
            mass,
            d,
            ptr: Vec::new(),
            cols: Vec::new(),
            vals: Vec::new(),
        })
    }

    /// Build the mass matrix from rest positions, elements and nodal densities (init and tests).
    pub fn setup(&mut self, rest: &[f64], mesh: &Mesh, density: &dyn Fn(usize) -> f64, n: usize) {
        let mut rows: Vec<std::collections::BTreeMap<u32, f64>> = vec![Default::default(); n];
        for idx in self.shape.elements(mesh) {
            let x: Vec<Vec3> = idx.iter().map(|&i| get3(rest, i as usize)).collect();
            for (xi, w) in quadrature(self.shape) {
                let (nf, g) = shape_functions(self.shape, xi);
                let det = jacobian(&x, &g).determinant().abs();
                let rho: f64 = idx
                    .iter()
                    .zip(&nf)
                    .map(|(&i, ni)| ni * density(i as usize))
                    .sum();
                for (a, &ia) in idx.iter().enumerate() {
                    for (b, &ib) in idx.iter().enumerate() {
                        *rows[ia as usize].entry(ib).or_insert(0.0) +=
                            w * rho * det * nf[a] * nf[b];
                    }
                }
            }
        }
        self.ptr = vec![0];
        self.cols.clear();
        self.vals.clear();
        for r in rows {
            for (c, v) in r {
                self.cols.push(c);
                self.vals.push(v);
            }
            self.ptr.push(self.cols.len());
        }
    }

    /// Total mass (sum of all entries).
    pub fn total(&self) -> f64 {
        self.vals.iter().sum()
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if self.shape == Shape::Tetrahedron {
            ctx.warn("FEMMass on tetrahedra uses SOFA's one-point rule, which is not exact for the consistent mass");
        }
        // the density: linked NodalMassDensity, or the first one of the context
        let link = self.data.get(self.d.nodal_mass_density).trim().to_string();
        let scene = ctx.scene;
        let dens_id = if !link.is_empty() {
            match ctx.link_class(
                "nodalMassDensity",
                &link,
                &["NodalMassDensity"],
                "a NodalMassDensity",
            ) {
                Ok(c) => c,
                Err(e) => {
                    ctx.error(format!("{e}: the mass is invalid"));
                    return;
                }
            }
        } else {
            scene.lineage(ctx.node).into_iter().find_map(|nd| {
                scene
                    .node(nd)
                    .components
                    .iter()
                    .copied()
                    .find(|c| scene.info(*c).class == "NodalMassDensity")
            })
        };
        let Some(prop) = dens_id
            .and_then(|c| scene.component(c))
            .filter(|c| c.class_name() == "NodalMassDensity")
            .map(|c| c.data().reals("property").to_vec())
        else {
            ctx.error("no NodalMassDensity found (link 'nodalMassDensity' or one in the context): the mass is invalid");
            return;
        };
        let (has, what): (fn(&Mesh) -> bool, &str) = match self.shape {
            Shape::Tetrahedron => (|m| !m.tetrahedra.is_empty(), "tetrahedra"),
            Shape::Hexahedron => (|m| !m.hexahedra.is_empty(), "hexahedra"),
            Shape::Prism => (|m| !m.prisms.is_empty(), "prisms"),
        };
        let Some((rest, mesh)) = fem_inputs(ctx, &self.data, has, what) else {
            return;
        };
        let n = rest.len() / 3;
        let density = move |i: usize| prop.get(i).or(prop.last()).copied().unwrap_or(1.0);
        self.setup(&rest, &mesh, &density, n);
    }
}

impl_component!(FemMass, |_s| "FEMMass", init);

impl Mass for FemMass {
    fn add_gravity_force(&self, f: &mut [f64], g: &Vec3) {
        for a in 0..self.ptr.len().saturating_sub(1) {
            let m: f64 = self.vals[self.ptr[a]..self.ptr[a + 1]].iter().sum();
            for c in 0..3 {
                f[3 * a + c] += m * g[c];
            }
        }
    }
    fn add_mdx(&self, res: &mut [f64], dx: &[f64], factor: f64) {
        for a in 0..self.ptr.len().saturating_sub(1) {
            for k in self.ptr[a]..self.ptr[a + 1] {
                let b = self.cols[k] as usize;
                for c in 0..3 {
                    res[3 * a + c] += factor * self.vals[k] * dx[3 * b + c];
                }
            }
        }
    }
    fn add_m_to_matrix(&self, mat: &mut dyn MatrixSink, factor: f64, offset: usize) {
        for a in 0..self.ptr.len().saturating_sub(1) {
            for k in self.ptr[a]..self.ptr[a + 1] {
                let b = self.cols[k] as usize;
                for c in 0..3 {
                    mat.add(
                        offset + 3 * a + c,
                        offset + 3 * b + c,
                        factor * self.vals[k],
                    );
                }
            }
        }
    }
    fn rayleigh_mass(&self) -> f64 {
        self.data.get(self.mass.rayleigh_mass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::HEX_SIGNS;

    #[test]
    fn hexa_consistent_mass_of_a_box_is_exact() {
        let mut rest = Vec::new();
        for s in HEX_SIGNS {
            rest.extend_from_slice(&[(s[0] + 1.0) * 1.0, (s[1] + 1.0) * 0.5, (s[2] + 1.0) * 2.0]);
        }
        let mesh = Mesh {
            hexahedra: vec![[0, 1, 2, 3, 4, 5, 6, 7]],
            ..Default::default()
        };
        let mut m = FemMass::new("Vec3,Hexahedron").unwrap();
        m.setup(&rest, &mesh, &|_| 3.0, 8);
        let vol = 2.0 * 1.0 * 4.0;
        assert!((m.total() - 3.0 * vol).abs() < 1e-9, "{}", m.total());
        // diagonal ρV/27
        assert!((m.vals[m.ptr[0]] - 3.0 * vol / 27.0).abs() < 1e-9);
    }
}
