//! Projective constraints: FixedProjectiveConstraint, PartialFixedProjectiveConstraint and
//! FixedPlaneProjectiveConstraint (at the end)
//! (Sofa/Component/Constraint/Projective/.../FixedProjectiveConstraint.inl,
//! PartialFixedProjectiveConstraint.inl: only the derivative components `fixedDirections`
//! marks are fixed; velocities are projected only with `projectVelocity`).

use crate::base_data;
use canape_core::component::{ProjectiveConstraint, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Ints, Real, Text, Words};
use canape_core::impl_component;
use canape_core::scene::InitContext;

canape_core::data_schema! {
    /// FixedProjectiveConstraint's own Data (after the base Data).
    pub struct FixedData {
        indices: Ints = ("indices", DataKind::Ints(0), "0", "Indices of the fixed points"),
        fix_all: Flag = ("fixAll", DataKind::Bool, "0", "filter all the DOF to implement a fixed object"),
        show_object: Flag = ("showObject", DataKind::Bool, "1", "draw or not the fixed constraints"),
        draw_size: Real = ("drawSize", DataKind::Real, "0", "Size of the rendered particles (0 -> point based rendering, >0 -> radius of spheres)"),
        activate_project_velocity: Flag = ("activate_projectVelocity", DataKind::Bool, "0", "if true, projects not only a constant but a velocity"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
        group: Ints = ("group", DataKind::Ints(0), "", "IDs of the groups"),
        end_time: Real = ("endTime", DataKind::Real, "-1", "The constraint stops acting after the given value."),
    }
}

canape_core::data_schema! {
    /// What PartialFixedProjectiveConstraint adds to [`FixedData`].
    pub struct PartialFixedData {
        fixed_directions: Words = ("fixedDirections", DataKind::Words, "", "Defines the directions in which the particles are fixed: true (or 1) for fixed, false (or 0) for free"),
        project_velocity: Flag = ("projectVelocity", DataKind::Bool, "0", "activate project velocity to maintain a constant velocity"),
    }
}

/// Fixes a set of DOFs: their dx, force and right-hand-side entries are projected to zero (for
/// the partial variant, only the components of `fixedDirections`).
#[derive(Clone)]
pub struct FixedProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: FixedData,
    /// PartialFixedProjectiveConstraint's Data.
    dp: Option<PartialFixedData>,
    /// PartialFixedProjectiveConstraint: per derivative component, whether it is fixed.
    partial: Option<Vec<bool>>,
    indices: Vec<u32>,
    fix_all: bool,
    project_velocity: bool,
    n: usize,
    ds: usize,
    /// Whether init found a state to constrain.
    has_state: bool,
}

impl Default for FixedProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl FixedProjectiveConstraint {
    pub fn new() -> Self {
        let (data, d) = FixedData::declare(base_data(DataTable::new()));
        FixedProjectiveConstraint {
            data,
            d,
            dp: None,
            partial: None,
            indices: Vec::new(),
            fix_all: false,
            project_velocity: false,
            n: 0,
            ds: 3,
            has_state: false,
        }
    }

