//! Volume engines (Sofa/Component/Engine/Generate/.../VolumeFromTriangles.inl and
//! VolumeFromVolumetricElements.inl), computed at init (SOFA's `update`, a recomputation every
//! step, is reported as not supported):
//!
//! - VolumeFromTriangles: the volume enclosed by a triangle and quad surface, |Σ over triangles
//!   of the divergence term ((p1 − p0) × (p2 − p0))ₓ · (x0 + x1 + x2) / 6|, a quad counting as
//!   its triangles (q0 q1 q2) and (q0 q2 q3);
//! - VolumeFromVolumetricElements: |Σ of the tetrahedra's volumes and the hexahedra's (each the
//!   sum of six inner tetrahedra, as sofa::geometry::Hexahedron::volume splits it)|.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{Data, DataKind, DataTable, Flag, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::VecId;

#[derive(Clone)]
pub struct VolumeFromTriangles {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: VolumeData,
    /// VolumeFromVolumetricElements: tetrahedra and hexahedra instead of triangles and quads.
    volumetric: bool,
}

impl Default for VolumeFromTriangles {
    fn default() -> Self {
        Self::new()
    }
}

/// SOFA's per-triangle term (its exact expression: the x component of the edge cross product
/// times the sum of the x coordinates, over 6).
fn term(p0: &[f64], p1: &[f64], p2: &[f64]) -> f64 {
    ((p1[1] - p0[1]) * (p2[2] - p0[2]) - (p2[1] - p0[1]) * (p1[2] - p0[2]))
        * (p0[0] + p1[0] + p2[0])
        / 6.0
}

