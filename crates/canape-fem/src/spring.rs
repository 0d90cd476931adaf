//! SpringForceField (SOFA's StiffSpringForceField is the same component): springs between points
//! of the node's state, with the geometric stiffness term
//! (Sofa/Component/SolidMechanics/Spring/src/sofa/component/solidmechanics/spring/SpringForceField.inl).
//! Per spring: F = ks·(d − L0) + kd·(û·(v_b − v_a)); tangent D = (ks − F/d)·ûûᵀ + (F/d)·I.

use canape_core::component::{Component, ForceField, Reaction};
use canape_core::data::{
    ChangedData, Data, DataKind, DataTable, Flag, ForceFieldData, Int, Ints, Real, Reals, Text,
    Words,
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

canape_core::data_schema! {
    /// RegularGridSpringForceField's own Data (after [`SpringData`]).
    struct GridSpringData {
        lines_stiffness: Real = ("linesStiffness", DataKind::Real, "100", "Lines Stiffness"),
        lines_damping: Real = ("linesDamping", DataKind::Real, "5", "Lines Damping"),
        quads_stiffness: Real = ("quadsStiffness", DataKind::Real, "100", "Quads Stiffness"),
        quads_damping: Real = ("quadsDamping", DataKind::Real, "5", "Quads Damping"),
        cubes_stiffness: Real = ("cubesStiffness", DataKind::Real, "100", "Cubes Stiffness"),
        cubes_damping: Real = ("cubesDamping", DataKind::Real, "5", "Cubes Damping"),
    }
}

canape_core::data_schema! {
    /// QuadBendingSprings's own Data (after [`SpringData`]).
    struct QuadBendingData {
        local_range: Ints = ("localRange", DataKind::Ints(0), "", "optional range of local DOF indices. Any computation involving only indices outside of this range are discarded (useful for parallelization using mesh partitionning)"),
    }
}

canape_core::data_schema! {
    /// MeshSpringForceField's own Data (after [`SpringData`]).
    struct MeshSpringData {
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
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
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

/// The context state, when it is Vec3 (the springs built from a topology are 3D): the error
/// names the component and the state's type otherwise.
fn vec3_state<'a>(
    ctx: &InitContext<'a>,
    what: &str,
) -> Result<&'a canape_core::state::MechanicalObject, String> {
    let Some(st) = ctx.state() else {
        return Err("no MechanicalObject in the context".into());
    };
    if st.dof != canape_types::DofType::Vec3 {
        return Err(format!(
            "{what} acts on Vec3d states; the context state is {}",
            st.dof.name()
        ));
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

    /// RegularGridSpringForceField
    /// (Sofa/Component/SolidMechanics/Spring/.../RegularGridSpringForceField.inl): the `spring`
    /// list, then springs along the context grid's lines (x, y, z), both diagonals of each face
    /// (xy, xz, yz planes) and the four diagonals of each cube, with rest lengths from the
    /// grid's nominal spacing and stiffness and damping of their kind over that length
    /// (defaults 100 and 5; `stiffness`/`damping` set all three kinds, as SOFA's aliases). As in
    /// SOFA, the second diagonal of the yz faces takes the first one's length for its
    /// coefficients.
    pub fn grid() -> Self {
        let mut f = Self::new();
        let (data, g) = GridSpringData::declare(std::mem::take(&mut f.data));
        f.data = data;
        f.h.grid = Some(g);
        f.grid = true;
        f
    }

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
    fn quadular_coefficients(&self) -> (f64, f64) {
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
    fn bending_coefficients(&self) -> (f64, f64) {
        let first = |h: Data<Reals>, default: f64| -> f64 {
            self.data.get(h).first().copied().unwrap_or(default)
        };
        (
            first(self.h.s.stiffness, 100.0),
            first(self.h.s.damping, 5.0),
        )
    }

    /// The springs of a QuadularBendingSprings.
    fn springs_from_quadular(&mut self, ctx: &mut InitContext<'_>) -> Result<(), String> {
        let (ks, kd) = self.quadular_coefficients();
        let st = vec3_state(ctx, "QuadularBendingSprings")?;
        let rest = st.vec(canape_core::state::VecId::REST_POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| !m.quads.is_empty()) else {
            return Err("no topology with quads in the context".into());
        };
        let mesh = topo.mesh();
        let quads = mesh.quads.clone();
        if quads.iter().flatten().any(|&i| i as usize >= n) {
            return Err(format!(
                "the quads use points beyond the state's {n} points"
            ));
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
    fn springs_from_triangles(&mut self, ctx: &mut InitContext<'_>) -> Result<(), String> {
        let (ks, kd) = self.bending_coefficients();
        let st = vec3_state(ctx, "TriangleBendingSprings")?;
        let x = st.vec(canape_core::state::VecId::POSITION).to_vec();
        let n = st.size();
        let Some(topo) = ctx.topology_where(|m| !m.triangles.is_empty() || !m.quads.is_empty())
        else {
            return Err("no topology with triangles or quads in the context".into());
        };
        let m = topo.mesh();
        let mut faces: Vec<[u32; 3]> = m.triangles.clone();
        for q in &m.quads {
            faces.push([q[0], q[1], q[2]]);
            faces.push([q[0], q[2], q[3]]);
        }
        if faces.iter().flatten().any(|&i| i as usize >= n) {
            return Err(format!(
                "the faces use points beyond the state's {n} points"
            ));
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
    fn springs_from_quads(&mut self, ctx: &mut InitContext<'_>) -> Result<(), String> {
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
            return Err("no topology with quads in the context".into());
        };
        let quads = topo.mesh().quads.clone();
        if quads.iter().flatten().any(|&i| i as usize >= n) {
            return Err(format!(
                "the quads use points beyond the state's {n} points"
            ));
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

    /// The grid springs of a RegularGridSpringForceField, appended to the `spring` list.
    fn springs_from_grid(&mut self, ctx: &mut InitContext<'_>, g: GridSpringData) {
        let (d, s) = (&self.data, self.h.s);
        let alias = |h: Data<Reals>| -> Option<f64> {
            d.was_set(h).then(|| d.get(h).first().copied()).flatten()
        };
        let pick = |own: Data<Real>, what: Data<Reals>| -> f64 {
            if d.was_set(own) {
                d.get(own)
            } else {
                alias(what).unwrap_or_else(|| d.get(own))
            }
        };
        let kinds = [
            (g.lines_stiffness, g.lines_damping),
            (g.quads_stiffness, g.quads_damping),
            (g.cubes_stiffness, g.cubes_damping),
        ]
        .map(|(k, c)| (pick(k, s.stiffness), pick(c, s.damping)));
        let Some(topo) = ctx.topology() else {
            ctx.warn("no RegularGridTopology in the context: only the listed springs act");
            return;
        };
        let Some([nx, ny, nz]) = topo.grid_size() else {
            ctx.warn("the context topology is not a regular grid: only the listed springs act");
            return;
        };
        let pts = &topo.mesh().points;
        let n = ctx.state().map_or(0, |s| s.size());
        if pts.len() != nx * ny * nz || n < pts.len() {
            ctx.error(format!(
                "the grid has {} points, the state {n}: no grid springs",
                nx * ny * nz
            ));
            return;
        }
        let p = |x: usize, y: usize, z: usize| x + nx * (y + ny * z);
        let v = |i: usize| canape_types::Vec3::new(pts[i][0], pts[i][1], pts[i][2]);
        let axis = |len: usize, other: usize| -> canape_types::Vec3 {
            if len > 1 {
                v(other) - v(0)
            } else {
                canape_types::Vec3::zeros()
            }
        };
        let (dx, dy, dz) = (
            axis(nx, p(1, 0, 0)),
            axis(ny, p(0, 1, 0)),
            axis(nz, p(0, 0, 1)),
        );
        let mut add = |a: usize, b: usize, l: f64, (ks, kd): (f64, f64), lk: f64| {
            self.springs.push(Spring {
                a,
                b,
                ks: ks / lk,
                kd: kd / lk,
                l0: l,
                elongation_only: false,
                enabled: true,
            });
        };
        let on = |k: (f64, f64)| k != (0.0, 0.0);
        let (lines, quads, cubes) = (kinds[0], kinds[1], kinds[2]);
        if on(lines) {
            for (dir, (ex, ey, ez)) in [(dx, (1, 0, 0)), (dy, (0, 1, 0)), (dz, (0, 0, 1))] {
                let l = dir.norm();
                for z in 0..nz - ez {
                    for y in 0..ny - ey {
                        for x in 0..nx - ex {
                            add(p(x, y, z), p(x + ex, y + ey, z + ez), l, lines, l);
                        }
                    }
                }
            }
        }
        if on(quads) {
            // xy faces: (x,y,z)-(x+1,y+1,z) and (x+1,y,z)-(x,y+1,z)
            let (l1, l2) = ((dx + dy).norm(), (dx - dy).norm());
            for z in 0..nz {
                for y in 0..ny.saturating_sub(1) {
                    for x in 0..nx.saturating_sub(1) {
                        add(p(x, y, z), p(x + 1, y + 1, z), l1, quads, l1);
                        add(p(x + 1, y, z), p(x, y + 1, z), l2, quads, l2);
                    }
                }
            }
            // xz faces
            let (l1, l2) = ((dx + dz).norm(), (dx - dz).norm());
            for z in 0..nz.saturating_sub(1) {
                for y in 0..ny {
                    for x in 0..nx.saturating_sub(1) {
                        add(p(x, y, z), p(x + 1, y, z + 1), l1, quads, l1);
                        add(p(x + 1, y, z), p(x, y, z + 1), l2, quads, l2);
                    }
                }
            }
            // yz faces (the second diagonal's coefficients from the first's length, as SOFA)
            let (l1, l2) = ((dy + dz).norm(), (dy - dz).norm());
            for z in 0..nz.saturating_sub(1) {
                for y in 0..ny.saturating_sub(1) {
                    for x in 0..nx {
                        add(p(x, y, z), p(x, y + 1, z + 1), l1, quads, l1);
                        add(p(x, y + 1, z), p(x, y, z + 1), l2, quads, l1);
                    }
                }
            }
        }
        if on(cubes) {
            let ls = [
                (dx + dy + dz).norm(),
                (-dx + dy + dz).norm(),
                (dx - dy + dz).norm(),
                (dx + dy - dz).norm(),
            ];
            for z in 0..nz.saturating_sub(1) {
                for y in 0..ny.saturating_sub(1) {
                    for x in 0..nx.saturating_sub(1) {
                        add(p(x, y, z), p(x + 1, y + 1, z + 1), ls[0], cubes, ls[0]);
                        add(p(x + 1, y, z), p(x, y + 1, z + 1), ls[1], cubes, ls[1]);
                        add(p(x, y + 1, z), p(x + 1, y, z + 1), ls[2], cubes, ls[2]);
                        add(p(x, y, z + 1), p(x + 1, y + 1, z), ls[3], cubes, ls[3]);
                    }
                }
            }
        }
        self.d = vec![Mat3::zeros(); self.springs.len()];
    }

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
    fn springs_from_mesh(
        &mut self,
        ctx: &mut InitContext<'_>,
        h: MeshSpringData,
    ) -> Result<(), String> {
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
            return Err(
                "no topology in the context: the springs are built from its elements".into(),
            );
        };
        let m = topo.mesh();
        if let Some(max) = m.max_index() {
            if max as usize >= n {
                return Err(format!(
                    "the topology uses point {max}, but the state has {n} points"
                ));
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

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.rayleigh = self.data.get(self.h.ff.rayleigh_stiffness);
        self.pair = None;
        self.springs.clear();
        if let Some(h) = self.h.mesh {
            if let Err(e) = self.springs_from_mesh(ctx, h) {
                ctx.error(e);
            }
            return;
        }
        if self.quad_bending {
            if let Err(e) = self.springs_from_quads(ctx) {
                ctx.error(e);
            }
            return;
        }
        if self.triangle_bending {
            if let Err(e) = self.springs_from_triangles(ctx) {
                ctx.error(e);
            }
            return;
        }
        if self.quadular {
            if let Err(e) = self.springs_from_quadular(ctx) {
                ctx.error(e);
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
            ctx.error(e);
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
    pub fn setup_from_data(&mut self, n: usize) -> Result<(), String> {
        self.pair = None;
        self.setup_pair(n, n)
    }

    /// Build the springs from Data, their first ends among `na` points of object1 and their
    /// second ends among `nb` points of object2. Between two states, second ends are numbered
    /// after the first state's points (the concatenated vectors of an interaction).
    fn setup_pair(&mut self, na: usize, nb: usize) -> Result<(), String> {
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
                    return Err(format!("spring {k} has a negative index"));
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
                return Err(format!(
                    "indices1 has {} entries but indices2 has {}",
                    i1.len(),
                    i2.len()
                ));
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
            let msg = if self.pair.is_some() {
                format!(
                    "a spring joins point {} of object1 ({na} points) and point {} of object2 ({nb} points)",
                    bad.a, bad.b
                )
            } else {
                format!(
                    "a spring joins points {} and {}, but the state has {na} points",
                    bad.a, bad.b
                )
            };
            self.springs.clear();
            return Err(msg);
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

/// The two states of a pair interaction force field (SOFA's PairInteractionForceField:
/// `object1`, `object2`, each a state or a node whose state is meant, the context state when
/// empty), checked to be of `dof` type.
pub struct PairEnds {
    pub states: [canape_core::scene::ComponentId; 2],
    /// Point counts of the two states.
    pub sizes: [usize; 2],
    /// Whether the force field acts on its vectors concatenated (two states, or one state that
    /// is not its context's); otherwise it acts on its context state alone.
    pub pair: bool,
}

impl PairEnds {
    /// The ends named by the `object1` and `object2` Data of `data`.
    pub fn resolve(
        ctx: &mut InitContext<'_>,
        data: &DataTable,
        dof: canape_types::DofType,
        class: &str,
    ) -> Option<PairEnds> {
        Self::resolve_links(ctx, [data.str("object1"), data.str("object2")], dof, class)
    }

    /// The ends named by the links `objects` (`object1`, `object2`).
    pub fn resolve_links(
        ctx: &mut InitContext<'_>,
        objects: [&str; 2],
        dof: canape_types::DofType,
        class: &str,
    ) -> Option<PairEnds> {
        let context = ctx.scene.context_state(ctx.node);
        let mut ends = [context; 2];
        for (k, (o, link)) in ["object1", "object2"].into_iter().zip(objects).enumerate() {
            let l = link.trim().to_string();
            if l.is_empty() {
                continue;
            }
            let target = ctx.linked(&l).and_then(|t| match t {
                canape_core::scene::Target::Component(c) => {
                    ctx.scene.state(c).is_some().then_some(c)
                }
                canape_core::scene::Target::Node(n) => ctx
                    .scene
                    .node_components(n, canape_core::component::Role::State)
                    .next(),
            });
            match target {
                Some(c) => ends[k] = Some(c),
                None => {
                    ctx.error(format!(
                        "{o}='{l}' is not a MechanicalObject (nor a node with one)"
                    ));
                    return None;
                }
            }
        }
        let [Some(a), Some(b)] = ends else {
            ctx.error("no MechanicalObject in the context (and no object1/object2 link)");
            return None;
        };
        let sa = ctx.scene.state(a).expect("state");
        let sb = ctx.scene.state(b).expect("state");
        for (s, id) in [(sa, a), (sb, b)] {
            if s.dof != dof {
                ctx.error(format!(
                    "{class} acts on {} states; {} is {}",
                    dof.name(),
                    ctx.scene.component_label(id),
                    s.dof.name()
                ));
                return None;
            }
        }
        Some(PairEnds {
            states: [a, b],
            sizes: [sa.size(), sb.size()],
            // one state that is not the context's: an interaction of the state with itself,
            // its vectors given twice
            pair: a != b || Some(a) != context,
        })
    }
}

impl Component for SpringForceField {
    fn class_name(&self) -> &'static str {
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
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, ctx: &mut InitContext<'_>) {
        self.init_impl(ctx)
    }

    /// A new `stiffness` or `damping` gives the springs their new coefficients in place (the
    /// springs, their rest lengths and tangents kept), except on MeshSpringForceField and
    /// RegularGridSpringForceField, which divide them by rest lengths; a new Rayleigh
    /// stiffness is taken as it is. Any other Data re-initialises the force field.
    fn data_changed(&mut self, changed: &ChangedData) -> Reaction {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::edit_check;
    use canape_core::mesh::Mesh;

    /// Editing `stiffness`, `damping` or `rayleighStiffness` of running springs updates them in
    /// place to exactly what an init with the new values gives (listed springs, springs from
    /// indices with one value per spring, the bending springs); MeshSpringForceField, whose
    /// coefficients are divided by rest lengths, and edits of other Data re-initialise.
    #[test]
    fn spring_coefficient_edits_update_in_place() {
        use canape_core::component::Reaction;
        // a bumpy 3 × 2 sheet: two quads, four triangles
        let rest = [
            0.0, 0.0, 0.0, 1.0, 0.0, 0.1, 2.0, 0.0, 0.0, 0.0, 1.0, 0.05, 1.0, 1.0, -0.1, 2.0, 1.1,
            0.0,
        ];
        let quads = Mesh {
            quads: vec![[0, 1, 4, 3], [1, 2, 5, 4]],
            ..Default::default()
        };
        let triangles = Mesh {
            triangles: vec![[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]],
            ..Default::default()
        };
        let mut seed = 9;
        let x: Vec<f64> = crate::fd_check::rigidly_moved(&rest)
            .iter()
            .map(|v| v + 0.1 * crate::fd_check::rnd(&mut seed))
            .collect();
        let up = Reaction::Updated;
        let edit = |make: fn() -> SpringForceField,
                    mesh: &Mesh,
                    before: &[(&str, &str)],
                    after: &[(&str, &str)]| {
            edit_check::edit(make, &rest, mesh, before, after, &x)
        };

        // springs from indices: one stiffness and damping per spring, or the first for all
        let indexed = [
            ("indices1", "0 1 2 3"),
            ("indices2", "4 5 3 1"),
            ("stiffness", "100 200 300"),
            ("damping", "1 2"),
            ("lengths", "0.5 1"),
            ("rayleighStiffness", "0.1"),
        ];
        let plain = SpringForceField::new;
        assert_eq!(
            edit(plain, &quads, &indexed, &[("stiffness", "150 250 350 450")]),
            up
        );
        assert_eq!(edit(plain, &quads, &indexed, &[("damping", "3")]), up);
        assert_eq!(
            edit(plain, &quads, &indexed, &[("rayleighStiffness", "0.2")]),
            up
        );
        let both = [("stiffness", "70"), ("damping", "0.5 4 2 1")];
        assert_eq!(edit(plain, &quads, &indexed, &both), up);
        assert_eq!(
            edit(
                plain,
                &quads,
                &indexed,
                &[("stiffness", "70"), ("indices2", "4 5 3 0")]
            ),
            Reaction::Reinit
        );
        // a `spring` list gives its own coefficients
        let listed = [("spring", "0 4 100 1 1  1 5 50 2 0.8")];
        let after = [("stiffness", "300"), ("rayleighStiffness", "0.2")];
        assert_eq!(edit(plain, &quads, &listed, &after), up);

        // bending springs: the first stiffness and damping for all (QuadularBendingSprings:
        // its own defaults unless set)
        type Make = fn() -> SpringForceField;
        let bending: [(Make, &Mesh); 3] = [
            (SpringForceField::triangle_bending, &triangles),
            (SpringForceField::quad_bending, &quads),
            (SpringForceField::quadular, &quads),
        ];
        for (make, mesh) in bending {
            assert_eq!(edit(make, mesh, &[], &[("stiffness", "500")]), up);
            assert_eq!(edit(make, mesh, &[], &[("damping", "2 3")]), up);
            let before = [("stiffness", "800"), ("damping", "0.5")];
            assert_eq!(edit(make, mesh, &before, &[("stiffness", "")]), up);
            assert_eq!(
                edit(make, mesh, &before, &[("rayleighStiffness", "0.3")]),
                up
            );
        }

        // MeshSpringForceField divides by the rest lengths: re-initialised
        let mesh_springs = [("stiffness", "100"), ("damping", "1")];
        assert_eq!(
            edit(
                SpringForceField::mesh,
                &triangles,
                &mesh_springs,
                &[("stiffness", "50")]
            ),
            Reaction::Reinit
        );
    }
}
