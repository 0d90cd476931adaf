//! CompositeCollisionPipeline (Sofa/Component/Collision/Detection/Algorithm/
//! CompositeCollisionPipeline.cpp): runs its SubCollisionPipelines one after the other.

use canape_core::collision::{CollisionChanges, CollisionPipeline};
use canape_core::component::{Passive, Role};
use canape_core::data::{base_fields, DataKind, DataTable, Flag, Int, Text};
use canape_core::scene::{ComponentId, InitContext, Scene, Slot};

canape_core::data_schema! {
    /// CompositeCollisionPipeline's Data (after the base Data).
    pub struct CompositeData {
        verbose: Flag = ("verbose", DataKind::Bool, "0", "Display extra informations at each computation step. (default=false)"),
        draw: Flag = ("draw", DataKind::Bool, "0", "Draw detected collisions. (default=false)"),
        depth: Int = ("depth", DataKind::Int, "6", "Max depth of bounding trees"),
        parallel_detection: Flag = ("parallelDetection", DataKind::Bool, "0", "Parallelize collision detection."),
        sub_collision_pipelines: Text = ("subCollisionPipelines", DataKind::Str, "", "List of sub collision pipelines to handle."),
    }
}

/// CompositeCollisionPipeline: runs its SubCollisionPipelines one after the other, each with
/// its own models, intersection method and contact manager.
#[derive(Clone)]
pub struct CompositePipeline {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: CompositeData,
    subs: Vec<ComponentId>,
}

impl Default for CompositePipeline {
    fn default() -> Self {
        Self::new()
    }
}

impl CompositePipeline {
    pub fn new() -> Self {
        let (data, d) = CompositeData::declare(base_fields(DataTable::new()));
        CompositePipeline {
            data,
            d,
            subs: Vec::new(),
        }
    }
}

impl CompositePipeline {
    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.subs.clear();
        let links: Vec<String> = self
            .data
            .get(self.d.sub_collision_pipelines)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        for l in links {
            match ctx.link_class(
                "subCollisionPipelines",
                &l,
                &["SubCollisionPipeline"],
                "a SubCollisionPipeline",
            ) {
                Ok(Some(c)) => self.subs.push(c),
                Ok(None) => {}
                Err(e) => ctx.error(e.to_string()),
            }
        }
    }
}

canape_core::impl_component!(CompositePipeline, "CompositeCollisionPipeline", init);

impl Passive for CompositePipeline {
    fn role(&self) -> Role {
        Role::Collision
    }
    fn is_collision_pipeline(&self) -> bool {
        true
    }
    fn collision_pipeline(&mut self) -> Option<&mut dyn CollisionPipeline> {
        Some(self)
    }
}

impl CollisionPipeline for CompositePipeline {
    fn collide(&mut self, scene: &mut Scene) -> CollisionChanges {
        let mut changes = CollisionChanges::default();
        for &id in &self.subs {
            if scene.check_component(id).is_err() {
                continue;
            }
            let Slot::Passive(i) = scene.info(id).slot else {
                continue;
            };
            let Some(mut p) = scene.passives[i].take() else {
                continue;
            };
            if let Some(sub) = p.collision_pipeline() {
                let c = sub.collide(scene);
                changes.added.extend(c.added);
                changes.removed.extend(c.removed);
                changes.messages.extend(c.messages);
            }
            scene.passives[i] = Some(p);
        }
        changes
    }

    fn contact_count(&self) -> usize {
        0
    }
}
