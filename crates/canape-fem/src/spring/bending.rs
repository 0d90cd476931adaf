//! The bending springs: TriangleBendingSprings, QuadBendingSprings and QuadularBendingSprings,
//! springs across the edges shared by two faces of the context topology.

use super::{vec3_state, Spring, SpringForceField, SpringSetupError};
use canape_core::data::{Data, DataKind, Ints, Reals};
use canape_core::scene::InitContext;
use canape_types::{get3, Mat3};

canape_core::data_schema! {
    /// QuadBendingSprings's own Data (after [`SpringData`]).
    pub(super) struct QuadBendingData {
        local_range: Ints = ("localRange", DataKind::Ints(0), "", "optional range of local DOF indices. Any computation involving only indices outside of this range are discarded (useful for parallelization using mesh partitionning)"),
    }
}

impl SpringForceField {
    /// QuadularBendingSprings (Sofa/Component/SolidMechanics/Spring/.../
    /// QuadularBendingSprings.inl): for every edge shared by exactly two quads, two springs
    /// joining the points next to the edge's ends in the two quads (stiffness 100000 and
    /// damping 1 by default), rest lengths from the rest positions, in the edge list's order.
    pub fn quadular() -> Self {
        let mut f = Self::new();
        f.quadular = true;
        f
    }

    /// The stiffness and damping of every spring of a QuadularBendingSprings: the first
    /// values of `stiffness` and `damping` when set, else SOFA's defaults for this component
    /// (100000 and 1, not SpringForceField's 100 and 5).
    pub(super) fn quadular_coefficients(&self) -> (f64, f64) {
        let given = |h: Data<Reals>, default: f64| -> f64 {
            if self.data.was_set(h) {
                self.data.get(h).first().copied().unwrap_or(default)
            } else {
                default
            }
        };
        (
            given(self.h.s.stiffness, 100000.0),
            given(self.h.s.damping, 1.0),
        )
    }

    /// The stiffness and damping of every spring of a Triangle- or QuadBendingSprings: the
    /// first values of `stiffness` and `damping` (100 and 5 when empty).
    pub(super) fn bending_coefficients(&self) -> (f64, f64) {
        let first = |h: Data<Reals>, default: f64| -> f64 {
            self.data.get(h).first().copied().unwrap_or(default)
        };
        (
            first(self.h.s.stiffness, 100.0),
            first(self.h.s.damping, 5.0),
        )
    }

