//! The mechanical state (SOFA's MechanicalObject): the DOF vectors of one node.
//!
//! Vectors are flat `f64` buffers indexed by [`VecId`]: position, velocity, force, dx, rest
//! position, and temporaries allocated by solvers. Coordinate vectors (position-like) hold
//! `coord_size` scalars per point, derivative vectors `deriv_size` (identical for Vec types).

use crate::component::Component;
use crate::data::{Data, DataKind, DataTable, Flag, Int, Real, Reals, Value, Words};
use canape_types::DofType;
use std::sync::Arc;

/// The most points a MechanicalObject may be given by its `size` (50 million: each vector of a
/// Rigid3 state then takes 2.8 GB): a larger size is refused, never an allocation failure.
pub const MAX_POINTS: usize = 50_000_000;

/// Identifies a state vector. The first ids are SOFA's standard vectors; solvers allocate more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VecId(pub u32);

impl VecId {
    pub const POSITION: VecId = VecId(0);
    pub const VELOCITY: VecId = VecId(1);
    pub const FORCE: VecId = VecId(2);
    pub const DX: VecId = VecId(3);
    pub const REST_POSITION: VecId = VecId(4);
    /// First id available for temporaries.
    pub const FIRST_TEMP: u32 = 5;
    /// First id of temporary coordinate (position-like) vectors: ids from here to
    /// `FREE_POSITION` have the coordinate layout (7 numbers per Rigid3 point, not 6).
    pub const FIRST_COORD_TEMP: u32 = 40;
    /// Positions at the end of the free motion (SOFA's freePosition: FreeMotionAnimationLoop
    /// integrates without the Lagrangian constraints into it, then corrects).
    pub const FREE_POSITION: VecId = VecId(58);
    /// Velocities at the end of the free motion (SOFA's freeVelocity).
    pub const FREE_VELOCITY: VecId = VecId(59);
    /// The displacement a matrix-free product through mappings scatters into the states.
    pub const SYSTEM_DX: VecId = VecId(60);
    /// The product's result, gathered back from the states.
    pub const SYSTEM_DF: VecId = VecId(61);
    /// Forces applied from outside the solver for the next integration (SOFA's
    /// externalForce: contact responses between objects of different solvers), added to
    /// every force computation of the step and cleared once the step is integrated.
    pub const EXTERNAL_FORCE: VecId = VecId(62);
    /// First id of vectors kept across steps (see `MechanicalOps::persistent`).
    pub const FIRST_PERSISTENT: u32 = 64;

    /// Whether this id is a coordinate (position-like) vector.
    pub fn is_coord(self) -> bool {
        self == VecId::POSITION
            || self == VecId::REST_POSITION
            || self == VecId::FREE_POSITION
            || (VecId::FIRST_COORD_TEMP..VecId::FREE_POSITION.0).contains(&self.0)
    }
}

/// MechanicalObject's vector Data, whose kinds (values per point) depend on the DOF type:
/// written out, as a [`data_schema!`](crate::data_schema) declares kinds fixed in the code.
#[derive(Clone, Copy, Debug)]
pub struct StateVectorData {
    pub position: Data<Reals>,
    pub velocity: Data<Reals>,
    pub force: Data<Reals>,
    pub rest_position: Data<Reals>,
    pub external_force: Data<Reals>,
    pub deriv_x: Data<Reals>,
}

