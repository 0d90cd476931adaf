//! Prescribed movements from an initial to a final position over a time interval, following
//! SOFA's Sofa/Component/Constraint/Projective/.../AffineMovementProjectiveConstraint.inl and
//! PatchTestMovementProjectiveConstraint.inl:
//!
//! - the chosen points go from their initial positions x0 to final positions xf linearly
//!   between `beginConstraintTime` and `endConstraintTime` (then stay at xf); their velocities
//!   and derivatives are zeroed and assembled matrices get identity rows for them;
//! - AffineMovementProjectiveConstraint: xf = R·x0 + t;
//! - PatchTestMovementProjectiveConstraint: xf = x0 + the displacement interpolated (bilinearly,
//!   or trilinearly when the constrained points are not in one z plane) from the four (eight)
//!   `cornerMovements`, at the point's position relative to the corners of `constrainedPoints`.
//!
//! Both read the step's start time (`set_time`), as SOFA's context time during the solve.

use super::projections::{valid_indices, zero_blocks};
use crate::base_data;
use canape_core::component::ProjectiveConstraint;
use canape_core::data::{DataKind, DataTable, Flag, Ints, Real, Reals, Text};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use canape_types::{DataTypes, DofType, Vec3, Vec3Types};

canape_core::data_schema! {
    /// The Data both movements start with (after the base Data).
    pub struct MovementData {
        indices: Ints = ("indices", DataKind::Ints(0), "", "Indices of the constrained points"),
        mesh_indices: Ints = ("meshIndices", DataKind::Ints(0), "", "Indices of the mesh"),
        begin_constraint_time: Real = ("beginConstraintTime", DataKind::Real, "0", "Begin time of the bilinear constraint"),
        end_constraint_time: Real = ("endConstraintTime", DataKind::Real, "20", "End time of the bilinear constraint"),
        draw_constrained_points: Flag = ("drawConstrainedPoints", DataKind::Bool, "0", "draw constrained points"),
        topology: Text = ("topology", DataKind::Str, "", "link to the topology container"),
    }
}

canape_core::data_schema! {
    /// AffineMovementProjectiveConstraint's own Data (after [`MovementData`]).
    pub struct AffineMovementData {
        rotation: Text = ("rotation", DataKind::Str, "", "rotation applied to border points"),
        quaternion: Reals = ("quaternion", DataKind::Reals(0), "0 0 0 1", "quaternion applied to border points"),
        translation: Reals = ("translation", DataKind::Reals(0), "0 0 0", "translation applied to border points"),
    }
}

canape_core::data_schema! {
    /// PatchTestMovementProjectiveConstraint's own Data (after [`MovementData`]).
    pub struct PatchTestMovementData {
        constrained_points: Reals = ("constrainedPoints", DataKind::Reals(3), "", "Coordinates of the constrained points"),
        corner_movements: Reals = ("cornerMovements", DataKind::Reals(3), "", "movements of the corners of the grid"),
        corner_points: Reals => ("cornerPoints", DataKind::Reals(3), "corner points for computing constraint"),
    }
}

/// How the final positions are made from the initial ones, with that rule's Data.
#[derive(Clone, Copy, Debug)]
enum RuleData {
    Affine(AffineMovementData),
    PatchTest(PatchTestMovementData),
}

/// AffineMovementProjectiveConstraint and PatchTestMovementProjectiveConstraint on Vec3 states
/// (see the module doc).
#[derive(Clone)]
pub struct MovementProjectiveConstraint {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MovementData,
    rule: RuleData,
    indices: Vec<u32>,
    /// Initial and final positions of the chosen points.
    x0: Vec<[f64; 3]>,
    xf: Vec<[f64; 3]>,
    begin: f64,
    end: f64,
    time: f64,
}

impl MovementProjectiveConstraint {
    /// AffineMovementProjectiveConstraint.
    pub fn affine() -> Self {
        let (data, d) = MovementData::declare(base_data(DataTable::new()));
        let (data, da) = AffineMovementData::declare(data);
        Self::with(data, d, RuleData::Affine(da))
    }

    /// PatchTestMovementProjectiveConstraint.
    pub fn patch_test() -> Self {
        let (data, d) = MovementData::declare(base_data(DataTable::new()));
        let (data, dp) = PatchTestMovementData::declare(data);
        Self::with(data, d, RuleData::PatchTest(dp))
    }

    fn with(data: DataTable, d: MovementData, rule: RuleData) -> Self {
        MovementProjectiveConstraint {
            data,
            d,
            rule,
            indices: Vec::new(),
            x0: Vec::new(),
            xf: Vec::new(),
            begin: 0.0,
            end: 20.0,
            time: 0.0,
        }
    }

