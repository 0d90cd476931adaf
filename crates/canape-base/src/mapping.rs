//! BarycentricMapping: each output point is a fixed weighted sum of the input points of the
//! element (tetrahedron or hexahedron) that contains it in the rest configuration, or of the
//! nearest element when it lies outside the mesh. J is constant: positions and velocities go
//! down as J·x, forces go up as Jᵀ·f.

use crate::base_data;
use canape_core::component::{JEntry, MapInputs, Mapping, Passive, Role};
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext, Scene, Slot, Target};
use canape_core::state::VecId;
use canape_types::{get3, Mat3, Vec3};

/// Sparse constant J: for each output point, (input index, weight) pairs.
#[derive(Clone, Debug, Default)]
pub struct BarycentricWeights {
    pub ptr: Vec<u32>,
    pub idx: Vec<u32>,
    pub w: Vec<f64>,
}

impl BarycentricWeights {
    fn push(&mut self, pairs: &[(u32, f64)]) {
        if self.ptr.is_empty() {
            self.ptr.push(0);
        }
        for &(i, w) in pairs {
            self.idx.push(i);
            self.w.push(w);
        }
        self.ptr.push(self.idx.len() as u32);
    }
    pub fn rows(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }
    /// out = J in (Vec3 buffers)
    pub fn apply(&self, input: &[f64], out: &mut [f64]) {
        for r in 0..self.rows() {
            let mut s = Vec3::zeros();
            for k in self.ptr[r] as usize..self.ptr[r + 1] as usize {
                s += get3(input, self.idx[k] as usize) * self.w[k];
            }
            out[3 * r] = s.x;
            out[3 * r + 1] = s.y;
            out[3 * r + 2] = s.z;
        }
    }
    /// input += Jᵀ out
    pub fn apply_t(&self, out: &[f64], input: &mut [f64]) {
        for r in 0..self.rows() {
            let f = get3(out, r);
            for k in self.ptr[r] as usize..self.ptr[r + 1] as usize {
                let i = self.idx[k] as usize;
                for c in 0..3 {
                    input[3 * i + c] += f[c] * self.w[k];
                }
            }
        }
    }
}

/// Barycentric coordinates of `p` in tetrahedron `t` (weights of t[0..4]).
fn tetra_coords(t: &[Vec3; 4], p: &Vec3) -> Option<[f64; 4]> {
    let m = Mat3::from_columns(&[t[1] - t[0], t[2] - t[0], t[3] - t[0]]);
    let inv = m.try_inverse()?;
    let b = inv * (p - t[0]);
    Some([1.0 - b.x - b.y - b.z, b.x, b.y, b.z])
}

/// Trilinear coordinates (u, v, w) of `p` in a hexahedron (SOFA vertex order), by Newton.
fn hexa_coords(h: &[Vec3; 8], p: &Vec3) -> Option<Vec3> {
    let mut u = Vec3::new(0.5, 0.5, 0.5);
    for _ in 0..30 {
        let (a, b, c) = (u.x, u.y, u.z);
        let wts = hexa_weights(a, b, c);
        let mut x = Vec3::zeros();
        for k in 0..8 {
            x += h[k] * wts[k];
        }
        let r = x - p;
        if r.norm() < 1e-13 * (1.0 + p.norm()) {
            return Some(u);
        }
        // Jacobian columns d x / d(a,b,c)
        let da = (h[1] - h[0]) * ((1.0 - b) * (1.0 - c))
            + (h[2] - h[3]) * (b * (1.0 - c))
            + (h[5] - h[4]) * ((1.0 - b) * c)
            + (h[6] - h[7]) * (b * c);
        let db = (h[3] - h[0]) * ((1.0 - a) * (1.0 - c))
            + (h[2] - h[1]) * (a * (1.0 - c))
            + (h[7] - h[4]) * ((1.0 - a) * c)
            + (h[6] - h[5]) * (a * c);
        let dc = (h[4] - h[0]) * ((1.0 - a) * (1.0 - b))
            + (h[5] - h[1]) * (a * (1.0 - b))
            + (h[6] - h[2]) * (a * b)
            + (h[7] - h[3]) * ((1.0 - a) * b);
        let j = Mat3::from_columns(&[da, db, dc]);
        u -= j.try_inverse()? * r;
    }
    Some(u)
}

