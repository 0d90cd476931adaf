//! Animation loops: the root's loop runs each step by calling the simulation's stages in its
//! own order (`canape_core::component::LoopStages`).
//! - DefaultAnimationLoop (Sofa/framework/Simulation/Core/.../DefaultAnimationLoop.cpp):
//!   AnimateBegin, collision, integration over dt, time += dt, AnimateEnd, visual mappings.
//! - MultiStepAnimationLoop (Sofa/Component/AnimationLoop/.../MultiStepAnimationLoop.cpp):
//!   `collisionSteps` collision stages per step, each followed by `integrationSteps`
//!   integrations of dt / (collisionSteps · integrationSteps). As in SOFA, the time is set after
//!   each integration to start + (i + 1)·stepDt with i counting the integrations of the current
//!   collision stage, so a step advances the time by dt / collisionSteps (while the states are
//!   integrated over the whole dt).
//! - MultiTagAnimationLoop (Sofa/Component/AnimationLoop/.../MultiTagAnimationLoop.cpp): the
//!   loop's own `tags` are its passes; each step, after AnimateBegin, for each tag in turn a
//!   collision stage and an integration over dt of the solver groups whose ODE solver carries
//!   that tag, then time += dt, AnimateEnd, visual mappings. Without tags nothing is integrated
//!   (as SOFA; reported at init). SOFA orders the passes by its global tag ids (order of first
//!   use of each tag name in the process); here they follow the loop's `tags` as written.

use crate::base_data;
use canape_core::component::{default_step, AnimationLoop, Event, LoopStages, Reaction};
use canape_core::data::{ChangedData, DataKind, DataTable, Flag, Int, Text};
use canape_core::impl_component;
use canape_core::scene::InitContext;

/// Register the animation loops.
pub fn register(r: &mut canape_core::registry::Registry) {
    use canape_core::scene::AnyComponent;
    r.register(
        "DefaultAnimationLoop",
        "the default animation loop: events, collision, integration, mappings",
        |_, _| {
            Ok(AnyComponent::AnimationLoop(Box::new(
                DefaultAnimationLoop::new(),
            )))
        },
    );
    r.register(
        "MultiStepAnimationLoop",
        "several collision and integration steps per animation step",
        |_, _| {
            Ok(AnyComponent::AnimationLoop(Box::new(
                MultiStepAnimationLoop::new(),
            )))
        },
    );
    r.register(
        "MultiTagAnimationLoop",
        "one collision and integration pass per tag of the loop, each integrating the solvers with that tag",
        |_, _| {
            Ok(AnyComponent::AnimationLoop(Box::new(
                MultiTagAnimationLoop::new(),
            )))
        },
    );
    r.register(
        "FreeMotionAnimationLoop",
        "free motion, collision, then Lagrangian constraints solved and corrected",
        |_, _| {
            Ok(AnyComponent::AnimationLoop(Box::new(
                FreeMotionAnimationLoop::new(),
            )))
        },
    );
}

canape_core::data_schema! {
    /// What every animation loop adds to the base Data.
    pub struct LoopData {
        parallel_ode_solving: Flag = ("parallelODESolving", DataKind::Bool, "0", "If true, solves all the ODEs in parallel"),
        compute_bounding_box: Flag = ("computeBoundingBox", DataKind::Bool, "1", "If true, compute the global bounding box of the scene at each time step."),
    }
}

canape_core::data_schema! {
    /// What MultiStepAnimationLoop adds to [`LoopData`].
    pub struct MultiStepData {
        collision_steps: Int = ("collisionSteps", DataKind::Int, "1", "number of collision steps between each frame rendering"),
        integration_steps: Int = ("integrationSteps", DataKind::Int, "1", "number of integration steps between each collision detection"),
    }
}

