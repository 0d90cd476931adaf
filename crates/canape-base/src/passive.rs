//! Components Canapé loads and keeps but does not simulate (yet): animation and visual loops,
//! visual style and models, cameras, collision pipeline and models, plugin declarations, and the
//! topology helpers that carry no mechanics (modifiers, geometry algorithms). Their tables are
//! open, so their display options load without warnings.

use crate::base_data;
use canape_core::component::{Passive, Role};
use canape_core::data::{DataKind, DataTable};
use canape_core::mesh::Mesh;

/// A kept-but-inert component of a given class and role.
#[derive(Clone)]
pub struct Inert {
    class: &'static str,
    role: Role,
    data: DataTable,
    mesh: Option<Mesh>,
}

impl Inert {
    pub fn new(class: &'static str, role: Role) -> Self {
        let mut data = base_data(DataTable::new());
        match class {
            "RequiredPlugin" => {
                data = data
                    .with("pluginName", DataKind::Words, "", "plugin name (or several names if you need to load different plugins or a plugin with several alternate names)")
                    .with("suffixMap", DataKind::Words, "", "standard->custom suffixes pairs (to be used if the plugin is compiled outside of the standard build)")
                    .with("stopAfterFirstNameFound", DataKind::Bool, "0", "Stop after the first plugin name that is loaded successfully")
                    .with("stopAfterFirstSuffixFound", DataKind::Bool, "1", "For each plugin name, stop after the first suffix that is loaded successfully")
                    .with("requireAll", DataKind::Bool, "1", "If true, all the plugins must be loaded")
                    .with("requireOne", DataKind::Bool, "0", "If true, at least one plugin must be loaded")
                    .with("loadedPlugins", DataKind::Words, "", "List of the plugins that are have been loaded")
            }
            "VisualStyle" => data = data.with("displayFlags", DataKind::Words, "", "Display Flags"),
            "AddDataRepository" | "AddResourceRepository" => {
                data = data.with("path", DataKind::Str, "", "Path to add to the registry of paths")
            }
            "NodalMassDensity" => data = data.with("property", DataKind::Reals(0), "1", "Nodal property: mass density, one value per node (the last one applies to the rest)"),
            "SSORPreconditioner" => data = data.with("omega", DataKind::Real, "1", "Omega coefficient").with("linearSystem", DataKind::Str, "", "The linear system to solve"),
            "PreconditionedMatrixFreeSystem" => {
                data = data
                    .with("assemblingRate", DataKind::Int, "1", "Rate of update of the preconditioner matrix. The value is the number of time steps or Newton iterations between two updates of the preconditioner matrix")
                    .alias(&["update_step"])
                    .with("preconditionerSystem", DataKind::Str, "", "Link toward the linear system of the preconditioner")
            }
            "WarpPreconditioner" => {
                data = data
                    .with("linearSystem", DataKind::Str, "", "The linear system to solve")
                    .with("linearSolver", DataKind::Str, "", "Link towards the linear solver used to build the warp conditioner")
                    .with("useRotationFinder", DataKind::Int, "0", "Deprecated: use RotationMatrixSystem.rotationFinder")
                    .with("update_step", DataKind::Int, "1", "Deprecated: use RotationMatrixSystem.assemblingRate")
            }
            "RotationMatrixSystem" => {
                data = data
                    .with("assemblingRate", DataKind::Int, "1", "Rate of update of the system matrix; between two updates the rotations are updated")
                    .with("mainSystem", DataKind::Str, "", "Main assembled linear system that will be warped")
                    .with("rotationFinder", DataKind::Str, "", "Link toward the rotation finder")
            }
            "JacobiPreconditioner" | "BlockJacobiPreconditioner" | "NaturalOrderingMethod" | "AMDOrderingMethod" | "COLAMDOrderingMethod" | "MetisOrderingMethod" => {
                data = data.with("linearSystem", DataKind::Str, "", "The linear system to solve")
            }
            _ => data = data.open(),
        }
        Inert {
            class,
            role,
            data,
            mesh: None,
        }
    }
}

