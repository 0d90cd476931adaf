//! SpringForceField (SOFA's StiffSpringForceField is the same component): springs between points
//! of the node's state, with the geometric stiffness term
//! (Sofa/Component/SolidMechanics/Spring/src/sofa/component/solidmechanics/spring/SpringForceField.inl).
//! Per spring: F = ks·(d − L0) + kd·(û·(v_b − v_a)); tangent D = (ks − F/d)·ûûᵀ + (F/d)·I.
//!
//! This file holds SpringForceField itself: its springs from the `spring` list or from
//! `indices1`/`indices2`, within one state or between two (`pair_ends`), and the force loops.
//! The classes that build their springs from a topology add theirs in `bending`
//! (TriangleBendingSprings, QuadBendingSprings, QuadularBendingSprings), `grid`
//! (RegularGridSpringForceField) and `mesh` (MeshSpringForceField).

mod bending;
mod grid;
mod mesh;
mod pair_ends;
#[cfg(test)]
mod tests;

pub use pair_ends::PairEnds;

use bending::QuadBendingData;
use grid::GridSpringData;
use mesh::MeshSpringData;

use canape_core::component::{ForceField, Reaction};
use canape_core::data::{
    ChangedData, Data, DataKind, DataTable, ForceFieldData, Int, Ints, Real, Reals, Text, Words,
};
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3, Vec3};

#[derive(Clone, Copy, Debug)]
struct Spring {
    a: usize,
    b: usize,
    ks: f64,
    kd: f64,
    l0: f64,
    elongation_only: bool,
    enabled: bool,
}

canape_core::data_schema! {
    /// SpringForceField's own Data (after the force-field Data); the other spring classes add
    /// theirs after these.
    struct SpringData {
        spring: Reals = ("spring", DataKind::Reals(5), "", "pairs of indices, stiffness, damping, rest length"),
        stiffness: Reals = ("stiffness", DataKind::Reals(0), "100", "uniform stiffness for the all springs"),
        damping: Reals = ("damping", DataKind::Reals(0), "5", "uniform damping for the all springs"),
        lengths: Reals = ("lengths", DataKind::Reals(0), "", "List of lengths to create the springs. Must have the same than indices1 & indices2, or if only one element, it will be applied to all springs. If empty, 0 will be applied everywhere") alias ["length"],
        indices1: Ints = ("indices1", DataKind::Ints(0), "", "Indices of the source points on the first model"),
        indices2: Ints = ("indices2", DataKind::Ints(0), "", "Indices of the fixed points on the second model"),
        elongation_only: Words = ("elongationOnly", DataKind::Words, "", "///< Whether the spring only acts when elongated"),
        enabled: Words = ("enabled", DataKind::Words, "", "///< Whether each spring is enabled"),
        object1: Text = ("object1", DataKind::Str, "", "First object associated to this component"),
        object2: Text = ("object2", DataKind::Str, "", "Second object associated to this component"),
        show_arrow_size: Real = ("showArrowSize", DataKind::Real, "0.01", "size of the axis"),
        draw_mode: Int = ("drawMode", DataKind::Int, "0", "The way the springs will be drawn"),
        file_springs: Text = ("fileSprings", DataKind::File, "", "File describing the springs"),
    }
}

/// The typed handles of a [`SpringForceField`]'s Data.
#[derive(Clone, Copy, Debug)]
struct Handles {
    ff: ForceFieldData,
    s: SpringData,
    /// RegularGridSpringForceField's.
    grid: Option<GridSpringData>,
    /// QuadBendingSprings's.
    quad_bending: Option<QuadBendingData>,
    /// MeshSpringForceField's.
    mesh: Option<MeshSpringData>,
}

#[derive(Clone)]
pub struct SpringForceField {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    h: Handles,
    springs: Vec<Spring>,
    /// Tangent block of each spring from the last add_force.
    d: Vec<Mat3>,
    rayleigh: f64,
    /// MeshSpringForceField: springs built from the topology's elements.
    mesh: bool,
    /// RegularGridSpringForceField: springs along the grid's lines, face and cube diagonals.
    grid: bool,
    /// QuadBendingSprings: springs across the edges shared by quads.
    quad_bending: bool,
    /// TriangleBendingSprings: springs across the edges shared by two triangles.
    triangle_bending: bool,
    /// QuadularBendingSprings: two springs per edge shared by two quads.
    quadular: bool,
    /// Between two different states: (object1, object2, object1's point count).
    pair: Option<(
        canape_core::scene::ComponentId,
        canape_core::scene::ComponentId,
        usize,
    )>,
}