impl StateVectorData {
    /// Add the vectors of a state of `dof` to `table` and return their typed handles.
    pub fn declare(table: DataTable, dof: DofType) -> (DataTable, Self) {
        let (coord, deriv) = (
            DataKind::Reals(dof.coord_size()),
            DataKind::Reals(dof.deriv_size()),
        );
        let (t, position) = table.declare(
            "position",
            coord,
            "",
            "position coordinates of the degrees of freedom",
        );
        let t = t.alias(&["x"]);
        let (t, velocity) = t.declare(
            "velocity",
            deriv,
            "",
            "velocity coordinates of the degrees of freedom",
        );
        let t = t.alias(&["v"]);
        let (t, force) = t.declare("force", deriv, "", "force vector of the degrees of freedom");
        let t = t.alias(&["f"]);
        let (t, rest_position) = t.declare(
            "rest_position",
            coord,
            "",
            "rest position coordinates of the degrees of freedom",
        );
        let t = t.alias(&["x0"]);
        let (t, external_force) = t.declare(
            "externalForce",
            deriv,
            "",
            "externalForces vector of the degrees of freedom",
        );
        let (t, deriv_x) = t.declare("derivX", deriv, "", "dx vector of the degrees of freedom");
        let t = t.alias(&["dx"]);
        let vectors = StateVectorData {
            position,
            velocity,
            force,
            rest_position,
            external_force,
            deriv_x,
        };
        (t, vectors)
    }
}

crate::data_schema! {
    /// The rest of MechanicalObject's Data, after [`StateVectorData`].
    pub struct MechanicalObjectData {
        size: Int = ("size", DataKind::Int, "0", "Size of the vectors"),
        translation: Reals = ("translation", DataKind::Vector(3), "0 0 0", "Translation of the DOFs"),
        rotation: Reals = ("rotation", DataKind::Vector(3), "0 0 0", "Rotation of the DOFs (Euler angles in degrees)"),
        scale3d: Reals = ("scale3d", DataKind::Vector(3), "1 1 1", "Scale of the DOFs in 3 dimensions"),
        rest_scale: Real = ("restScale", DataKind::Real, "1", "optional scaling of rest position coordinates (to simulated pre-existing internal tension).(default = 1.0)"),
        translation2: Reals = ("translation2", DataKind::Vector(3), "0 0 0", "Translation of the DOFs, applied after the rest position has been computed"),
        rotation2: Reals = ("rotation2", DataKind::Vector(3), "0 0 0", "Rotation of the DOFs, applied after the rest position has been computed"),
        show_object: Flag = ("showObject", DataKind::Bool, "0", "Show objects"),
        show_object_scale: Real = ("showObjectScale", DataKind::Real, "0.1", "Scale for object display"),
        show_indices: Flag = ("showIndices", DataKind::Bool, "0", "Show indices"),
        show_indices_scale: Real = ("showIndicesScale", DataKind::Real, "0.02", "Scale for indices display"),
        show_vectors: Flag = ("showVectors", DataKind::Bool, "0", "Show velocity"),
        show_vectors_scale: Real = ("showVectorsScale", DataKind::Real, "0.0001", "Scale for vectors display"),
        draw_mode: Int = ("drawMode", DataKind::Int, "0", "The way vectors will be drawn"),
        show_color: Reals = ("showColor", DataKind::Reals(4), "1 1 1 1", "Color for object display"),
        reserve: Int = ("reserve", DataKind::Int, "0", "Size to reserve when creating vectors"),
        print_log: Flag = ("printLog", DataKind::Bool, "0", "Print log messages"),
        tags: Words = ("tags", DataKind::Words, "", "Tags of the component"),
        listening: Flag = ("listening", DataKind::Bool, "0", "Listen to events"),
    }
}

/// SOFA's MechanicalObject.
#[derive(Clone)]
pub struct MechanicalObject {
    data: DataTable,
    /// Typed handles to the Data in `data`: the vectors, the rest (boxed: a state is held
    /// unboxed in the scene's component enum, which they would make much larger).
    handles: Box<(StateVectorData, MechanicalObjectData)>,
    pub dof: DofType,
    size: usize,
    /// Each vector behind an `Arc`: [`MechanicalObject::shared`] hands out a read-only handle
    /// (a Python view) without copying, and a write while one is held copies first
    /// (`Arc::make_mut`), so a handle never sees memory change or go away under it.
    vecs: Vec<Arc<Vec<f64>>>,
}

impl MechanicalObject {
    pub fn new(dof: DofType) -> Self {
        let (data, dv) = StateVectorData::declare(DataTable::new(), dof);
        let (data, d) = MechanicalObjectData::declare(data);
        MechanicalObject {
            data,
            handles: Box::new((dv, d)),
            dof,
            size: 0,
            vecs: Vec::new(),
        }
    }

