//! Mechanics through the mapping graph of a solver group (SOFA's mechanical visitors over
//! mapped nodes): vectors go down the mappings top-down (positions with `apply`, velocities and
//! displacements with `apply_j`), forces come up bottom-up (`apply_jt`, plus the geometric
//! stiffness `apply_djt` of nonlinear mappings inside stiffness products), and assembled
//! matrices of components on mapped states are brought to the independent DOFs as Jᵀ K J with
//! the Jacobians composed along the mapping chain (SOFA's MatrixLinearSystem with its mapping
//! graph, Sofa/Component/LinearSystem/src/sofa/component/linearsystem/MatrixLinearSystem.inl).
//!
//! Every loop runs in the group's mapping order (document order, which is top-down), so the
//! results do not depend on anything but the scene.

use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::matrix::MatrixSink;
use canape_core::state::{MechanicalObject, VecId};

/// A mechanical mapping of a group: its slot in the scene's mapping arena, its input states
/// and its output state (indices into the scene's state arena).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupMapping {
    pub mapping: usize,
    pub inputs: Vec<usize>,
    pub output: usize,
    /// The inputs and the output as indices into the group's state list (`Group::state_of`).
    pub inputs_k: Vec<usize>,
    pub output_k: usize,
    /// SOFA's `mapForces`: false for a mapping that only carries constraints up (its output's
    /// force fields and masses are left out of the group, and forces do not go up through it).
    pub forces: bool,
}

type States = [Option<MechanicalObject>];
type Mappings = [Option<Box<dyn Mapping>>];

/// Positions (`apply`) and velocities (`apply_j`) down every mapping, top-down.
pub fn propagate_x_v(states: &mut States, maps: &mut Mappings, gms: &[GroupMapping]) {
    for gm in gms {
        let Some(m) = maps[gm.mapping].as_mut() else {
            continue;
        };
        let Some(out) = states[gm.output].as_mut() else {
            continue;
        };
        let mut x = out.take(VecId::POSITION);
        m.apply(&MapInputs::new(states, &gm.inputs, VecId::POSITION), &mut x);
        states[gm.output].as_mut().unwrap().put(VecId::POSITION, x);
        let mut v = states[gm.output].as_mut().unwrap().take(VecId::VELOCITY);
        m.apply_j(&MapInputs::new(states, &gm.inputs, VecId::VELOCITY), &mut v);
        states[gm.output].as_mut().unwrap().put(VecId::VELOCITY, v);
    }
}

/// Derivative vector `id` down every mapping (`apply_j`), top-down.
pub fn propagate_dx(states: &mut States, maps: &Mappings, gms: &[GroupMapping], id: VecId) {
    for gm in gms {
        let Some(m) = maps[gm.mapping].as_ref() else {
            continue;
        };
        let Some(out) = states[gm.output].as_mut() else {
            continue;
        };
        let mut v = out.take(id);
        m.apply_j(&MapInputs::new(states, &gm.inputs, id), &mut v);
        states[gm.output].as_mut().unwrap().put(id, v);
    }
}

/// Forces `df` up every mapping, bottom-up: inputs += Jᵀ output. With `djt = Some((dx, f, k))`
/// each mapping then adds its geometric stiffness k · dJᵀ(f_out) dx_in (SOFA's
/// MechanicalAddMBKdxVisitor, which calls applyDJT after applyJT when the stiffness factor is
/// not zero). `scratch` holds the input buffers while they are written (kept across calls).
pub fn accumulate(
    states: &mut States,
    maps: &Mappings,
    gms: &[GroupMapping],
    df: VecId,
    djt: Option<(VecId, VecId, f64)>,
    scratch: &mut Vec<Vec<f64>>,
) {
    accumulate_through(states, maps, gms, df, djt, scratch, false);
}