fn hexa_weights(a: f64, b: f64, c: f64) -> [f64; 8] {
    [
        (1.0 - a) * (1.0 - b) * (1.0 - c),
        a * (1.0 - b) * (1.0 - c),
        a * b * (1.0 - c),
        (1.0 - a) * b * (1.0 - c),
        (1.0 - a) * (1.0 - b) * c,
        a * (1.0 - b) * c,
        a * b * c,
        (1.0 - a) * b * c,
    ]
}

/// Compute weights of `points` in the elements of a mesh (tetrahedra preferred, else hexahedra).
pub fn compute_weights(
    rest: &[f64],
    tets: &[[u32; 4]],
    hexas: &[[u32; 8]],
    points: &[f64],
) -> Option<BarycentricWeights> {
    let mut wts = BarycentricWeights::default();
    if !tets.is_empty() {
        let cells: Vec<[Vec3; 4]> = tets
            .iter()
            .map(|t| t.map(|i| get3(rest, i as usize)))
            .collect();
        for p in points.chunks_exact(3) {
            let p = Vec3::new(p[0], p[1], p[2]);
            let mut best: Option<(f64, usize, [f64; 4])> = None;
            for (e, c) in cells.iter().enumerate() {
                if let Some(b) = tetra_coords(c, &p) {
                    let worst = b.iter().copied().fold(f64::INFINITY, f64::min);
                    if best.is_none_or(|(bw, _, _)| worst > bw) {
                        best = Some((worst, e, b));
                    }
                    if worst >= 0.0 {
                        break;
                    }
                }
            }
            let (_, e, b) = best?;
            let t = tets[e];
            wts.push(&[(t[0], b[0]), (t[1], b[1]), (t[2], b[2]), (t[3], b[3])]);
        }
        return Some(wts);
    }
    if !hexas.is_empty() {
        let cells: Vec<[Vec3; 8]> = hexas
            .iter()
            .map(|h| h.map(|i| get3(rest, i as usize)))
            .collect();
        for p in points.chunks_exact(3) {
            let p = Vec3::new(p[0], p[1], p[2]);
            let mut best: Option<(f64, usize, Vec3)> = None;
            for (e, c) in cells.iter().enumerate() {
                if let Some(u) = hexa_coords(c, &p) {
                    let out = [u.x, u.y, u.z, 1.0 - u.x, 1.0 - u.y, 1.0 - u.z]
                        .iter()
                        .copied()
                        .fold(f64::INFINITY, f64::min);
                    if best.is_none_or(|(bw, _, _)| out > bw) {
                        best = Some((out, e, u));
                    }
                    if out >= 0.0 {
                        break;
                    }
                }
            }
            let (_, e, u) = best?;
            let w = hexa_weights(u.x, u.y, u.z);
            let h = hexas[e];
            let pairs: Vec<(u32, f64)> = (0..8).map(|k| (h[k], w[k])).collect();
            wts.push(&pairs);
        }
        return Some(wts);
    }
    None
}

pub struct BarycentricMapping {
    data: DataTable,
    weights: BarycentricWeights,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
}

impl Default for BarycentricMapping {
    fn default() -> Self {
        Self::new()
    }
}

/// Resolve a mapping end: an explicit link, or the default node (`..` for input, `.` for output).
pub fn resolve_end(
    scene: &Scene,
    ctx_node: canape_core::scene::NodeId,
    me: ComponentId,
    link: &str,
    default: &str,
    want_state: bool,
) -> Option<ComponentId> {
    let l = link.trim();
    let path = if l.is_empty() {
        default
    } else {
        l.strip_prefix('@').unwrap_or(l)
    };
    match scene.resolve_path(ctx_node, Some(me), path)? {
        Target::Component(c) => Some(c),
        Target::Node(n) => {
            let st = scene.node_components(n, Role::State).next();
            if want_state {
                st
            } else {
                st.or_else(|| {
                    scene
                        .node_components(n, Role::Visual)
                        .find(|c| matches!(scene.info(*c).slot, Slot::Passive(_)))
                })
            }
        }
    }
}

