//! The Data of the two tetrahedral FEM force fields, declared once each (SOFA's names, kinds,
//! defaults and help), and the typed handles the force field reads them through.

use canape_core::data::{Data, DataKind, DataTable, Flag, ForceFieldData, Int, Real, Reals, Text};

canape_core::data_schema! {
    /// TetrahedronFEMForceField's own Data (after the force-field Data).
    pub(super) struct TetrahedronFemData {
        young: Reals = ("youngModulus", DataKind::Reals(0), "5000", "Young's modulus in Hooke's law (one value, or one per element)"),
        poisson: Reals = ("poissonRatio", DataKind::Reals(0), "0.45", "Poisson's ratio in Hooke's law (one value, or one per element)"),
        method: Text = ("method", DataKind::Str, "large", "\"small\", \"large\" (by QR), \"polar\" or \"svd\" displacements"),
        initial_points: Reals = ("initialPoints", DataKind::Reals(3), "", "Initial Position"),
        local_stiffness_factor: Reals = ("localStiffnessFactor", DataKind::Reals(0), "", "Allow specification of different stiffness per element"),
        update_stiffness_matrix: Flag = ("updateStiffnessMatrix", DataKind::Bool, "0", ""),
        compute_global_matrix: Flag = ("computeGlobalMatrix", DataKind::Bool, "0", "") alias ["assembling"],
        plastic_max_threshold: Real = ("plasticMaxThreshold", DataKind::Real, "0", "Plastic Max Threshold (2-norm of the strain)"),
        plastic_yield_threshold: Real = ("plasticYieldThreshold", DataKind::Real, "0.0001", "Plastic Yield Threshold (2-norm of the strain)"),
        plastic_creep: Real = ("plasticCreep", DataKind::Real, "0.9", "Plastic Creep Factor * (1 - Young's modulus)"),
        gather_pt: Text = ("gatherPt", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)"),
        gather_bsize: Text = ("gatherBsize", DataKind::Str, " ", "number of dof accumulated per threads during the gather operation (Only use in GPU version)"),
        draw_heterogeneous_tetra: Flag = ("drawHeterogeneousTetra", DataKind::Bool, "0", "Draw Heterogeneous Tetra in different color"),
        compute_von_mises_stress: Int = ("computeVonMisesStress", DataKind::Int, "0", "compute and display von Mises stress: 0: no computations, 1: using corotational strain, 2: using full Green strain. Set listening=1"),
        von_mises_per_element: Reals = ("vonMisesPerElement", DataKind::Reals(0), "", "von Mises Stress per element"),
        von_mises_per_node: Reals = ("vonMisesPerNode", DataKind::Reals(0), "", "von Mises Stress per node"),
        von_mises_stress_colors: Reals = ("vonMisesStressColors", DataKind::Reals(4), "", "Vector of colors describing the VonMises stress"),
        show_stress_color_map: Text = ("showStressColorMap", DataKind::Str, "Blue to Red", "Color map used to show stress values"),
        show_stress_alpha: Real = ("showStressAlpha", DataKind::Real, "1", "Alpha for vonMises visualisation"),
        show_von_mises_stress_per_node: Flag = ("showVonMisesStressPerNode", DataKind::Bool, "0", "draw points showing vonMises stress interpolated in nodes"),
        show_von_mises_stress_per_node_color_map: Flag = ("showVonMisesStressPerNodeColorMap", DataKind::Bool, "0", "draw elements showing vonMises stress interpolated in nodes"),
        show_von_mises_stress_per_element: Flag = ("showVonMisesStressPerElement", DataKind::Bool, "0", "draw triangles showing vonMises stress interpolated in elements"),
        show_element_gap_scale: Real = ("showElementGapScale", DataKind::Real, "0.333", "draw gap between elements (when showWireFrame is disabled) [0,1]: 0: no gap, 1: no element"),
        update_stiffness: Flag = ("updateStiffness", DataKind::Bool, "0", "update structures (precomputed in init) using stiffness parameters in each iteration (set listening=1)"),
    }
}

canape_core::data_schema! {
    /// TetrahedralCorotationalFEMForceField's own Data (after the force-field Data).
    pub(super) struct TetrahedralCorotationalData {
        young: Real = ("youngModulus", DataKind::Real, "5000", "Young modulus in Hooke's law"),
        poisson: Real = ("poissonRatio", DataKind::Real, "0.45", "Poisson ratio in Hooke's law"),
        method: Text = ("method", DataKind::Str, "large", "\"small\", \"large\" (by QR) or \"polar\" displacements"),
        local_stiffness_factor: Reals = ("localStiffnessFactor", DataKind::Reals(0), "", "Allow specification of different stiffness per element"),
        update_stiffness_matrix: Flag = ("updateStiffnessMatrix", DataKind::Bool, "0", ""),
        compute_global_matrix: Flag = ("computeGlobalMatrix", DataKind::Bool, "0", "") alias ["assembling"],
        compute_von_mises_stress: Int = ("computeVonMisesStress", DataKind::Int, "0", "compute and display von Mises stress (display only in Canapé)"),
        drawing: Flag = ("drawing", DataKind::Bool, "1", "draw the forcefield if true"),
        draw_color1: Reals = ("drawColor1", DataKind::Reals(4), "0 0 1 1", "draw color for faces 1"),
        draw_color2: Reals = ("drawColor2", DataKind::Reals(4), "0 0.5 1 1", "draw color for faces 2"),
        draw_color3: Reals = ("drawColor3", DataKind::Reals(4), "0 1 1 1", "draw color for faces 3"),
        draw_color4: Reals = ("drawColor4", DataKind::Reals(4), "0.5 1 1 1", "draw color for faces 4"),
    }
}

