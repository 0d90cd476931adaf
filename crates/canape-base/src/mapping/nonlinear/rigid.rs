//! RigidMapping (Rigid3 frames carrying points, Sofa/Component/Mapping/NonLinear/.../RigidMapping.inl),
//! also Rigid3 → Rigid3 and Rigid2 → Vec2, with SOFA's geometric stiffness options.

use canape_core::component::{JEntry, KEntry, MapInputs, Mapping};
use canape_core::data::{DataKind, DataTable, Flag, Int, Ints, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use canape_types::dof::{quat_of, rigid3_inverse_rotate, rigid3_rotate, set_quat};
use canape_types::{DataTypes, DofType, Rigid3Types, Vec3};

use crate::mapping::linear::{mapping_base, resolve_mapping_ends, MappingData};

// ---------------------------------------------------------------------------------------------
// RigidMapping

/// RigidMapping (Rigid3d → Vec3d): each output point is a point fixed in one rigid frame,
/// out_i = c_k + R_k p_i. v_i = v_k + ω_k × r_i (r_i = R_k p_i); forces up: f_k += f_i,
/// τ_k += r_i × f_i. Geometric stiffness (optional, `geometricStiffness` 1 or 2):
/// K_k = Σ [f_i]× [r_i]× on the rotational block.
#[derive(Clone)]
pub struct RigidMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: RigidMappingData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    /// Local coordinates of the points.
    points: Vec<Vec3>,
    /// Rigid frame of each point.
    frame: Vec<u32>,
    /// R_k p_i at the last apply.
    rotated: Vec<Vec3>,
    /// Rigid3 output (SOFA's RigidMapping<Rigid3, Rigid3>): each output frame's orientation in
    /// its rigid's frame; empty for points.
    orient: Vec<nalgebra::Quaternion<f64>>,
    /// Rigid2d → Vec2d (SOFA's RigidMapping<Rigid2, Vec2>): frames (x, y, θ), points (x, y);
    /// `points` and `rotated` hold them with z = 0.
    planar: bool,
    gs: u32,
    n_in: usize,
}

canape_core::data_schema! {
    /// RigidMapping's own Data (after [`MappingData`]).
    struct RigidMappingData {
        initial_points: Reals = ("initialPoints", DataKind::Reals(0), "", "Local Coordinates of the points") alias ["points"],
        index: Int = ("index", DataKind::Int, "0", "input DOF index used when rigidIndexPerPoint is not given"),
        file_rigid_mapping: Text = ("fileRigidMapping", DataKind::Str, "", "Filename of the points") alias ["filename"],
        use_x0: Flag = ("useX0", DataKind::Bool, "0", "Use x0 instead of local copy of initial positions (to support topo changes)"),
        index_from_end: Flag = ("indexFromEnd", DataKind::Bool, "0", "input DOF index starts from the end of input DOFs vector"),
        rigid_index_per_point: Ints = ("rigidIndexPerPoint", DataKind::Ints(1), "", "For each mapped point, the index of the Rigid it is mapped from"),
        global_to_local_coords: Flag = ("globalToLocalCoords", DataKind::Bool, "0", "are the output DOFs initially expressed in global coordinates"),
        geometric_stiffness: Text = ("geometricStiffness", DataKind::Str, "0", "Method used to compute the geometric stiffness: None (0), Exact (1), Stabilized (2)"),
    }
}

