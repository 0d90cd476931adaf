//! Spiral (Sofa/Component/Engine/Generate/src/sofa/component/engine/generate/Spiral.inl):
//! `rest_position` rolled up in the xy plane along the Archimedean spiral r = A·θ
//! (A = `curvature`), output in `position`.
//!
//! A point's x is taken as an arc length along the spiral: the parameter θ whose arc length
//! A/2·(θ√(1+θ²) + asinh θ) equals |x| is found by 10 Newton steps from √|x|. The point goes to
//! radius ±A·θ (the sign of x) at angle θ, keeps its z, and is moved by its y along the
//! spiral's unit normal n = (−sin θ − θ cos θ, cos θ − θ sin θ) — except that for θ below
//! π/2, a normal whose y exceeds 0.8 (single precision) is replaced by (−0.6, 0.8), as SOFA
//! does to keep the innermost turn from folding.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{DataKind, DataTable, Real, Reals, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use std::f64::consts::FRAC_PI_2;

/// SOFA's Newton iterations.
const NEWTON_STEPS: usize = 10;

/// SOFA's cap on the normal's y, a single-precision 0.8.
const NORMAL_Y_CAP: f64 = 0.8f32 as f64;

/// Where `p` goes on the spiral of curvature `a` (non-zero).
pub fn roll(p: [f64; 3], a: f64) -> [f64; 3] {
    let l = p[0].abs();
    let mut t = l.sqrt();
    for _ in 0..NEWTON_STEPS {
        let s = (1.0 + t * t).sqrt();
        let arc = a / 2.0 * (t * s + t.asinh());
        t -= (arc - l) / (a * s);
    }
    let r = if p[0] > 0.0 { a * t } else { -a * t };
    let (sin, cos) = t.sin_cos();
    let mut n = [-a * sin - a * t * cos, a * cos - a * t * sin];
    let norm = (n[0] * n[0] + n[1] * n[1]).sqrt();
    n = [n[0] / norm, n[1] / norm];
    if t > -FRAC_PI_2 && t < FRAC_PI_2 && n[1] > NORMAL_Y_CAP {
        n = [-(1.0 - NORMAL_Y_CAP * NORMAL_Y_CAP).sqrt(), NORMAL_Y_CAP];
    }
    [r * cos + n[0] * p[1], r * sin + n[1] * p[1], p[2]]
}

canape_core::data_schema! {
    /// Spiral's own Data (after the base Data).
    pub struct SpiralData {
        rest_position: Reals = ("rest_position", DataKind::Reals(3), "", "Rest position coordinates of the degrees of freedom"),
        position: Reals => ("position", DataKind::Reals(3), "Position coordinates of the degrees of freedom"),
        curvature: Real = ("curvature", DataKind::Real, "0.2", "Spiral curvature factor"),
    }
}

/// Spiral: `position` from `rest_position`.
#[derive(Clone)]
pub struct Spiral {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: SpiralData,
}

impl Default for Spiral {
    fn default() -> Self {
        Self::new()
    }
}

impl Spiral {
    pub fn new() -> Self {
        let (data, d) = SpiralData::declare(base_data(DataTable::new()));
        Spiral { data, d }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let _ = self.data.put(self.d.position, Value::Reals(Vec::new()));
        let a = self.data.get(self.d.curvature);
        if !a.is_finite() || a == 0.0 {
            ctx.error(format!(
                "curvature = {a}: it must be a non-zero finite number (SOFA's Newton steps divide by it); no position is computed"
            ));
            return;
        }
        if a < 0.0 {
            ctx.warn(format!(
                "curvature = {a} is negative: the spiral turns the other way round"
            ));
        }
        let x0 = self.data.get(self.d.rest_position);
        if x0.is_empty() {
            ctx.warn("rest_position is empty: no position is computed");
        }
        let bad = x0.iter().filter(|v| !v.is_finite()).count();
        if bad > 0 {
            ctx.warn(format!(
                "rest_position holds {bad} non-finite numbers: the points concerned get non-finite positions"
            ));
        }
        let out: Vec<f64> = x0
            .chunks_exact(3)
            .flat_map(|p| roll([p[0], p[1], p[2]], a))
            .collect();
        let _ = self.data.put(self.d.position, Value::Reals(out));
    }
}

impl_component!(Spiral, "Spiral", init);

