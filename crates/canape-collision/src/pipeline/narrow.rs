//! The narrow phase of one model pair: the element pairs whose boxes meet, tested with the
//! intersection method, and the contacts kept.

use super::{model_of, Entry, Scratch};

use crate::bvh::Bvh;
use crate::intersect::{intersect, Geometry, Output, Params};
use crate::settings::Method;
use canape_core::collision::{CollisionModel, CollisionShape, Contact};
use canape_core::scene::Scene;

/// One model pair ready for the narrow phase: both geometries in the intersection method's
/// order, their hierarchies, and the response's constants. Plain data (shared by threads).
pub(super) struct Job<'a> {
    pub(super) g1: Geometry<'a>,
    pub(super) g2: Geometry<'a>,
    pub(super) bvh: [&'a Bvh; 2],
    /// Alarm distance plus both proximities: element boxes closer than this are tested.
    gap: f64,
    /// Contact distance plus both proximities, and the product of the contact stiffnesses.
    d0: f64,
    k: f64,
    /// Contacts for the Lagrangian response (FrictionContact's selection: every output but
    /// near-duplicates) rather than the penalty one (the closest output per id).
    lagrangian: bool,
    /// Whether the pair is a model with itself or two models on one state (self-collision).
    own: Own,
}

/// A model pair's relation to itself, for self-collision's element filters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Own {
    /// Two models of different states.
    Apart,
    /// Two models of one node and state (their element indices name the same points).
    OneState,
    /// A model with itself.
    Itself,
}

/// Whether the element pair (i of the first model, j of the second) is left out of a
/// self-collision (SOFA: CollisionElementIterator::canCollideWith and the models'
/// doCanCollideWithElement, and NewProximityIntersection's own test of triangles): a model
/// against itself tests each unordered pair once, the lower index first; triangles sharing a
/// vertex, lines sharing an endpoint or joined by an edge, a point against a triangle it is a
/// vertex of, against a line it ends or a line whose ends it neighbours are not tested. A
/// point model never meets itself: SOFA's iterator asks i < j and its point filter i > j.
fn left_out(job: &Job, i: u32, j: u32) -> bool {
    let (g1, g2) = (&job.g1, &job.g2);
    let tri = |g: &Geometry, k: u32| g.triangles.get(k as usize).copied();
    let edge = |g: &Geometry, k: u32| g.edges.get(k as usize).copied();
    // whether an edge of the mesh joins p and q
    let joined = |g: &Geometry, p: u32, q: u32| {
        g.adjacency.is_some_and(|a| {
            a.vertex_edges.get(p as usize).is_some_and(|around| {
                around.iter().any(|&e| {
                    a.edges
                        .get(e as usize)
                        .is_some_and(|ed| (ed[0] == p && ed[1] == q) || (ed[1] == p && ed[0] == q))
                })
            })
        })
    };
    match job.own {
        Own::Apart => false,
        Own::Itself => {
            if i >= j {
                return true;
            }
            match g1.shape {
                CollisionShape::Point => true,
                CollisionShape::Sphere | CollisionShape::Obb => false,
                CollisionShape::Triangle => match (tri(g1, i), tri(g2, j)) {
                    (Some(a), Some(b)) => a.iter().any(|v| b.contains(v)),
                    _ => true,
                },
                CollisionShape::Line => match (edge(g1, i), edge(g2, j)) {
                    (Some(a), Some(b)) => {
                        a.iter().any(|v| b.contains(v))
                            || a.iter().any(|&p| b.iter().any(|&q| joined(g1, p, q)))
                    }
                    _ => true,
                },
            }
        }
        Own::OneState => match (g1.shape, g2.shape) {
            (CollisionShape::Triangle, CollisionShape::Point) => {
                tri(g1, i).is_none_or(|t| t.contains(&j))
            }
            (CollisionShape::Line, CollisionShape::Point) => {
                edge(g1, i).is_none_or(|e| e.contains(&j) || e.iter().any(|&p| joined(g1, p, j)))
            }
            (CollisionShape::Point, CollisionShape::Point) => i <= j || joined(g1, i, j),
            _ => false,
        },
    }
}

/// Below this many candidate element pairs a model pair's tests stay on one thread.
const PARALLEL_MIN_CANDIDATES: usize = 4096;

/// Threads available here: a simulation's pool when the step runs in one, else 1.
pub(super) fn threads() -> usize {
    match rayon::current_thread_index() {
        Some(_) => rayon::current_num_threads(),
        None => 1,
    }
}

/// The narrow phase of one model pair into `sc.contacts`: element pairs whose boxes meet, in
/// the order SOFA's BVHNarrowPhase descent meets them (`Bvh::pairs`), tested in that order
/// (split over threads when there are many, the outputs concatenated in that order), then the
/// response's selection (`select`): the contacts keep the detection order, which the
/// Lagrangian response's constraint rows, and so its Gauss–Seidel sweeps, follow.
pub(super) fn narrow(params: &Params, job: &Job, sc: &mut Scratch, threads: usize) {
    use rayon::prelude::*;
    sc.outputs.clear();
    sc.contacts.clear();
    sc.cand.clear();
    job.bvh[0].pairs(job.bvh[1], job.gap, &mut sc.stack, &mut sc.cand);
    if job.own != Own::Apart {
        sc.cand.retain(|&(i, j)| !left_out(job, i, j));
    }
    if threads > 1 && sc.cand.len() >= PARALLEL_MIN_CANDIDATES {
        let chunk = sc.cand.len().div_ceil(4 * threads);
        let parts: Vec<Vec<Output>> = sc
            .cand
            .par_chunks(chunk)
            .map(|ch| {
                let mut out = Vec::new();
                for &(i, j) in ch {
                    intersect(params, &job.g1, i as usize, &job.g2, j as usize, &mut out);
                }
                out
            })
            .collect();
        for p in parts {
            sc.outputs.extend(p);
        }
    } else {
        for &(i, j) in &sc.cand {
            intersect(
                params,
                &job.g1,
                i as usize,
                &job.g2,
                j as usize,
                &mut sc.outputs,
            );
        }
    }
    select(job, sc, false);
}