/// [`accumulate`] for Lagrangian constraint rows: through every mapping, those that map
/// constraints but not forces (`mapForces` false) included.
pub fn accumulate_constraints(
    states: &mut States,
    maps: &Mappings,
    gms: &[GroupMapping],
    df: VecId,
    scratch: &mut Vec<Vec<f64>>,
) {
    accumulate_through(states, maps, gms, df, None, scratch, true);
}

fn accumulate_through(
    states: &mut States,
    maps: &Mappings,
    gms: &[GroupMapping],
    df: VecId,
    djt: Option<(VecId, VecId, f64)>,
    scratch: &mut Vec<Vec<f64>>,
    constraints: bool,
) {
    for gm in gms.iter().rev() {
        if !(gm.forces || constraints) {
            continue;
        }
        let Some(m) = maps[gm.mapping].as_ref() else {
            continue;
        };
        scratch.clear();
        for &i in &gm.inputs {
            let v = states[i].as_mut().map(|s| s.take(df)).unwrap_or_default();
            scratch.push(v);
        }
        if let Some(out) = states[gm.output].as_ref() {
            m.apply_jt(out.vec(df), scratch);
            if let Some((dx, f, k)) = djt {
                if k != 0.0 {
                    m.apply_djt(
                        &MapInputs::new(states, &gm.inputs, dx),
                        out.vec(f),
                        scratch,
                        k,
                    );
                }
            }
        }
        for (&i, v) in gm.inputs.iter().zip(scratch.drain(..)) {
            if let Some(s) = states[i].as_mut() {
                s.put(df, v);
            }
        }
    }
}

/// Sparse rows: for each derivative scalar of a state, the (group column, weight) pairs of its
/// dependence on the group's independent DOFs.
#[derive(Clone, Debug, Default)]
pub struct SparseRows {
    pub ptr: Vec<usize>,
    pub cols: Vec<u32>,
    pub vals: Vec<f64>,
}

impl SparseRows {
    pub fn row(&self, r: usize) -> (&[u32], &[f64]) {
        if r + 1 >= self.ptr.len() {
            return (&[], &[]);
        }
        let (a, b) = (self.ptr[r], self.ptr[r + 1]);
        (&self.cols[a..b], &self.vals[a..b])
    }
    fn rows(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }
}

/// How a state's derivative scalars relate to the group's independent DOFs: an independent
/// state sits at an offset; a mapped state has composed Jacobian rows.
#[derive(Clone, Debug)]
pub enum StateMap {
    Offset(usize),
    Rows(SparseRows),
}

impl StateMap {
    /// Call `f(col, weight)` for the group columns of derivative scalar `r` of this state.
    #[inline]
    fn each(&self, r: usize, mut f: impl FnMut(u32, f64)) {
        match self {
            StateMap::Offset(o) => f((o + r) as u32, 1.0),
            StateMap::Rows(rows) => {
                let (c, v) = rows.row(r);
                for (c, v) in c.iter().zip(v) {
                    f(*c, *v);
                }
            }
        }
    }
}

/// The composed Jacobian rows of a mapped state from its mapping's Jacobian and its inputs'
/// maps (entries of one row merged by column, summed in the order they come).
pub fn compose(
    entries: &[JEntry],
    out_len: usize,
    inputs: &[&StateMap],
    acc: &mut Vec<f64>,
    mark: &mut Vec<u32>,
    group_size: usize,
) -> SparseRows {
    let mut by_row: Vec<Vec<(u32, u32, f64)>> = vec![Vec::new(); out_len];
    for e in entries {
        if (e.row as usize) < out_len {
            by_row[e.row as usize].push((e.input, e.col, e.val));
        }
    }
    acc.clear();
    acc.resize(group_size, 0.0);
    mark.clear();
    mark.resize(group_size, u32::MAX);
    let mut rows = SparseRows {
        ptr: vec![0],
        ..Default::default()
    };
    let mut touched: Vec<u32> = Vec::new();
    for (r, list) in by_row.iter().enumerate() {
        touched.clear();
        for &(inp, col, val) in list {
            let Some(map) = inputs.get(inp as usize) else {
                continue;
            };
            map.each(col as usize, |c, w| {
                if mark[c as usize] != r as u32 {
                    mark[c as usize] = r as u32;
                    acc[c as usize] = 0.0;
                    touched.push(c);
                }
                acc[c as usize] += val * w;
            });
        }
        touched.sort_unstable();
        for &c in &touched {
            rows.cols.push(c);
            rows.vals.push(acc[c as usize]);
        }
        rows.ptr.push(rows.cols.len());
    }
    rows
}

