//! This crate's components (mesh loaders and procedural mesh creators), registered under SOFA's
//! class names: the facade's registry calls [`register`], and so can an application's own registry.

use crate::loaders::GridMeshCreator;
use crate::loaders::MeshFormat;
use crate::loaders::MeshLoaderComponent;
use crate::loaders::SphereLoader;
use crate::loaders::StringMeshCreator;
use canape_core::registry::Registry;
use canape_core::scene::AnyComponent;

/// Register this crate's components.
pub fn register(r: &mut Registry) {
    r.register(
        "WriteState",
        "writes its context state at chosen steps in SOFA's WriteState format (.gz or text)",
        |_, _| {
            Ok(AnyComponent::Controller(Box::new(
                crate::write_state::WriteState::new(),
            )))
        },
    );
    r.register(
        "ReadState",
        "plays a WriteState file (.gz or text) back into its context state",
        |_, _| {
            Ok(AnyComponent::Controller(Box::new(
                crate::read_state::ReadState::new(),
            )))
        },
    );
    r.register(
        "VTKExporter",
        "writes the context topology's cells and chosen Data as VTK (.vtu XML or legacy .vtk) at chosen steps",
        |_, _| {
            Ok(AnyComponent::Controller(Box::new(
                crate::exporters::VtkExporter::new(),
            )))
        },
    );
    r.register(
        "MeshExporter",
        "writes the context topology as vtkxml, vtk, netgen, tetgen, gmsh or obj at chosen steps",
        |_, _| {
            Ok(AnyComponent::Controller(Box::new(
                crate::exporters::MeshExporter::new(),
            )))
        },
    );
    r.register(
        "Monitor",
        "writes chosen points' positions, velocities or forces after every step (gnuplot files)",
        |_, _| {
            Ok(AnyComponent::Controller(Box::new(
                crate::exporters::Monitor::new(),
            )))
        },
    );
    r.register(
        "MeshGmshLoader",
        "Gmsh .msh (v1, v2 ASCII) loader",
        |_, _| {
            Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
                MeshFormat::Gmsh,
            ))))
        },
    );
    r.register("MeshOBJLoader", "Wavefront .obj loader", |_, _| {
        Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
            MeshFormat::Obj,
        ))))
    });
    r.register(
        "MeshVTKLoader",
        "VTK loader (legacy ASCII/binary, XML .vtu/.vtp ASCII)",
        |_, _| {
            Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
                MeshFormat::Vtk,
            ))))
        },
    );
    r.register("MeshSTLLoader", "STL loader (ASCII and binary)", |_, _| {
        Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
            MeshFormat::Stl,
        ))))
    });
    r.register(
        "MeshOffLoader",
        "OFF loader (triangles and quads)",
        |_, _| {
            Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
                MeshFormat::Off,
            ))))
        },
    );
    r.register(
        "MeshTrianLoader",
        "trian/trian2 loader (triangulations, with the neighbour table and border of .trian)",
        |_, _| {
            Ok(AnyComponent::Loader(Box::new(MeshLoaderComponent::new(
                MeshFormat::Trian,
            ))))
        },
    );
    r.register(
        "SparseGridTopology",
        "the cells of a regular grid a closed surface mesh occupies",
        |_, _| {
            Ok(AnyComponent::Topology(Box::new(
                crate::sparse_grid::SparseGridTopology::new(),
            )))
        },
    );
    r.register(
        "SparseGridRamificationTopology",
        "a sparse grid whose coarse cells split into one hexahedron per connected piece of matter",
        |_, _| {
            Ok(AnyComponent::Topology(Box::new(
                crate::sparse_grid_ramification::SparseGridRamificationTopology::new(),
            )))
        },
    );
    r.register("SphereLoader", "SOFA .sph sphere loader", |_, _| {
        Ok(AnyComponent::Loader(Box::new(SphereLoader::new())))
    });
    r.register(
        "StringMeshCreator",
        "points along a segment joined by edges",
        |_, _| Ok(AnyComponent::Loader(Box::new(StringMeshCreator::new()))),
    );
    r.register(
        "GridMeshCreator",
        "procedural 2D grid mesh (points, triangles or quads, edges)",
        |_, _| Ok(AnyComponent::Loader(Box::new(GridMeshCreator::new()))),
    );
}
