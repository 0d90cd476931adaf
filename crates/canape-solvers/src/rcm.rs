//! Reverse Cuthill–McKee ordering: a numbering of a symmetric matrix's rows that keeps its
//! entries near the diagonal (a small band), for band factorizations of meshes that are not
//! numbered along their length. Breadth-first levels from a pseudo-peripheral start (George and
//! Liu's search, "Computer Solution of Large Sparse Positive Definite Systems", 1981, §4.3),
//! each vertex's unnumbered neighbours taken by increasing degree, then the order reversed.
//! Ties are broken by index: the order depends on the pattern only.

use canape_core::matrix::Csr;

/// The adjacency of `a`'s symmetric pattern (entries off the diagonal, both directions), from
/// any of its triangles or both.
fn adjacency(a: &Csr) -> (Vec<usize>, Vec<u32>) {
    let n = a.n;
    let mut deg = vec![0usize; n + 1];
    let mut edges = Vec::with_capacity(2 * a.cols.len());
    for i in 0..n {
        for &j in &a.cols[a.row_ptr[i]..a.row_ptr[i + 1]] {
            let j = j as usize;
            if i != j {
                edges.push((i as u32, j as u32));
                edges.push((j as u32, i as u32));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for &(i, _) in &edges {
        deg[i as usize + 1] += 1;
    }
    for i in 0..n {
        deg[i + 1] += deg[i];
    }
    (deg, edges.into_iter().map(|(_, j)| j).collect())
}

/// Breadth-first searches over a graph (`ptr`, `adj`), with the marks they share.
struct Search<'a> {
    ptr: &'a [usize],
    adj: &'a [u32],
    /// Level of each vertex the last search reached (others: stale).
    level_of: Vec<u32>,
    /// Search number that last reached each vertex.
    mark: Vec<u32>,
    stamp: u32,
}

impl Search<'_> {
    fn degree(&self, v: u32) -> usize {
        self.ptr[v as usize + 1] - self.ptr[v as usize]
    }

    /// The vertices of `start`'s component in breadth-first order into `order` (cleared
    /// first), each vertex's unreached neighbours by increasing degree, then index. Returns the
    /// number of levels.
    fn levels(&mut self, start: usize, order: &mut Vec<u32>) -> u32 {
        self.stamp += 1;
        let stamp = self.stamp;
        order.clear();
        order.push(start as u32);
        self.mark[start] = stamp;
        self.level_of[start] = 0;
        let mut head = 0;
        let mut depth = 0;
        let mut next = Vec::new();
        while head < order.len() {
            let v = order[head] as usize;
            head += 1;
            next.clear();
            for &w in &self.adj[self.ptr[v]..self.ptr[v + 1]] {
                if self.mark[w as usize] != stamp {
                    self.mark[w as usize] = stamp;
                    self.level_of[w as usize] = self.level_of[v] + 1;
                    depth = depth.max(self.level_of[v] + 1);
                    next.push(w);
                }
            }
            next.sort_unstable_by_key(|&w| (self.degree(w), w));
            order.extend_from_slice(&next);
        }
        depth + 1
    }

    /// The vertex of least degree (then index) among `among`.
    fn least_degree(&self, among: impl Iterator<Item = u32>) -> usize {
        among
            .min_by_key(|&v| (self.degree(v), v))
            .expect("a component has vertices") as usize
    }
}

/// New index of each row (`new_of[i]`: where row i goes) in reverse Cuthill–McKee order of the
/// symmetric pattern of `a` (either triangle, or both, is read).
pub fn reverse_cuthill_mckee(a: &Csr) -> Vec<u32> {
    let n = a.n;
    let (ptr, adj) = adjacency(a);
    let mut search = Search {
        ptr: &ptr,
        adj: &adj,
        level_of: vec![0; n],
        mark: vec![0; n],
        stamp: 0,
    };
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut component = Vec::new();
    for seed in 0..n {
        if done[seed] {
            continue;
        }
        // the component's vertex of least degree, then George–Liu: move to a vertex of least
        // degree on the last level while that gives more levels
        search.levels(seed, &mut component);
        let mut start = search.least_degree(component.iter().copied());
        let mut depth = search.levels(start, &mut component);
        loop {
            let level_of = &search.level_of;
            let last: Vec<u32> = component
                .iter()
                .copied()
                .filter(|&v| level_of[v as usize] == depth - 1)
                .collect();
            let candidate = search.least_degree(last.into_iter());
            let d = search.levels(candidate, &mut component);
            if d > depth {
                start = candidate;
                depth = d;
            } else {
                // keep the previous start's order (`component` holds the candidate's)
                search.levels(start, &mut component);
                break;
            }
        }
        for &v in &component {
            done[v as usize] = true;
        }
        order.extend_from_slice(&component);
    }
    let mut new_of = vec![0u32; n];
    for (k, &v) in order.iter().rev().enumerate() {
        new_of[v as usize] = k as u32;
    }
    new_of
}

/// The lower bandwidth of `a`'s symmetric pattern with row i renumbered `new_of[i]`.
pub fn bandwidth(a: &Csr, new_of: &[u32]) -> usize {
    let mut b = 0;
    for i in 0..a.n {
        for &j in &a.cols[a.row_ptr[i]..a.row_ptr[i + 1]] {
            b = b.max(new_of[i].abs_diff(new_of[j as usize]) as usize);
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The upper pattern (ones) of a grid graph's Laplacian-like matrix, nodes numbered by
    /// `number` (a bijection of 0..nx·ny).
    fn grid(nx: usize, ny: usize, number: impl Fn(usize, usize) -> usize) -> Csr {
        let n = nx * ny;
        let mut rows = vec![Vec::new(); n];
        for x in 0..nx {
            for y in 0..ny {
                let i = number(x, y);
                rows[i].push(i as u32);
                for (dx, dy) in [(1, 0), (0, 1), (1, 1)] {
                    if x + dx < nx && y + dy < ny {
                        let j = number(x + dx, y + dy);
                        let (lo, hi) = (i.min(j), i.max(j));
                        rows[lo].push(hi as u32);
                    }
                }
            }
        }
        let mut row_ptr = vec![0usize];
        let mut cols = Vec::new();
        for mut r in rows {
            r.sort_unstable();
            cols.extend(r);
            row_ptr.push(cols.len());
        }
        Csr {
            n,
            vals: vec![1.0; cols.len()],
            row_ptr: row_ptr.into(),
            cols: cols.into(),
        }
    }

    /// A long strip numbered across its length (bandwidth ~ its length) comes out numbered
    /// along it (bandwidth ~ its width); the order is a permutation, the same run after run.
    #[test]
    fn strip_numbered_across_gets_a_narrow_band() {
        let (nx, ny) = (40, 4);
        // y fastest would be narrow: number x fastest instead (band ≈ nx)
        let a = grid(nx, ny, |x, y| y * nx + x);
        let identity: Vec<u32> = (0..a.n as u32).collect();
        assert!(bandwidth(&a, &identity) >= nx);
        let p = reverse_cuthill_mckee(&a);
        let mut seen = vec![false; a.n];
        for &k in &p {
            assert!(!std::mem::replace(&mut seen[k as usize], true));
        }
        assert!(bandwidth(&a, &p) <= ny + 1, "band {}", bandwidth(&a, &p));
        assert_eq!(p, reverse_cuthill_mckee(&a));
    }

    /// Disconnected parts and isolated rows are all numbered.
    #[test]
    fn every_component_is_numbered() {
        let strip = grid(6, 2, |x, y| y * 6 + x);
        // two copies side by side plus one isolated row
        let n = 2 * strip.n + 1;
        let mut row_ptr = vec![0usize];
        let mut cols = Vec::new();
        for copy in 0..2 {
            for i in 0..strip.n {
                let r = &strip.cols[strip.row_ptr[i]..strip.row_ptr[i + 1]];
                cols.extend(r.iter().map(|&j| j + (copy * strip.n) as u32));
                row_ptr.push(cols.len());
            }
        }
        cols.push((n - 1) as u32);
        row_ptr.push(cols.len());
        let a = Csr {
            n,
            vals: vec![1.0; cols.len()],
            row_ptr: row_ptr.into(),
            cols: cols.into(),
        };
        let mut p = reverse_cuthill_mckee(&a);
        assert!(bandwidth(&a, &p) <= 3);
        p.sort_unstable();
        assert_eq!(p, (0..n as u32).collect::<Vec<_>>());
    }
}