/// |(b − a) × (c − a) · (d − a)| / 6 (sofa::geometry::Tetrahedron::volume).
fn tetra_volume(a: &[f64], b: &[f64], c: &[f64], d: &[f64]) -> f64 {
    let (u, v, w) = (
        [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
        [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
        [d[0] - a[0], d[1] - a[1], d[2] - a[2]],
    );
    let cr = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    ((cr[0] * w[0] + cr[1] * w[1] + cr[2] * w[2]) / 6.0).abs()
}

/// The volume of `tetrahedra` and `hexahedra` over points `x`; None when an index is out of
/// range.
pub fn elements_volume(x: &[f64], tetrahedra: &[u32], hexahedra: &[u32]) -> Option<f64> {
    let p = |i: u32| x.get(3 * i as usize..3 * i as usize + 3);
    let mut v = 0.0;
    for t in tetrahedra.chunks_exact(4) {
        v += tetra_volume(p(t[0])?, p(t[1])?, p(t[2])?, p(t[3])?);
    }
    // SOFA's six inner tetrahedra of a hexahedron
    const SPLIT: [[usize; 4]; 6] = [
        [0, 5, 1, 6],
        [0, 1, 3, 6],
        [1, 3, 6, 2],
        [6, 3, 0, 7],
        [6, 7, 0, 5],
        [7, 5, 4, 0],
    ];
    for h in hexahedra.chunks_exact(8) {
        for [a, b, c, d] in SPLIT {
            v += tetra_volume(p(h[a])?, p(h[b])?, p(h[c])?, p(h[d])?);
        }
    }
    Some(v.abs())
}

/// The enclosed volume of `triangles` and `quads` over points `x` (3 numbers each); None when
/// an index is out of range.
pub fn enclosed_volume(x: &[f64], triangles: &[u32], quads: &[u32]) -> Option<f64> {
    let p = |i: u32| x.get(3 * i as usize..3 * i as usize + 3);
    let mut v = 0.0;
    for t in triangles.chunks_exact(3) {
        v += term(p(t[0])?, p(t[1])?, p(t[2])?);
    }
    for q in quads.chunks_exact(4) {
        v += term(p(q[0])?, p(q[1])?, p(q[2])?);
        v += term(p(q[0])?, p(q[2])?, p(q[3])?);
    }
    Some(v.abs())
}

canape_core::data_schema! {
    /// The links and positions both classes start with (after the base Data).
    pub struct VolumeInputs {
        topology: Text = ("topology", DataKind::Str, "", "link to the topology"),
        mechanical: Text = ("mechanical", DataKind::Str, "", "link to the mechanical"),
        position: Reals = ("position", DataKind::Reals(3), "", "If not set by user, find the context mechanical.") alias ["positions"],
    }
}

/// The Data of both classes: positions, the two element lists (named per class), `update`,
/// and the `volume` output (its help per class).
#[derive(Clone, Copy, Debug)]
struct VolumeData {
    inputs: VolumeInputs,
    /// The two element lists: triangles and quads, or tetrahedra and hexahedra.
    elements: [Data<Ints>; 2],
    update: Data<Flag>,
    volume: Data<Real>,
}

impl VolumeData {
    /// The Data of a class whose element lists are `names` (with their widths).
    fn declare(names: [(&'static str, usize); 2], volume_help: &'static str) -> (DataTable, Self) {
        let (mut data, inputs) = VolumeInputs::declare(base_data(DataTable::new()));
        let elements = names.map(|(name, width)| {
            let (t, h) = std::mem::take(&mut data).declare::<Ints>(
                name,
                DataKind::Ints(width),
                "",
                "If not set by user, find the context topology.",
            );
            data = t;
            h
        });
        let (data, update) = data.declare::<Flag>(
            "update",
            DataKind::Bool,
            "0",
            "If true, will update the volume at each time step of the simulation.",
        );
        let (data, volume) = data.declare_output::<Real>("volume", DataKind::Real, volume_help);
        (
            data,
            VolumeData {
                inputs,
                elements,
                update,
                volume,
            },
        )
    }
}

impl VolumeFromTriangles {
    /// VolumeFromVolumetricElements.
    pub fn volumetric() -> Self {
        let (data, d) = VolumeData::declare([("tetras", 4), ("hexas", 8)], "The computed volume.");
        VolumeFromTriangles {
            data,
            d,
            volumetric: true,
        }
    }

    pub fn new() -> Self {
        let (data, d) = VolumeData::declare(
            [("triangles", 3), ("quads", 4)],
            "The volume is only relevant if the surface is closed.",
        );
        VolumeFromTriangles {
            data,
            d,
            volumetric: false,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        if self.data.get(self.d.update) {
            ctx.warn(
                "update (a new volume every step) is not supported: the volume is the one at init",
            );
        }
        let x = if self.data.was_set(self.d.inputs.position) {
            self.data.get(self.d.inputs.position).to_vec()
        } else {
            match ctx.state() {
                Some(s) if s.dof == canape_types::DofType::Vec3 => s.vec(VecId::POSITION).to_vec(),
                _ => {
                    ctx.error("no positions given by the user and no Vec3 MechanicalObject in the context");
                    return;
                }
            }
        };
        let (ka, kb) = if self.volumetric {
            ("tetras", "hexas")
        } else {
            ("triangles", "quads")
        };
        let [a, b] = self.d.elements;
        let (mut ea, mut eb) = (self.data.get(a).to_vec(), self.data.get(b).to_vec());
        let (set_a, set_b) = (self.data.was_set(a), self.data.was_set(b));
        if !set_a || !set_b {
            match ctx.topology() {
                Some(t) => {
                    let m = t.mesh();
                    let (ma, mb): (Vec<u32>, Vec<u32>) = if self.volumetric {
                        (
                            m.tetrahedra.iter().flatten().copied().collect(),
                            m.hexahedra.iter().flatten().copied().collect(),
                        )
                    } else {
                        (
                            m.triangles.iter().flatten().copied().collect(),
                            m.quads.iter().flatten().copied().collect(),
                        )
                    };
                    if !set_a {
                        ea = ma;
                    }
                    if !set_b {
                        eb = mb;
                    }
                }
                None if !set_a && !set_b => {
                    ctx.error(format!(
                        "no {ka} or {kb} given by the user and no topology in the context"
                    ));
                    return;
                }
                None => {}
            }
        }
        if self.volumetric && ea.is_empty() && eb.is_empty() {
            ctx.error("no tetrahedra nor hexahedra: no volume to compute");
            return;
        }
        let volume = if self.volumetric {
            elements_volume(&x, &ea, &eb)
        } else {
            enclosed_volume(&x, &ea, &eb)
        };
        match volume {
            Some(v) => {
                let _ = self.data.put(self.d.volume, Value::Real(v));
            }
            None => ctx.error(format!(
                "an element uses a point beyond the {} positions",
                x.len() / 3
            )),
        }
    }
}

impl_component!(
    VolumeFromTriangles,
    |s| if s.volumetric {
        "VolumeFromVolumetricElements"
    } else {
        "VolumeFromTriangles"
    },
    init
);

impl Engine for VolumeFromTriangles {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unit cube's surface as 6 quads (outward), and as 12 triangles.
    fn cube() -> (Vec<f64>, Vec<u32>) {
        let x = vec![
            0., 0., 0., 1., 0., 0., 1., 1., 0., 0., 1., 0., 0., 0., 1., 1., 0., 1., 1., 1., 1., 0.,
            1., 1.,
        ];
        let quads = vec![
            0, 3, 2, 1, 4, 5, 6, 7, 0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7,
        ];
        (x, quads)
    }

    #[test]
    fn a_unit_cube_encloses_one() {
        let (x, quads) = cube();
        assert!((enclosed_volume(&x, &[], &quads).unwrap() - 1.0).abs() < 1e-14);
        let tris: Vec<u32> = quads
            .chunks(4)
            .flat_map(|q| [q[0], q[1], q[2], q[0], q[2], q[3]])
            .collect();
        assert!((enclosed_volume(&x, &tris, &[]).unwrap() - 1.0).abs() < 1e-14);
        // scaled by 2: volume 8, whatever the orientation (absolute value)
        let x2: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
        let flipped: Vec<u32> = quads
            .chunks(4)
            .flat_map(|q| [q[3], q[2], q[1], q[0]])
            .collect();
        assert!((enclosed_volume(&x2, &[], &flipped).unwrap() - 8.0).abs() < 1e-13);
        assert!(enclosed_volume(&x, &[0, 1, 99], &[]).is_none());
    }

    #[test]
    fn a_unit_hexahedron_and_its_tetrahedra_hold_one() {
        let (x, _) = cube();
        let hexa = [0, 1, 2, 3, 4, 5, 6, 7];
        assert!((elements_volume(&x, &[], &hexa).unwrap() - 1.0).abs() < 1e-14);
        // one corner tetrahedron: 1/6, whatever its orientation
        assert!((elements_volume(&x, &[0, 1, 3, 4], &[]).unwrap() - 1.0 / 6.0).abs() < 1e-15);
        assert!((elements_volume(&x, &[0, 3, 1, 4], &[]).unwrap() - 1.0 / 6.0).abs() < 1e-15);
        assert!(elements_volume(&x, &[0, 1, 3, 40], &[]).is_none());
    }
}
