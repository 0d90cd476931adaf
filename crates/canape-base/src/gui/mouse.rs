//! Mouse interaction: a spring pulling one point of a state toward a target, as runSofa's mouse
//! interactor does (SOFA's AttachBodyPerformer puts a StiffSpringForceField between the picked
//! point and the mouse). It is an ordinary force field, so it enters forces, matrix-free products
//! and assembled matrices like any other; the viewer edits its Data and re-initialises it.
//!
//! Not in the scene-file registry: interactive front ends add it to the nodes they let users
//! grab.

use canape_core::component::ForceField;
use canape_core::data::{DataKind, DataTable};
use canape_core::impl_component;
use canape_core::matrix::MatrixSink;
use canape_core::scene::InitContext;
use canape_types::Mat3;

/// Class name shown for the interaction spring.
pub const MOUSE_SPRING_CLASS: &str = "MouseSpringForceField";

#[derive(Clone)]
pub struct MouseSpringForceField {
    data: DataTable,
    /// Grabbed point, if any, and where it is pulled to.
    active: Option<(usize, [f64; 3])>,
    stiffness: f64,
}

impl Default for MouseSpringForceField {
    fn default() -> Self {
        Self::new()
    }
}

impl MouseSpringForceField {
    pub fn new() -> Self {
        let data = canape_core::data::base_fields(DataTable::new())
            .with(
                "index",
                DataKind::Int,
                "-1",
                "grabbed point (-1: nothing grabbed)",
            )
            .with(
                "target",
                DataKind::Vector(3),
                "0 0 0",
                "where the grabbed point is pulled to",
            )
            .with("stiffness", DataKind::Real, "1000", "spring stiffness");
        MouseSpringForceField {
            data,
            active: None,
            stiffness: 0.0,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.active = None;
        self.stiffness = self.data.real("stiffness");
        if !(self.stiffness.is_finite() && self.stiffness >= 0.0) {
            ctx.error("stiffness must be a finite, non-negative number");
            self.stiffness = 0.0;
            return;
        }
        let index = self.data.int("index");
        if index < 0 {
            return;
        }
        let n = ctx.state().map(|s| s.size()).unwrap_or(0);
        if index as usize >= n {
            ctx.error(format!(
                "index {index} is out of range (the state has {n} points)"
            ));
            return;
        }
        let t = self.data.reals("target");
        if t.len() != 3 || t.iter().any(|v| !v.is_finite()) {
            ctx.error("target must be three finite numbers");
            return;
        }
        self.active = Some((index as usize, [t[0], t[1], t[2]]));
    }

    /// The grabbed point and its target, if any.
    pub fn active(&self) -> Option<(usize, [f64; 3])> {
        self.active
    }
}

impl_component!(MouseSpringForceField, MOUSE_SPRING_CLASS, init);

impl ForceField for MouseSpringForceField {
    fn add_force(&mut self, x: &[f64], _v: &[f64], f: &mut [f64]) {
        if let Some((i, t)) = self.active {
            for c in 0..3 {
                f[3 * i + c] += self.stiffness * (t[c] - x[3 * i + c]);
            }
        }
    }
    fn add_dforce(&mut self, dx: &[f64], df: &mut [f64], k_factor: f64) {
        if let Some((i, _)) = self.active {
            for c in 0..3 {
                df[3 * i + c] -= k_factor * self.stiffness * dx[3 * i + c];
            }
        }
    }
    fn add_k_to_matrix(&self, m: &mut dyn MatrixSink, k_factor: f64, offset: usize) {
        if let Some((i, _)) = self.active {
            let o = offset + 3 * i;
            m.add_block3(o, o, &(Mat3::identity() * (-k_factor * self.stiffness)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canape_core::component::Component;

    #[test]
    fn pulls_toward_the_target_and_its_tangent_is_minus_k() {
        let mut s = MouseSpringForceField::new();
        s.stiffness = 10.0;
        s.active = Some((1, [1.0, 2.0, 3.0]));
        let x = vec![0.0; 6];
        let mut f = vec![0.0; 6];
        s.add_force(&x, &x, &mut f);
        assert_eq!(f, vec![0.0, 0.0, 0.0, 10.0, 20.0, 30.0]);
        // finite difference: F(x + dx) − F(x) = −k dx, matches add_dforce
        let dx = vec![0.1, 0.2, 0.3, -0.4, 0.5, 0.6];
        let x2: Vec<f64> = dx.clone();
        let mut f2 = vec![0.0; 6];
        s.add_force(&x2, &x2, &mut f2);
        let mut df = vec![0.0; 6];
        s.add_dforce(&dx, &mut df, 1.0);
        for k in 0..6 {
            assert!((f2[k] - f[k] - df[k]).abs() < 1e-12);
        }
        assert_eq!(s.class_name(), MOUSE_SPRING_CLASS);
        // released: nothing
        s.active = None;
        let mut f3 = vec![0.0; 6];
        s.add_force(&x, &x, &mut f3);
        assert!(f3.iter().all(|v| *v == 0.0));
    }
}