    /// Number of points.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Length of a derivative vector (points × deriv size).
    pub fn deriv_len(&self) -> usize {
        self.size * self.dof.deriv_size()
    }

    fn len_of(&self, id: VecId) -> usize {
        if id.is_coord() {
            self.size * self.dof.coord_size()
        } else {
            self.size * self.dof.deriv_size()
        }
    }

    /// Resize every allocated vector to `n` points (new entries are zero).
    pub fn resize(&mut self, n: usize) {
        self.size = n;
        for i in 0..self.vecs.len() {
            let l = self.len_of(VecId(i as u32));
            Arc::make_mut(&mut self.vecs[i]).resize(l, 0.0);
        }
        self.ensure(VecId::REST_POSITION);
    }

    /// Make sure vector `id` exists with the right length.
    pub fn ensure(&mut self, id: VecId) {
        let i = id.0 as usize;
        if self.vecs.len() <= i {
            self.vecs.resize_with(i + 1, Default::default);
        }
        let l = self.len_of(id);
        if self.vecs[i].len() != l {
            Arc::make_mut(&mut self.vecs[i]).resize(l, 0.0);
        }
    }

    pub fn vec(&self, id: VecId) -> &[f64] {
        self.vecs
            .get(id.0 as usize)
            .map(|v| v.as_slice())
            .unwrap_or(&[])
    }

    pub fn vec_mut(&mut self, id: VecId) -> &mut Vec<f64> {
        self.ensure(id);
        Arc::make_mut(&mut self.vecs[id.0 as usize])
    }

    /// A read-only handle on vector `id` as it is now, without copying: the state copies the
    /// vector before its next write while the handle is alive.
    pub fn shared(&mut self, id: VecId) -> Arc<Vec<f64>> {
        self.ensure(id);
        self.vecs[id.0 as usize].clone()
    }

    /// Take a vector out (to write it while reading others); put it back with [`Self::put`].
    pub fn take(&mut self, id: VecId) -> Vec<f64> {
        self.ensure(id);
        std::mem::take(Arc::make_mut(&mut self.vecs[id.0 as usize]))
    }

    pub fn put(&mut self, id: VecId, v: Vec<f64>) {
        *Arc::make_mut(&mut self.vecs[id.0 as usize]) = v;
    }

    /// Two distinct vectors, one read-only and one writable.
    /// Exchange the contents of two vectors of the same layout (both coordinates or both
    /// derivatives), without copying.
    pub fn swap_vecs(&mut self, a: VecId, b: VecId) {
        assert_eq!(
            a.is_coord(),
            b.is_coord(),
            "swapping vectors of different layouts"
        );
        if a == b {
            return;
        }
        self.ensure(a);
        self.ensure(b);
        self.vecs.swap(a.0 as usize, b.0 as usize);
    }

    pub fn pair_mut(&mut self, read: VecId, write: VecId) -> (&[f64], &mut [f64]) {
        assert_ne!(read, write);
        self.ensure(read);
        self.ensure(write);
        let (r, w) = (read.0 as usize, write.0 as usize);
        if r < w {
            let (a, b) = self.vecs.split_at_mut(w);
            (&a[r], Arc::make_mut(&mut b[0]).as_mut_slice())
        } else {
            let (a, b) = self.vecs.split_at_mut(r);
            (&b[0], Arc::make_mut(&mut a[w]).as_mut_slice())
        }
    }

    /// Number of allocated vector slots.
    pub fn nb_vecs(&self) -> usize {
        self.vecs.len()
    }