/// Positions of a mapping's output (state rest position, or visual model points).
pub fn end_positions(scene: &Scene, id: ComponentId) -> Option<Vec<f64>> {
    match scene.info(id).slot {
        Slot::State(_) => scene.state(id).map(|s| s.vec(VecId::POSITION).to_vec()),
        Slot::Passive(i) => scene.passives[i]
            .as_ref()
            .and_then(|p| p.visual_mesh())
            .map(|m| canape_core::mesh::flatten_points(&m.points)),
        _ => None,
    }
}

impl BarycentricMapping {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with("input", DataKind::Str, "", "Input object to map")
            .with("output", DataKind::Str, "", "Output object to map")
            .with("mapForces", DataKind::Bool, "1", "Are forces mapped ?")
            .with(
                "mapConstraints",
                DataKind::Bool,
                "1",
                "Are constraints mapped ?",
            )
            .with("mapMasses", DataKind::Bool, "1", "Are masses mapped ?")
            .with(
                "mapMatrices",
                DataKind::Bool,
                "0",
                "Are matrix explicit mapped?",
            )
            .with(
                "applyRestPosition",
                DataKind::Bool,
                "0",
                "set to true to apply this mapping to restPosition at init",
            )
            .with(
                "useRestPosition",
                DataKind::Bool,
                "0",
                "Use the rest position of the input and output models to initialize the mapping",
            )
            .with(
                "topology",
                DataKind::Str,
                "",
                "link to the topology container",
            );
        BarycentricMapping {
            data,
            weights: BarycentricWeights::default(),
            input: Vec::new(),
            output: None,
        }
    }

    pub fn weights(&self) -> &BarycentricWeights {
        &self.weights
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let scene = ctx.scene;
        let input = resolve_end(scene, ctx.node, ctx.id, self.data.str("input"), "..", true);
        let output = resolve_end(scene, ctx.node, ctx.id, self.data.str("output"), ".", false);
        let (Some(input), Some(output)) = (input, output) else {
            ctx.error(format!(
                "cannot find the mapping's {} (input='{}', output='{}')",
                if input.is_none() {
                    "input state"
                } else {
                    "output"
                },
                self.data.str("input"),
                self.data.str("output")
            ));
            return;
        };
        let Some(ist) = scene.state(input) else {
            ctx.error("the mapping's input is not a MechanicalObject");
            return;
        };
        let rest = ist.vec(VecId::REST_POSITION).to_vec();
        let in_node = scene.info(input).node;
        let topo = scene
            .lineage(in_node)
            .into_iter()
            .flat_map(|n| {
                scene
                    .node_components(n, Role::Topology)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
            })
            .filter_map(|t| scene.topology(t))
            .find(|t| !t.mesh().tetrahedra.is_empty() || !t.mesh().hexahedra.is_empty());
        let Some(topo) = topo else {
            ctx.error("the input has no topology with tetrahedra or hexahedra (other barycentric mappers are not supported yet)");
            return;
        };
        if let Some(m) = topo.mesh().max_index() {
            if m as usize >= rest.len() / 3 {
                ctx.error(format!(
                    "the input topology uses point {m}, but the input state has {} points",
                    rest.len() / 3
                ));
                return;
            }
        }
        let Some(pts) = end_positions(scene, output) else {
            ctx.error("the mapping's output has no positions");
            return;
        };
        match compute_weights(&rest, &topo.mesh().tetrahedra, &topo.mesh().hexahedra, &pts) {
            Some(w) => {
                self.weights = w;
                self.input = vec![input];
                self.output = Some(output);
            }
            None => ctx.error("could not compute barycentric coordinates (degenerate elements?)"),
        }
    }
}

impl_component!(BarycentricMapping, "BarycentricMapping", init);

impl Mapping for BarycentricMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.weights.rows())
    }
    fn maps_forces(&self) -> bool {
        self.data.bool("mapForces")
    }
    fn applies_rest_position(&self) -> bool {
        self.data.bool("applyRestPosition")
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        self.weights.apply(x_in.get(0), x_out);
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        self.weights.apply(v_in.get(0), v_out);
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        self.weights.apply_t(f_out, &mut f_in[0]);
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        let w = &self.weights;
        for r in 0..w.rows() {
            for k in w.ptr[r] as usize..w.ptr[r + 1] as usize {
                for c in 0..3 {
                    out.push(JEntry {
                        row: (3 * r + c) as u32,
                        input: 0,
                        col: 3 * w.idx[k] + c as u32,
                        val: w.w[k],
                    });
                }
            }
        }
    }
}