    fn class(&self) -> &'static str {
        match self.rule {
            RuleData::Affine(_) => "AffineMovementProjectiveConstraint",
            RuleData::PatchTest(_) => "PatchTestMovementProjectiveConstraint",
        }
    }

    /// R·x + t from `rotation` (a 3×3 matrix) and `translation`; None after reporting.
    fn affine_map(
        &self,
        ctx: &mut InitContext<'_>,
        da: AffineMovementData,
    ) -> Option<(canape_types::Mat3, Vec3)> {
        // SOFA's rotation is a 3×3 matrix written with brackets and commas; unset, it is the
        // zero matrix (every point goes to `translation`), which is SOFA's default too
        let text = self.data.get(da.rotation).replace(['[', ']', ','], " ");
        let r: Vec<f64> = text
            .split_whitespace()
            .filter_map(canape_core::data::parse_real)
            .collect();
        let r = match r.len() {
            9 => canape_types::Mat3::from_row_slice(&r),
            0 => {
                ctx.warn("no rotation given: SOFA's default rotation is the zero matrix, so the points all move to 'translation'");
                canape_types::Mat3::zeros()
            }
            k => {
                ctx.error(format!("rotation has {k} numbers; a 3×3 matrix needs 9"));
                return None;
            }
        };
        let t = self.data.get(da.translation);
        if t.len() != 3 {
            ctx.error(format!("translation has {} numbers; 3 are needed", t.len()));
            return None;
        }
        Some((r, Vec3::new(t[0], t[1], t[2])))
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.indices.clear();
        self.x0.clear();
        self.xf.clear();
        let Some(st) = ctx.state() else {
            ctx.error("no MechanicalObject in the context to constrain");
            return;
        };
        if st.dof != DofType::Vec3 {
            ctx.error(format!(
                "{} acts on Vec3 states here ({} given)",
                self.class(),
                st.dof.name()
            ));
            return;
        }
        let n = st.size();
        let x = Vec3Types::coords(st.vec(canape_core::state::VecId::POSITION)).to_vec();
        self.begin = self.data.get(self.d.begin_constraint_time);
        self.end = self.data.get(self.d.end_constraint_time);
        let indices = valid_indices(ctx, self.data.get(self.d.indices), n);
        let finals: Vec<[f64; 3]> = match self.rule {
            RuleData::Affine(da) => {
                let Some((r, t)) = self.affine_map(ctx, da) else {
                    return;
                };
                indices
                    .iter()
                    .map(|&i| (r * Vec3::from(x[i as usize]) + t).into())
                    .collect()
            }
            RuleData::PatchTest(dp) => {
                let constrained =
                    canape_core::mesh::group_points(self.data.get(dp.constrained_points));
                let corners = corner_points(&constrained);
                let moves = canape_core::mesh::group_points(self.data.get(dp.corner_movements));
                if corners.is_empty() {
                    ctx.error("no constrainedPoints: the corners of the patch cannot be found, the points stay put");
                    return;
                }
                if moves.len() < corners.len() {
                    ctx.error(format!(
                        "cornerMovements has {} movements; the {} corners of the patch need one each",
                        moves.len(),
                        corners.len()
                    ));
                    return;
                }
                let _ = self.data.put(
                    dp.corner_points,
                    canape_core::data::Value::Reals(corners.iter().flatten().copied().collect()),
                );
                indices
                    .iter()
                    .map(|&i| {
                        let p = x[i as usize];
                        let d = interpolated_displacement(p, &corners, &moves);
                        [p[0] + d[0], p[1] + d[1], p[2] + d[2]]
                    })
                    .collect()
            }
        };
        self.x0 = indices.iter().map(|&i| x[i as usize]).collect();
        self.xf = finals;
        self.indices = indices;
    }
}

/// The corners of the constrained points as SOFA's findCornerPoints picks them: each corner is
/// replaced by a later point that is beyond it along any one of its test directions (so the
/// result depends on the order of the points, as in SOFA); four corners in a plane, eight when
/// the points do not share one z.
fn corner_points(p: &[[f64; 3]]) -> Vec<[f64; 3]> {
    let Some(&first) = p.first() else {
        return Vec::new();
    };
    let in_3d = p.iter().any(|q| q[2] != first[2]);
    let mut c = [first; 8];
    for q in p {
        if q[0] < c[0][0] || q[1] < c[0][1] || q[2] < c[0][2] {
            c[0] = *q;
        }
        if q[0] > c[2][0] || q[1] > c[2][1] || q[2] < c[2][2] {
            c[2] = *q;
        }
        if q[1] < c[1][1] || q[0] > c[1][0] || q[2] < c[1][2] {
            c[1] = *q;
        }
        if q[0] < c[3][0] || q[1] > c[3][1] || q[2] < c[3][2] {
            c[3] = *q;
        }
        // SOFA compares corners 4 and 6 in z with corners 0 and 2, and tests corner 7 only
        // when corner 5 was not replaced
        if in_3d && (q[0] < c[4][0] || q[1] < c[4][1] || q[2] > c[0][2]) {
            c[4] = *q;
        }
        if in_3d && (q[0] > c[6][0] || q[1] > c[6][1] || q[2] > c[2][2]) {
            c[6] = *q;
        }
        if in_3d && (q[1] < c[5][1] || q[0] > c[5][0] || q[2] > c[5][2]) {
            c[5] = *q;
        } else if in_3d && (q[0] < c[7][0] || q[1] > c[7][1] || q[2] > c[7][2]) {
            c[7] = *q;
        }
    }
    c[..if in_3d { 8 } else { 4 }].to_vec()
}