    /// The springs of a QuadularBendingSprings.
    pub(super) fn springs_from_quadular(
        &mut self,
        ctx: &mut InitContext<'_>,
    ) -> Result<(), SpringSetupError> {
        let (ks, kd) = self.quadular_coefficients();
        let st = vec3_state(ctx, "QuadularBendingSprings")?;
        let rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| !m.quads.is_empty()) else {
            return Err(SpringSetupError::NoQuads);
        };
        let mesh = topo.mesh();
        let quads = mesh.quads.clone();
        if quads.iter().flatten().any(|&i| i as usize >= n) {
            return Err(SpringSetupError::QuadsBeyondState { points: n });
        }
        // edge k of a quad joins q[k+1] and q[k+2]; the topology's edges, else the quads' own
        let edges: Vec<[u32; 2]> = if mesh.edges.is_empty() {
            let mut seen = std::collections::BTreeSet::new();
            let mut e = Vec::new();
            for q in &quads {
                for k in 0..4 {
                    let (a, b) = (q[(k + 1) % 4], q[(k + 2) % 4]);
                    if seen.insert((a.min(b), a.max(b))) {
                        e.push([a, b]);
                    }
                }
            }
            e
        } else {
            mesh.edges.clone()
        };
        // quads around each edge (ascending) with the edge's local index in each
        let mut around: std::collections::BTreeMap<(u32, u32), Vec<(usize, usize)>> =
            std::collections::BTreeMap::new();
        for (qi, q) in quads.iter().enumerate() {
            for k in 0..4 {
                let (a, b) = (q[(k + 1) % 4], q[(k + 2) % 4]);
                around
                    .entry((a.min(b), a.max(b)))
                    .or_default()
                    .push((qi, k));
            }
        }
        let mut springs = Vec::new();
        let spring = |a: u32, b: u32| -> Spring {
            let (pa, pb) = (get3(&rest, a as usize), get3(&rest, b as usize));
            Spring {
                a: a as usize,
                b: b as usize,
                ks,
                kd,
                l0: (pa - pb).norm(),
                elongation_only: false,
                enabled: true,
            }
        };
        for e in &edges {
            let Some(list) = around.get(&(e[0].min(e[1]), e[0].max(e[1]))) else {
                continue;
            };
            // seen first from the lower quad (t2), the other one is t1
            let [(q2, i2), (q1, i1)] = list[..] else {
                continue;
            };
            let (t1, t2) = (quads[q1], quads[q2]);
            springs.push(spring(t1[i1], t2[(i2 + 3) % 4]));
            springs.push(spring(t1[(i1 + 3) % 4], t2[i2]));
        }
        self.d = vec![Mat3::zeros(); springs.len()];
        self.springs = springs;
        Ok(())
    }

    /// QuadBendingSprings (Sofa/Component/SolidMechanics/Spring/.../QuadBendingSprings.inl):
    /// for every edge shared by two quads of the context topology, two springs joining each
    /// end's neighbours across the edge (the point two steps away on either side), `stiffness`
    /// and `damping` as given, rest lengths from the initial positions.
    pub fn quad_bending() -> Self {
        let mut f = Self::new();
        let (data, q) = QuadBendingData::declare(std::mem::take(&mut f.data));
        f.data = data;
        f.h.quad_bending = Some(q);
        f.quad_bending = true;
        f
    }

    /// TriangleBendingSprings (Sofa/Component/SolidMechanics/Spring/.../TriangleBendingSprings.inl):
    /// for every edge met a second time in the context topology's triangles (quads count as two
    /// triangles, 0-1-2 and 0-2-3), a spring between the two points opposite it, with `stiffness`
    /// and `damping` as given (not divided by the length) and the initial distance as rest length.
    pub fn triangle_bending() -> Self {
        let mut f = Self::new();
        f.triangle_bending = true;
        f
    }

    /// The springs of a TriangleBendingSprings: SOFA's edge map, in triangle order, each edge
    /// keeping the first opposite point it met (a third triangle on an edge pairs with it too).
    pub(super) fn springs_from_triangles(
        &mut self,
        ctx: &mut InitContext<'_>,
    ) -> Result<(), SpringSetupError> {
        let (ks, kd) = self.bending_coefficients();
        let st = vec3_state(ctx, "TriangleBendingSprings")?;
        let x = st.vec(canape_core::state::VecId::POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| !m.triangles.is_empty() || !m.quads.is_empty())
        else {
            return Err(SpringSetupError::NoFaces);
        };
        let m = topo.mesh();
        let mut faces: Vec<[u32; 3]> = m.triangles.clone();
        for q in &m.quads {
            faces.push([q[0], q[1], q[2]]);
            faces.push([q[0], q[2], q[3]]);
        }
        if faces.iter().flatten().any(|&i| i as usize >= n) {
            return Err(SpringSetupError::FacesBeyondState { points: n });
        }
        let mut edge_map: std::collections::BTreeMap<(u32, u32), u32> = Default::default();
        let mut springs = Vec::new();
        for [a, b, c] in faces {
            for (p, q, opposite) in [(a, b, c), (b, c, a), (c, a, b)] {
                let edge = (p.min(q), p.max(q));
                match edge_map.get(&edge) {
                    None => {
                        edge_map.insert(edge, opposite);
                    }
                    Some(&other) => {
                        let (pa, pb) = (get3(&x, opposite as usize), get3(&x, other as usize));
                        springs.push(Spring {
                            a: opposite as usize,
                            b: other as usize,
                            ks,
                            kd,
                            l0: (pa - pb).norm(),
                            elongation_only: false,
                            enabled: true,
                        });
                    }
                }
            }
        }
        self.d = vec![Mat3::zeros(); springs.len()];
        self.springs = springs;
        Ok(())
    }

    /// The springs of a QuadBendingSprings: SOFA's edge map over the quads in order, each quad
    /// registering its four edges with the opposite edge; the second quad on an edge pairs
    /// its opposite points with the first quad's; a pair is made once.
    pub(super) fn springs_from_quads(
        &mut self,
        ctx: &mut InitContext<'_>,
    ) -> Result<(), SpringSetupError> {
        let (ks, kd) = self.bending_coefficients();
        let range = self
            .h
            .quad_bending
            .map(|q| self.data.get(q.local_range).to_vec())
            .unwrap_or_default();
        let st = vec3_state(ctx, "QuadBendingSprings")?;
        let x = st.vec(canape_core::state::VecId::POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| !m.quads.is_empty()) else {
            return Err(SpringSetupError::NoQuads);
        };
        let quads = topo.mesh().quads.clone();
        if quads.iter().flatten().any(|&i| i as usize >= n) {
            return Err(SpringSetupError::QuadsBeyondState { points: n });
        }
        let outside = |a: u32, b: u32| -> bool {
            match range[..] {
                [lo, hi] => (a < lo && b < lo) || (a > hi && b > hi),
                _ => false,
            }
        };
        let mut edge_map: std::collections::BTreeMap<(u32, u32), (u32, u32)> =
            std::collections::BTreeMap::new();
        let mut made: std::collections::BTreeSet<(u32, u32)> = std::collections::BTreeSet::new();
        let mut springs = Vec::new();
        let mut add = |a: u32, b: u32, springs: &mut Vec<Spring>| {
            if outside(a, b) || !made.insert((a.min(b), a.max(b))) {
                return;
            }
            let (pa, pb) = (get3(&x, a as usize), get3(&x, b as usize));
            springs.push(Spring {
                a: a as usize,
                b: b as usize,
                ks,
                kd,
                l0: (pb - pa).norm(),
                elongation_only: false,
                enabled: true,
            });
        };
        for f in &quads {
            for (ab, cd) in [
                ((f[0], f[1]), (f[3], f[2])),
                ((f[1], f[2]), (f[0], f[3])),
                ((f[2], f[3]), (f[1], f[0])),
                ((f[3], f[0]), (f[2], f[1])),
            ] {
                let (ab, cd) = if ab.0 > ab.1 {
                    ((ab.1, ab.0), (cd.1, cd.0))
                } else {
                    (ab, cd)
                };
                match edge_map.get(&ab) {
                    None => {
                        edge_map.insert(ab, cd);
                    }
                    Some(&ef) => {
                        add(cd.0, ef.0, &mut springs);
                        add(cd.1, ef.1, &mut springs);
                    }
                }
            }
        }
        self.d = vec![Mat3::zeros(); springs.len()];
        self.springs = springs;
        Ok(())
    }
}
