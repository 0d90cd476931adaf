//! One collision step: the models gathered and their geometry refreshed, the broad phase, the
//! narrow phase of each model pair and the contacts handed to the pairs' responses.

use super::narrow::{job, narrow, select, threads, Job};
use super::ray_trace::vertices_inside;
use super::{model_of, Entry, Pipeline, Response, Scratch};

use crate::bvh::{boxes_meet, Bvh};
use crate::intersect::dispatch;
use crate::intersect::obb::Frame;
use crate::lagrangian::ContactConstraint;
use crate::penalty::PenaltyContactForceField;
use crate::response::ResponseKind;
use crate::settings::{Continuous, Method};
use crate::stick::StickContactForceField;
use canape_core::collision::{
    CollisionChanges, CollisionModel, CollisionPipeline, CollisionShape, Contact,
};
use canape_core::scene::{AnyComponent, ComponentId, NodeId, Scene, Slot};
use canape_core::state::{MechanicalObject, VecId};
use canape_types::Vec3;

/// Whether two models (or a model and itself) may collide (core/CollisionModel::canCollideWith,
/// asked of both): models of one node only when both have `selfCollision` (their groups are
/// then not looked at), others unless they share a group; never two models that are not
/// simulated.
fn can_collide(scene: &Scene, a: &Entry, b: &Entry) -> bool {
    let (Some(ma), Some(mb)) = (model_of(scene, a.passive), model_of(scene, b.passive)) else {
        return false;
    };
    let (pa, pb) = (ma.params(), mb.params());
    if !pa.simulated && !pb.simulated {
        return false;
    }
    if a.node == b.node {
        return pa.self_collision && pb.self_collision;
    }
    !pa.group.iter().any(|g| pb.group.contains(g))
}

/// Whether a model is a TriangleOctreeCollisionModel (the models RayTraceNarrowPhase tests).
fn is_octree(m: &dyn CollisionModel) -> bool {
    m.as_any()
        .and_then(|a| a.downcast_ref::<crate::model::GeometryModel>())
        .is_some_and(|g| g.is_octree())
}

/// A simulated model with `selfCollision`: BruteForceBroadPhase pairs it with itself.
fn self_colliding(scene: &Scene, e: &Entry) -> bool {
    model_of(scene, e.passive).is_some_and(|m| m.params().simulated && m.params().self_collision)
}

impl Pipeline {
    /// Refresh the models taking part and their positions and boxes.
    fn gather(&mut self, scene: &Scene) {
        let Some(root) = self.node else { return };
        let mut k = 0;
        let listed = self.listed.take();
        match &listed {
            Some(l) => {
                for &id in l {
                    self.gather_one(scene, id, None, &mut k);
                }
            }
            None => {
                for id in scene.component_ids() {
                    self.gather_one(scene, id, Some(root), &mut k);
                }
            }
        }
        self.listed = listed;
        self.entries.truncate(k);
        // geometry only when some pair can collide: models of two nodes, one simulated
        // (a scene whose models all sit in one node, as most FEM examples, pays nothing)
        let e = &self.entries;
        let simulated =
            |x: &Entry| model_of(scene, x.passive).is_some_and(|m| m.params().simulated);
        self.any_pair = (e.iter().any(simulated) && e.iter().any(|x| x.node != e[0].node))
            || e.iter().any(|x| self_colliding(scene, x));
        if !self.any_pair {
            return;
        }
        // continuous detection: the free positions too, and what the boxes cover
        let dt = scene.node(root).dt;
        let motion = self
            .params
            .filter(|p| p.method == Method::Ccd)
            .map(|p| (p.continuous, dt));
        for e in &mut self.entries {
            if let (Some(st), Some(m)) = (scene.state(e.state), model_of(scene, e.passive)) {
                update_geometry(e, st, m, motion, self.depth);
            }
        }
    }