/// SOFA's computeInterpolatedDisplacement: α along x between corners 0 and 1, β along y between
/// corners 0 and 3 (γ along z between corners 0 and 4 with eight corners), then the bilinear
/// (trilinear) blend of the corner movements.
fn interpolated_displacement(p: [f64; 3], c: &[[f64; 3]], m: &[[f64; 3]]) -> [f64; 3] {
    let a = (p[0] - c[0][0]).abs() / (c[1][0] - c[0][0]).abs();
    let b = (p[1] - c[0][1]).abs() / (c[3][1] - c[0][1]).abs();
    let layer = |k: usize| -> [f64; 3] {
        std::array::from_fn(|i| {
            m[k][i] * (1.0 - a) * (1.0 - b)
                + m[k + 1][i] * a * (1.0 - b)
                + m[k + 2][i] * a * b
                + m[k + 3][i] * (1.0 - a) * b
        })
    };
    if c.len() == 8 {
        let g = (p[2] - c[0][2]).abs() / (c[4][2] - c[0][2]).abs();
        let (lo, hi) = (layer(0), layer(4));
        std::array::from_fn(|i| lo[i] * (1.0 - g) + hi[i] * g)
    } else {
        layer(0)
    }
}

impl_component!(MovementProjectiveConstraint, |s| s.class(), init);

impl ProjectiveConstraint for MovementProjectiveConstraint {
    fn set_time(&mut self, t: f64) {
        self.time = t;
    }
    fn project_response(&self, dx: &mut [f64]) {
        zero_blocks(dx, &self.indices, 3);
    }
    fn project_velocity(&self, v: &mut [f64]) {
        zero_blocks(v, &self.indices, 3);
    }
    fn project_position(&self, x: &mut [f64]) {
        let (t, b, e) = (self.time, self.begin, self.end);
        let total = e - b;
        let during = t > b && t <= e && total > 0.0;
        if !(during || t > e) {
            return;
        }
        let x = Vec3Types::coords_mut(x);
        for (k, &i) in self.indices.iter().enumerate() {
            let Some(p) = x.get_mut(i as usize) else {
                continue;
            };
            for c in 0..3 {
                let (a, f) = (self.x0[k][c], self.xf[k][c]);
                // SOFA's formula: ((xf − x0)·t + x0·end − xf·begin) / (end − begin)
                p[c] = if during {
                    ((f - a) * t + (a * e - f * b)) / total
                } else {
                    f
                };
            }
        }
    }
    fn fixed_scalar_dofs(&self, deriv_size: usize) -> Vec<usize> {
        self.indices
            .iter()
            .flat_map(|&i| (0..deriv_size).map(move |c| deriv_size * i as usize + c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_corners_and_bilinear_displacement() {
        // the border of the unit square, in grid order
        let mut pts = Vec::new();
        for y in 0..3 {
            for x in 0..3 {
                if x != 1 || y != 1 {
                    pts.push([x as f64 * 0.5, y as f64 * 0.5, 0.0]);
                }
            }
        }
        let c = corner_points(&pts);
        assert_eq!(
            c,
            vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0]
            ]
        );
        let m = [
            [1.0, 0.0, 0.0],
            [0.0, 2.0, 0.0],
            [0.0, 0.0, 3.0],
            [4.0, 0.0, 0.0],
        ];
        // each corner takes its own movement, the centre the mean of the four
        assert_eq!(interpolated_displacement(c[2], &c, &m), m[2]);
        assert_eq!(interpolated_displacement(c[3], &c, &m), m[3]);
        assert_eq!(
            interpolated_displacement([0.5, 0.5, 0.0], &c, &m),
            [1.25, 0.5, 0.75]
        );
    }

    #[test]
    fn points_off_one_plane_give_eight_corners() {
        let pts = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]];
        assert_eq!(corner_points(&pts).len(), 8);
        assert!(corner_points(&[]).is_empty());
    }
}