    /// Set up the state from its Data at init: sizes, positions, velocities, transforms.
    /// `topology_points` are used when no position was given (grid or mesh in the node).
    pub fn init_from_data(
        &mut self,
        topology_points: Option<&[[f64; 3]]>,
        topology_in_node: bool,
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        let cs = self.dof.coord_size();
        let ds = self.dof.deriv_size();
        let (dv, d) = *self.handles;
        let mut pos = self.data.get(dv.position).to_vec();
        // SOFA's MechanicalObject::init: positions and velocities of at most one point are
        // replaced by the points of the node's own topology (`position="0 0 0"` beside a
        // SparseGridTopology gives the grid's points)
        let at_most_one = pos.len() <= cs && self.data.get(dv.velocity).len() <= ds;
        if pos.is_empty() || (at_most_one && topology_in_node) {
            if let Some(p) = topology_points.filter(|p| !p.is_empty()) {
                pos = points_as_coords(self.dof, p);
            }
        }
        if !pos.len().is_multiple_of(cs) {
            warnings.push(format!("position has {} values, not a multiple of {cs}; the incomplete last point is dropped", pos.len()));
            pos.truncate(pos.len() / cs * cs);
        }
        let mut n = pos.len() / cs;
        let declared = self.data.get(d.size).max(0) as usize;
        // no position (neither given nor linked), no size, no topology points: one point at
        // the origin, SOFA's default size (StateVectorStorage resizes to 1 when built); a
        // mapping resizes its output. A broken position link leaves the state empty.
        let linked = self.data.fields()[dv.position.index()].link.is_some();
        let declared = if declared == 0
            && !linked
            && !self.data.was_set(dv.position)
            && topology_points.is_none_or(|p| p.is_empty())
        {
            1
        } else {
            declared
        };
        if n == 0 && declared > MAX_POINTS {
            warnings.push(format!(
                "size {declared} is more points than a state may hold here ({MAX_POINTS}): the state is left empty"
            ));
        } else if n == 0 && declared > 0 {
            n = declared;
            pos = vec![0.0; n * cs];
            if self.dof == DofType::Rigid3 {
                for i in 0..n {
                    pos[i * 7 + 6] = 1.0;
                }
            }
        }
        self.size = n;
        self.vecs.clear();
        for id in 0..VecId::FIRST_TEMP {
            self.ensure(VecId(id));
        }
        self.vecs[0] = Arc::new(pos);
        let vel = self.data.get(dv.velocity);
        if !vel.is_empty() {
            if vel.len() == n * ds {
                self.vecs[1] = Arc::new(vel.to_vec());
            } else if vel.len().is_multiple_of(ds) && vel.len() < n * ds {
                // shorter: SOFA pads with the last value given
                let last = vel[vel.len() - ds..].to_vec();
                let v1 = Arc::make_mut(&mut self.vecs[1]);
                v1[..vel.len()].copy_from_slice(vel);
                for i in vel.len() / ds..n {
                    v1[i * ds..(i + 1) * ds].copy_from_slice(&last);
                }
            } else {
                warnings.push(format!(
                    "velocity has {} values, expected {} ({} points); ignored",
                    vel.len(),
                    n * ds,
                    n
                ));
            }
        }
        // rest position: given explicitly, or a copy of position (before transforms are applied,
        // transforms are then applied to both as SOFA does)
        // rest position: given explicitly (kept as written), or a copy of the transformed position
        let rest = self.data.get(dv.rest_position).to_vec();
        let rest_given = rest.len() == n * cs && n > 0;
        if !rest.is_empty() && !rest_given {
            warnings.push(format!(
                "rest_position has {} values, expected {}; the position is used instead",
                rest.len(),
                n * cs
            ));
        }
        let s = self.data.get(d.scale3d).to_vec();
        let r = self.data.get(d.rotation).to_vec();
        let t = self.data.get(d.translation).to_vec();
        apply_dof_transform(
            self.dof,
            Arc::make_mut(&mut self.vecs[0]).as_mut_slice(),
            &s,
            &r,
            &t,
        );
        self.vecs[4] = Arc::new(if rest_given {
            rest
        } else {
            // a rest position copied from the position is scaled by restScale (the centers only
            // for rigid frames), as SOFA's MechanicalObject::init does
            let mut x0 = self.vecs[0].as_ref().clone();
            let k = self.data.get(d.rest_scale);
            if k != 1.0 {
                let d = self.dof.coord_size();
                let spatial = match self.dof {
                    DofType::Rigid3 => 3,
                    DofType::Rigid2 => 2,
                    _ => d,
                };
                for c in x0.chunks_exact_mut(d) {
                    c[..spatial].iter_mut().for_each(|v| *v *= k);
                }
            }
            x0
        });
        // rotation2 then translation2, on the position only (after the rest position is set)
        let r2 = self.data.get(d.rotation2).to_vec();
        let t2 = self.data.get(d.translation2).to_vec();
        apply_dof_transform(
            self.dof,
            Arc::make_mut(&mut self.vecs[0]).as_mut_slice(),
            &[1.0, 1.0, 1.0],
            &r2,
            &t2,
        );
        warnings
    }

