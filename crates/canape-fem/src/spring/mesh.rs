//! MeshSpringForceField: a spring along every pair of points of each element of the context
//! topology.

use super::{vec3_state, Spring, SpringForceField, SpringSetupError};
use canape_core::data::{Data, DataKind, Flag, Ints, Real, Reals};
use canape_core::scene::InitContext;
use canape_types::Mat3;

canape_core::data_schema! {
    /// MeshSpringForceField's own Data (after [`SpringData`]).
    pub(super) struct MeshSpringData {
        lines_stiffness: Real = ("linesStiffness", DataKind::Real, "0", "Stiffness for the Lines"),
        lines_damping: Real = ("linesDamping", DataKind::Real, "0", "Damping for the Lines"),
        triangles_stiffness: Real = ("trianglesStiffness", DataKind::Real, "0", "Stiffness for the Triangles"),
        triangles_damping: Real = ("trianglesDamping", DataKind::Real, "0", "Damping for the Triangles"),
        quads_stiffness: Real = ("quadsStiffness", DataKind::Real, "0", "Stiffness for the Quads"),
        quads_damping: Real = ("quadsDamping", DataKind::Real, "0", "Damping for the Quads"),
        tetrahedra_stiffness: Real = ("tetrahedraStiffness", DataKind::Real, "0", "Stiffness for the Tetrahedra"),
        tetrahedra_damping: Real = ("tetrahedraDamping", DataKind::Real, "0", "Damping for the Tetrahedra"),
        cubes_stiffness: Real = ("cubesStiffness", DataKind::Real, "0", "Stiffness for the Cubes"),
        cubes_damping: Real = ("cubesDamping", DataKind::Real, "0", "Damping for the Cubes"),
        tetras_stiffness: Real = ("tetrasStiffness", DataKind::Real, "0", "old name of tetrahedraStiffness"),
        tetras_damping: Real = ("tetrasDamping", DataKind::Real, "0", "old name of tetrahedraDamping"),
        no_compression: Flag = ("noCompression", DataKind::Bool, "0", "Only consider elongation"),
        draw_min_elongation_range: Real = ("drawMinElongationRange", DataKind::Real, "8", "Min range of elongation (red eongation - blue neutral - green compression)"),
        draw_max_elongation_range: Real = ("drawMaxElongationRange", DataKind::Real, "15", "Max range of elongation (red eongation - blue neutral - green compression)"),
        draw_spring_size: Real = ("drawSpringSize", DataKind::Real, "8", "Size of drawed lines"),
        local_range: Ints = ("localRange", DataKind::Ints(0), "", "optional range of local DOF indices"),
    }
}

impl SpringForceField {
    /// MeshSpringForceField (Sofa/Component/SolidMechanics/Spring/.../MeshSpringForceField.inl):
    /// a spring along every pair of points of each element of the context topology — lines,
    /// triangle edges, quad edges and diagonals, tetrahedron edges, all 28 pairs of a hexahedron —
    /// each pair once (the first element kind that meets it sets it), with stiffness and
    /// damping of its element kind divided by the rest length, rest length from the rest
    /// positions.
    pub fn mesh() -> Self {
        let mut f = Self::new();
        let (data, m) = MeshSpringData::declare(std::mem::take(&mut f.data));
        f.data = data;
        f.h.mesh = Some(m);
        f.mesh = true;
        f
    }