/// Young's modulus and Poisson's ratio: one per element (TetrahedronFEMForceField) or one for
/// all (TetrahedralCorotationalFEMForceField).
#[derive(Clone, Copy, Debug)]
pub(super) enum Moduli {
    PerElement {
        young: Data<Reals>,
        poisson: Data<Reals>,
    },
    Single {
        young: Data<Real>,
        poisson: Data<Real>,
    },
}

/// SOFA's plasticity Data (TetrahedronFEMForceField only).
#[derive(Clone, Copy, Debug)]
pub(super) struct PlasticityData {
    pub max_threshold: Data<Real>,
    pub yield_threshold: Data<Real>,
    pub creep: Data<Real>,
}

/// The handles both force fields read.
#[derive(Clone, Copy, Debug)]
pub(super) struct Handles {
    pub ff: ForceFieldData,
    pub moduli: Moduli,
    pub method: Data<Text>,
    pub local_stiffness_factor: Data<Reals>,
    pub update_stiffness_matrix: Data<Flag>,
    pub compute_global_matrix: Data<Flag>,
    pub compute_von_mises_stress: Data<Int>,
    pub plasticity: Option<PlasticityData>,
    /// Display switches for the stress per node (TetrahedronFEMForceField only).
    pub show_stress_per_node: Option<(Data<Flag>, Data<Flag>)>,
}

impl Handles {
    /// Declare the Data of TetrahedronFEMForceField (`per_element`) or
    /// TetrahedralCorotationalFEMForceField.
    pub(super) fn declare(per_element: bool) -> (DataTable, Handles) {
        let (t, ff) = ForceFieldData::declare(canape_core::data::base_fields(DataTable::new()));
        if per_element {
            let (t, d) = TetrahedronFemData::declare(t);
            let h = Handles {
                ff,
                moduli: Moduli::PerElement {
                    young: d.young,
                    poisson: d.poisson,
                },
                method: d.method,
                local_stiffness_factor: d.local_stiffness_factor,
                update_stiffness_matrix: d.update_stiffness_matrix,
                compute_global_matrix: d.compute_global_matrix,
                compute_von_mises_stress: d.compute_von_mises_stress,
                plasticity: Some(PlasticityData {
                    max_threshold: d.plastic_max_threshold,
                    yield_threshold: d.plastic_yield_threshold,
                    creep: d.plastic_creep,
                }),
                show_stress_per_node: Some((
                    d.show_von_mises_stress_per_node_color_map,
                    d.show_von_mises_stress_per_node,
                )),
            };
            (t, h)
        } else {
            let (t, d) = TetrahedralCorotationalData::declare(t);
            let h = Handles {
                ff,
                moduli: Moduli::Single {
                    young: d.young,
                    poisson: d.poisson,
                },
                method: d.method,
                local_stiffness_factor: d.local_stiffness_factor,
                update_stiffness_matrix: d.update_stiffness_matrix,
                compute_global_matrix: d.compute_global_matrix,
                compute_von_mises_stress: d.compute_von_mises_stress,
                plasticity: None,
                show_stress_per_node: None,
            };
            (t, h)
        }
    }

    /// Young's moduli and Poisson's ratios (one, or one per element), never empty.
    pub(super) fn moduli(&self, t: &DataTable) -> (Vec<f64>, Vec<f64>) {
        let or = |v: &[f64], d: f64| if v.is_empty() { vec![d] } else { v.to_vec() };
        match self.moduli {
            Moduli::PerElement { young, poisson } => {
                (or(t.get(young), 5000.0), or(t.get(poisson), 0.45))
            }
            Moduli::Single { young, poisson } => (vec![t.get(young)], vec![t.get(poisson)]),
        }
    }

    /// The indices of Young's modulus, Poisson's ratio and the Rayleigh stiffness: the Data an
    /// edit updates in place.
    pub(super) fn material_indices(&self) -> [usize; 3] {
        let (y, p) = match self.moduli {
            Moduli::PerElement { young, poisson } => (young.index(), poisson.index()),
            Moduli::Single { young, poisson } => (young.index(), poisson.index()),
        };
        [y, p, self.ff.rayleigh_stiffness.index()]
    }
}