    /// Take model `id` into the entries at `k` (and advance it) when it is an active
    /// collision model (under `root` when given) of an activated node.
    fn gather_one(&mut self, scene: &Scene, id: ComponentId, root: Option<NodeId>, k: &mut usize) {
        {
            if scene.check_component(id).is_err() {
                return;
            }
            let info = scene.info(id);
            let Slot::Passive(p) = info.slot else {
                return;
            };
            let Some(m) = model_of(scene, p) else {
                return;
            };
            let Some(state) = m.state() else { return };
            if !m.params().active || scene.check_component(state).is_err() {
                return;
            }
            // points and spheres: one per point of the state as it is now
            let count = match (m.shape(), scene.state(state)) {
                (
                    CollisionShape::Point | CollisionShape::Sphere | CollisionShape::Obb,
                    Some(st),
                ) => st.size(),
                _ => m.len(),
            };
            if count == 0 {
                return;
            }
            // under the pipeline's node, in activated nodes only (no allocation: walk up)
            let mut under = root.is_none();
            let mut cur = Some(info.node);
            while let Some(n) = cur {
                let node = scene.node(n);
                if !node.activated {
                    return;
                }
                under |= Some(n) == root;
                cur = node.parent;
            }
            if !under {
                return;
            }
            if scene.state(state).is_none() {
                return;
            }
            if *k == self.entries.len() {
                self.entries.push(Entry {
                    model: id,
                    passive: p,
                    state,
                    node: info.node,
                    x: Vec::new(),
                    x_free: Vec::new(),
                    x_far: Vec::new(),
                    boxes: Vec::new(),
                    bbox: (Vec3::zeros(), Vec3::zeros()),
                    bvh: Bvh::default(),
                    count,
                    radii: Vec::new(),
                    frames: Vec::new(),
                });
            }
            let e = &mut self.entries[*k];
            e.model = id;
            e.passive = p;
            e.state = state;
            e.node = info.node;
            e.count = count;
            *k += 1;
        }
    }

    /// The pairs of models whose boxes meet within `gap`, as (later, earlier) in the order
    /// of the later model, its pair with itself first (a self-colliding model:
    /// BruteForceBroadPhase::addCollisionModel adds it before the pairs with the earlier
    /// models), then in the order of the earlier one.
    fn broad_phase(&mut self, scene: &Scene, gap: f64) {
        let e = &self.entries;
        self.sweep.clear();
        self.sweep.extend(0..e.len());
        self.sweep
            .sort_by(|&i, &j| e[i].bbox.0.x.total_cmp(&e[j].bbox.0.x).then(i.cmp(&j)));
        self.model_pairs.clear();
        for (k, &i) in self.sweep.iter().enumerate() {
            let hi = e[i].bbox.1.x + gap;
            for &j in &self.sweep[k + 1..] {
                if e[j].bbox.0.x > hi {
                    break;
                }
                if boxes_meet(&e[i].bbox, &e[j].bbox, gap) {
                    self.model_pairs.push((i.max(j), i.min(j)));
                }
            }
        }
        for (i, x) in e.iter().enumerate() {
            if self_colliding(scene, x) {
                self.model_pairs.push((i, i));
            }
        }
        self.model_pairs
            .sort_unstable_by_key(|&(a, b)| (a, if a == b { 0 } else { b + 1 }));
    }

    /// Hand a model pair's contacts to its response (made on first contact, of `kind`; a pair
    /// with no response keeps its contacts unanswered).
    fn respond(
        &mut self,
        scene: &mut Scene,
        f: usize,
        s: usize,
        kind: Option<ResponseKind>,
        contacts: &[Contact],
        changes: &mut CollisionChanges,
    ) {
        let Some(kind) = kind else { return };
        if let Some(ff) = self.response_for(scene, f, s, kind, changes) {
            if let Some(r) = response_of(scene, ff) {
                r.set_contacts(contacts);
            }
        }
    }