    /// The springs of a MeshSpringForceField from its context topology and rest positions.
    pub(super) fn springs_from_mesh(
        &mut self,
        ctx: &mut InitContext<'_>,
        h: MeshSpringData,
    ) -> Result<(), SpringSetupError> {
        let (d, s) = (&self.data, self.h.s);
        // `stiffness`/`damping` (and the old `tetrasStiffness`) set every element kind, as
        // SOFA's aliases do; a kind's own Data wins
        let alias = |h: Data<Reals>| -> Option<f64> {
            d.was_set(h).then(|| d.get(h).first().copied()).flatten()
        };
        let pick = |own: Data<Real>, old: Option<Data<Real>>, what: Data<Reals>| -> f64 {
            if d.was_set(own) {
                return d.get(own);
            }
            if let Some(v) = old.and_then(|o| d.was_set(o).then(|| d.get(o))) {
                return v;
            }
            alias(what).unwrap_or(0.0)
        };
        // lines, triangles, quads, tetrahedra (with their old names), cubes
        let kinds = [
            (h.lines_stiffness, h.lines_damping, None),
            (h.triangles_stiffness, h.triangles_damping, None),
            (h.quads_stiffness, h.quads_damping, None),
            (
                h.tetrahedra_stiffness,
                h.tetrahedra_damping,
                Some((h.tetras_stiffness, h.tetras_damping)),
            ),
            (h.cubes_stiffness, h.cubes_damping, None),
        ];
        let sd = kinds.map(|(k, c, old)| {
            (
                pick(k, old.map(|o| o.0), s.stiffness),
                pick(c, old.map(|o| o.1), s.damping),
            )
        });
        let no_compression = d.get(h.no_compression);
        if !d.get(h.local_range).is_empty() {
            ctx.warn("localRange is not supported: springs are built on the whole topology");
        }
        let st = vec3_state(ctx, "MeshSpringForceField")?;
        let rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| {
            !m.edges.is_empty()
                || !m.triangles.is_empty()
                || !m.quads.is_empty()
                || !m.tetrahedra.is_empty()
                || !m.hexahedra.is_empty()
        }) else {
            return Err(SpringSetupError::NoTopology);
        };
        let m = topo.mesh();
        if let Some(max) = m.max_index() {
            if max as usize >= n {
                return Err(SpringSetupError::TopologyBeyondState { max, points: n });
            }
        }
        // the edges SOFA's MeshTopology gives when none are listed: those of its elements
        let mut edges = m.edges.clone();
        if edges.is_empty() && sd[0] != (0.0, 0.0) {
            let mut seen = std::collections::BTreeSet::new();
            let mut add = |a: u32, b: u32, edges: &mut Vec<[u32; 2]>| {
                if seen.insert((a.min(b), a.max(b))) {
                    edges.push([a, b]);
                }
            };
            for t in &m.tetrahedra {
                for (i, j) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                    add(t[i], t[j], &mut edges);
                }
            }
            for h in &m.hexahedra {
                for (i, j) in [
                    (0, 1),
                    (1, 2),
                    (2, 3),
                    (3, 0),
                    (4, 5),
                    (5, 6),
                    (6, 7),
                    (7, 4),
                    (0, 4),
                    (1, 5),
                    (2, 6),
                    (3, 7),
                ] {
                    add(h[i], h[j], &mut edges);
                }
            }
            for t in &m.triangles {
                for (i, j) in [(0, 1), (1, 2), (2, 0)] {
                    add(t[i], t[j], &mut edges);
                }
            }
            for q in &m.quads {
                for (i, j) in [(0, 1), (1, 2), (2, 3), (3, 0)] {
                    add(q[i], q[j], &mut edges);
                }
            }
        }
        let mut set = std::collections::BTreeSet::new();
        let mut springs = Vec::new();
        let mut add = |a: u32, b: u32, (ks, kd): (f64, f64)| {
            if !set.insert((a.min(b), a.max(b))) {
                return;
            }
            let (a, b) = (a as usize, b as usize);
            let l = (canape_types::get3(&rest, b) - canape_types::get3(&rest, a)).norm();
            let (ks, kd) = if l > f64::EPSILON {
                (ks / l, kd / l)
            } else {
                (ks, kd)
            };
            springs.push(Spring {
                a,
                b,
                ks,
                kd,
                l0: l,
                elongation_only: no_compression,
                enabled: true,
            });
        };
        let on = |k: usize| sd[k] != (0.0, 0.0);
        if on(0) {
            for e in &edges {
                add(e[0], e[1], sd[0]);
            }
        }
        if on(1) {
            for t in &m.triangles {
                for (i, j) in [(0, 1), (0, 2), (1, 2)] {
                    add(t[i], t[j], sd[1]);
                }
            }
        }
        if on(2) {
            for q in &m.quads {
                for (i, j) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                    add(q[i], q[j], sd[2]);
                }
            }
        }
        if on(3) {
            for t in &m.tetrahedra {
                for (i, j) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                    add(t[i], t[j], sd[3]);
                }
            }
        }
        if on(4) {
            for h in &m.hexahedra {
                for i in 0..8 {
                    for j in i + 1..8 {
                        add(h[i], h[j], sd[4]);
                    }
                }
            }
        }
        self.d = vec![Mat3::zeros(); springs.len()];
        self.springs = springs;
        Ok(())
    }
}