impl canape_core::component::Component for Inert {
    fn class_name(&self) -> &'static str {
        self.class
    }
    fn data(&self) -> &DataTable {
        &self.data
    }
    fn data_mut(&mut self) -> &mut DataTable {
        &mut self.data
    }
}

impl Passive for Inert {
    fn role(&self) -> Role {
        self.role
    }
    fn visual_mesh(&self) -> Option<&Mesh> {
        self.mesh.as_ref()
    }
    fn visual_mesh_mut(&mut self) -> Option<&mut Mesh> {
        self.mesh.as_mut()
    }
}

/// Inert classes by role: (class, role, description).
pub const INERT_CLASSES: &[(&str, Role, &str)] = &[
    (
        "DefaultVisualManagerLoop",
        Role::Visual,
        "visual loop (viewer side)",
    ),
    (
        "RequiredPlugin",
        Role::Other,
        "plugin declaration (all Canapé components are built in)",
    ),
    ("VisualStyle", Role::Visual, "display flags"),
    (
        "AddDataRepository",
        Role::Other,
        "adds a folder (relative to the scene file) where the files of the components after it are looked up",
    ),
    (
        "AddResourceRepository",
        Role::Other,
        "adds a folder (relative to the scene file) where the files of the components after it are looked up",
    ),
    ("LightManager", Role::Visual, "lighting (display only)"),
    ("SpotLight", Role::Visual, "light (display only)"),
    ("PositionalLight", Role::Visual, "light (display only)"),
    ("DirectionalLight", Role::Visual, "light (display only)"),
    ("OglShader", Role::Visual, "shader (display only)"),
    ("OglShadowShader", Role::Visual, "shader (display only)"),
    ("OglShaderDefineMacro", Role::Visual, "shader macro (display only)"),
    ("OglTexture", Role::Visual, "texture (display only)"),
    ("OglFloatVariable", Role::Visual, "shader variable (display only)"),
    ("OglIntVariable", Role::Visual, "shader variable (display only)"),
    ("OglFloat3Variable", Role::Visual, "shader variable (display only)"),
    ("OglFloat4Variable", Role::Visual, "shader variable (display only)"),
    ("TrailRenderer", Role::Visual, "trail display"),
    (
        "VisualMesh",
        Role::Visual,
        "display of a state's topology (display only)",
    ),
    ("RecordedCamera", Role::Visual, "camera path (display only)"),
    ("ConstraintAttachButtonSetting", Role::Visual, "GUI mouse-button setting"),
    ("AttachBodyButtonSetting", Role::Visual, "GUI mouse-button setting"),
    ("FixPickedParticleButtonSetting", Role::Visual, "GUI mouse-button setting"),
    ("InteractiveCamera", Role::Visual, "camera"),
    ("OglSceneFrame", Role::Visual, "scene frame display"),
    ("VisualGrid", Role::Visual, "grid display"),
    ("LineAxis", Role::Visual, "axis display"),
    ("BackgroundSetting", Role::Visual, "viewer background"),
    ("ViewerSetting", Role::Visual, "viewer resolution and full-screen setting"),
    ("ClipPlane", Role::Visual, "OpenGL clipping plane (display only)"),
    ("OglViewport", Role::Visual, "extra viewport of the GUI (display only)"),
    (
        "OrderIndependentTransparencyManager",
        Role::Visual,
        "transparency rendering (display only)",
    ),
    ("PointSplatModel", Role::Visual, "point splat rendering (display only)"),
    (
        "CylinderVisualModel",
        Role::Visual,
        "cylinders drawn along edges (display only)",
    ),
    (
        "MergeVisualModels",
        Role::Visual,
        "merged visual model for rendering (display only)",
    ),
    (
        "MechanicalStateController",
        Role::Other,
        "GUI controller of a state's first DOF (SOFA's mouse handler is empty: at AnimateBegin it only re-projects and re-maps positions, which each step already leaves so)",
    ),
    (
        "TetrahedronCollisionModel",
        Role::Collision,
        "collision model (collision not simulated yet)",
    ),
    (
        "CubeCollisionModel",
        Role::Collision,
        "collision model (collision not simulated yet)",
    ),
    (
        "CylinderCollisionModel",
        Role::Collision,
        "collision model (collision not simulated yet)",
    ),
    (
        "CapsuleCollisionModel",
        Role::Collision,
        "collision model (collision not simulated yet)",
    ),
    (
        "TetrahedronSetTopologyModifier",
        Role::Other,
        "topology modifier (topology changes not supported yet)",
    ),
    (
        "TetrahedronSetGeometryAlgorithms",
        Role::Other,
        "geometry algorithms (no effect on mechanics)",
    ),
    (
        "TriangleSetTopologyModifier",
        Role::Other,
        "topology modifier (topology changes not supported yet)",
    ),
    (
        "TriangleSetGeometryAlgorithms",
        Role::Other,
        "geometry algorithms (no effect on mechanics)",
    ),
    (
        "HexahedronSetTopologyModifier",
        Role::Other,
        "topology modifier (topology changes not supported yet)",
    ),
    (
        "HexahedronSetGeometryAlgorithms",
        Role::Other,
        "geometry algorithms (no effect on mechanics)",
    ),
    (
        "QuadSetTopologyModifier",
        Role::Other,
        "topology modifier (topology changes not supported yet)",
    ),
    (
        "QuadSetGeometryAlgorithms",
        Role::Other,
        "geometry algorithms (no effect on mechanics)",
    ),
    (
        "PointSetTopologyModifier",
        Role::Other,
        "topology modifier (topology changes not supported yet)",
    ),
    (
        "PointSetGeometryAlgorithms",
        Role::Other,
        "geometry algorithms (no effect on mechanics)",
    ),
    (
        "EdgeSetTopologyModifier",
        Role::Other,
        "topology modifier (topology changes not supported yet)",
    ),
    (
        "EdgeSetGeometryAlgorithms",
        Role::Other,
        "geometry algorithms (no effect on mechanics)",
    ),
    ("NaturalOrderingMethod", Role::Other, "ordering for direct solvers: Cholesky solvers in this node factor in the given order"),
    ("AMDOrderingMethod", Role::Other, "ordering for direct solvers: Cholesky solvers in this node use AMD (faer); LU/QR use COLAMD"),
    ("COLAMDOrderingMethod", Role::Other, "ordering for direct solvers: Cholesky takes the smaller factor of AMD (faer) and the given order; LU/QR use COLAMD"),
    ("MetisOrderingMethod", Role::Other, "ordering for direct solvers: Cholesky takes the smaller factor of AMD (faer) and the given order; LU/QR use COLAMD"),
    ("JacobiPreconditioner", Role::Other, "diagonal preconditioner of a PCGLinearSolver"),
    ("BlockJacobiPreconditioner", Role::Other, "3x3 block-diagonal preconditioner of a PCGLinearSolver"),
    ("SSORPreconditioner", Role::Other, "SSOR preconditioner of a PCGLinearSolver"),
    ("WarpPreconditioner", Role::Other, "preconditioner of a PCGLinearSolver by a direct solver's factorization of the assembled matrix"),
    ("RotationMatrixSystem", Role::Other, "rotation system of a WarpPreconditioner (the identity when assembled every time, assemblingRate 1)"),
    ("PreconditionedMatrixFreeSystem", Role::Other, "matrix-free system whose preconditioner matrix is rebuilt every assemblingRate solves"),
    ("MatrixLinearSystem", Role::Other, "assembled linear system (Canapé assembles for the solvers that need it)"),
    ("CompositeLinearSystem", Role::Other, "several linear systems, one given to the solver (Canapé assembles the full system for it: the solverLinearSystem the scenes use)"),
    ("GlobalSystemMatrixImage", Role::Visual, "image of a linear system's matrix (display only)"),
    ("ConstantSparsityPatternSystem", Role::Other, "assembled linear system with a fixed pattern (Canapé caches the pattern for every assembled solver)"),
    ("OglLabel", Role::Visual, "text label display"),
    ("NodalMassDensity", Role::Other, "nodal mass density read by FEMMass"),
    ("Visual3DText", Role::Visual, "3D text display"),
    ("TaskSchedulerSettings", Role::Other, "thread settings (Canapé's step is sequential for now)"),
];
