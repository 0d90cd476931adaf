//! The linear system of a group: `GroupSystem` applies A = mM + bB + kK matrix-free through the
//! graph or assembles it (through the mappings when there are any) for the linear solvers.

use super::*;
use crate::mapped::{self, StateMap, TripletSink};
use canape_core::matrix::{BlockFilter, BlockPart, Csr, MatrixSink};
use canape_core::state::{MechanicalObject, VecId};
use std::time::Instant;

impl GroupSystem<'_, '_> {
    /// The DOFs projective constraints fix, computed once per group work (constraints change
    /// only through Data edits, which clear it: `GroupWork::constraints_changed`).
    pub(super) fn fixed_mask(ops: &mut GroupOps<'_>, mask: &mut Vec<bool>) {
        if mask.len() == ops.group.size {
            return;
        }
        mask.clear();
        mask.resize(ops.group.size, false);
        for &(p, sp) in &ops.group.projective {
            if !ops.group.is_independent(sp) {
                continue;
            }
            let off = ops.group.offsets[sp];
            let ds = ops.states[ops.group.states[sp]]
                .as_ref()
                .unwrap()
                .dof
                .deriv_size();
            if let Some(c) = ops.projective[p].as_ref() {
                for d in c.fixed_scalar_dofs(ds) {
                    if off + d < mask.len() {
                        mask[off + d] = true;
                    }
                }
            }
        }
    }
}

impl LinearSystem for GroupSystem<'_, '_> {
    fn size(&self) -> usize {
        self.ops.group.size
    }

    /// SOFA's vDot visitor: each independent state's points in order, the states' sums added
    /// from 0 in the group's order.
    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        let g = self.ops.group;
        let mut total = 0.0;
        for (sp, &k) in g.states.iter().enumerate() {
            let Some(st) = self.ops.states[k].as_ref() else {
                continue;
            };
            let (off, len) = (g.offsets[sp], st.deriv_len());
            if let (Some(x), Some(y)) = (a.get(off..off + len), b.get(off..off + len)) {
                total += canape_types::dot_points(x, y, st.dof.deriv_size());
            }
        }
        total
    }

    fn apply(&mut self, x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        let g = self.ops.group;
        if !g.mappings.is_empty() {
            self.ops.apply_mapped(x, y, self.m, self.b, self.k);
            for &(p, sp) in &g.projective {
                if !g.is_independent(sp) {
                    continue;
                }
                let off = g.offsets[sp];
                let n = self.ops.states[g.states[sp]].as_ref().unwrap().deriv_len();
                if let Some(c) = self.ops.projective[p].as_ref() {
                    c.project_response(&mut y[off..off + n]);
                }
            }
            return;
        }
        for e in &g.forces {
            match *e {
                ForceEntry::Field { ff, state } => {
                    let off = g.offsets[state];
                    let n = self.ops.states[g.states[state]]
                        .as_ref()
                        .unwrap()
                        .deriv_len();
                    let f = self.ops.force_fields[ff].as_mut().unwrap();
                    let kf = self.k + self.b * f.rayleigh_stiffness();
                    if kf != 0.0 || self.b != 0.0 {
                        f.add_dforce(&x[off..off + n], &mut y[off..off + n], kf);
                    }
                    if self.b != 0.0 {
                        f.add_bdx(&x[off..off + n], &mut y[off..off + n], self.b);
                    }
                    if f.has_mass() && self.m != 0.0 {
                        f.add_mdx(&mut y[off..off + n], &x[off..off + n], self.m);
                    }
                }
                ForceEntry::Pair { ff, sides } => {
                    let f = self.ops.force_fields[ff].as_mut().unwrap();
                    let kf = self.k + self.b * f.rayleigh_stiffness();
                    if kf == 0.0 && self.b == 0.0 {
                        continue;
                    }
                    // no mappings: the group's states are all independent
                    let lens = pair_lens(self.ops.states, &sides);
                    let w = &mut self.ops.work.pair;
                    w.a.clear();
                    for (s, n) in sides.iter().zip(lens) {
                        match s.k {
                            Some(kk) => {
                                let o = g.offsets[kk];
                                w.a.extend_from_slice(&x[o..o + n]);
                            }
                            None => w.a.resize(w.a.len() + n, 0.0),
                        }
                    }
                    w.out.clear();
                    w.out.resize(w.a.len(), 0.0);
                    f.add_dforce(&w.a, &mut w.out, kf);
                    if self.b != 0.0 {
                        f.add_bdx(&w.a, &mut w.out, self.b);
                    }
                    let mut start = 0;
                    for (s, n) in sides.iter().zip(lens) {
                        if let Some(kk) = s.k {
                            let o = g.offsets[kk];
                            for (yy, v) in y[o..o + n].iter_mut().zip(&w.out[start..start + n]) {
                                *yy += v;
                            }
                        }
                        start += n;
                    }
                }
                ForceEntry::Mass { mass, state, .. } => {
                    let off = g.offsets[state];
                    let n = self.ops.states[g.states[state]]
                        .as_ref()
                        .unwrap()
                        .deriv_len();
                    let m = self.ops.masses[mass].as_ref().unwrap();
                    let mf = self.m - self.b * m.rayleigh_mass();
                    if mf != 0.0 {
                        m.add_mdx(&mut y[off..off + n], &x[off..off + n], mf);
                    }
                }
            }
        }
        for &(p, sp) in &g.projective {
            let off = g.offsets[sp];
            let n = self.ops.states[g.states[sp]].as_ref().unwrap().deriv_len();
            if let Some(c) = self.ops.projective[p].as_ref() {
                c.project_response(&mut y[off..off + n]);
            }
        }
    }

    fn assemble(&mut self) -> Csr {
        self.assemble_part(None)
    }

    fn assemble_block_diagonal(&mut self) -> Csr {
        self.assemble_part(Some(BlockPart::Diagonal))
    }

    fn assemble_upper(&mut self) -> Csr {
        self.assemble_part(Some(BlockPart::Upper))
    }
}