    /// Refresh the Data table's vectors from the live state (for writers and the viewer).
    pub fn sync_data(&mut self) {
        let x = self.vec(VecId::POSITION).to_vec();
        let v = self.vec(VecId::VELOCITY).to_vec();
        let r = self.vec(VecId::REST_POSITION).to_vec();
        let dv = self.handles.0;
        let _ = self.data.put(dv.position, Value::Reals(x));
        let _ = self.data.put(dv.velocity, Value::Reals(v));
        let _ = self.data.put(dv.rest_position, Value::Reals(r));
    }
}

/// 3D points (a topology's, or a Vec3 Data linked into a state of another type) as coordinates
/// of `dof`, as SOFA converts them: Vec1/Vec2 keep their first components, Rigid3 takes them as
/// centers with the identity orientation, Rigid2 as centers with angle 0.
pub fn points_as_coords(dof: DofType, p: &[[f64; 3]]) -> Vec<f64> {
    let mut out = Vec::with_capacity(p.len() * dof.coord_size());
    for q in p {
        match dof {
            DofType::Vec1 => out.push(q[0]),
            DofType::Vec2 => out.extend_from_slice(&q[..2]),
            DofType::Vec3 => out.extend_from_slice(q),
            DofType::Rigid2 => out.extend_from_slice(&[q[0], q[1], 0.0]),
            DofType::Rigid3 => out.extend_from_slice(&[q[0], q[1], q[2], 0.0, 0.0, 0.0, 1.0]),
        }
    }
    out
}

/// [`apply_transform`] for a state of any DOF type (SOFA's MechanicalObject applies its
/// transform through the DataTypes): Vec3 points are scaled, rotated and translated; Rigid3
/// centers too, and their orientations are turned by the rotation; Vec1/Vec2 and Rigid2 points
/// are scaled and translated along their own components only.
pub fn apply_dof_transform(
    dof: DofType,
    buf: &mut [f64],
    scale: &[f64],
    rot_deg: &[f64],
    trans: &[f64],
) {
    match dof {
        DofType::Vec3 => apply_transform(buf, scale, rot_deg, trans),
        DofType::Rigid3 => {
            let rot = euler_rotation(rot_deg);
            let q = nalgebra::UnitQuaternion::from_rotation_matrix(&rot).into_inner();
            let has_rot = rot_deg.len() == 3 && rot_deg.iter().any(|v| *v != 0.0);
            for c in <canape_types::Rigid3Types as canape_types::DataTypes>::coords_mut(buf) {
                let mut p = [c[0], c[1], c[2]];
                apply_transform(&mut p, scale, rot_deg, trans);
                c[..3].copy_from_slice(&p);
                if has_rot {
                    let o = q * canape_types::dof::quat_of(c);
                    canape_types::dof::set_quat(c, &o);
                }
            }
        }
        DofType::Vec1 | DofType::Vec2 | DofType::Rigid2 => {
            let w = match dof {
                DofType::Vec1 => 1,
                _ => 2,
            };
            let cs = dof.coord_size();
            for c in buf.chunks_exact_mut(cs) {
                for k in 0..w {
                    let s = scale.get(k).copied().unwrap_or(1.0);
                    let t = trans.get(k).copied().unwrap_or(0.0);
                    c[k] = c[k] * s + t;
                }
            }
        }
    }
}

