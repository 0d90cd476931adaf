//! RegularGridSpringForceField: springs along the lines, face and cube diagonals of the
//! context's regular grid.

use super::{Spring, SpringForceField};
use canape_core::data::{Data, DataKind, Real, Reals};
use canape_core::scene::InitContext;
use canape_types::Mat3;

canape_core::data_schema! {
    /// RegularGridSpringForceField's own Data (after [`SpringData`]).
    pub(super) struct GridSpringData {
        lines_stiffness: Real = ("linesStiffness", DataKind::Real, "100", "Lines Stiffness"),
        lines_damping: Real = ("linesDamping", DataKind::Real, "5", "Lines Damping"),
        quads_stiffness: Real = ("quadsStiffness", DataKind::Real, "100", "Quads Stiffness"),
        quads_damping: Real = ("quadsDamping", DataKind::Real, "5", "Quads Damping"),
        cubes_stiffness: Real = ("cubesStiffness", DataKind::Real, "100", "Cubes Stiffness"),
        cubes_damping: Real = ("cubesDamping", DataKind::Real, "5", "Cubes Damping"),
    }
}

impl SpringForceField {
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

    /// The grid springs of a RegularGridSpringForceField, appended to the `spring` list.
    pub(super) fn springs_from_grid(&mut self, ctx: &mut InitContext<'_>, g: GridSpringData) {
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
}