canape_core::data_schema! {
    /// What FreeMotionAnimationLoop adds to [`LoopData`].
    pub struct FreeMotionData {
        solve_velocity_constraint_first: Flag = ("solveVelocityConstraintFirst", DataKind::Bool, "0", "solve separately velocity constraint violations before position constraint violations"),
        thread_safe_visitor: Flag = ("threadSafeVisitor", DataKind::Bool, "0", "If true, do not use realloc and free visitors in fwdInteractionForceField."),
        parallel_collision_detection_and_free_motion: Flag = ("parallelCollisionDetectionAndFreeMotion", DataKind::Bool, "0", "If true, executes free motion step and collision detection step in parallel."),
        constraint_solver: Text = ("constraintSolver", DataKind::Str, "", "The ConstraintSolver used in this animation loop (required)"),
    }
}

/// The base Data and [`LoopData`] (the loops read none of them).
fn loop_data() -> DataTable {
    LoopData::declare(base_data(DataTable::new())).0
}

#[derive(Clone)]
pub struct DefaultAnimationLoop {
    data: DataTable,
}

impl Default for DefaultAnimationLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl DefaultAnimationLoop {
    pub fn new() -> Self {
        DefaultAnimationLoop { data: loop_data() }
    }
}

impl_component!(DefaultAnimationLoop, "DefaultAnimationLoop");

impl AnimationLoop for DefaultAnimationLoop {
    fn step(&mut self, stages: &mut dyn LoopStages, dt: f64) {
        default_step(stages, dt);
    }
}

#[derive(Clone)]
pub struct MultiStepAnimationLoop {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: MultiStepData,
    collision_steps: u32,
    integration_steps: u32,
}

impl Default for MultiStepAnimationLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl MultiStepAnimationLoop {
    pub fn new() -> Self {
        let (data, d) = MultiStepData::declare(loop_data());
        MultiStepAnimationLoop {
            data,
            d,
            collision_steps: 1,
            integration_steps: 1,
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let read = |ctx: &mut InitContext<'_>, name: &str, v: i64| -> u32 {
            if (1..=1_000_000).contains(&v) {
                v as u32
            } else {
                ctx.error(format!(
                    "{name} {v}: a count from 1 to 1000000 is needed; 1 is used"
                ));
                1
            }
        };
        let (t, d) = (&self.data, &self.d);
        let (nc, ni) = (t.get(d.collision_steps), t.get(d.integration_steps));
        self.collision_steps = read(ctx, "collisionSteps", nc);
        self.integration_steps = read(ctx, "integrationSteps", ni);
    }

    /// The counts are read at each step: valid edits of them are taken in place (init reports
    /// the others and uses 1); other Data re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        let (t, d) = (&self.data, &self.d);
        let count = |v: i64| {
            u32::try_from(v)
                .ok()
                .filter(|v| (1..=1_000_000).contains(v))
        };
        let in_place = [d.collision_steps.index(), d.integration_steps.index()];
        match (
            changed.only(&in_place),
            count(t.get(d.collision_steps)),
            count(t.get(d.integration_steps)),
        ) {
            (true, Some(nc), Some(ni)) => {
                (self.collision_steps, self.integration_steps) = (nc, ni);
                Reaction::Updated
            }
            _ => Reaction::Reinit,
        }
    }
}

impl_component!(
    MultiStepAnimationLoop,
    "MultiStepAnimationLoop",
    init,
    data_changed
);

impl AnimationLoop for MultiStepAnimationLoop {
    fn step(&mut self, stages: &mut dyn LoopStages, dt: f64) {
        stages.send(&Event::AnimateBegin { dt });
        let start = stages.time();
        let (nc, ni) = (self.collision_steps, self.integration_steps);
        let step_dt = dt / f64::from(nc * ni);
        for _ in 0..nc {
            stages.collision();
            for i in 0..ni {
                stages.integrate(step_dt);
                stages.set_time(start + f64::from(i + 1) * step_dt);
            }
        }
        stages.send(&Event::AnimateEnd { dt });
        stages.update_mappings();
    }
}

/// MultiTagAnimationLoop: one collision and integration pass per tag of its own `tags`, each
/// integrating the solver groups whose ODE solver carries the tag.
#[derive(Clone)]
pub struct MultiTagAnimationLoop {
    data: DataTable,
    /// The passes: the loop's `tags` read at init, without repeats.
    passes: Vec<String>,
}