    fn response_for(
        &mut self,
        scene: &mut Scene,
        a: usize,
        b: usize,
        kind: ResponseKind,
        changes: &mut CollisionChanges,
    ) -> Option<ComponentId> {
        let models = [self.entries[a].model, self.entries[b].model];
        if let Some(r) = self.responses.get_mut(&models) {
            if scene.check_component(r.ff).is_ok() {
                if r.kind == kind {
                    r.stamp = self.stamp;
                    return Some(r.ff);
                }
                // the pair's response was chosen again (a model's name or group edited) and is
                // of another kind: the old one goes
                let slot = scene.info(r.ff).slot;
                if scene.remove_component(r.ff).is_ok() {
                    changes.removed.push(slot);
                }
            }
        }
        self.responses.remove(&models);
        let (ea, eb) = (&self.entries[a], &self.entries[b]);
        let sa = scene.state(ea.state)?;
        let sb = scene.state(eb.state)?;
        let strides = [
            (sa.dof.coord_size(), sa.dof.deriv_size()),
            (sb.dof.coord_size(), sb.dof.deriv_size()),
        ];
        let simulated =
            |e: &Entry| model_of(scene, e.passive).is_some_and(|m| m.params().simulated);
        let (sim_a, sim_b) = (simulated(ea), simulated(eb));
        let one_state = ea.state == eb.state;
        let component = match kind {
            ResponseKind::Friction { mu, tol, epsilon } => {
                let c = ContactConstraint::new(ea.state, eb.state, strides, mu, tol);
                AnyComponent::Passive(Box::new(match epsilon {
                    Some(epsilon) => c.augmented(epsilon),
                    None => c,
                }))
            }
            ResponseKind::Stick { keep_alive } => {
                let param = |e: &Entry| model_of(scene, e.passive).map(|m| m.params().clone());
                let (pa, pb) = (param(ea)?, param(eb)?);
                AnyComponent::ForceField(Box::new(StickContactForceField::new(
                    ea.state,
                    eb.state,
                    sa.size(),
                    strides,
                    [!sim_a, !sim_b],
                    pa.contact_stiffness + pb.contact_stiffness,
                    pa.contact_friction + pb.contact_friction,
                    keep_alive,
                )))
            }
            ResponseKind::Penalty => {
                AnyComponent::ForceField(Box::new(PenaltyContactForceField::new(
                    ea.state,
                    eb.state,
                    sa.size(),
                    strides,
                    !sim_a,
                    !sim_b,
                )))
            }
        };
        // SOFA's placement (CollisionResponse::createResponse): beside the simulated model when
        // the other is not simulated, else in the pipeline's node, where a solver above both
        // integrates it (implicitly) and otherwise it acts as an explicit external force. A
        // self-contact (both ends on one state) acts as a force field of that state: in the
        // model's node.
        let node = match (sim_a, sim_b) {
            _ if one_state => ea.node,
            (true, false) => ea.node,
            (false, true) => eb.node,
            _ => self.node.unwrap_or(ea.node),
        };
        let name = format!(
            "contact_{}_{}",
            scene.info(ea.model).name,
            scene.info(eb.model).name
        );
        let id = scene.add_component(node, &name, component, None);
        changes.added.push(id);
        self.responses.insert(
            models,
            Response {
                ff: id,
                kind,
                stamp: self.stamp,
            },
        );
        Some(id)
    }
}

/// The contact response behind a response component (a penalty force field or a Lagrangian
/// contact constraint).
fn response_of(
    scene: &mut Scene,
    id: ComponentId,
) -> Option<&mut dyn canape_core::collision::ContactResponse> {
    match scene.info(id).slot {
        Slot::ForceField(i) => scene.force_fields[i]
            .as_mut()
            .and_then(|f| f.contact_response()),
        Slot::Passive(i) => scene.passives[i]
            .as_mut()
            .and_then(|p| p.contact_response()),
        _ => None,
    }
}

