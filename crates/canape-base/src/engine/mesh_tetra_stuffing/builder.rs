//! The tetrahedra from the lattice ones: kept, flipped or cut where they cross the surface, and
//! SOFA's final check.

use super::geometry::vol6;
use super::lattice::Lattice;
use super::{Notes, P3};

use std::collections::{BTreeMap, BTreeSet};

/// The tetrahedra, from the lattice ones (MeshTetraStuffing.cpp: addTetra, addFinalTetra,
/// needFlip, flipDiag, getSplitPoint).
pub(super) struct Builder {
    pub(super) ph0: usize,
    pub(super) split: bool,
    pub(super) points: Vec<P3>,
    /// > 0 inside, < 0 outside, 0 on the surface (snapped).
    pub(super) inside: Vec<i32>,
    /// (outside point, inside point) → cut point.
    pub(super) split_points: BTreeMap<(usize, usize), usize>,
    pub(super) tetrahedra: Vec<[usize; 4]>,
    pub(super) notes: Notes,
}

impl Builder {
    /// The four BCC tetrahedra around each g-grid edge, edges along x, y then z of each g point.
    pub(super) fn lattice_tetrahedra(&mut self, l: &Lattice) {
        let [gx, gy, gz] = l.gsize;
        let hx = l.hsize[0];
        let gxy = gx * gy;
        let hxy = hx * l.hsize[1];
        let mut p = 0;
        let mut ph = l.ph0;
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    let shells: [(bool, usize, [usize; 4]); 3] = [
                        (x > 0, 1, [ph, ph + hx, ph + hx + hxy, ph + hxy]),
                        (y > 0, gx, [ph, ph + hxy, ph + 1 + hxy, ph + 1]),
                        (z > 0, gxy, [ph, ph + 1, ph + 1 + hx, ph + hx]),
                    ];
                    for (present, step, shell) in shells {
                        if !present {
                            continue;
                        }
                        for i in 0..4 {
                            self.add_tetra([p, p - step, shell[(i + 1) % 4], shell[i]]);
                        }
                    }
                    p += 1;
                    ph += 1;
                }
                ph += 1;
            }
            ph += hx;
        }
    }

    fn vol6(&self, t: [usize; 4]) -> f64 {
        vol6(
            self.points[t[0]],
            self.points[t[1]],
            self.points[t[2]],
            self.points[t[3]],
        )
    }

    /// One lattice tetrahedron: dropped when outside, kept whole when no vertex is outside (or
    /// without splitting), else cut along the surface.
    fn add_tetra(&mut self, mut p: [usize; 4]) {
        if self.vol6(p) < 0.0 {
            p.swap(2, 3);
        }
        let sign = p.map(|v| self.inside[v]);
        let mut pneg = Vec::with_capacity(4);
        let mut ppos = Vec::with_capacity(4);
        let mut pzero = Vec::with_capacity(4);
        for (v, s) in p.iter().zip(sign) {
            if s < 0 {
                pneg.push(*v);
            } else if s > 0 {
                ppos.push(*v);
            } else {
                pzero.push(*v);
            }
        }
        let (npos, nneg) = (ppos.len(), pneg.len());
        if npos == 0 && nneg > 0 {
            return;
        }
        if nneg == 0 || !self.split {
            self.add_final(p, false);
        } else if npos == 1 {
            // one tetrahedron: the outside vertices move to the cut points
            let mut q = p;
            for k in 0..4 {
                if sign[k] < 0 {
                    q[k] = self.split_point(p[k], ppos[0]);
                }
            }
            self.add_final(q, false);
        } else if npos == 2 && nneg == 1 {
            let p0 = pzero[0];
            let cut1 = self.split_point(pneg[0], ppos[0]);
            let cut2 = self.split_point(pneg[0], ppos[1]);
            let flip_d = self.flip_diag(ppos[0], ppos[1], cut2, cut1, pneg[0]);
            let flip_t = need_flip([p0, ppos[0], ppos[1], pneg[0]], p);
            if !flip_d {
                self.add_final([p0, ppos[0], ppos[1], cut2], flip_t);
                self.add_final([p0, ppos[0], cut2, cut1], flip_t);
            } else {
                self.add_final([p0, ppos[0], ppos[1], cut1], flip_t);
                self.add_final([p0, ppos[1], cut2, cut1], flip_t);
            }
        } else if npos == 2 && nneg == 2 {
            let cut1 = self.split_point(pneg[0], ppos[0]);
            let cut2 = self.split_point(pneg[0], ppos[1]);
            let cut3 = self.split_point(pneg[1], ppos[0]);
            let cut4 = self.split_point(pneg[1], ppos[1]);
            let flip_a = self.flip_diag(ppos[0], ppos[1], cut2, cut1, pneg[0]);
            let flip_b = self.flip_diag(ppos[0], ppos[1], cut4, cut3, pneg[1]);
            let flip_t = need_flip([ppos[0], ppos[1], pneg[0], pneg[1]], p);
            if !flip_a && flip_b {
                self.add_final([ppos[0], ppos[1], cut2, cut3], flip_t);
                self.add_final([ppos[0], cut2, cut1, cut3], flip_t);
                self.add_final([ppos[1], cut2, cut3, cut4], flip_t);
            } else if flip_a && !flip_b {
                self.add_final([ppos[0], ppos[1], cut1, cut4], flip_t);
                self.add_final([ppos[1], cut1, cut4, cut2], flip_t);
                self.add_final([ppos[0], cut1, cut3, cut4], flip_t);
            } else {
                // as SOFA: nothing is emitted (a hole in the mesh)
                self.notes.push("invalid tetrahedron split", || {
                    format!(
                        "Invalid tetra split: flipA = {flip_a}   flipB = {flip_b} (lattice tetrahedron {p:?} dropped)"
                    )
                });
            }
        } else {
            // three inside vertices, one outside
            let n0 = pneg[0];
            let cut1 = self.split_point(n0, ppos[0]);
            let cut2 = self.split_point(n0, ppos[1]);
            let cut3 = self.split_point(n0, ppos[2]);
            let f1 = self.flip_diag(ppos[0], ppos[1], cut2, cut1, n0);
            let f2 = self.flip_diag(ppos[1], ppos[2], cut3, cut2, n0);
            let mut f3 = self.flip_diag(ppos[2], ppos[0], cut1, cut3, n0);
            if f1 == f2 && f2 == f3 {
                self.notes.push("invalid tetrahedron split", || {
                    format!("Invalid tetra split (lattice tetrahedron {p:?})")
                });
                f3 = !f1;
            }
            let pp0 = if f1 && !f2 {
                ppos[1]
            } else if f2 && !f3 {
                ppos[2]
            } else {
                ppos[0]
            };
            let pc0 = if !f1 && f2 {
                cut2
            } else if !f2 && f3 {
                cut3
            } else {
                cut1
            };
            let flip_t = need_flip([n0, ppos[0], ppos[1], ppos[2]], p);
            self.add_final([pp0, cut1, cut3, cut2], flip_t);
            self.add_final([pc0, ppos[0], ppos[1], ppos[2]], flip_t);
            if f1 == f2 {
                let other = if pp0 == ppos[0] { ppos[2] } else { ppos[0] };
                let flip = need_flip([ppos[1], n0, pp0, other], p);
                self.add_final([ppos[1], cut2, pp0, pc0], flip);
            } else if f2 == f3 {
                let other = if pp0 == ppos[0] { ppos[1] } else { ppos[0] };
                let flip = need_flip([ppos[2], n0, pp0, other], p);
                self.add_final([ppos[2], cut3, pp0, pc0], flip);
            } else {
                let other = if pp0 == ppos[1] { ppos[2] } else { ppos[1] };
                let flip = need_flip([ppos[0], n0, pp0, other], p);
                self.add_final([ppos[0], cut1, pp0, pc0], flip);
            }
        }
    }

    /// Output a tetrahedron, its last two vertices exchanged when `flip` says so and again when
    /// it is then inverted.
    fn add_final(&mut self, mut t: [usize; 4], flip: bool) {
        if flip {
            t.swap(2, 3);
        }
        if self.vol6(t) < 0.0 {
            t.swap(2, 3);
        }
        self.tetrahedra.push(t);
    }

    /// Whether the quad (a, b, c, d) cut from the lattice tetrahedron is split along the
    /// diagonal bd rather than ac: a and b are inside, c and d the cut points on e–b and e–a,
    /// e outside. When e–a or e–b is a long edge (same grid), the diagonal ends at its cut
    /// point; else (ab is the long edge) the parity of the coordinates of a greater than c's
    /// decides.
    fn flip_diag(&self, a: usize, b: usize, c: usize, _d: usize, e: usize) -> bool {
        let g = |v: usize| v < self.ph0;
        if g(e) {
            if g(a) {
                return true;
            }
            if g(b) {
                return false;
            }
        } else {
            if !g(a) {
                return true;
            }
            if !g(b) {
                return false;
            }
        }
        // ab is a long edge
        let nsup = (0..3)
            .filter(|&i| self.points[a][i] > self.points[c][i])
            .count();
        (nsup & 1) != usize::from(g(a))
    }

    /// The cut point on the edge between `from` and `to` (either way round); `from` itself,
    /// reported, when the edge was not cut.
    fn split_point(&mut self, from: usize, to: usize) -> usize {
        if let Some(&c) = self
            .split_points
            .get(&(from, to))
            .or_else(|| self.split_points.get(&(to, from)))
        {
            return c;
        }
        self.notes.push("cut point not found", || {
            format!("Cut point between {from} and {to} not found.")
        });
        from
    }
}

