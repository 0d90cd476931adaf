//! BarycentricMapping: each output point is a fixed weighted sum of the input points of the
//! element (tetrahedron, hexahedron, triangle, quad or edge) that contains it at init, or of the
//! nearest element when it lies outside the mesh (SOFA's MeshTopology mapper). J is constant:
//! positions and velocities go down as J·x, forces go up as Jᵀ·f.

use crate::mapping::linear::MappingData;
use canape_core::component::{JEntry, MapInputs, Mapping, Role};
use canape_core::data::{DataKind, DataTable, Flag, Text};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext, Scene, Slot, Target};
use canape_core::state::VecId;
use canape_types::{get3, DofType, Mat3, Vec3};

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

/// An element's affine frame: the inverse of the matrix whose columns are its edge vectors
/// from its first vertex (for a triangle or quad, the two edges and their cross product), with
/// that vertex and its centre.
struct Frame {
    inv: Mat3,
    origin: Vec3,
    center: Vec3,
}

impl Frame {
    fn new(origin: Vec3, axes: [Vec3; 3], center: Vec3) -> Self {
        let m = Mat3::from_columns(&axes);
        // a degenerate element gets a zero inverse: its coordinates are 0, never "inside"
        let inv = m.try_inverse().unwrap_or_else(Mat3::zeros);
        Frame {
            inv,
            origin,
            center,
        }
    }
    fn coords(&self, p: &Vec3) -> Vec3 {
        self.inv * (p - self.origin)
    }
}

/// How far outside an element a point is, from its coordinates `v` (≤ 0: inside); SOFA's
/// per-element-type tests, with the 0.01 tolerance off the plane of surface elements.
#[derive(Clone, Copy)]
enum Shape {
    Tetra,
    Hexa,
    Triangle,
    Quad,
}

fn outside(shape: Shape, v: &Vec3) -> f64 {
    match shape {
        Shape::Tetra => (-v.x).max(-v.y).max(-v.z).max(v.x + v.y + v.z - 1.0),
        Shape::Hexa => (-v.x)
            .max(-v.y)
            .max(-v.z)
            .max(v.x - 1.0)
            .max(v.y - 1.0)
            .max(v.z - 1.0),
        Shape::Triangle => (-v.x).max(-v.y).max(v.z.abs() - 0.01).max(v.x + v.y - 1.0),
        Shape::Quad => (-v.x)
            .max(-v.y)
            .max(v.x - 1.0)
            .max(v.y - 1.0)
            .max(v.z - 0.01)
            .max(-v.z - 0.01),
    }
}

/// Weights of an element's vertices at coordinates `v`.
fn shape_weights(shape: Shape, v: &Vec3) -> Vec<f64> {
    let (a, b, c) = (v.x, v.y, v.z);
    match shape {
        Shape::Tetra => vec![1.0 - a - b - c, a, b, c],
        Shape::Hexa => hexa_weights(a, b, c).to_vec(),
        Shape::Triangle => vec![1.0 - a - b, a, b],
        Shape::Quad => vec![(1.0 - a) * (1.0 - b), a * (1.0 - b), a * b, (1.0 - a) * b],
    }
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

/// Why barycentric weights cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BarycentricError {
    #[error("the input topology uses point {max}, but the input state has {points} points")]
    TopologyBeyondState { max: u32, points: usize },
    #[error(
        "the input topology has no elements (tetrahedra, hexahedra, triangles, quads or edges)"
    )]
    NoElements,
    #[error("no element is near enough to a mapped point")]
    NoElementNear,
    #[error("the input grid has no hexahedron to map points in")]
    NoHexahedron,
    /// The grid's locator answered a hexahedron it does not have.
    #[error("the input grid located a point in hexahedron {hexahedron}, beyond its {count}")]
    HexahedronBeyondGrid { hexahedron: usize, count: usize },
}