fn euler_rotation(rot_deg: &[f64]) -> nalgebra::Rotation3<f64> {
    use nalgebra::{Rotation3, Vector3};
    let r = if rot_deg.len() == 3 {
        [rot_deg[0], rot_deg[1], rot_deg[2]]
    } else {
        [0.0; 3]
    };
    let d = std::f64::consts::PI / 180.0;
    let rx = Rotation3::from_axis_angle(&Vector3::x_axis(), r[0] * d);
    let ry = Rotation3::from_axis_angle(&Vector3::y_axis(), r[1] * d);
    let rz = Rotation3::from_axis_angle(&Vector3::z_axis(), r[2] * d);
    rz * ry * rx
}

/// Scale, then rotate (Euler angles in degrees, applied about x, then y, then z), then translate
/// a flat list of Vec3 (SOFA MechanicalObject::init order).
pub fn apply_transform(buf: &mut [f64], scale: &[f64], rot_deg: &[f64], trans: &[f64]) {
    use nalgebra::{Rotation3, Vector3};
    let s = if scale.len() == 3 {
        [scale[0], scale[1], scale[2]]
    } else {
        [1.0; 3]
    };
    let r = if rot_deg.len() == 3 {
        [rot_deg[0], rot_deg[1], rot_deg[2]]
    } else {
        [0.0; 3]
    };
    let t = if trans.len() == 3 {
        [trans[0], trans[1], trans[2]]
    } else {
        [0.0; 3]
    };
    let has_rot = r != [0.0; 3];
    let rot = {
        let d = std::f64::consts::PI / 180.0;
        let rx = Rotation3::from_axis_angle(&Vector3::x_axis(), r[0] * d);
        let ry = Rotation3::from_axis_angle(&Vector3::y_axis(), r[1] * d);
        let rz = Rotation3::from_axis_angle(&Vector3::z_axis(), r[2] * d);
        rz * ry * rx
    };
    for p in buf.chunks_exact_mut(3) {
        let mut v = Vector3::new(p[0] * s[0], p[1] * s[1], p[2] * s[2]);
        if has_rot {
            v = rot * v;
        }
        p[0] = v.x + t[0];
        p[1] = v.y + t[1];
        p[2] = v.z + t[2];
    }
}