impl GroupSystem<'_, '_> {
    /// Assemble A (or only the part of its 3×3 blocks that `part` names, each part with a pattern
    /// cache of its own) with Dirichlet rows and columns for the projected DOFs.
    fn assemble_part(&mut self, part: Option<BlockPart>) -> Csr {
        let t0 = Instant::now();
        let g = self.ops.group;
        let (k, b, m) = (self.k, self.b, self.m);
        let force_fields = &*self.ops.force_fields;
        let masses = self.ops.masses;
        let maps = if g.mappings.is_empty() {
            Vec::new()
        } else {
            self.ops.state_maps()
        };
        let states = &*self.ops.states;
        let mappings = &*self.ops.mappings;
        let fid = self.ops.work.force_id.unwrap_or(VecId::FORCE);
        let fixed = &self.fixed;
        let fill = |t: &mut dyn MatrixSink| {
            // every fixed DOF has its diagonal entry (set to 1 below, as SOFA's projected matrix
            // has), even one that no mass or force field touches
            for (i, _) in fixed.iter().enumerate().filter(|(_, f)| **f) {
                t.add(i, i, 0.0);
            }
            if !g.mappings.is_empty() {
                fill_mapped(
                    g,
                    &maps,
                    states,
                    force_fields,
                    masses,
                    mappings,
                    fid,
                    (m, b, k),
                    t,
                );
                return;
            }
            for e in &g.forces {
                match *e {
                    ForceEntry::Field { ff, state } => {
                        let f = force_fields[ff].as_ref().unwrap();
                        let kf = k + b * f.rayleigh_stiffness();
                        if kf != 0.0 {
                            f.add_k_to_matrix(t, kf, g.offsets[state]);
                        }
                        if b != 0.0 {
                            let n = states[g.states[state]]
                                .as_ref()
                                .map_or(0, |s| s.deriv_len());
                            f.add_b_to_matrix(t, b, g.offsets[state], n);
                        }
                        if f.has_mass() && m != 0.0 {
                            f.add_m_to_matrix(t, m, g.offsets[state]);
                        }
                    }
                    ForceEntry::Pair { ff, sides } => {
                        let f = force_fields[ff].as_ref().unwrap();
                        let kf = k + b * f.rayleigh_stiffness();
                        let lens = pair_lens(states, &sides);
                        let mut sink = PairSink {
                            inner: t,
                            split: lens[0],
                            offsets: sides.map(|s| s.k.map(|kk| g.offsets[kk])),
                        };
                        if kf != 0.0 {
                            f.add_k_to_matrix(&mut sink, kf, 0);
                        }
                        if b != 0.0 {
                            f.add_b_to_matrix(&mut sink, b, 0, lens[0] + lens[1]);
                        }
                    }
                    ForceEntry::Mass { mass, state, .. } => {
                        let ms = masses[mass].as_ref().unwrap();
                        let mf = m - b * ms.rayleigh_mass();
                        if mf != 0.0 {
                            ms.add_m_to_matrix(t, mf, g.offsets[state]);
                        }
                    }
                }
            }
        };
        let work = &mut self.ops.work;
        let cache = match part {
            None => &mut work.cache,
            Some(BlockPart::Diagonal) => &mut work.diag_cache,
            Some(BlockPart::Upper) => &mut work.upper_cache,
        };
        let mut a = cache.assemble(g.size, |t| match part {
            None => fill(t),
            Some(part) => fill(&mut BlockFilter { part, sink: t }),
        });
        // Dirichlet rows/columns for projected DOFs: the entries to overwrite are found once per
        // pattern and fixed-DOF set
        let cache = &mut cache.dirichlet;
        let same = cache.as_ref().is_some_and(|(cols, mask, _)| {
            std::sync::Arc::ptr_eq(cols, &a.cols) && *mask == self.fixed
        });
        if !same {
            let mut list = Vec::new();
            for r in 0..a.n {
                for kk in a.row_ptr[r]..a.row_ptr[r + 1] {
                    let c = a.cols[kk] as usize;
                    if self.fixed[r] || self.fixed[c] {
                        list.push((kk as u32, r == c));
                    }
                }
            }
            *cache = Some((a.cols.clone(), self.fixed.clone(), list));
        }
        for &(kk, diag) in &cache.as_ref().expect("dirichlet list").2 {
            a.vals[kk as usize] = if diag { 1.0 } else { 0.0 };
        }
        self.ops.clock.assembly += t0.elapsed();
        a
    }
}

