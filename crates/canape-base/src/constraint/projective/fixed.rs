//! Projective constraints: FixedProjectiveConstraint, PartialFixedProjectiveConstraint and
//! FixedPlaneProjectiveConstraint (at the end)
//! (Sofa/Component/Constraint/Projective/.../FixedProjectiveConstraint.inl,
//! PartialFixedProjectiveConstraint.inl: only the derivative components `fixedDirections`
//! marks are fixed; velocities are projected only with `projectVelocity`).

use crate::base_data;
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::scene::InitContext;

/// Fixes a set of DOFs: their dx, force and right-hand-side entries are projected to zero (for
/// the partial variant, only the components of `fixedDirections`).
#[derive(Clone)]
pub struct FixedProjectiveConstraint {
    data: DataTable,
    /// PartialFixedProjectiveConstraint: per derivative component, whether it is fixed.
    partial: Option<Vec<bool>>,
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
            partial: None,
            indices: Vec::new(),
            fix_all: false,
            project_velocity: false,
            n: 0,
            ds: 3,
        }
    }

    /// PartialFixedProjectiveConstraint: fixes the derivative components that
    /// `fixedDirections` marks (all by default) of the chosen points.
    pub fn partial() -> Self {
        let mut c = Self::new();
        c.data = std::mem::take(&mut c.data)
            .with(
                "fixedDirections",
                DataKind::Words,
                "",
                "Defines the directions in which the particles are fixed: true (or 1) for fixed, false (or 0) for free",
            )
            .with(
                "projectVelocity",
                DataKind::Bool,
                "0",
                "activate project velocity to maintain a constant velocity",
            );
        c.partial = Some(Vec::new());
        c
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
        if self.partial.is_some() {
            self.project_velocity = self.data.bool("projectVelocity");
            // one flag per derivative component, all fixed by default
            let words = self.data.words("fixedDirections").to_vec();
            let mut dirs = vec![true; self.ds];
            if !words.is_empty() {
                if words.len() != self.ds {
                    ctx.warn(format!(
                        "fixedDirections has {} entries, the state's DOFs have {} components: missing ones are fixed, extra ones ignored",
                        words.len(),
                        self.ds
                    ));
                }
                for (d, w) in dirs.iter_mut().zip(&words) {
                    match canape_core::data::parse_bool(w) {
                        Some(b) => *d = b,
                        None => ctx.warn(format!(
                            "fixedDirections entry '{w}' is not a boolean: the direction is fixed"
                        )),
                    }
                }
            }
            self.partial = Some(dirs);
        }
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

impl_component!(
    FixedProjectiveConstraint,
    |s| if s.partial.is_some() {
        "PartialFixedProjectiveConstraint"
    } else {
        "FixedProjectiveConstraint"
    },
    init
);

impl ProjectiveConstraint for FixedProjectiveConstraint {
    fn project_response(&self, dx: &mut [f64]) {
        let ds = self.ds;
        match &self.partial {
            Some(dirs) => self.for_each_fixed(dx.len(), |i| {
                for (v, fixed) in dx[ds * i..ds * (i + 1)].iter_mut().zip(dirs) {
                    if *fixed {
                        *v = 0.0;
                    }
                }
            }),
            None => self.for_each_fixed(dx.len(), |i| {
                dx[ds * i..ds * (i + 1)].iter_mut().for_each(|v| *v = 0.0)
            }),
        }
    }
    fn project_velocity(&self, v: &mut [f64]) {
        if self.project_velocity {
            self.project_response(v);
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let all = vec![true; deriv_size];
        let dirs = self.partial.as_deref().unwrap_or(&all);
        self.for_each_fixed(self.n * deriv_size, |i| {
            out.extend(
                (0..deriv_size)
                    .filter(|&c| dirs.get(c).copied().unwrap_or(true))
                    .map(|c| deriv_size * i + c),
            )
        });
        out
    }
}

/// FixedPlaneProjectiveConstraint
/// (Sofa/Component/Constraint/Projective/.../FixedPlaneProjectiveConstraint.inl): the chosen
/// points (`indices`, plus at init those with dmin < x·direction < dmax when dmin ≠ dmax) keep no
/// displacement along `direction` (dx −= direction (dx·direction), the direction used as given);
/// in assembled systems, as SOFA, every coordinate in which the direction is non-zero is fixed.
/// Vec3 states and rigid centers.
#[derive(Clone)]
pub struct FixedPlaneProjectiveConstraint {
    data: DataTable,
    dir: [f64; 3],
    indices: Vec<u32>,
    ds: usize,
}

impl Default for FixedPlaneProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl FixedPlaneProjectiveConstraint {
    pub fn new() -> Self {
        let data = base_data(DataTable::new())
            .with(
                "direction",
                DataKind::Reals(0),
                "0 0 0",
                "normal direction of the plane",
            )
            .with(
                "dmin",
                DataKind::Real,
                "0",
                "Minimum plane distance from the origin",
            )
            .with(
                "dmax",
                DataKind::Real,
                "0",
                "Maximum plane distance from the origin",
            )
            .with(
                "indices",
                DataKind::Ints(0),
                "",
                "Indices of the fixed points",
            )
            .with(
                "topology",
                DataKind::Str,
                "",
                "link to the topology container",
            );
        FixedPlaneProjectiveConstraint {
            data,
            dir: [0.0; 3],
            indices: Vec::new(),
            ds: 3,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.indices.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        if !matches!(
            st.dof,
            canape_types::DofType::Vec3 | canape_types::DofType::Rigid3
        ) {
            ctx.error(format!(
                "FixedPlaneProjectiveConstraint acts on Vec3d and Rigid3d states ({} given)",
                st.dof.name()
            ));
            return;
        }
        let d = self.data.reals("direction");
        if d.len() < 3 || d.iter().any(|v| !v.is_finite()) {
            ctx.error("direction needs 3 finite numbers");
            return;
        }
        self.dir = [d[0], d[1], d[2]];
        self.ds = st.dof.deriv_size();
        let n = st.size();
        let mut idx: Vec<u32> = Vec::new();
        for &i in self.data.ints("indices") {
            if (i as usize) < n {
                idx.push(i);
            } else {
                ctx.warn(format!(
                    "index {i} is out of range (the state has {n} points) and is ignored"
                ));
            }
        }
        let (dmin, dmax) = (self.data.real("dmin"), self.data.real("dmax"));
        if dmin != dmax {
            let cs = st.dof.coord_size();
            let x = st.vec(canape_core::state::VecId::POSITION);
            for i in 0..n {
                let d: f64 = (0..3).map(|c| x[cs * i + c] * self.dir[c]).sum();
                if d > dmin && d < dmax {
                    idx.push(i as u32);
                }
            }
        }
        self.indices = idx;
    }
}

impl_component!(
    FixedPlaneProjectiveConstraint,
    "FixedPlaneProjectiveConstraint",
    init
);

impl ProjectiveConstraint for FixedPlaneProjectiveConstraint {
    fn project_response(&self, dx: &mut [f64]) {
        let (ds, d) = (self.ds, self.dir);
        for &i in &self.indices {
            let o = ds * i as usize;
            if o + 3 > dx.len() {
                continue;
            }
            let dot: f64 = (0..3).map(|c| dx[o + c] * d[c]).sum();
            for c in 0..3 {
                dx[o + c] -= d[c] * dot;
            }
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for &i in &self.indices {
            for c in 0..3 {
                if self.dir[c] != 0.0 {
                    out.push(deriv_size * i as usize + c);
                }
            }
        }
        out
    }
}