impl Component for MechanicalObject {
    fn class_name(&self) -> &'static str {
        "MechanicalObject"
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
    fn read_data(&self, name: &str) -> Option<Value> {
        let dv = self.handles.0;
        let index = self.data.index_of(name);
        let id = match index {
            Some(i) if i == dv.position.index() => VecId::POSITION,
            Some(i) if i == dv.velocity.index() => VecId::VELOCITY,
            Some(i) if i == dv.force.index() => VecId::FORCE,
            Some(i) if i == dv.rest_position.index() => VecId::REST_POSITION,
            Some(i) if i == dv.deriv_x.index() => VecId::DX,
            Some(i) if i == self.handles.1.size.index() && self.nb_vecs() > 0 => {
                return Some(Value::Int(self.size as i64))
            }
            _ => return self.data.value(name).cloned(),
        };
        if self.nb_vecs() == 0 {
            // before init, the rest position not given is the position (as init will make it)
            if id == VecId::REST_POSITION && !self.data.was_set(dv.rest_position) {
                return Some(Value::Reals(self.data.get(dv.position).to_vec()));
            }
            return self.data.value(name).cloned();
        }
        Some(Value::Reals(self.vec(id).to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_vector_is_copied_before_a_write_and_never_changes() {
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.data_mut().set_str("position", "0 0 0 1 0 0").unwrap();
        mo.init_from_data(None, false);
        let view = mo.shared(VecId::POSITION);
        // no copy while nobody writes
        assert!(std::ptr::eq(
            view.as_ptr(),
            mo.vec(VecId::POSITION).as_ptr()
        ));
        mo.vec_mut(VecId::POSITION)[0] = 5.0;
        assert_eq!(view[0], 0.0, "the handle keeps what it saw");
        assert_eq!(mo.vec(VecId::POSITION)[0], 5.0);
        // once the handle is gone, writes are in place again
        drop(view);
        let p = mo.vec(VecId::POSITION).as_ptr();
        mo.vec_mut(VecId::POSITION)[1] = 7.0;
        assert!(std::ptr::eq(p, mo.vec(VecId::POSITION).as_ptr()));
        // take/put and swaps keep the handle's data too
        let view = mo.shared(VecId::VELOCITY);
        let v = mo.take(VecId::VELOCITY);
        mo.put(VecId::VELOCITY, v.iter().map(|x| x + 1.0).collect());
        assert!(view.iter().all(|&x| x == 0.0));
        assert!(mo.vec(VecId::VELOCITY).iter().all(|&x| x == 1.0));
    }

    #[test]
    fn init_translation_and_rest() {
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.data_mut().set_str("position", "0 0 0 1 0 0").unwrap();
        mo.data_mut().set_str("translation", "1 2 3").unwrap();
        mo.init_from_data(None, false);
        assert_eq!(mo.size(), 2);
        assert_eq!(mo.vec(VecId::POSITION), &[1., 2., 3., 2., 2., 3.]);
        assert_eq!(mo.vec(VecId::REST_POSITION), mo.vec(VecId::POSITION));
        assert_eq!(mo.vec(VecId::VELOCITY), &[0.0; 6]);
    }

    #[test]
    fn rest_scale_scales_a_copied_rest_position_only() {
        let mut mo = MechanicalObject::new(DofType::Rigid3);
        mo.data_mut().set_str("position", "1 2 3 0 0 0 1").unwrap();
        mo.data_mut().set_str("restScale", "0.5").unwrap();
        mo.init_from_data(None, false);
        assert_eq!(mo.vec(VecId::POSITION), &[1., 2., 3., 0., 0., 0., 1.]);
        assert_eq!(
            mo.vec(VecId::REST_POSITION),
            &[0.5, 1., 1.5, 0., 0., 0., 1.]
        );
        // a given rest position is kept as written
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.data_mut().set_str("position", "1 2 3").unwrap();
        mo.data_mut().set_str("rest_position", "4 4 4").unwrap();
        mo.data_mut().set_str("restScale", "2").unwrap();
        mo.init_from_data(None, false);
        assert_eq!(mo.vec(VecId::REST_POSITION), &[4., 4., 4.]);
    }

    #[test]
    fn one_given_point_gives_way_to_the_nodes_topology() {
        let grid = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let one = |v: &str| {
            let mut mo = MechanicalObject::new(DofType::Vec3);
            mo.data_mut().set_str("position", "0 0 0").unwrap();
            mo.data_mut().set_str("velocity", v).unwrap();
            mo
        };
        // SOFA's MechanicalObject::init: at most one point given, a topology in the node
        let mut mo = one("0 0 1");
        mo.init_from_data(Some(&grid), true);
        assert_eq!(mo.size(), 3);
        assert_eq!(
            mo.vec(VecId::VELOCITY),
            &[0., 0., 1., 0., 0., 1., 0., 0., 1.]
        );
        // a topology found above the node does not replace the point
        let mut mo = one("");
        mo.init_from_data(Some(&grid), false);
        assert_eq!(mo.size(), 1);
        // two points given stay
        let mut mo = MechanicalObject::new(DofType::Vec3);
        mo.data_mut().set_str("position", "0 0 0 5 5 5").unwrap();
        mo.init_from_data(Some(&grid), true);
        assert_eq!(mo.size(), 2);
    }

    #[test]
    fn rotation_degrees() {
        let mut b = vec![1.0, 0.0, 0.0];
        apply_transform(&mut b, &[1., 1., 1.], &[0., 0., 90.], &[0., 0., 0.]);
        assert!((b[0]).abs() < 1e-12 && (b[1] - 1.0).abs() < 1e-12);
    }
}
