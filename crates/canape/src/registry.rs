//! Every built-in component, registered under its SOFA class name: each component crate
//! registers its own (`register(&mut Registry)`), this collects them.

use canape_core::registry::Registry;

/// Build the registry of all built-in components.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    canape_base::register::register(&mut r);
    canape_fem::register::register(&mut r);
    canape_solvers::register::register(&mut r);
    canape_io::register::register(&mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_crate_registers_its_own_classes_and_none_is_lost() {
        let mut counts = Vec::new();
        for (f, probe) in [
            (
                canape_base::register::register as fn(&mut Registry),
                "UniformMass",
            ),
            (canape_fem::register::register, "TetrahedronFEMForceField"),
            (canape_solvers::register::register, "EulerImplicitSolver"),
            (canape_io::register::register, "MeshGmshLoader"),
        ] {
            let mut r = Registry::new();
            f(&mut r);
            assert!(r.get(probe).is_some(), "{probe}");
            counts.push(r.classes().count());
        }
        // no class is registered by two crates, and the facade has them all
        assert_eq!(registry().classes().count(), counts.iter().sum::<usize>());
    }
}
