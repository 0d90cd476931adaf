//! What streams to the page: the topology message, the sources' current positions (the
//! contacts' segments included), the binary frame and the bounding box.

use super::{Source, SourceKind, View};
use canape::Simulation;
use canape_core::scene::Scene;
use canape_core::state::VecId;
use serde_json::{json, Value as Json};

/// The contacts' display segments: each contact's point on its first state and that point
/// moved along the normal by the contact distance.
fn contact_segments(scene: &Scene) -> Vec<f64> {
    let mut out = Vec::new();
    for ff in scene.force_fields.iter().flatten() {
        let contacts = ff.contacts();
        if contacts.is_empty() {
            continue;
        }
        let Some(it) = ff.interaction() else { continue };
        let Some(st) = scene.state(it.first) else {
            continue;
        };
        let (x, stride) = (st.vec(VecId::POSITION), st.dof.coord_size());
        for c in contacts {
            let mut p = [0.0; 3];
            for (i, w) in c.first.iter() {
                for k in 0..3 {
                    p[k] += w * x.get(stride * i + k).copied().unwrap_or(0.0);
                }
            }
            out.extend_from_slice(&p);
            for k in 0..3 {
                out.push(p[k] + c.normal[k] * c.distance);
            }
        }
    }
    out
}

/// The topology message.
pub fn topology_message(view: &View, version: u64) -> String {
    let sources: Vec<Json> = view
        .sources
        .iter()
        .map(|s| json!({"name": s.name, "grabbable": s.grabbable}))
        .collect();
    let flags: serde_json::Map<String, Json> = view
        .flags
        .iter()
        .map(|(k, v)| (k.to_string(), Json::Bool(*v)))
        .collect();
    json!({
        "type": "topology", "version": version, "sources": sources,
        "drawables": view.drawables, "flags": flags,
    })
    .to_string()
}

/// Current positions of a source, as a flat xyz list.
pub fn source_positions<'a>(sim: &'a Simulation, s: &Source) -> std::borrow::Cow<'a, [f64]> {
    match s.kind {
        SourceKind::State(k) => sim.scene.states[k]
            .as_ref()
            .map(|st| std::borrow::Cow::Borrowed(st.vec(VecId::POSITION)))
            .unwrap_or_default(),
        SourceKind::Visual(k) => sim.scene.passives[k]
            .as_ref()
            .and_then(|p| p.visual_mesh())
            .map(|m| std::borrow::Cow::Owned(canape_core::mesh::flatten_points(&m.points)))
            .unwrap_or_default(),
        SourceKind::Contacts => std::borrow::Cow::Owned(contact_segments(&sim.scene)),
    }
}

/// Binary frame: `CNP1`, u32 sequence, f64 time, u32 number of sources, then per source u32
/// vertex count, xyz as f32, u32 scalar count (0 or the vertex count) and the scalars as f32.
/// Little-endian throughout.
pub fn encode_frame(sim: &Simulation, view: &View, seq: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(b"CNP1");
    b.extend_from_slice(&seq.to_le_bytes());
    b.extend_from_slice(&sim.time().to_le_bytes());
    b.extend_from_slice(&(view.sources.len() as u32).to_le_bytes());
    for s in &view.sources {
        let x = source_positions(sim, s);
        let n = x.len() / 3;
        b.extend_from_slice(&(n as u32).to_le_bytes());
        for v in x.iter() {
            b.extend_from_slice(&(*v as f32).to_le_bytes());
        }
        let scalars = s.scalar_fields.first().and_then(|&k| {
            sim.scene.force_fields[k]
                .as_ref()
                .and_then(|f| f.nodal_scalars(&x))
        });
        match scalars {
            Some(sc) if sc.len() == n => {
                b.extend_from_slice(&(n as u32).to_le_bytes());
                for v in sc {
                    b.extend_from_slice(&(v as f32).to_le_bytes());
                }
            }
            _ => b.extend_from_slice(&0u32.to_le_bytes()),
        }
    }
    b
}

/// Bounding box of all sources.
pub fn bounds(sim: &Simulation, view: &View) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for s in &view.sources {
        for q in source_positions(sim, s).chunks_exact(3) {
            for k in 0..3 {
                if q[k].is_finite() {
                    lo[k] = lo[k].min(q[k]);
                    hi[k] = hi[k].max(q[k]);
                }
            }
        }
    }
    if lo[0] > hi[0] {
        return ([0.0; 3], [0.0; 3]);
    }
    (lo, hi)
}
