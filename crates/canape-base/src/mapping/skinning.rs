//! Mappings that blend rigid frames: SkinningMapping (linear blend skinning) and
//! BeamLinearMapping (points along beams between Rigid3 frames), Sofa/Component/Mapping/Linear.

use canape_core::component::{JEntry, MapInputs, Mapping};
use canape_core::data::{DataKind, DataTable, Flag, Int, Ints, Reals};
use canape_core::impl_component;
use canape_core::scene::{ComponentId, InitContext};
use canape_core::state::VecId;
use canape_types::dof::{rigid3_inverse_rotate, rigid3_rotate};
use canape_types::{get3, DataTypes, DofType, Rigid3Types, Vec3};

use crate::mapping::linear::{mapping_base, resolve_mapping_ends, MappingData};

// ---------------------------------------------------------------------------------------------
// SkinningMapping

canape_core::data_schema! {
    /// SkinningMapping's own Data (after [`MappingData`]).
    struct SkinningData {
        init_pos: Reals = ("initPos", DataKind::Reals(3), "", "initial child coordinates in the world reference frame"),
        nb_ref: Ints = ("nbRef", DataKind::Ints(0), "4", "Number of primitives influencing each point"),
        indices: Ints = ("indices", DataKind::Ints(0), "", "parent indices for each child"),
        weight: Reals = ("weight", DataKind::Reals(0), "", "influence weights of the Dofs"),
        show_from_index: Int = ("showFromIndex", DataKind::Int, "0", "Displayed From Index"),
        show_weights: Flag = ("showWeights", DataKind::Bool, "0", "Show influence"),
    }
}

/// SkinningMapping (Rigid3d → Vec3d), linear blend skinning
/// (Sofa/Component/Mapping/Linear/.../SkinningMapping.inl): each point follows up to `nbRef`
/// frames with weights w (given, or 1/d² to the nearest frames' rest centers, largest first),
/// renormalised to sum 1: out = Σ w (c_k + R_k R_k0ᵀ (x0 − c_k0)). With r = w R_k R_k0ᵀ(x0 − c_k0):
/// J = [w I | −[r]×] per frame, forces up f_k += w f, τ_k += r × f. No geometric stiffness, as in
/// SOFA. A point's list of frames ends at its first weight ≤ 0, as SOFA reads it.
#[derive(Clone)]
pub struct SkinningMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: SkinningData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    /// Per point, (frame, weight, weighted local position).
    refs: Vec<Vec<(u32, f64, Vec3)>>,
    /// Per point and frame, r = R_k × (weighted local position) at the last apply.
    rotated: Vec<Vec<Vec3>>,
}