/// Fill an assembled matrix for a group with mappings: each component adds its matrix in its
/// state's own numbering, which reaches the group's DOFs as Jᵀ K J; each nonlinear mapping adds
/// k times its geometric stiffness under its output's force.
#[allow(clippy::too_many_arguments)]
fn fill_mapped(
    g: &Group,
    maps: &[StateMap],
    states: &[Option<MechanicalObject>],
    force_fields: &[Option<Box<dyn ForceField>>],
    masses: &[Option<Box<dyn Mass>>],
    mappings: &[Option<Box<dyn Mapping>>],
    fid: VecId,
    (m, b, k): (f64, f64, f64),
    t: &mut dyn MatrixSink,
) {
    let mut local = TripletSink::default();
    let mut pair_entries = Vec::new();
    for e in &g.forces {
        local.entries.clear();
        let state = match *e {
            ForceEntry::Pair { ff, sides } => {
                let f = force_fields[ff].as_ref().unwrap();
                let kf = k + b * f.rayleigh_stiffness();
                let lens = pair_lens(states, &sides);
                if kf != 0.0 {
                    f.add_k_to_matrix(&mut local, kf, 0);
                }
                if b != 0.0 {
                    f.add_b_to_matrix(&mut local, b, 0, lens[0] + lens[1]);
                }
                // concatenated numbering → (side, scalar) pairs, through each side's map
                let side = |i: u32| -> (u32, u32) {
                    if (i as usize) < lens[0] {
                        (0, i)
                    } else {
                        (1, i - lens[0] as u32)
                    }
                };
                pair_entries.clear();
                for &(r, c, v) in &local.entries {
                    let ((sr, r), (sc, c)) = (side(r), side(c));
                    pair_entries.push(KEntry {
                        in_row: sr,
                        row: r,
                        in_col: sc,
                        col: c,
                        val: v,
                    });
                }
                // a read-only side has no map: its entries are dropped
                let none = StateMap::Rows(mapped::SparseRows::default());
                let ins: Vec<&StateMap> = sides
                    .iter()
                    .map(|s| s.k.map_or(&none, |kk| &maps[kk]))
                    .collect();
                mapped::add_projected_k(&pair_entries, &ins, t);
                continue;
            }
            ForceEntry::Field { ff, state } => {
                let f = force_fields[ff].as_ref().unwrap();
                let kf = k + b * f.rayleigh_stiffness();
                if kf != 0.0 {
                    f.add_k_to_matrix(&mut local, kf, 0);
                }
                if b != 0.0 {
                    let n = states[g.state_of(state)]
                        .as_ref()
                        .map_or(0, |s| s.deriv_len());
                    f.add_b_to_matrix(&mut local, b, 0, n);
                }
                if f.has_mass() && m != 0.0 {
                    f.add_m_to_matrix(&mut local, m, 0);
                }
                state
            }
            ForceEntry::Mass { mass, state, .. } => {
                let ms = masses[mass].as_ref().unwrap();
                let mf = m - b * ms.rayleigh_mass();
                if mf != 0.0 {
                    ms.add_m_to_matrix(&mut local, mf, 0);
                }
                state
            }
        };
        let n = states[g.state_of(state)]
            .as_ref()
            .map_or(0, |s| s.deriv_len());
        mapped::add_projected(&local.entries, &maps[state], n, g.size, t);
    }
    if k != 0.0 {
        let mut ks = Vec::new();
        for gm in &g.mappings {
            ks.clear();
            let (Some(mp), Some(out)) = (mappings[gm.mapping].as_ref(), states[gm.output].as_ref())
            else {
                continue;
            };
            mp.geometric_stiffness(out.vec(fid), &mut ks);
            if ks.is_empty() {
                continue;
            }
            ks.iter_mut().for_each(|e| e.val *= k);
            let ins: Vec<&StateMap> = gm.inputs_k.iter().map(|&i| &maps[i]).collect();
            mapped::add_projected_k(&ks, &ins, t);
        }
    }
}