/// OglModel: a visual mesh (points and faces), kept for the viewer and driven by its mapping.
pub struct OglModel {
    data: DataTable,
    mesh: canape_core::mesh::Mesh,
}

impl Default for OglModel {
    fn default() -> Self {
        Self::new()
    }
}

impl OglModel {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with("position", DataKind::Reals(3), "", "Vertices coordinates")
            .alias(&["vertices"])
            .with("triangles", DataKind::Ints(3), "", "Triangles of the mesh")
            .with("quads", DataKind::Ints(4), "", "Quads of the mesh")
            .with(
                "translation",
                DataKind::Vector(3),
                "0 0 0",
                "Initial Translation of the object",
            )
            .alias(&["dx"])
            .open();
        OglModel {
            data,
            mesh: Default::default(),
        }
    }
}

impl canape_core::component::Component for OglModel {
    fn class_name(&self) -> &'static str {
        "OglModel"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn init(&mut self, _ctx: &mut InitContext<'_>) {
        let mut pos = self.data.reals("position").to_vec();
        canape_core::state::apply_transform(
            &mut pos,
            &[1.0, 1.0, 1.0],
            &[0.0, 0.0, 0.0],
            self.data.reals("translation"),
        );
        self.mesh = canape_core::mesh::Mesh {
            points: canape_core::mesh::group_points(&pos),
            triangles: canape_core::mesh::group(self.data.ints("triangles")),
            quads: canape_core::mesh::group(self.data.ints("quads")),
            ..Default::default()
        };
    }
}

impl Passive for OglModel {
    fn role(&self) -> Role {
        Role::Visual
    }
    fn visual_mesh(&self) -> Option<&canape_core::mesh::Mesh> {
        Some(&self.mesh)
    }
    fn visual_mesh_mut(&mut self) -> Option<&mut canape_core::mesh::Mesh> {
        Some(&mut self.mesh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tetra_weights_reproduce_points_and_transpose_is_adjoint() {
        let rest = vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.];
        let pts = vec![0.2, 0.3, 0.1, 0.5, 0.5, 0.5];
        let w = compute_weights(&rest, &[[0, 1, 2, 3]], &[], &pts).unwrap();
        let mut out = vec![0.0; 6];
        w.apply(&rest, &mut out);
        for (a, b) in out.iter().zip(&pts) {
            assert!((a - b).abs() < 1e-12);
        }
        // <J x, y> == <x, Jᵀ y>
        let x: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
        let y: Vec<f64> = (0..6).map(|i| (i as f64 * 0.91).cos()).collect();
        let mut jx = vec![0.0; 6];
        w.apply(&x, &mut jx);
        let mut jty = vec![0.0; 12];
        w.apply_t(&y, &mut jty);
        let l: f64 = jx.iter().zip(&y).map(|(a, b)| a * b).sum();
        let r: f64 = x.iter().zip(&jty).map(|(a, b)| a * b).sum();
        assert!((l - r).abs() < 1e-12);
    }

    #[test]
    fn hexa_weights_reproduce_points() {
        let mut rest = Vec::new();
        for p in [
            (0., 0., 0.),
            (2., 0., 0.),
            (2., 1., 0.),
            (0., 1., 0.),
            (0., 0., 3.),
            (2., 0., 3.),
            (2., 1., 3.),
            (0., 1., 3.),
        ] {
            rest.extend_from_slice(&[p.0, p.1, p.2]);
        }
        let pts = vec![0.5, 0.25, 1.0, 1.9, 0.9, 2.9];
        let w = compute_weights(&rest, &[], &[[0, 1, 2, 3, 4, 5, 6, 7]], &pts).unwrap();
        let mut out = vec![0.0; 6];
        w.apply(&rest, &mut out);
        for (a, b) in out.iter().zip(&pts) {
            assert!((a - b).abs() < 1e-10);
        }
    }
}
