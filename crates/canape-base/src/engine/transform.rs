//! TransformEngine and PointsFromIndices: engines that transform or pick positions.

use super::*;

canape_core::data_schema! {
    /// TransformEngine's own Data (after the base Data).
    pub struct TransformEngineData {
        input_position: Reals = ("input_position", DataKind::Reals(3), "", "input array of 3d points"),
        translation: Reals = ("translation", DataKind::Vector(3), "0 0 0", "translation vector "),
        rotation: Reals = ("rotation", DataKind::Vector(3), "0 0 0", "rotation vector "),
        quaternion: Reals = ("quaternion", DataKind::Vector(4), "0 0 0 1", "rotation quaternion "),
        scale: Reals = ("scale", DataKind::Vector(3), "1 1 1", "scale factor"),
        inverse: Flag = ("inverse", DataKind::Bool, "0", "true to apply inverse transformation"),
        output_position: Reals => ("output_position", DataKind::Reals(3), "output array of 3d points"),
    }
}

/// TransformEngine (Sofa/Component/Engine/Transform/.../TransformEngine.inl): output positions
/// = translation + R_q R_euler (scale ∘ input) (with `inverse`, the inverse operations in reverse
/// order); Euler angles in degrees, R = Rz Ry Rx. For Vec3d positions.
#[derive(Clone)]
pub struct TransformEngine {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: TransformEngineData,
}

impl Default for TransformEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl TransformEngine {
    pub fn new() -> Self {
        let (data, d) = TransformEngineData::declare(base_data(DataTable::new()));
        TransformEngine { data, d }
    }

    fn init_impl(&mut self, _ctx: &mut InitContext<'_>) {
        use nalgebra::{Quaternion, UnitQuaternion, Vector3};
        let v3 = |h: Data<Reals>, d: f64| -> Vector3<f64> {
            let r = self.data.get(h);
            if r.len() == 3 {
                Vector3::new(r[0], r[1], r[2])
            } else {
                Vector3::repeat(d)
            }
        };
        let (t, rot, s) = (
            v3(self.d.translation, 0.0),
            v3(self.d.rotation, 0.0),
            v3(self.d.scale, 1.0),
        );
        let q = self.data.get(self.d.quaternion);
        let q = if q.len() == 4 {
            Quaternion::new(q[3], q[0], q[1], q[2])
        } else {
            Quaternion::identity()
        };
        let d = std::f64::consts::PI / 180.0;
        let re = UnitQuaternion::from_euler_angles(rot.x * d, rot.y * d, rot.z * d);
        let rq = UnitQuaternion::new_normalize(q);
        let inverse = self.data.get(self.d.inverse);
        let out: Vec<f64> = self
            .data
            .get(self.d.input_position)
            .chunks_exact(3)
            .flat_map(|p| {
                let p = Vector3::new(p[0], p[1], p[2]);
                let r = if inverse {
                    let u = re.inverse() * (rq.inverse() * (p - t));
                    u.component_div(&s)
                } else {
                    t + rq * (re * p.component_mul(&s))
                };
                [r.x, r.y, r.z]
            })
            .collect();
        let _ = self.data.put(self.d.output_position, Value::Reals(out));
    }
}

impl_component!(TransformEngine, "TransformEngine", init);

impl Engine for TransformEngine {
    fn reads_context_state(&self) -> bool {
        false
    }
}

canape_core::data_schema! {
    /// PointsFromIndices' own Data (after the base Data).
    pub struct PointsFromIndicesData {
        position: Reals = ("position", DataKind::Reals(3), "", "Position coordinates of the degrees of freedom"),
        indices: Ints = ("indices", DataKind::Ints(0), "", "Indices of the points"),
        indices_position: Reals => ("indices_position", DataKind::Reals(3), "Coordinates of the points contained in indices"),
    }
}

/// The positions of the listed points (Sofa/Component/Engine/Select/.../PointsFromIndices.inl):
/// `position` (the context state's positions when not given), each listed point's position
/// once — a position equal to one already output is skipped, as SOFA does. Indices out of range
/// are reported and skipped.
#[derive(Clone)]
pub struct PointsFromIndices {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: PointsFromIndicesData,
}

impl Default for PointsFromIndices {
    fn default() -> Self {
        Self::new()
    }
}

impl PointsFromIndices {
    pub fn new() -> Self {
        let (data, d) = PointsFromIndicesData::declare(base_data(DataTable::new()));
        PointsFromIndices { data, d }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let x = if self.data.was_set(self.d.position) {
            self.data.get(self.d.position).to_vec()
        } else {
            match ctx.state() {
                Some(s) if s.dof == canape_types::DofType::Vec3 => s.vec(VecId::POSITION).to_vec(),
                _ => {
                    ctx.error("no position given and no Vec3 MechanicalObject in the context");
                    return;
                }
            }
        };
        let n = x.len() / 3;
        let mut out: Vec<[f64; 3]> = Vec::new();
        let mut bad = Vec::new();
        for &i in self.data.get(self.d.indices) {
            let i = i as usize;
            if i >= n {
                bad.push(i);
                continue;
            }
            let p = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if !bad.is_empty() {
            ctx.error(format!(
                "indices {bad:?} are out of range (the positions have {n} points) and are skipped"
            ));
        }
        let _ = self.data.put(
            self.d.indices_position,
            Value::Reals(out.into_iter().flatten().collect()),
        );
    }
}

impl_component!(PointsFromIndices, "PointsFromIndices", init);

impl Engine for PointsFromIndices {
    fn reads_context_state(&self) -> bool {
        !self.data.was_set(self.d.position)
    }
}