impl Default for SpringForceField {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a spring force field cannot build its springs (from its Data or its context topology).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpringSetupError {
    #[error("no MechanicalObject in the context")]
    NoState,
    /// The context state is not Vec3 (`class` is the component's class).
    #[error("{class} acts on Vec3d states; the context state is {dof}")]
    NotVec3 {
        class: &'static str,
        dof: &'static str,
    },
    #[error("spring {spring} has a negative index")]
    NegativeIndex { spring: usize },
    #[error("indices1 has {indices1} entries but indices2 has {indices2}")]
    IndexCounts { indices1: usize, indices2: usize },
    /// A listed spring's end beyond its state (one state).
    #[error("a spring joins points {a} and {b}, but the state has {points} points")]
    PointBeyondState { a: usize, b: usize, points: usize },
    /// A listed spring's end beyond its object (between two states).
    #[error(
        "a spring joins point {a} of object1 ({na} points) and point {b} of object2 ({nb} points)"
    )]
    PointBeyondObjects {
        a: usize,
        na: usize,
        b: usize,
        nb: usize,
    },
    #[error("no topology in the context: the springs are built from its elements")]
    NoTopology,
    #[error("no topology with quads in the context")]
    NoQuads,
    #[error("no topology with triangles or quads in the context")]
    NoFaces,
    #[error("the topology uses point {max}, but the state has {points} points")]
    TopologyBeyondState { max: u32, points: usize },
    #[error("the quads use points beyond the state's {points} points")]
    QuadsBeyondState { points: usize },
    #[error("the faces use points beyond the state's {points} points")]
    FacesBeyondState { points: usize },
}

/// The context state, when it is Vec3 (the springs built from a topology are 3D): the error
/// names the component and the state's type otherwise.
fn vec3_state<'a>(
    ctx: &InitContext<'a>,
    class: &'static str,
) -> Result<&'a canape_core::state::MechanicalObject, SpringSetupError> {
    let Some(st) = ctx.state() else {
        return Err(SpringSetupError::NoState);
    };
    if st.dof != canape_types::DofType::Vec3 {
        return Err(SpringSetupError::NotVec3 {
            class,
            dof: st.dof.name(),
        });
    }
    Ok(st)
}