/// Positions, element boxes (grown by the model's proximity, and the radius for spheres) and
/// the refitted hierarchy of one model. With continuous detection (`motion`: what the boxes
/// cover, and dt) the free positions too, and the boxes of points, lines and triangles also
/// cover where their vertices go (SOFA's computeContinuousBoundingTree of these models).
fn update_geometry(
    e: &mut Entry,
    st: &MechanicalObject,
    m: &dyn CollisionModel,
    motion: Option<(Continuous, f64)>,
    depth: usize,
) {
    let stride = st.dof.coord_size();
    // a state's vector as points, into a kept buffer
    let read = |out: &mut Vec<Vec3>, v: &[f64]| {
        out.clear();
        out.extend(v.chunks_exact(stride).map(|c| Vec3::new(c[0], c[1], c[2])));
    };
    read(&mut e.x, st.vec(VecId::POSITION));
    e.x_free.clear();
    if motion.is_some() {
        // a state the free motion has not reached yet stays where it is
        let free = st.vec(VecId::FREE_POSITION);
        if free.len() == st.vec(VecId::POSITION).len() {
            read(&mut e.x_free, free);
        } else {
            e.x_free.extend_from_slice(&e.x);
        }
    }
    let prox = m.params().proximity;
    e.boxes.clear();
    let x = &e.x;
    let grow = |pts: &mut dyn Iterator<Item = Vec3>, r: f64| {
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for q in pts {
            lo = lo.inf(&q);
            hi = hi.sup(&q);
        }
        (lo.add_scalar(-r), hi.add_scalar(r))
    };
    let ok = |i: u32| (i as usize) < x.len();
    match m.shape() {
        CollisionShape::Point => {
            for q in x {
                e.boxes.push((q.add_scalar(-prox), q.add_scalar(prox)));
            }
        }
        CollisionShape::Sphere => {
            e.radii.clear();
            e.radii.extend((0..x.len()).map(|i| m.radius(i)));
            for (q, r) in x.iter().zip(&e.radii) {
                let r = r + prox;
                e.boxes.push((q.add_scalar(-r), q.add_scalar(r)));
            }
        }
        CollisionShape::Line => {
            for ed in m.edges() {
                if !ed.iter().all(|&i| ok(i)) {
                    e.boxes.push(empty_box());
                    continue;
                }
                e.boxes
                    .push(grow(&mut ed.iter().map(|&i| x[i as usize]), prox));
            }
        }
        CollisionShape::Obb => {
            // the box of each frame: centre ± Σ |axisₖ|·extentₖ, grown by the proximity
            // (OBBCollisionModel::computeBoundingTree grows its 8 vertices' box the same way)
            e.frames.clear();
            let coords = st.vec(VecId::POSITION).chunks_exact(stride);
            for (i, (c, q)) in x.iter().zip(coords).enumerate() {
                let f = Frame::new(*c, [q[3], q[4], q[5], q[6]], m.extent(i));
                let half = f.axes[0].abs() * f.extent.x
                    + f.axes[1].abs() * f.extent.y
                    + f.axes[2].abs() * f.extent.z;
                let r = half.add_scalar(prox);
                e.boxes.push((c - r, c + r));
                e.frames.push(f);
            }
        }
        CollisionShape::Triangle => {
            for t in m.triangles() {
                if !t.iter().all(|&i| ok(i)) {
                    e.boxes.push(empty_box());
                    continue;
                }
                e.boxes
                    .push(grow(&mut t.iter().map(|&i| x[i as usize]), prox));
            }
        }
    }
    // the far end of the motion the boxes cover: the free positions, or x + v·dt
    let far: Option<&[Vec3]> = match motion {
        Some((Continuous::FreeMotion, _)) => Some(&e.x_free),
        Some((Continuous::Inertia, dt)) => {
            read(&mut e.x_far, st.vec(VecId::VELOCITY));
            for (v, x) in e.x_far.iter_mut().zip(&e.x) {
                *v = x + *v * dt;
            }
            Some(&e.x_far)
        }
        _ => None,
    };
    if let Some(far) = far.filter(|f| f.len() == e.x.len()) {
        // (an empty box, an element with missing vertices, stays empty)
        let cover = |b: &mut (Vec3, Vec3), q: &Vec3| {
            if b.0.x <= b.1.x {
                b.0 = b.0.inf(&q.add_scalar(-prox));
                b.1 = b.1.sup(&q.add_scalar(prox));
            }
        };
        match m.shape() {
            CollisionShape::Point => {
                for (b, q) in e.boxes.iter_mut().zip(far.iter()) {
                    cover(b, q);
                }
            }
            CollisionShape::Line => {
                for (b, ed) in e.boxes.iter_mut().zip(m.edges()) {
                    for &i in ed.iter().filter(|&&i| ok(i)) {
                        cover(b, &far[i as usize]);
                    }
                }
            }
            CollisionShape::Triangle => {
                for (b, t) in e.boxes.iter_mut().zip(m.triangles()) {
                    for &i in t.iter().filter(|&&i| ok(i)) {
                        cover(b, &far[i as usize]);
                    }
                }
            }
            _ => {}
        }
    }
    let mut lo = Vec3::repeat(f64::INFINITY);
    let mut hi = Vec3::repeat(f64::NEG_INFINITY);
    for b in &e.boxes {
        lo = lo.inf(&b.0);
        hi = hi.sup(&b.1);
    }
    e.bbox = (lo, hi);
    e.bvh.update(&e.boxes, depth);
}