/// Collects a component's matrix entries in its state's own numbering (a mapped state's local
/// matrix before Jᵀ K J).
#[derive(Default)]
pub struct TripletSink {
    pub entries: Vec<(u32, u32, f64)>,
}

impl MatrixSink for TripletSink {
    fn add(&mut self, row: usize, col: usize, v: f64) {
        self.entries.push((row as u32, col as u32, v));
    }
}

/// Add Jᵀ K J into `sink`, with K given by `local` entries over a state whose map to the
/// group's DOFs is `map` (K J row by row through a dense accumulator, then Jᵀ (K J)); the
/// products are merged by (row, column) in a fixed order before they reach the sink.
pub fn add_projected(
    local: &[(u32, u32, f64)],
    map: &StateMap,
    n_rows: usize,
    group_size: usize,
    sink: &mut dyn MatrixSink,
) {
    if let StateMap::Offset(o) = map {
        for &(r, c, v) in local {
            sink.add(o + r as usize, o + c as usize, v);
        }
        return;
    }
    // local entries grouped by row, in their order
    let mut by_row: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n_rows];
    for &(r, c, v) in local {
        if (r as usize) < n_rows {
            by_row[r as usize].push((c, v));
        }
    }
    let mut acc = vec![0.0; group_size];
    let mut mark = vec![u32::MAX; group_size];
    let mut touched: Vec<u32> = Vec::new();
    let mut out: Vec<(u32, u32, f64)> = Vec::new();
    for (r, list) in by_row.iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        touched.clear();
        for &(c, v) in list {
            map.each(c as usize, |j, b| {
                if mark[j as usize] != r as u32 {
                    mark[j as usize] = r as u32;
                    acc[j as usize] = 0.0;
                    touched.push(j);
                }
                acc[j as usize] += v * b;
            });
        }
        touched.sort_unstable();
        map.each(r, |i, a| {
            for &j in &touched {
                out.push((i, j, a * acc[j as usize]));
            }
        });
    }
    emit_merged(&mut out, sink);
}

/// Add a mapping's geometric stiffness (over its inputs) into `sink` through its inputs' maps.
pub fn add_projected_k(entries: &[KEntry], inputs: &[&StateMap], sink: &mut dyn MatrixSink) {
    let mut out: Vec<(u32, u32, f64)> = Vec::new();
    for e in entries {
        let (Some(a), Some(b)) = (inputs.get(e.in_row as usize), inputs.get(e.in_col as usize))
        else {
            continue;
        };
        a.each(e.row as usize, |i, wa| {
            b.each(e.col as usize, |j, wb| out.push((i, j, wa * e.val * wb)));
        });
    }
    emit_merged(&mut out, sink);
}

fn emit_merged(out: &mut [(u32, u32, f64)], sink: &mut dyn MatrixSink) {
    // stable: equal (row, col) keep their order, so the sums are the same run to run
    out.sort_by_key(|&(i, j, _)| (i, j));
    let mut k = 0;
    while k < out.len() {
        let (i, j, mut v) = out[k];
        k += 1;
        while k < out.len() && out[k].0 == i && out[k].1 == j {
            v += out[k].2;
            k += 1;
        }
        sink.add(i as usize, j as usize, v);
    }
}

/// Number of derivative rows of a map (for tests and checks).
pub fn rows_of(map: &StateMap) -> Option<usize> {
    match map {
        StateMap::Offset(_) => None,
        StateMap::Rows(r) => Some(r.rows()),
    }
}