/// Whether the tetrahedron `p` (vertices of the lattice tetrahedron `q`, in some order) has the
/// opposite orientation to `q`, by index logic alone (SOFA's `needFlip`): both are rotated to
/// start with their smallest index (each rotation of four is odd), then the last three rotated
/// to put the second smallest second (even), and the third vertices compared.
pub(super) fn need_flip(p: [usize; 4], q: [usize; 4]) -> bool {
    let mut flip = false;
    let lead = |mut t: [usize; 4], flip: &mut bool| {
        while t[0] > t[1] || t[0] > t[2] || t[0] > t[3] {
            t.rotate_left(1);
            *flip = !*flip;
        }
        while t[1] > t[2] || t[1] > t[3] {
            t[1..].rotate_left(1);
        }
        t
    };
    let p = lead(p, &mut flip);
    let q = lead(q, &mut flip);
    if p[2] == q[3] {
        flip = !flip;
    }
    flip
}

/// SOFA's last pass: inverted tetrahedra are turned over (this cannot happen after
/// `add_final`), and faces found twice with the same orientation are reported.
pub(super) fn check_final(points: &[P3], tetrahedra: &mut [[u32; 4]], notes: &mut Notes) {
    let mut faces = BTreeSet::new();
    for (k, t) in tetrahedra.iter_mut().enumerate() {
        let p = t.map(|v| points[v as usize]);
        if vol6(p[0], p[1], p[2], p[3]) < 0.0 {
            notes.push("inverted tetrahedron", || format!("tetra {k} is inverted."));
            t.swap(2, 3);
        }
        for i in 0..4 {
            // the face opposite vertex i, oriented outward, in SOFA's rotation
            let mut i0 = 0;
            if t[(i + 2) % 4] < t[(i + i0) % 4] {
                i0 = 1;
            }
            if t[(i + 3) % 4] < t[(i + i0) % 4] {
                i0 = 2;
            }
            let mut tr = [
                t[(i + 1 + (i0 % 3)) % 4],
                t[(i + 1 + ((i0 + 1) % 3)) % 4],
                t[(i + 1 + ((i0 + 2) % 3)) % 4],
            ];
            if i % 2 == 1 {
                tr.swap(1, 2);
            }
            if !faces.insert(tr) {
                notes.push("duplicate triangle", || {
                    format!("Duplicate triangle {tr:?} in tetra {k} : {t:?}")
                });
            }
        }
    }
}
