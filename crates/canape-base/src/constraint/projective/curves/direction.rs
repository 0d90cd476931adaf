//! DirectionProjectiveConstraint: the chosen points move only along a direction, on the line
//! through their initial positions.

use super::context_state;
use crate::base_data;
use crate::constraint::projective::projections::valid_indices;
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{DataKind, DataTable, Ints, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_core::state::VecId;
use canape_types::DofType;

canape_core::data_schema! {
    /// DirectionProjectiveConstraint's own Data (after the base Data).
    pub struct DirectionData {
        indices: Ints = ("indices", DataKind::Ints(0), "0", "Indices of the fixed points"),
        draw_size: Real = ("drawSize", DataKind::Real, "0", "0 -> point based rendering, >0 -> radius of spheres"),
        direction: Reals = ("direction", DataKind::Reals(0), "0 0 0", "Direction of the line"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

/// DirectionProjectiveConstraint (…/DirectionProjectiveConstraint.inl; Vec3 and Vec2): each
/// chosen point moves only along `direction` (normalised at init), on the line through its
/// position at init. Derivatives and velocities of those points are replaced by their component
/// along the direction (n·nᵀ), positions by their projection onto their line. A zero direction
/// keeps the points at their initial positions (SOFA's n·nᵀ is then zero); it is reported.
/// Assembled matrices are not projected (see the module's documentation).
#[derive(Clone)]
pub struct DirectionProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    dd: DirectionData,
    indices: Vec<u32>,
    /// Unit direction (or zero), one number per coordinate.
    n: Vec<f64>,
    /// Position at init of each chosen point, `d` numbers each, in `indices` order.
    origins: Vec<f64>,
    /// Scalars per point (coordinates and derivatives alike).
    d: usize,
}

impl Default for DirectionProjectiveConstraint {
    fn default() -> Self {
        Self::new()
    }
}

impl DirectionProjectiveConstraint {
    pub fn new() -> Self {
        let (data, dd) = DirectionData::declare(base_data(DataTable::new()));
        DirectionProjectiveConstraint {
            data,
            dd,
            indices: Vec::new(),
            n: Vec::new(),
            origins: Vec::new(),
            d: 3,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.indices.clear();
        self.origins.clear();
        self.n.clear();
        let class = "DirectionProjectiveConstraint";
        let Some((dof, n)) = context_state(ctx, class, &[DofType::Vec3, DofType::Vec2]) else {
            return;
        };
        let d = dof.coord_size();
        self.d = d;
        let given = self.data.get(self.dd.direction);
        if given.len() < d || given.iter().any(|x| !x.is_finite()) {
            ctx.error(format!(
                "direction needs {d} finite numbers for a {} state ({} given: {given:?}): the constraint does nothing",
                dof.name(),
                given.len()
            ));
            return;
        }
        if given.len() > d {
            ctx.warn(format!(
                "direction has {} numbers, a {} state {d}: the extra ones are ignored",
                given.len(),
                dof.name()
            ));
        }
        let dir = &given[..d];
        let norm = dir.iter().map(|x| x * x).sum::<f64>().sqrt();
        self.n = if norm > 0.0 {
            dir.iter().map(|x| x / norm).collect()
        } else {
            ctx.warn("direction is zero: the points are held at their initial positions");
            vec![0.0; d]
        };
        self.indices = valid_indices(ctx, self.data.get(self.dd.indices), n);
        let Some(st) = ctx.state() else {
            return;
        };
        let x = st.vec(VecId::POSITION);
        for &i in &self.indices {
            let o = d * i as usize;
            self.origins.extend_from_slice(&x[o..o + d]);
        }
    }

    /// Replace the derivative blocks of the chosen points by their component along `n`.
    fn project_derivs(&self, v: &mut [f64]) {
        let d = self.d;
        for &i in &self.indices {
            let o = d * i as usize;
            let Some(b) = v.get_mut(o..o + d) else {
                continue;
            };
            let along: f64 = b.iter().zip(&self.n).map(|(a, n)| a * n).sum();
            for (x, n) in b.iter_mut().zip(&self.n) {
                *x = n * along;
            }
        }
    }
}

impl_component!(
    DirectionProjectiveConstraint,
    "DirectionProjectiveConstraint",
    init
);

impl ProjectiveConstraint for DirectionProjectiveConstraint {
    fn project_response(&self, dx: &mut [f64]) {
        self.project_derivs(dx);
    }
    fn project_velocity(&self, v: &mut [f64]) {
        self.project_derivs(v);
    }
    fn project_position(&self, x: &mut [f64]) {
        let d = self.d;
        for (&i, origin) in self.indices.iter().zip(self.origins.chunks_exact(d)) {
            let o = d * i as usize;
            let Some(b) = x.get_mut(o..o + d) else {
                continue;
            };
            let along: f64 = (0..d).map(|c| (b[c] - origin[c]) * self.n[c]).sum();
            for c in 0..d {
                b[c] = origin[c] + self.n[c] * along;
            }
        }
    }
    fn fixed_scalar_dofs(&self, _deriv_size: usize) -> Vec<usize> {
        Vec::new()
    }
}