fn empty_box() -> (Vec3, Vec3) {
    (Vec3::repeat(f64::INFINITY), Vec3::repeat(f64::NEG_INFINITY))
}

impl CollisionPipeline for Pipeline {
    fn collide(&mut self, scene: &mut Scene) -> CollisionChanges {
        let mut changes = CollisionChanges::default();
        let Some(params) = self.params else {
            return changes;
        };
        self.gather(scene);
        if !self.responses.is_empty() {
            self.drop_rechosen(scene, &mut changes);
        }
        let mut count = 0;
        self.stamp += 1;
        // BruteForceBroadPhase's pairs: each model with every earlier one whose box comes
        // within the alarm distance, the later model first (before the intersection method's
        // own ordering of the two shapes), in that order (found by sweep and prune on x)
        let gap = if params.method == Method::Discrete {
            0.0
        } else {
            params.alarm
        };
        if self.any_pair {
            self.broad_phase(scene, gap);
        } else {
            self.model_pairs.clear();
        }
        // the pairs to test, in the broad phase's order
        self.jobs.clear();
        for p in 0..self.model_pairs.len() {
            let (a, b) = self.model_pairs[p];
            let (ea, eb) = (&self.entries[a], &self.entries[b]);
            if !can_collide(scene, ea, eb) {
                continue;
            }
            let (Some(ma), Some(mb)) = (model_of(scene, ea.passive), model_of(scene, eb.passive))
            else {
                continue;
            };
            // RayTraceNarrowPhase: pairs of two TriangleOctreeCollisionModels, tested both ways
            let swap = if self.ray_trace {
                if a == b || !is_octree(ma) || !is_octree(mb) {
                    continue;
                }
                false
            } else {
                let Some(swap) = dispatch(params.method, &params, ma.shape(), mb.shape()) else {
                    continue;
                };
                swap
            };
            if !boxes_meet(&ea.bbox, &eb.bbox, gap) {
                continue;
            }
            let (f, s) = if swap { (b, a) } else { (a, b) };
            let kind = self.kind_of(scene, f, s);
            self.jobs.push((f, s, kind));
        }
        let threads = threads();
        if self.ray_trace {
            for k in 0..self.jobs.len() {
                let (f, s, _) = self.jobs[k];
                for (a, b) in [(f, s), (s, f)] {
                    let kind = self.kind_of(scene, a, b);
                    let lagrangian = kind.is_some_and(|k| k.is_lagrangian());
                    {
                        let Some(j) = job(scene, &self.entries, &params, a, b, lagrangian) else {
                            continue;
                        };
                        let sc = &mut self.scratch;
                        sc.normals[0].compute(&j.g1);
                        sc.normals[1].compute(&j.g2);
                        sc.outputs.clear();
                        let normals = [&sc.normals[0], &sc.normals[1]];
                        vertices_inside(&j, normals, &mut sc.ray_stack, &mut sc.outputs);
                        select(&j, sc, true);
                    }
                    if self.scratch.contacts.is_empty() {
                        continue;
                    }
                    let contacts = std::mem::take(&mut self.scratch.contacts);
                    count += contacts.len();
                    self.respond(scene, a, b, kind, &contacts, &mut changes);
                    self.scratch.contacts = contacts;
                }
            }
        } else if threads > 1 && self.jobs.len() > 1 {
            // model pairs over threads, each with its own buffers; the responses then in order
            use rayon::prelude::*;
            let results: Vec<Vec<Contact>> = {
                let jobs: Vec<Option<Job>> = self
                    .jobs
                    .iter()
                    .map(|&(f, s, kind)| {
                        let lagrangian = kind.is_some_and(|k| k.is_lagrangian());
                        job(scene, &self.entries, &params, f, s, lagrangian)
                    })
                    .collect();
                jobs.par_iter()
                    .map_init(Scratch::default, |sc, j| match j {
                        Some(j) => {
                            narrow(&params, j, sc, 1);
                            sc.contacts.clone()
                        }
                        None => Vec::new(),
                    })
                    .collect()
            };
            for (k, contacts) in results.into_iter().enumerate() {
                if contacts.is_empty() {
                    continue;
                }
                let (f, s, kind) = self.jobs[k];
                count += contacts.len();
                self.respond(scene, f, s, kind, &contacts, &mut changes);
            }
        } else {
            for k in 0..self.jobs.len() {
                let (f, s, kind) = self.jobs[k];
                {
                    let lagrangian = kind.is_some_and(|k| k.is_lagrangian());
                    let Some(j) = job(scene, &self.entries, &params, f, s, lagrangian) else {
                        continue;
                    };
                    narrow(&params, &j, &mut self.scratch, threads);
                }
                if self.scratch.contacts.is_empty() {
                    continue;
                }
                let contacts = std::mem::take(&mut self.scratch.contacts);
                count += contacts.len();
                self.respond(scene, f, s, kind, &contacts, &mut changes);
                self.scratch.contacts = contacts;
            }
        }
        // SOFA's contact map (CollisionResponse::createContacts over the detection outputs,
        // ordered by their models): the pairs with contacts in the order of their models, each
        // model getting an id the first time it is met (first, then second), ids kept; the
        // responses' keys are their models' ids
        for (models, r) in &self.responses {
            if r.stamp != self.stamp {
                continue;
            }
            let mut id = |m: ComponentId| {
                let next = self.model_ids.len() as u32;
                *self.model_ids.entry(m).or_insert(next)
            };
            let key = (id(models[0]), id(models[1]));
            if let Some(resp) = response_of(scene, r.ff) {
                resp.set_order_key(key);
            }
        }
        // responses of pairs that no longer touch keep existing with no contacts (no change to
        // the solver groups for pairs that separate and meet again)
        for r in self.responses.values() {
            if r.stamp != self.stamp.wrapping_sub(1) || scene.check_component(r.ff).is_err() {
                // touched this step, or already emptied
                continue;
            }
            if let Some(resp) = response_of(scene, r.ff) {
                resp.set_contacts(&[]);
            }
        }
        self.last_count = count;
        changes
    }

    fn contact_count(&self) -> usize {
        self.last_count
    }
}