    /// PartialFixedProjectiveConstraint: fixes the derivative components that
    /// `fixedDirections` marks (all by default) of the chosen points.
    pub fn partial() -> Self {
        let mut c = Self::new();
        let (data, dp) = PartialFixedData::declare(std::mem::take(&mut c.data));
        c.data = data;
        c.dp = Some(dp);
        c.partial = Some(Vec::new());
        c
    }

    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Whether velocities are projected too (`activate_projectVelocity`, or the partial
    /// variant's `projectVelocity`).
    fn projects_velocity(&self) -> bool {
        match self.dp {
            Some(dp) => self.data.get(dp.project_velocity),
            None => self.data.get(self.d.activate_project_velocity),
        }
    }

    /// The partial variant's fixed directions, one flag per derivative component (all fixed by
    /// default), and what init warns about them.
    fn directions(&self, dp: PartialFixedData) -> (Vec<bool>, Vec<String>) {
        let words = self.data.get(dp.fixed_directions);
        let mut dirs = vec![true; self.ds];
        let mut warnings = Vec::new();
        if !words.is_empty() {
            if words.len() != self.ds {
                warnings.push(format!(
                    "fixedDirections has {} entries, the state's DOFs have {} components: missing ones are fixed, extra ones ignored",
                    words.len(),
                    self.ds
                ));
            }
            for (d, w) in dirs.iter_mut().zip(words) {
                match canape_core::data::parse_bool(w) {
                    Some(b) => *d = b,
                    None => warnings.push(format!(
                        "fixedDirections entry '{w}' is not a boolean: the direction is fixed"
                    )),
                }
            }
        }
        (dirs, warnings)
    }

    /// The indices in range of the state (kept), and those out of it (ignored, init warns).
    fn split_indices(&self) -> (Vec<u32>, Vec<u32>) {
        self.data
            .get(self.d.indices)
            .iter()
            .copied()
            .partition(|&i| (i as usize) < self.n)
    }

    fn out_of_range(&self, dropped: &[u32]) -> String {
        format!(
            "indices {dropped:?} are out of range (the state has {} points) and are ignored",
            self.n
        )
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.has_state = false;
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        self.n = st.size();
        self.ds = st.dof.deriv_size();
        self.has_state = true;
        if self.data.get(self.d.end_time) >= 0.0 {
            ctx.warn("endTime is not supported yet: the constraint acts for the whole simulation");
        }
        self.fix_all = self.data.get(self.d.fix_all);
        self.project_velocity = self.projects_velocity();
        if let Some(dp) = self.dp {
            let (dirs, warnings) = self.directions(dp);
            for w in warnings {
                ctx.warn(w);
            }
            self.partial = Some(dirs);
        }
        let (kept, dropped) = self.split_indices();
        if !dropped.is_empty() {
            ctx.warn(self.out_of_range(&dropped));
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

impl FixedProjectiveConstraint {
    /// SOFA's class name of this instance.
    fn sofa_class(&self) -> &'static str {
        if self.partial.is_some() {
            "PartialFixedProjectiveConstraint"
        } else {
            "FixedProjectiveConstraint"
        }
    }

    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let d = &self.d;
        let mut in_place = vec![
            d.indices.index(),
            d.fix_all.index(),
            d.activate_project_velocity.index(),
        ];
        if let Some(dp) = self.dp {
            in_place.extend([dp.fixed_directions.index(), dp.project_velocity.index()]);
        }
        if !changed.only(&in_place) || !self.has_state {
            return Reaction::Reinit;
        }
        let (kept, dropped) = self.split_indices();
        if !dropped.is_empty() {
            return Reaction::Reinit;
        }
        let partial = match self.dp {
            Some(dp) => {
                let (dirs, warnings) = self.directions(dp);
                if !warnings.is_empty() {
                    return Reaction::Reinit;
                }
                Some(dirs)
            }
            None => None,
        };
        self.indices = kept;
        self.partial = partial;
        self.fix_all = self.data.get(self.d.fix_all);
        self.project_velocity = self.projects_velocity();
        Reaction::Updated
    }
}

canape_core::impl_component!(
    FixedProjectiveConstraint,
    |s| s.sofa_class(),
    init,
    data_changed
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{check_edit_changes, init_quiet, scene_with_state};
    use canape_core::scene::AnyComponent;
    use canape_types::DofType;

    /// What a projective constraint does to vectors of `size` values: the projected response
    /// and velocity (as bits) and the fixed scalar DOFs.
    fn projections(c: &FixedProjectiveConstraint, size: usize, ds: usize) -> Vec<Vec<u64>> {
        let v: Vec<f64> = (0..size).map(|i| 0.5 + i as f64 * 0.25).collect();
        let (mut dx, mut vel) = (v.clone(), v);
        c.project_response(&mut dx);
        c.project_velocity(&mut vel);
        let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect();
        let fixed = c.fixed_scalar_dofs(ds).iter().map(|&i| i as u64).collect();
        vec![bits(&dx), bits(&vel), fixed]
    }

    /// A (partial, when `partial`) fixed constraint on 5 points of `dof` initialised with
    /// `before`, then given `after` while it runs: the reaction. When it is
    /// [`Reaction::Updated`] its projections must equal bit for bit those of a constraint
    /// initialised from scratch with `before` then `after`; otherwise they must be those of
    /// before the edit.
    fn edit_fixed(
        dof: DofType,
        partial: bool,
        before: &[(&str, &str)],
        after: &[(&str, &str)],
    ) -> Reaction {
        let positions: Vec<f64> = (0..5 * dof.coord_size()).map(|i| i as f64 * 0.1).collect();
        let (mut scene, root) = scene_with_state(dof, &positions);
        let ds = dof.deriv_size();
        let size = 5 * ds;
        let mut init = |attrs: &[(&str, &str)]| {
            let c = if partial {
                FixedProjectiveConstraint::partial()
            } else {
                FixedProjectiveConstraint::new()
            };
            let wrap = |c| AnyComponent::Projective(Box::new(c));
            init_quiet(&mut scene, root, c, wrap, attrs)
        };
        let c = init(before);
        let fresh = || init(&[before, after].concat());
        check_edit_changes(c, after, fresh, |c| projections(c, size, ds), true)
    }

    /// Editing the indices, fixAll, the velocity switch or (partial variant) the fixed
    /// directions of a running constraint updates it in place to exactly what an init with the
    /// new values gives; values init warns about (an index out of range, directions of the
    /// wrong count) and other Data re-initialise it.
    #[test]
    fn fixed_constraint_edits_update_in_place() {
        let up = Reaction::Updated;
        let v3 = DofType::Vec3;
        let at = [("indices", "0 2")];
        assert_eq!(edit_fixed(v3, false, &at, &[("indices", "1 3 4")]), up);
        assert_eq!(edit_fixed(v3, false, &at, &[("indices", "")]), up);
        assert_eq!(edit_fixed(v3, false, &at, &[("fixAll", "1")]), up);
        let all = [("fixAll", "1")];
        assert_eq!(edit_fixed(v3, false, &all, &[("fixAll", "0")]), up);
        let both = [("activate_projectVelocity", "1"), ("indices", "4")];
        assert_eq!(edit_fixed(v3, false, &at, &both), up);
        let rigid = DofType::Rigid3;
        assert_eq!(edit_fixed(rigid, false, &at, &[("indices", "1")]), up);
        let dirs = [("indices", "1 3"), ("fixedDirections", "1 0 1 0 0 1")];
        let new_dirs = [("fixedDirections", "0 1 1 1 0 0")];
        assert_eq!(edit_fixed(rigid, true, &dirs, &new_dirs), up);
        assert_eq!(
            edit_fixed(rigid, true, &dirs, &[("projectVelocity", "1")]),
            up
        );
        assert_eq!(edit_fixed(rigid, true, &dirs, &[("indices", "0 4")]), up);
        assert_eq!(
            edit_fixed(v3, true, &[], &[("fixedDirections", "0 0 1")]),
            up
        );
        // what init warns about goes through init
        let re = Reaction::Reinit;
        assert_eq!(edit_fixed(v3, false, &at, &[("indices", "1 5")]), re);
        assert_eq!(edit_fixed(v3, true, &at, &[("fixedDirections", "1 0")]), re);
        assert_eq!(
            edit_fixed(v3, true, &at, &[("fixedDirections", "1 x 0")]),
            re
        );
        assert_eq!(edit_fixed(v3, false, &at, &[("endTime", "2")]), re);
        assert_eq!(edit_fixed(v3, false, &at, &[("drawSize", "2")]), re);
    }
}
