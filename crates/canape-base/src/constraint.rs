//! Projective constraints: FixedProjectiveConstraint
//! (Sofa/Component/Constraint/Projective/.../FixedProjectiveConstraint.inl).

use crate::base_data;
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::scene::InitContext;

/// Fixes a set of DOFs: their dx, force and right-hand-side entries are projected to zero.
pub struct FixedProjectiveConstraint {
    data: DataTable,
    indices: Vec<u32>,
    fix_all: bool,
    project_velocity: bool,
    n: usize,
    ds: usize,
}

impl Default for FixedProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl FixedProjectiveConstraint {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with("indices", DataKind::Ints(0), "0", "Indices of the fixed points")
            .with("fixAll", DataKind::Bool, "0", "filter all the DOF to implement a fixed object")
            .with("showObject", DataKind::Bool, "1", "draw or not the fixed constraints")
            .with("drawSize", DataKind::Real, "0", "Size of the rendered particles (0 -> point based rendering, >0 -> radius of spheres)")
            .with("activate_projectVelocity", DataKind::Bool, "0", "if true, projects not only a constant but a velocity")
            .with("topology", DataKind::Str, "", "link to the topology container")
            .with("group", DataKind::Ints(0), "", "IDs of the groups")
            .with("endTime", DataKind::Real, "-1", "The constraint stops acting after the given value.");
        FixedProjectiveConstraint {
            data,
            indices: Vec::new(),
            fix_all: false,
            project_velocity: false,
            n: 0,
            ds: 3,
        }
    }

    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        self.n = st.size();
        self.ds = st.dof.deriv_size();
        if self.data.real("endTime") >= 0.0 {
            ctx.warn("endTime is not supported yet: the constraint acts for the whole simulation");
        }
        self.fix_all = self.data.bool("fixAll");
        self.project_velocity = self.data.bool("activate_projectVelocity");
        let mut kept = Vec::new();
        let mut dropped = Vec::new();
        for &i in self.data.ints("indices") {
            if (i as usize) < self.n {
                kept.push(i);
            } else {
                dropped.push(i);
            }
        }
        if !dropped.is_empty() {
            ctx.warn(format!(
                "indices {dropped:?} are out of range (the state has {} points) and are ignored",
                self.n
            ));
        }
        self.indices = kept;
    }

    fn for_each_fixed(&self, len: usize, mut f: impl FnMut(usize)) {
        let n = len / self.ds.max(1);
        if self.fix_all {
            (0..n).for_each(f);
        } else {
            for &i in &self.indices {
                if (i as usize) < n {
                    f(i as usize);
                }
            }
        }
    }
}

impl_component!(FixedProjectiveConstraint, "FixedProjectiveConstraint", init);

impl ProjectiveConstraint for FixedProjectiveConstraint {
    fn project_response(&self, dx: &mut [f64]) {
        let ds = self.ds;
        self.for_each_fixed(dx.len(), |i| {
            dx[ds * i..ds * (i + 1)].iter_mut().for_each(|v| *v = 0.0)
        });
    }
    fn project_velocity(&self, v: &mut [f64]) {
        if self.project_velocity {
            self.project_response(v);
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.for_each_fixed(self.n * deriv_size, |i| {
            out.extend((0..deriv_size).map(|c| deriv_size * i + c))
        });
        out
    }
}