/// Compute the weights of `points` in the elements of `mesh` (positions `x`), as SOFA's
/// BarycentricMapperMeshTopology::init does
/// (Sofa/Component/Mapping/Linear/.../BarycentricMappers/BarycentricMapperMeshTopology.inl). One
/// tier of elements is used: tetrahedra and hexahedra when there are any, else triangles and
/// quads, else edges. Each element has an affine frame from its first vertex (tetrahedron: its
/// three edges; hexahedron: x1−x0, x3−x0, x4−x0; triangle: its two edges and their cross
/// product; quad: x1−x0, x3−x0 and their cross product); a point takes the element it is the
/// deepest inside, or, when outside all, the element with the nearest centre (squared distance),
/// the first on ties, with unclamped coordinates (extrapolation). Surface points are projected
/// on the element's plane. Weights: tetrahedron/triangle barycentric, hexahedron/quad
/// (tri)linear in the affine coordinates. On edges: the first edge whose span contains the
/// point's projection, else the last edge.
pub fn compute_weights(
    x: &[f64],
    mesh: &canape_core::mesh::Mesh,
    points: &[f64],
) -> Result<BarycentricWeights, BarycentricError> {
    let n = x.len() / 3;
    if let Some(m) = mesh.max_index() {
        if m as usize >= n {
            return Err(BarycentricError::TopologyBeyondState { max: m, points: n });
        }
    }
    let pt = |i: u32| get3(x, i as usize);
    let mut wts = BarycentricWeights::default();
    let mut elements: Vec<(Shape, Vec<u32>, Frame)> = Vec::new();
    if !mesh.tetrahedra.is_empty() || !mesh.hexahedra.is_empty() {
        for t in &mesh.tetrahedra {
            let p = t.map(pt);
            let center = (p[0] + p[1] + p[2] + p[3]) / 4.0;
            let f = Frame::new(p[0], [p[1] - p[0], p[2] - p[0], p[3] - p[0]], center);
            elements.push((Shape::Tetra, t.to_vec(), f));
        }
        for h in &mesh.hexahedra {
            let p = h.map(pt);
            let center = p.iter().sum::<Vec3>() / 8.0;
            let f = Frame::new(p[0], [p[1] - p[0], p[3] - p[0], p[4] - p[0]], center);
            elements.push((Shape::Hexa, h.to_vec(), f));
        }
    } else if !mesh.triangles.is_empty() || !mesh.quads.is_empty() {
        for t in &mesh.triangles {
            let p = t.map(pt);
            let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
            let f = Frame::new(p[0], [e1, e2, e1.cross(&e2)], (p[0] + p[1] + p[2]) / 3.0);
            elements.push((Shape::Triangle, t.to_vec(), f));
        }
        for q in &mesh.quads {
            let p = q.map(pt);
            let (e1, e2) = (p[1] - p[0], p[3] - p[0]);
            let center = (p[0] + p[1] + p[2] + p[3]) / 4.0;
            elements.push((
                Shape::Quad,
                q.to_vec(),
                Frame::new(p[0], [e1, e2, e1.cross(&e2)], center),
            ));
        }
    } else if !mesh.edges.is_empty() {
        for p in points.chunks_exact(3) {
            let p = Vec3::new(p[0], p[1], p[2]);
            let mut chosen = None;
            for e in &mesh.edges {
                let (a, b) = (pt(e[0]), pt(e[1]));
                let d = b - a;
                let l2 = d.norm_squared();
                let coef = if l2 > 0.0 { (p - a).dot(&d) / l2 } else { 0.0 };
                chosen = Some((*e, coef));
                if (0.0..=1.0).contains(&coef) {
                    break;
                }
            }
            let (e, f) = chosen.expect("edges");
            wts.push(&[(e[0], 1.0 - f), (e[1], f)]);
        }
        return Ok(wts);
    } else {
        return Err(BarycentricError::NoElements);
    }
    for p in points.chunks_exact(3) {
        let p = Vec3::new(p[0], p[1], p[2]);
        let mut best: Option<(f64, usize, Vec3)> = None;
        let mut dist = 1e10;
        for (k, (shape, _, f)) in elements.iter().enumerate() {
            let v = f.coords(&p);
            let mut d = outside(*shape, &v);
            if d > 0.0 {
                d = (p - f.center).norm_squared();
            }
            if d < dist {
                dist = d;
                best = Some((d, k, v));
            }
        }
        let Some((_, k, v)) = best else {
            return Err(BarycentricError::NoElementNear);
        };
        let (shape, verts, _) = &elements[k];
        let w = shape_weights(*shape, &v);
        let pairs: Vec<(u32, f64)> = verts.iter().copied().zip(w).collect();
        wts.push(&pairs);
    }
    Ok(wts)
}

/// Weights of `points` on a grid that locates them itself, as SOFA's
/// BarycentricMapperSparseGridTopology::init does
/// (Sofa/Component/Mapping/Linear/.../BarycentricMappers/BarycentricMapperSparseGridTopology.inl):
/// the grid's `findCube`, else its `findNearestCube`, in the grid's own frame (the input state's
/// positions are not read, so a translated grid state carries its mapped points along); the
/// hexahedron's eight corners weigh trilinearly, extrapolating outside [0, 1].
pub fn locate_in_cubes(
    locator: &dyn canape_core::component::CubeLocator,
    mesh: &canape_core::mesh::Mesh,
    nb_inputs: usize,
    points: &[f64],
) -> Result<BarycentricWeights, BarycentricError> {
    if let Some(m) = mesh.max_index() {
        if m as usize >= nb_inputs {
            return Err(BarycentricError::TopologyBeyondState {
                max: m,
                points: nb_inputs,
            });
        }
    }
    let mut wts = BarycentricWeights::default();
    for p in points.chunks_exact(3) {
        let p = [p[0], p[1], p[2]];
        let found = locator
            .find_cube(&p)
            .or_else(|| locator.find_nearest_cube(&p));
        let Some((h, [a, b, c])) = found else {
            return Err(BarycentricError::NoHexahedron);
        };
        let Some(hexa) = mesh.hexahedra.get(h) else {
            return Err(BarycentricError::HexahedronBeyondGrid {
                hexahedron: h,
                count: mesh.hexahedra.len(),
            });
        };
        let w = hexa_weights(a, b, c);
        let pairs: Vec<(u32, f64)> = hexa.iter().copied().zip(w).collect();
        wts.push(&pairs);
    }
    Ok(wts)
}