impl SpringForceField {
    pub fn new() -> Self {
        let (data, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        let (data, s) = SpringData::declare(data);
        SpringForceField {
            data,
            h: Handles {
                ff,
                s,
                grid: None,
                quad_bending: None,
                mesh: None,
            },
            springs: Vec::new(),
            d: Vec::new(),
            rayleigh: 0.0,
            mesh: false,
            grid: false,
            quad_bending: false,
            triangle_bending: false,
            quadular: false,
            pair: None,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        self.pair = None;
        self.springs.clear();
        if let Some(h) = self.h.mesh {
            if let Err(e) = self.springs_from_mesh(ctx, h) {
                ctx.error(e.to_string());
            }
            return;
        }
        if self.quad_bending {
            if let Err(e) = self.springs_from_quads(ctx) {
                ctx.error(e.to_string());
            }
            return;
        }
        if self.triangle_bending {
            if let Err(e) = self.springs_from_triangles(ctx) {
                ctx.error(e.to_string());
            }
            return;
        }
        if self.quadular {
            if let Err(e) = self.springs_from_quadular(ctx) {
                ctx.error(e.to_string());
            }
            return;
        }
        let objects = [
            self.data.get(self.h.s.object1),
            self.data.get(self.h.s.object2),
        ];
        let Some(ends) = PairEnds::resolve_links(
            ctx,
            objects,
            canape_types::DofType::Vec3,
            "SpringForceField<Vec3>",
        ) else {
            return;
        };
        let (na, nb) = (ends.sizes[0], ends.sizes[1]);
        if ends.pair {
            self.pair = Some((ends.states[0], ends.states[1], na));
        }
        if let Err(e) = self.setup_pair(na, nb) {
            ctx.error(e.to_string());
        }
        if let Some(g) = self.h.grid {
            if ends.pair {
                ctx.warn("between two states the grid springs are not built (SOFA neither): only the listed springs act");
            } else {
                self.springs_from_grid(ctx, g);
            }
        }
    }

    /// Build the springs from Data for a state of `n` points (used by init and tests).
    pub fn setup_from_data(&mut self, n: usize) -> Result<(), SpringSetupError> {
        self.pair = None;
        self.setup_pair(n, n)
    }

    /// Build the springs from Data, their first ends among `na` points of object1 and their
    /// second ends among `nb` points of object2. Between two states, second ends are numbered
    /// after the first state's points (the concatenated vectors of an interaction).
    fn setup_pair(&mut self, na: usize, nb: usize) -> Result<(), SpringSetupError> {
        let words = |h: Data<Words>| -> Vec<bool> {
            self.data
                .get(h)
                .iter()
                .map(|w| canape_core::data::parse_bool(w).unwrap_or(false))
                .collect()
        };
        let (eo, en) = (words(self.h.s.elongation_only), words(self.h.s.enabled));
        self.springs.clear();
        self.d.clear();
        let s = self.data.get(self.h.s.spring).to_vec();
        if !s.is_empty() {
            for (k, c) in s.chunks_exact(5).enumerate() {
                if c[0] < 0.0 || c[1] < 0.0 {
                    return Err(SpringSetupError::NegativeIndex { spring: k });
                }
                self.springs.push(Spring {
                    a: c[0] as usize,
                    b: c[1] as usize,
                    ks: c[2],
                    kd: c[3],
                    l0: c[4],
                    elongation_only: *eo.get(k).unwrap_or(&false),
                    enabled: *en.get(k).unwrap_or(&true),
                });
            }
        } else {
            let (i1, i2) = (
                self.data.get(self.h.s.indices1).to_vec(),
                self.data.get(self.h.s.indices2).to_vec(),
            );
            if i1.len() != i2.len() {
                return Err(SpringSetupError::IndexCounts {
                    indices1: i1.len(),
                    indices2: i2.len(),
                });
            }
            let ls = self.data.get(self.h.s.lengths);
            for k in 0..i1.len() {
                let (a, b) = (i1[k] as usize, i2[k] as usize);
                let l0 = if ls.is_empty() { 0.0 } else { pick(ls, k, 0.0) };
                let (ks, kd) = self.listed_coefficients(k);
                self.springs.push(Spring {
                    a,
                    b,
                    ks,
                    kd,
                    l0,
                    elongation_only: *eo.get(k).unwrap_or(&false),
                    enabled: *en.get(k).unwrap_or(&true),
                });
            }
        }
        if let Some(bad) = self.springs.iter().find(|s| s.a >= na || s.b >= nb) {
            let e = if self.pair.is_some() {
                SpringSetupError::PointBeyondObjects {
                    a: bad.a,
                    na,
                    b: bad.b,
                    nb,
                }
            } else {
                SpringSetupError::PointBeyondState {
                    a: bad.a,
                    b: bad.b,
                    points: na,
                }
            };
            self.springs.clear();
            return Err(e);
        }
        if self.pair.is_some() {
            self.springs.iter_mut().for_each(|s| s.b += na);
        }
        self.d = vec![Mat3::zeros(); self.springs.len()];
        Ok(())
    }

    /// The stiffness and damping of spring `k` built from `indices1`/`indices2`: its entry of
    /// `stiffness` and `damping`, else their first one (100 and 5 when empty).
    fn listed_coefficients(&self, k: usize) -> (f64, f64) {
        (
            pick(self.data.get(self.h.s.stiffness), k, 100.0),
            pick(self.data.get(self.h.s.damping), k, 5.0),
        )
    }

    /// Give the springs the stiffness and damping of the current Data, as init would (the
    /// classes whose coefficients do not depend on the geometry); false for the others
    /// (MeshSpringForceField and RegularGridSpringForceField divide them by rest lengths).
    fn update_coefficients(&mut self) -> bool {
        if self.mesh || self.grid {
            return false;
        }
        if self.quadular || self.triangle_bending || self.quad_bending {
            let (ks, kd) = if self.quadular {
                self.quadular_coefficients()
            } else {
                self.bending_coefficients()
            };
            for s in &mut self.springs {
                (s.ks, s.kd) = (ks, kd);
            }
        } else if self.data.get(self.h.s.spring).is_empty() {
            // springs from indices1/indices2, in their order (a `spring` list gives its own)
            let coefficients: Vec<(f64, f64)> = (0..self.springs.len())
                .map(|k| self.listed_coefficients(k))
                .collect();
            for (s, (ks, kd)) in self.springs.iter_mut().zip(coefficients) {
                (s.ks, s.kd) = (ks, kd);
            }
        }
        true
    }
}

/// Entry `k` of a per-spring list, else its first entry, else `default`.
fn pick(v: &[f64], k: usize, default: f64) -> f64 {
    if v.len() > k {
        v[k]
    } else {
        v.first().copied().unwrap_or(default)
    }
}

impl SpringForceField {
    /// SOFA's class name of this instance.
    fn sofa_class(&self) -> &'static str {
        if self.mesh {
            "MeshSpringForceField"
        } else if self.quad_bending {
            "QuadBendingSprings"
        } else if self.triangle_bending {
            "TriangleBendingSprings"
        } else if self.quadular {
            "QuadularBendingSprings"
        } else if self.grid {
            "RegularGridSpringForceField"
        } else {
            "SpringForceField"
        }
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let (stiffness, damping) = (self.h.s.stiffness, self.h.s.damping);
        let in_place = [
            stiffness.index(),
            damping.index(),
            self.h.ff.rayleigh_stiffness.index(),
        ];
        if !changed.only(&in_place) || self.springs.is_empty() {
            return Reaction::Reinit;
        }
        if (changed.has(stiffness) || changed.has(damping)) && !self.update_coefficients() {
            return Reaction::Reinit;
        }
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        Reaction::Updated
    }
}

canape_core::impl_component!(SpringForceField, |s| s.sofa_class(), init, data_changed);

impl ForceField for SpringForceField {
    fn interaction(&self) -> Option<canape_core::component::Interaction> {
        self.pair
            .map(|(first, second, _)| canape_core::component::Interaction {
                first,
                second,
                second_passive: false,
            })
    }
    fn draw_edges(&self) -> Vec<[u32; 2]> {
        if self.pair.is_some() {
            // indices span two states: not drawable on one
            return Vec::new();
        }
        self.springs
            .iter()
            .filter(|s| s.enabled)
            .map(|s| [s.a as u32, s.b as u32])
            .collect()
    }
    fn add_force(&mut self, x: &[f64], v: &[f64], f: &mut [f64]) {
        for (k, s) in self.springs.iter().enumerate() {
            let u = get3(x, s.b) - get3(x, s.a);
            let d = u.norm();
            if !s.enabled || d <= 1e-9 || (s.elongation_only && d <= s.l0) {
                self.d[k] = Mat3::zeros();
                continue;
            }
            let uh = u / d;
            let e = d - s.l0;
            let edot = uh.dot(&(get3(v, s.b) - get3(v, s.a)));
            let fi = s.ks * e + s.kd * edot;
            let force = uh * fi;
            for c in 0..3 {
                f[3 * s.a + c] += force[c];
                f[3 * s.b + c] -= force[c];
            }
            let t = fi / d;
            self.d[k] = uh * uh.transpose() * (s.ks - t) + Mat3::identity() * t;
        }
    }

    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        for (k, s) in self.springs.iter().enumerate() {
            let delta: Vec3 = get3(dx, s.b) - get3(dx, s.a);
            let g = self.d[k] * delta * k_factor;
            for c in 0..3 {
                df[3 * s.a + c] += g[c];
                df[3 * s.b + c] -= g[c];
            }
        }
    }

    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        for (k, s) in self.springs.iter().enumerate() {
            let dk = self.d[k] * k_factor;
            let (a, b) = (offset + 3 * s.a, offset + 3 * s.b);
            m.add_block3(a, a, &(-dk));
            m.add_block3(a, b, &dk);
            m.add_block3(b, a, &dk);
            m.add_block3(b, b, &(-dk));
        }
    }

    fn rayleigh_stiffness(&self) -> f64 {
        self.rayleigh
    }
}