impl RigidMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = RigidMappingData::declare(data);
        RigidMapping {
            data,
            m,
            d,
            input: Vec::new(),
            output: None,
            points: Vec::new(),
            frame: Vec::new(),
            rotated: Vec::new(),
            orient: Vec::new(),
            planar: false,
            gs: 0,
            n_in: 0,
        }
    }

    /// A RigidMapping between the `input` and `output` links, of the local points `points`
    /// (flat coordinates) each in the frame `index` gives (TubularMapping's circles).
    pub(crate) fn with_points(
        input: &str,
        output: &str,
        points: Vec<f64>,
        index: Vec<u32>,
    ) -> Result<Self, canape_core::data::DataError> {
        let mut rigid = Self::new();
        let (m, d) = (rigid.m, rigid.d);
        let t = &mut rigid.data;
        t.put(m.input, Value::Str(input.to_string()))?;
        t.put(m.output, Value::Str(output.to_string()))?;
        t.put(d.initial_points, Value::Reals(points))?;
        t.put(d.rigid_index_per_point, Value::Ints(index))?;
        Ok(rigid)
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        let rigid_out = e.out_dof == DofType::Rigid3;
        self.planar = e.in_dofs[0] == DofType::Rigid2 && e.out_dof == DofType::Vec2;
        if !self.planar
            && (e.in_dofs[0] != DofType::Rigid3
                || !(e.out_dof == DofType::Vec3 || rigid_out)
                || e.inputs.len() != 1)
        {
            ctx.error(format!(
                "RigidMapping maps a Rigid3d state to a Vec3d or Rigid3d state, or Rigid2d to Vec2d ({} to {} given)",
                e.in_dofs[0].name(),
                e.out_dof.name()
            ));
            return;
        }
        if self.data.get(self.d.file_rigid_mapping).trim() != "" {
            ctx.warn("fileRigidMapping is not read yet: the output's positions are used");
        }
        self.gs = match parse_gs(self.data.get(self.d.geometric_stiffness)) {
            Some(g) => g,
            None => {
                ctx.warn(format!(
                    "geometricStiffness '{}' is not None, Exact, Stabilized, 0, 1 or 2: None is used",
                    self.data.get(self.d.geometric_stiffness)
                ));
                0
            }
        };
        let scene = ctx.scene;
        let Some(si) = scene.state(e.inputs[0]) else {
            return;
        };
        if self.planar && self.gs != 0 {
            ctx.warn("geometricStiffness is not computed for Rigid2d → Vec2d (SOFA neither)");
            self.gs = 0;
        }
        let out_x = crate::mapping::barycentric::end_positions(scene, e.output).unwrap_or_default();
        let out_x0 = scene
            .state(e.output)
            .map_or_else(|| out_x.clone(), |s| s.vec(VecId::REST_POSITION).to_vec());
        // planar frames as 3D ones (rotation θ about z), planar points with z = 0
        let planar_frames: Vec<[f64; 7]> = if self.planar {
            si.vec(VecId::POSITION)
                .chunks_exact(3)
                .map(|f| {
                    let (s, c) = (f[2] / 2.0).sin_cos();
                    [f[0], f[1], 0.0, 0.0, 0.0, s, c]
                })
                .collect()
        } else {
            Vec::new()
        };
        let xin: &[[f64; 7]] = if self.planar {
            &planar_frames
        } else {
            Rigid3Types::coords(si.vec(VecId::POSITION))
        };
        self.n_in = xin.len();
        if self.n_in == 0 {
            ctx.error("RigidMapping: the input state has no rigid frame");
            return;
        }
        let cs = if rigid_out {
            7
        } else if self.planar {
            2
        } else {
            3
        };
        let given = self.data.get(self.d.initial_points);
        if !given.len().is_multiple_of(cs) {
            ctx.error(format!(
                "initialPoints has {} numbers: the output's coordinates have {cs} each",
                given.len()
            ));
            return;
        }
        let use_x0 = self.data.get(self.d.use_x0);
        let src: Vec<f64> = if !given.is_empty() {
            given.to_vec()
        } else if use_x0 {
            out_x0
        } else {
            out_x
        };
        let n = src.len() / cs;
        let per_point = self.data.get(self.d.rigid_index_per_point);
        let index = self.data.get(self.d.index).max(0) as usize;
        let from_end = self.data.get(self.d.index_from_end);
        let fixed = if from_end {
            self.n_in.saturating_sub(1 + index)
        } else {
            index
        };
        if !per_point.is_empty() && per_point.len() != n {
            ctx.warn(format!(
                "rigidIndexPerPoint has {} entries for {n} points: ignored, as in SOFA (index {fixed} is used)",
                per_point.len()
            ));
        }
        self.frame = (0..n)
            .map(|i| {
                if per_point.len() == n {
                    per_point[i]
                } else {
                    fixed as u32
                }
            })
            .collect();
        if let Some(&bad) = self.frame.iter().find(|&&k| k as usize >= self.n_in) {
            ctx.error(format!(
                "RigidMapping: rigid index {bad} is out of the input's {} frames",
                self.n_in
            ));
            self.frame.clear();
            return;
        }
        let g2l = self.data.get(self.d.global_to_local_coords) && given.is_empty() && !use_x0;
        self.points = src
            .chunks_exact(cs)
            .zip(&self.frame)
            .map(|(p, &k)| {
                let p = Vec3::new(p[0], p[1], p.get(2).copied().unwrap_or(0.0));
                if g2l {
                    let c = &xin[k as usize];
                    rigid3_inverse_rotate(c, &(p - Vec3::new(c[0], c[1], c[2])))
                } else {
                    p
                }
            })
            .collect();
        // output frames' orientations, in their rigid's frame when globalToLocalCoords
        self.orient = if rigid_out {
            src.chunks_exact(7)
                .zip(&self.frame)
                .map(|(c, &k)| {
                    let q = quat_of(c.try_into().expect("7 values"));
                    if g2l {
                        let qi = quat_of(&xin[k as usize]);
                        qi.conjugate() / qi.norm_squared() * q
                    } else {
                        q
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        self.rotated = vec![Vec3::zeros(); n];
        self.input = e.inputs;
        self.output = Some(e.output);
    }

    /// Derivative size of the output (3: points, 6: frames).
    fn out_ds(&self) -> usize {
        if self.orient.is_empty() {
            3
        } else {
            6
        }
    }

    /// The rotational block of rigid k's geometric stiffness under output forces `f` (only the
    /// outputs' linear forces turn with the rigid: a frame's torque maps with a constant J).
    fn k_blocks(&self, f: &[f64]) -> Vec<canape_types::Mat3> {
        let ds = self.out_ds();
        let mut ks = vec![canape_types::Mat3::zeros(); self.n_in];
        for (i, (&k, r)) in self.frame.iter().zip(&self.rotated).enumerate() {
            let fi = Vec3::new(f[ds * i], f[ds * i + 1], f[ds * i + 2]);
            ks[k as usize] += fi.cross_matrix() * r.cross_matrix();
        }
        if self.gs == 2 {
            for k in ks.iter_mut() {
                let s = (*k + k.transpose()) * 0.5;
                let eig = s.symmetric_eigen();
                let mut w = eig.eigenvalues;
                if w.iter().any(|v| *v > 0.0) {
                    w.iter_mut().for_each(|v| *v = v.min(0.0));
                    *k = eig.eigenvectors
                        * canape_types::Mat3::from_diagonal(&w)
                        * eig.eigenvectors.transpose();
                } else {
                    *k = s;
                }
            }
        }
        ks
    }
}

/// SOFA's geometricStiffness option: a name or an index.
pub fn parse_gs(t: &str) -> Option<u32> {
    match t.trim() {
        "None" | "0" | "" | "false" => Some(0),
        "Exact" | "1" | "true" => Some(1),
        "Stabilized" | "2" => Some(2),
        _ => None,
    }
}

impl Default for RigidMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl_component!(RigidMapping, "RigidMapping", init);

impl Mapping for RigidMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.points.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        if self.planar {
            let f = x_in.get(0);
            for (i, (p, &k)) in self.points.iter().zip(&self.frame).enumerate() {
                let k = k as usize;
                let (s, c) = f[3 * k + 2].sin_cos();
                let r = Vec3::new(c * p.x - s * p.y, s * p.x + c * p.y, 0.0);
                self.rotated[i] = r;
                x_out[2 * i] = f[3 * k] + r.x;
                x_out[2 * i + 1] = f[3 * k + 1] + r.y;
            }
            return;
        }
        let xin = Rigid3Types::coords(x_in.get(0));
        let cs = if self.orient.is_empty() { 3 } else { 7 };
        for (i, (p, &k)) in self.points.iter().zip(&self.frame).enumerate() {
            let c = &xin[k as usize];
            let r = rigid3_rotate(c, p);
            self.rotated[i] = r;
            x_out[cs * i] = r.x + c[0];
            x_out[cs * i + 1] = r.y + c[1];
            x_out[cs * i + 2] = r.z + c[2];
            if let Some(ql) = self.orient.get(i) {
                // the frame turns with its rigid: q = q_rigid ⊗ q_local (SOFA's RigidCoord mult)
                let q = quat_of(c) * ql;
                let out: &mut [f64; 7] = (&mut x_out[7 * i..7 * i + 7]).try_into().expect("7");
                set_quat(out, &q);
            }
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        if self.planar {
            let v = v_in.get(0);
            for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
                let k = k as usize;
                let w = v[3 * k + 2];
                v_out[2 * i] = v[3 * k] - w * r.y;
                v_out[2 * i + 1] = v[3 * k + 1] + w * r.x;
            }
            return;
        }
        let vin = Rigid3Types::derivs(v_in.get(0));
        let ds = self.out_ds();
        for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
            let d = &vin[k as usize];
            let w = Vec3::new(d[3], d[4], d[5]);
            let v = Vec3::new(d[0], d[1], d[2]) + w.cross(r);
            v_out[ds * i] = v.x;
            v_out[ds * i + 1] = v.y;
            v_out[ds * i + 2] = v.z;
            if ds == 6 {
                v_out[6 * i + 3..6 * i + 6].copy_from_slice(&d[3..6]);
            }
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        if self.planar {
            let fin = &mut f_in[0];
            for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
                let k = k as usize;
                let (fx, fy) = (f_out[2 * i], f_out[2 * i + 1]);
                fin[3 * k] += fx;
                fin[3 * k + 1] += fy;
                fin[3 * k + 2] += r.x * fy - r.y * fx;
            }
            return;
        }
        let fin = Rigid3Types::derivs_mut(&mut f_in[0]);
        let ds = self.out_ds();
        for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
            let f = Vec3::new(f_out[ds * i], f_out[ds * i + 1], f_out[ds * i + 2]);
            let mut t = r.cross(&f);
            if ds == 6 {
                // a frame's torque goes up unchanged
                t += Vec3::new(f_out[6 * i + 3], f_out[6 * i + 4], f_out[6 * i + 5]);
            }
            let d = &mut fin[k as usize];
            d[0] += f.x;
            d[1] += f.y;
            d[2] += f.z;
            d[3] += t.x;
            d[4] += t.y;
            d[5] += t.z;
        }
    }
    fn apply_djt(&self, dx_in: &MapInputs<'_>, f_out: &[f64], df_in: &mut [Vec<f64>], k: f64) {
        if self.gs == 0 {
            return;
        }
        let ks = self.k_blocks(f_out);
        let dx = Rigid3Types::derivs(dx_in.get(0));
        let df = Rigid3Types::derivs_mut(&mut df_in[0]);
        for (j, kb) in ks.iter().enumerate() {
            let dth = Vec3::new(dx[j][3], dx[j][4], dx[j][5]);
            let t = kb * dth * k;
            df[j][3] += t.x;
            df[j][4] += t.y;
            df[j][5] += t.z;
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        if self.planar {
            for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
                // [I | (−r_y, r_x)ᵀ]
                for (a, w) in [(0u32, -r.y), (1, r.x)] {
                    let row = 2 * i as u32 + a;
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 3 * k + a,
                        val: 1.0,
                    });
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 3 * k + 2,
                        val: w,
                    });
                }
            }
            return;
        }
        let ds = self.out_ds();
        for (i, (r, &k)) in self.rotated.iter().zip(&self.frame).enumerate() {
            // [I | -[r]×], and [0 | I] for a frame's rotation
            let m = -r.cross_matrix();
            for a in 0..3 {
                let row = (ds * i + a) as u32;
                out.push(JEntry {
                    row,
                    input: 0,
                    col: 6 * k + a as u32,
                    val: 1.0,
                });
                // zeros kept: the assembled pattern does not depend on the values
                for b in 0..3 {
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 6 * k + 3 + b as u32,
                        val: m[(a, b)],
                    });
                }
            }
            if ds == 6 {
                for a in 0..3 {
                    out.push(JEntry {
                        row: (6 * i + 3 + a) as u32,
                        input: 0,
                        col: 6 * k + 3 + a as u32,
                        val: 1.0,
                    });
                }
            }
        }
    }
    fn geometric_stiffness(&self, f_out: &[f64], out: &mut Vec<KEntry>) {
        if self.gs == 0 {
            return;
        }
        for (k, kb) in self.k_blocks(f_out).iter().enumerate() {
            for a in 0..3 {
                for b in 0..3 {
                    out.push(KEntry {
                        in_row: 0,
                        row: (6 * k + 3 + a) as u32,
                        in_col: 0,
                        col: (6 * k + 3 + b) as u32,
                        val: kb[(a, b)],
                    });
                }
            }
        }
    }
}