impl Default for MultiTagAnimationLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl MultiTagAnimationLoop {
    pub fn new() -> Self {
        MultiTagAnimationLoop {
            data: loop_data(),
            passes: Vec::new(),
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.passes.clear();
        for t in self.data.words("tags") {
            if !self.passes.contains(t) {
                self.passes.push(t.clone());
            }
        }
        if self.passes.is_empty() {
            ctx.warn("MultiTagAnimationLoop has no tags: no solver is integrated (give it the tags of the solvers to run, one pass per tag)");
        }
    }
}

impl_component!(MultiTagAnimationLoop, "MultiTagAnimationLoop", init);

impl AnimationLoop for MultiTagAnimationLoop {
    fn step(&mut self, stages: &mut dyn LoopStages, dt: f64) {
        stages.send(&Event::AnimateBegin { dt });
        let start = stages.time();
        for tag in &self.passes {
            stages.collision();
            stages.integrate_tagged(dt, tag);
        }
        stages.set_time(start + dt);
        stages.send(&Event::AnimateEnd { dt });
        stages.update_mappings();
    }
}

/// FreeMotionAnimationLoop (Sofa/Component/AnimationLoop/.../FreeMotionAnimationLoop.cpp):
/// AnimateBegin, the free motion (every solver integrates into the free position and
/// velocity), collision detection on the positions at the start of the step, the Lagrangian
/// constraint solve and correction, time += dt, AnimateEnd. Without a constraint solver in the
/// scene it uses a Gauss–Seidel solver with GenericConstraintSolver's defaults, as SOFA adds
/// one.
#[derive(Clone)]
pub struct FreeMotionAnimationLoop {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: FreeMotionData,
    fallback: crate::constraint::lagrangian::solver::GaussSeidel,
    /// `solveVelocityConstraintFirst`, read at init.
    order: canape_core::lagrangian::ConstraintOrder,
}

impl Default for FreeMotionAnimationLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl FreeMotionAnimationLoop {
    pub fn new() -> Self {
        let (data, d) = FreeMotionData::declare(loop_data());
        FreeMotionAnimationLoop {
            data,
            d,
            fallback: Default::default(),
            order: Default::default(),
        }
    }

    /// `solveVelocityConstraintFirst`'s order of the constraint stage.
    fn read_order(&mut self) {
        self.order = if self.data.get(self.d.solve_velocity_constraint_first) {
            canape_core::lagrangian::ConstraintOrder::Velocity
        } else {
            canape_core::lagrangian::ConstraintOrder::PositionAndVelocity
        };
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        self.read_order();
        let scene = ctx.scene;
        let has_solver = scene.component_ids().any(|c| {
            let info = scene.info(c);
            info.role == canape_core::component::Role::Constraint
                && info.class.ends_with("ConstraintSolver")
        });
        if !has_solver {
            ctx.warn("no constraint solver in the scene: a Gauss-Seidel solver with GenericConstraintSolver's defaults is used (add a BlockGaussSeidelConstraintSolver to choose its settings)");
        }
    }
}

impl FreeMotionAnimationLoop {
    /// `solveVelocityConstraintFirst` is read at each step: an edit of it is taken in place;
    /// other Data re-run init.
    fn data_changed_impl(&mut self, changed: &ChangedData) -> Reaction {
        if !changed.only(&[self.d.solve_velocity_constraint_first.index()]) {
            return Reaction::Reinit;
        }
        self.read_order();
        Reaction::Updated
    }
}

impl_component!(
    FreeMotionAnimationLoop,
    "FreeMotionAnimationLoop",
    init,
    data_changed
);

impl AnimationLoop for FreeMotionAnimationLoop {
    fn step(&mut self, stages: &mut dyn LoopStages, dt: f64) {
        stages.send(&Event::AnimateBegin { dt });
        let start = stages.time();
        stages.free_motion(dt);
        stages.collision();
        stages.solve_constraints(dt, &mut self.fallback, self.order);
        stages.set_time(start + dt);
        stages.send(&Event::AnimateEnd { dt });
        stages.update_mappings();
    }
}

#[cfg(test)]
mod tests;