impl Default for SkinningMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl SkinningMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = SkinningData::declare(data);
        SkinningMapping {
            data,
            m,
            d,
            input: Vec::new(),
            output: None,
            refs: Vec::new(),
            rotated: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.refs.clear();
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        if e.in_dofs != [DofType::Rigid3] || e.out_dof != DofType::Vec3 {
            ctx.error(format!(
                "SkinningMapping maps one Rigid3d input to a Vec3d output ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        let scene = ctx.scene;
        let Some(si) = scene.state(e.inputs[0]) else {
            return;
        };
        let frames: Vec<[f64; 7]> = Rigid3Types::coords(si.vec(VecId::REST_POSITION)).to_vec();
        if frames.is_empty() {
            ctx.error("SkinningMapping: the input has no frame");
            return;
        }
        let out_x = crate::mapping::barycentric::end_positions(scene, e.output).unwrap_or_default();
        let given = self.data.get(self.d.init_pos);
        let x0: Vec<f64> = if given.len() == out_x.len() && !given.is_empty() {
            given.to_vec()
        } else {
            out_x
        };
        let n = x0.len() / 3;
        let nb = self
            .data
            .get(self.d.nb_ref)
            .first()
            .copied()
            .unwrap_or(4)
            .max(1) as usize;
        let (idx, w) = (
            self.data.get(self.d.indices).to_vec(),
            self.data.get(self.d.weight).to_vec(),
        );
        let center = |k: usize| Vec3::new(frames[k][0], frames[k][1], frames[k][2]);
        let mut refs = Vec::with_capacity(n);
        for i in 0..n {
            let p = get3(&x0, i);
            // given weights (nbRef per point, flat), else the nearest frames by 1/d²
            let mut list: Vec<(u32, f64)> = if idx.len() == n * nb && w.len() == n * nb {
                (0..nb).map(|j| (idx[i * nb + j], w[i * nb + j])).collect()
            } else {
                let mut best: Vec<(u32, f64)> = Vec::with_capacity(nb);
                for k in 0..frames.len() {
                    let d2 = (p - center(k)).norm_squared();
                    let wk = if d2 > 0.0 { 1.0 / d2 } else { f64::MAX };
                    // insertion in decreasing weight; a later frame goes first on a tie
                    let at = best
                        .iter()
                        .position(|&(_, b)| b <= wk)
                        .unwrap_or(best.len());
                    if at < nb {
                        best.insert(at, (k as u32, wk));
                        best.truncate(nb);
                    }
                }
                best
            };
            if let Some(&(k, _)) = list.iter().find(|(k, _)| *k as usize >= frames.len()) {
                ctx.error(format!(
                    "SkinningMapping: point {i} names frame {k}, the input has {}",
                    frames.len()
                ));
                return;
            }
            // a point's frames end at its first weight ≤ 0 (SOFA's loops)
            if let Some(end) = list.iter().position(|&(_, wk)| wk <= 0.0) {
                list.truncate(end);
            }
            let sum: f64 = list.iter().map(|(_, wk)| wk).sum();
            let mut r = Vec::with_capacity(list.len());
            for (k, wk) in list {
                let wk = if sum != 0.0 { wk / sum } else { wk };
                let f = &frames[k as usize];
                let local = rigid3_inverse_rotate(f, &(p - center(k as usize))) * wk;
                r.push((k, wk, local));
            }
            refs.push(r);
        }
        self.rotated = refs.iter().map(|r| vec![Vec3::zeros(); r.len()]).collect();
        self.refs = refs;
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

impl_component!(SkinningMapping, "SkinningMapping", init);

impl Mapping for SkinningMapping {
    fn inputs(&self) -> &[ComponentId] {
        &self.input
    }
    fn output(&self) -> Option<ComponentId> {
        self.output
    }
    fn output_size(&self) -> Option<usize> {
        Some(self.refs.len())
    }
    fn apply(&mut self, x_in: &MapInputs<'_>, x_out: &mut [f64]) {
        let xin = Rigid3Types::coords(x_in.get(0));
        for (i, refs) in self.refs.iter().enumerate() {
            let mut o = Vec3::zeros();
            for (j, &(k, w, local)) in refs.iter().enumerate() {
                let c = &xin[k as usize];
                let r = rigid3_rotate(c, &local);
                self.rotated[i][j] = r;
                o += Vec3::new(c[0], c[1], c[2]) * w + r;
            }
            x_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let vin = Rigid3Types::derivs(v_in.get(0));
        for (i, refs) in self.refs.iter().enumerate() {
            let mut o = Vec3::zeros();
            for (j, &(k, w, _)) in refs.iter().enumerate() {
                let d = &vin[k as usize];
                let om = Vec3::new(d[3], d[4], d[5]);
                o += Vec3::new(d[0], d[1], d[2]) * w + om.cross(&self.rotated[i][j]);
            }
            v_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        let fin = Rigid3Types::derivs_mut(&mut f_in[0]);
        for (i, refs) in self.refs.iter().enumerate() {
            let f = get3(f_out, i);
            for (j, &(k, w, _)) in refs.iter().enumerate() {
                let t = self.rotated[i][j].cross(&f);
                let d = &mut fin[k as usize];
                for c in 0..3 {
                    d[c] += w * f[c];
                    d[3 + c] += t[c];
                }
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (i, refs) in self.refs.iter().enumerate() {
            for (j, &(k, w, _)) in refs.iter().enumerate() {
                let m = -self.rotated[i][j].cross_matrix();
                for a in 0..3 {
                    let row = (3 * i + a) as u32;
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 6 * k + a as u32,
                        val: w,
                    });
                    for b in 0..3 {
                        out.push(JEntry {
                            row,
                            input: 0,
                            col: 6 * k + 3 + b as u32,
                            val: m[(a, b)],
                        });
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// BeamLinearMapping

canape_core::data_schema! {
    /// BeamLinearMapping's own Data (after [`MappingData`]).
    struct BeamLinearData {
        local_coord: Flag = ("localCoord", DataKind::Bool, "1", "true if initial coordinates are in the beam local coordinate system (i.e. a point at (10,0,0) is on the DOF number 10, whereas if this is false it is at whatever position on the beam where the distance from the initial DOF is 10)"),
    }
}

/// BeamLinearMapping (Rigid3d → Vec3d): points along a chain of beams between consecutive
/// frames (Sofa/Component/Mapping/Linear/.../BeamLinearMapping.inl). A point has parametric
/// coordinates (b + t, y, z): beam b, position t along it, y and z across, all in units of the
/// beam's length L_b (given so with `localCoord`, the default; otherwise computed from the
/// positions in frame 0's axes along the chain). With s = 3t² − 2t³ (SOFA's blend),
/// r0 = L_b R_b (t, y, z) and r1 = L_b R_{b+1} (t − 1, y, z):
/// out = (1 − s)(c_b + r0) + s(c_{b+1} + r1). The Jacobian is that of this map (SOFA's assembled
/// J leaves the translation blocks unweighted; its applyJ, followed here, weighs them).
#[derive(Clone)]
pub struct BeamLinearMapping {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    m: MappingData,
    d: BeamLinearData,
    input: Vec<ComponentId>,
    output: Option<ComponentId>,
    /// Per point: (beam, t, y, z).
    points: Vec<(u32, f64, f64, f64)>,
    lengths: Vec<f64>,
    /// Per point at the last apply: r0, r1.
    rotated: Vec<(Vec3, Vec3)>,
}

impl Default for BeamLinearMapping {
    fn default() -> Self {
        Self::new()
    }
}

impl BeamLinearMapping {
    pub fn new() -> Self {
        let (data, m) = mapping_base(DataTable::new());
        let (data, d) = BeamLinearData::declare(data);
        BeamLinearMapping {
            data,
            m,
            d,
            input: Vec::new(),
            output: None,
            points: Vec::new(),
            lengths: Vec::new(),
            rotated: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.points.clear();
        let Some(e) = resolve_mapping_ends(ctx, &self.data, self.m) else {
            return;
        };
        if e.in_dofs != [DofType::Rigid3] || e.out_dof != DofType::Vec3 {
            ctx.error(format!(
                "BeamLinearMapping maps one Rigid3d input to a Vec3d output ({} to {} given)",
                e.in_dofs
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(" "),
                e.out_dof.name()
            ));
            return;
        }
        let scene = ctx.scene;
        let Some(si) = scene.state(e.inputs[0]) else {
            return;
        };
        let frames = Rigid3Types::coords(si.vec(VecId::POSITION));
        let n = frames.len();
        if n < 2 {
            ctx.error("BeamLinearMapping needs at least two frames (one beam)");
            return;
        }
        let c = |k: usize| Vec3::new(frames[k][0], frames[k][1], frames[k][2]);
        let mut lengths: Vec<f64> = (0..n - 1).map(|k| (c(k) - c(k + 1)).norm()).collect();
        lengths.push(lengths[n - 2]);
        if let Some(k) = lengths.iter().position(|l| *l <= 0.0) {
            ctx.error(format!("beam {k} has zero length"));
            return;
        }
        let x = crate::mapping::barycentric::end_positions(scene, e.output).unwrap_or_default();
        let local = self.data.get(self.d.local_coord);
        let mut points = Vec::with_capacity(x.len() / 3);
        for p in x.chunks_exact(3) {
            let mut q = Vec3::new(p[0], p[1], p[2]);
            if !local {
                // along the chain in frame 0's axes, then in units of the beam's length
                q = rigid3_inverse_rotate(&frames[0], &(q - c(0)));
                let mut j = 0;
                while j < n && q.x >= lengths[j] {
                    q.x -= lengths[j];
                    j += 1;
                }
                let j = j.min(n - 1);
                q /= lengths[j];
                q.x += j as f64;
            }
            let b = (q.x.floor().max(0.0) as usize).min(n - 2);
            points.push((b as u32, q.x - b as f64, q.y, q.z));
        }
        self.rotated = vec![(Vec3::zeros(), Vec3::zeros()); points.len()];
        self.points = points;
        self.lengths = lengths;
        self.input = e.inputs;
        self.output = Some(e.output);
    }
}

/// SOFA's blend along a beam: s = 3t² − 2t³.
fn beam_blend(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

impl_component!(BeamLinearMapping, "BeamLinearMapping", init);

impl Mapping for BeamLinearMapping {
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
        let xin = Rigid3Types::coords(x_in.get(0));
        for (i, &(b, t, y, z)) in self.points.iter().enumerate() {
            let b = b as usize;
            let l = self.lengths[b];
            let (f0, f1) = (&xin[b], &xin[b + 1]);
            let r0 = rigid3_rotate(f0, &Vec3::new(t, y, z)) * l;
            let r1 = rigid3_rotate(f1, &Vec3::new(t - 1.0, y, z)) * l;
            self.rotated[i] = (r0, r1);
            let s = beam_blend(t);
            let o = (Vec3::new(f0[0], f0[1], f0[2]) + r0) * (1.0 - s)
                + (Vec3::new(f1[0], f1[1], f1[2]) + r1) * s;
            x_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_j(&self, v_in: &MapInputs<'_>, v_out: &mut [f64]) {
        let vin = Rigid3Types::derivs(v_in.get(0));
        for (i, &(b, t, _, _)) in self.points.iter().enumerate() {
            let b = b as usize;
            let (r0, r1) = self.rotated[i];
            let s = beam_blend(t);
            let vel = |d: &[f64; 6], r: &Vec3| {
                Vec3::new(d[0], d[1], d[2]) + Vec3::new(d[3], d[4], d[5]).cross(r)
            };
            let o = vel(&vin[b], &r0) * (1.0 - s) + vel(&vin[b + 1], &r1) * s;
            v_out[3 * i..3 * i + 3].copy_from_slice(o.as_slice());
        }
    }
    fn apply_jt(&self, f_out: &[f64], f_in: &mut [Vec<f64>]) {
        let fin = Rigid3Types::derivs_mut(&mut f_in[0]);
        for (i, &(b, t, _, _)) in self.points.iter().enumerate() {
            let b = b as usize;
            let (r0, r1) = self.rotated[i];
            let s = beam_blend(t);
            let f = get3(f_out, i);
            for (k, w, r) in [(b, 1.0 - s, r0), (b + 1, s, r1)] {
                let tq = r.cross(&f) * w;
                for c in 0..3 {
                    fin[k][c] += w * f[c];
                    fin[k][3 + c] += tq[c];
                }
            }
        }
    }
    fn jacobian(&self, out: &mut Vec<JEntry>) {
        for (i, &(b, t, _, _)) in self.points.iter().enumerate() {
            let (r0, r1) = self.rotated[i];
            let s = beam_blend(t);
            for (k, w, r) in [(b, 1.0 - s, r0), (b + 1, s, r1)] {
                let m = -r.cross_matrix() * w;
                for a in 0..3 {
                    let row = (3 * i + a) as u32;
                    out.push(JEntry {
                        row,
                        input: 0,
                        col: 6 * k + a as u32,
                        val: w,
                    });
                    for c in 0..3 {
                        out.push(JEntry {
                            row,
                            input: 0,
                            col: 6 * k + 3 + c as u32,
                            val: m[(a, c)],
                        });
                    }
                }
            }
        }
    }
}