impl Engine for Spiral {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_support::init_alone;

    /// The spiral's arc length from 0 to θ for curvature a.
    fn arc(a: f64, t: f64) -> f64 {
        a / 2.0 * (t * (1.0 + t * t).sqrt() + t.asinh())
    }

    #[test]
    fn points_on_the_axis_go_to_the_arc_length() {
        let a = 0.2;
        for x in [0.5, 1.0, 5.0, 20.0] {
            let q = roll([x, 0.0, 0.7], a);
            // radius a·θ at angle θ, where the arc length to θ is x
            let r = (q[0] * q[0] + q[1] * q[1]).sqrt();
            let t = r / a;
            assert!((arc(a, t) - x).abs() < 1e-9, "x = {x}: arc {}", arc(a, t));
            assert!((q[1].atan2(q[0]) - t.sin().atan2(t.cos())).abs() < 1e-9);
            assert_eq!(q[2], 0.7);
        }
        // negative x: the point opposite
        let (q, m) = (roll([5.0, 0.0, 0.0], a), roll([-5.0, 0.0, 0.0], a));
        assert!((q[0] + m[0]).abs() < 1e-15 && (q[1] + m[1]).abs() < 1e-15);
        // the origin stays
        let o = roll([0.0, 0.0, 0.0], a);
        assert!(o[0] == 0.0 && o[1] == 0.0);
    }

    #[test]
    fn y_moves_along_the_normal_and_is_capped_near_the_centre() {
        let a = 0.2;
        // far out (θ > π/2): the unit normal, not capped
        let (q0, q1) = (roll([20.0, 0.0, 0.0], a), roll([20.0, 0.1, 0.0], a));
        let t = (q0[0] * q0[0] + q0[1] * q0[1]).sqrt() / a;
        assert!(t > FRAC_PI_2);
        let n = [-t.sin() - t * t.cos(), t.cos() - t * t.sin()];
        let norm = (n[0] * n[0] + n[1] * n[1]).sqrt();
        assert!((q1[0] - q0[0] - 0.1 * n[0] / norm).abs() < 1e-12);
        assert!((q1[1] - q0[1] - 0.1 * n[1] / norm).abs() < 1e-12);
        // at the centre the normal is (0, 1): capped to (−0.6, 0.8) in single precision
        let q = roll([0.0, 1.0, 0.0], a);
        assert_eq!(q[1], 0.8f32 as f64);
        assert!((q[0] + (1.0 - q[1] * q[1]).sqrt()).abs() < 1e-15);
        assert!((q[0] + 0.6).abs() < 1e-7);
    }

    #[test]
    fn the_engine_rolls_its_rest_positions() {
        let mut e = Spiral::new();
        let n = init_alone(
            &mut e,
            &[("rest_position", "1 0 0  -2 0.1 3"), ("curvature", "0.5")],
        );
        assert_eq!(n, 0);
        let x = e.data.reals("position");
        assert_eq!(x.len(), 6);
        assert_eq!(&x[..3], &roll([1.0, 0.0, 0.0], 0.5));
        assert_eq!(&x[3..], &roll([-2.0, 0.1, 3.0], 0.5));
    }

    #[test]
    fn bad_inputs_are_reported() {
        let mut e = Spiral::new();
        assert_eq!(
            init_alone(&mut e, &[("rest_position", "1 0 0"), ("curvature", "0")]),
            1
        );
        assert!(e.data.reals("position").is_empty());
        let mut e = Spiral::new();
        let n = init_alone(&mut e, &[("rest_position", "1 0 0"), ("curvature", "inf")]);
        assert_eq!(n, 1);
        assert!(e.data.reals("position").is_empty());
        let mut e = Spiral::new();
        assert_eq!(init_alone(&mut e, &[]), 1, "no rest positions");
        let mut e = Spiral::new();
        let n = init_alone(&mut e, &[("rest_position", "nan 0 0  1 0 0")]);
        assert_eq!(n, 1);
        let x = e.data.reals("position");
        assert!(x[0].is_nan() && x[3..].iter().all(|v| v.is_finite()));
        let mut e = Spiral::new();
        assert_eq!(
            init_alone(&mut e, &[("rest_position", "1 0 0"), ("curvature", "-0.2")]),
            1
        );
        assert_eq!(e.data.reals("position").len(), 3);
    }
}