/// The contacts of a model pair's detection outputs (`sc.outputs`) into `sc.contacts`, in
/// their order (first sorted by (elements, id) when `sort`: outputs found in no meaningful
/// order): the Lagrangian response's selection or one contact per output id (the closest:
/// BarycentricPenalityContact::setDetectionOutputs keeps an earlier one unless a later one is
/// strictly closer), with the penalty response's rest distance and stiffness.
pub(super) fn select(job: &Job, sc: &mut Scratch, sort: bool) {
    sc.contacts.clear();
    if sc.outputs.is_empty() {
        return;
    }
    if sort {
        sc.outputs.sort_by_key(|x| (x.elems, x.id));
    }
    sc.keep.clear();
    if job.lagrangian {
        // FrictionContact::setDetectionOutputs: an output is dropped when a kept one has both
        // points within 1e-4 (squared distances summed below SOFA's float 1e-8)
        const CLOSE: f64 = 1e-8_f32 as f64;
        let mut kept: Vec<usize> = Vec::new();
        for (k, o) in sc.outputs.iter().enumerate() {
            let dup = kept.iter().any(|&q| {
                let p = &sc.outputs[q];
                (p.positions[0] - o.positions[0]).norm_squared()
                    + (p.positions[1] - o.positions[1]).norm_squared()
                    < CLOSE
            });
            sc.keep.push(!dup);
            if !dup {
                kept.push(k);
            }
        }
    } else {
        sc.best.clear();
        for (k, o) in sc.outputs.iter().enumerate() {
            match sc.best.binary_search_by(|(id, _)| id.cmp(&o.id)) {
                Ok(p) => {
                    if o.value < sc.outputs[sc.best[p].1].value {
                        sc.best[p].1 = k;
                    }
                }
                Err(p) => sc.best.insert(p, (o.id, k)),
            }
        }
        sc.keep.resize(sc.outputs.len(), false);
        for &(_, k) in &sc.best {
            sc.keep[k] = true;
        }
    }
    // the penalty response: rest distance = contact distance + proximities (+ radii of sphere
    // centres), stiffness = product of the models' contactStiffness divided by that distance
    // (BarycentricPenalityContact)
    for (o, _) in sc.outputs.iter().zip(&sc.keep).filter(|(_, k)| **k) {
        let rf = if job.g1.shape == CollisionShape::Sphere {
            job.g1
                .radii
                .get(o.elems[0] as usize)
                .copied()
                .unwrap_or(0.0)
        } else {
            0.0
        };
        let rs = if job.g2.shape == CollisionShape::Sphere {
            job.g2
                .radii
                .get(o.elems[1] as usize)
                .copied()
                .unwrap_or(0.0)
        } else {
            0.0
        };
        let distance = job.d0 + rf + rs;
        sc.contacts.push(Contact {
            first: o.points[0],
            second: o.points[1],
            normal: o.normal,
            distance,
            stiffness: if distance != 0.0 {
                job.k / distance
            } else {
                job.k
            },
            elements: o.elems,
            gap: o.positions[1] - o.positions[0],
        });
    }
}

/// The job of the model pair (f, s) of `entries`, in that order.
pub(super) fn job<'a>(
    scene: &'a Scene,
    entries: &'a [Entry],
    params: &Params,
    f: usize,
    s: usize,
    lagrangian: bool,
) -> Option<Job<'a>> {
    let (ef, es) = (&entries[f], &entries[s]);
    let (mf, ms) = (model_of(scene, ef.passive)?, model_of(scene, es.passive)?);
    let (pf, ps) = (mf.params().proximity, ms.params().proximity);
    let geometry = |e: &'a Entry, m: &'a dyn CollisionModel, prox: f64| Geometry {
        shape: m.shape(),
        x: &e.x,
        x_free: &e.x_free,
        edges: m.edges(),
        triangles: m.triangles(),
        flags: m.triangle_flags(),
        radii: &e.radii,
        frames: &e.frames,
        adjacency: adjacency_of(m),
        proximity: prox,
        len: e.count,
    };
    let gap = if params.method == Method::Discrete {
        0.0
    } else {
        params.alarm
    };
    Some(Job {
        g1: geometry(ef, mf, pf),
        g2: geometry(es, ms, ps),
        bvh: [&ef.bvh, &es.bvh],
        gap: gap + pf + ps,
        d0: params.contact + pf + ps,
        k: mf.params().contact_stiffness * ms.params().contact_stiffness,
        lagrangian,
        own: if f == s {
            Own::Itself
        } else if ef.state == es.state && ef.node == es.node {
            Own::OneState
        } else {
            Own::Apart
        },
    })
}

/// The neighbourhoods LocalMinDistance's cones need, for this crate's models.
fn adjacency_of(m: &dyn CollisionModel) -> Option<&crate::model::Adjacency> {
    m.as_any()?
        .downcast_ref::<crate::model::GeometryModel>()
        .map(|g| g.adjacency())
}