#[derive(Clone)]
pub struct BarycentricMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: BarycentricData,
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
                // a node without a state stands for its context's (the nearest above it)
                st.or_else(|| scene.context_state(n))
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

canape_core::data_schema! {
    /// BarycentricMapping's own Data (after [`MappingData`]).
    struct BarycentricData {
        use_rest_position: Flag = ("useRestPosition", DataKind::Bool, "0", "Use the rest position of the input and output models to initialize the mapping"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

impl BarycentricMapping {
    pub fn new() -> Self {
        let (data, m) = crate::mapping::linear::mapping_base(DataTable::new());
        let (data, d) = BarycentricData::declare(data);
        BarycentricMapping {
            data,
            m,
            d,
            weights: BarycentricWeights::default(),
            input: Vec::new(),
            output: None,
        }
    }

    pub fn weights(&self) -> &BarycentricWeights {
        &self.weights
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = crate::mapping::linear::resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        if e.inputs.len() != 1 || e.in_dofs[0] != DofType::Vec3 || e.out_dof != DofType::Vec3 {
            ctx.error(format!(
                "BarycentricMapping maps one Vec3d input to a Vec3d output or a visual model ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        let (input, output) = (e.inputs[0], e.output);
        let scene = ctx.scene;
        let ist = scene.state(input).expect("a resolved input is a state");
        // positions at init: current ones, or rest ones with useRestPosition (SOFA's initMapper)
        let use_rest = self.data.get(self.d.use_rest_position);
        let x = ist
            .vec(if use_rest {
                VecId::REST_POSITION
            } else {
                VecId::POSITION
            })
            .to_vec();
        // the input's topology: the nearest in its context (its node first, then ancestors)
        let in_node = scene.info(input).node;
        let topo = scene
            .lineage(in_node)
            .into_iter()
            .flat_map(|n| scene.node_components(n, Role::Topology).collect::<Vec<_>>())
            .find_map(|t| scene.topology(t));
        let Some(topo) = topo else {
            ctx.error(
                "the input has no topology: a BarycentricMapping maps points in its elements",
            );
            return;
        };
        let pts = match scene.state(output) {
            Some(st) if use_rest => Some(st.vec(VecId::REST_POSITION).to_vec()),
            _ => end_positions(scene, output),
        };
        let Some(pts) = pts else {
            ctx.error("the mapping's output has no positions");
            return;
        };
        // a grid that locates points itself (SparseGridRamificationTopology): SOFA's
        // BarycentricMapperSparseGridTopology, trilinear weights on the hexahedron it answers
        if let Some(locator) = topo.cube_locator() {
            match locate_in_cubes(locator, topo.mesh(), x.len() / 3, &pts) {
                Ok(w) => {
                    self.weights = w;
                    self.input = vec![input];
                    self.output = Some(output);
                }
                Err(e) => ctx.error(e.to_string()),
            }
            return;
        }
        // a grid topology locates the points in its own geometry (SOFA's
        // BarycentricMapperRegularGridTopology/SparseGridTopology call the grid's findCube), so
        // a state translated from its grid (MechanicalObject dz) carries its mapped points along
        let grid_points = topo.mesh().points.as_flattened();
        let grid = matches!(
            topo.class_name(),
            "RegularGridTopology" | "SparseGridTopology"
        );
        let x = if grid && !use_rest && grid_points.len() == x.len() {
            grid_points.to_vec()
        } else {
            x
        };
        match compute_weights(&x, topo.mesh(), &pts) {
            Ok(w) => {
                self.weights = w;
                self.input = vec![input];
                self.output = Some(output);
            }
            Err(e) => ctx.error(e.to_string()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tetra_weights_reproduce_points_and_transpose_is_adjoint() {
        let rest = vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.];
        let pts = vec![0.2, 0.3, 0.1, 0.5, 0.5, 0.5];
        let mesh = canape_core::mesh::Mesh {
            tetrahedra: vec![[0, 1, 2, 3]],
            ..Default::default()
        };
        let w = compute_weights(&rest, &mesh, &pts).unwrap();
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
        let mesh = canape_core::mesh::Mesh {
            hexahedra: vec![[0, 1, 2, 3, 4, 5, 6, 7]],
            ..Default::default()
        };
        let w = compute_weights(&rest, &mesh, &pts).unwrap();
        let mut out = vec![0.0; 6];
        w.apply(&rest, &mut out);
        for (a, b) in out.iter().zip(&pts) {
            assert!((a - b).abs() < 1e-10);
        }
    }
}
