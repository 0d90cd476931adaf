//! SOFA's newer element-based FEM: LinearSmallStrainFEMForceField and CorotationalFEMForceField
//! for tetrahedra and hexahedra (Sofa/Component/SolidMechanics/FEM/Elastic/…/
//! LinearSmallStrainFEMForceField.inl, CorotationalFEMForceField.inl, BaseElementLinearFEMForceField.inl,
//! impl/ElementStiffnessMatrix.h), and FEMMass with NodalMassDensity (Sofa/Component/Mass/…/FEMMass.inl).
//!
//! Element stiffness K_e = Σ_q w_q |det J_q| Bᵀ C B, computed once from rest positions (tetra: one
//! point; hexa: 2×2×2 Gauss; prism (sofa/fem/FiniteElement[Prism].h): the triangle's centroid at
//! two Gauss heights). The corotational variant rotates each element by R_e, recomputed in every
//! `add_force` and reused by `add_dforce` and assembly, by SOFA's `rotationMethod`
//! (impl/rotations/*.h): "triangle" (tetrahedra's default) and "hexahedron" (hexahedra's)
//! R_e = Cᵀ·C0, C the element frame from the triangle of nodes 0, 1, 2 or from averaged edges;
//! "polar" and "stable_polar" (prisms' default) the rotation of the polar decomposition of
//! H = Σ (x_j − x̄)(X_j − X̄)ᵀ; "identity".
//!
//! This file holds the element shapes (shape functions, quadrature, the element stiffness);
//! the force field is in `force_field`, FEMMass in `fem_mass`.

mod fem_mass;
mod force_field;

#[cfg(test)]
pub(crate) mod edit_check;
#[cfg(test)]
mod tests;

pub use fem_mass::FemMass;
pub use force_field::{ElementFemForceField, Rotation};

use canape_core::mesh::Mesh;
use canape_core::registry::TemplateError;
use canape_types::{Mat3, Vec3};

/// Element shape of a template `Vec3,Tetrahedron` / `Vec3,Hexahedron` / `Vec3,Prism`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Tetrahedron,
    Hexahedron,
    Prism,
}

impl Shape {
    /// Parse SOFA's two-part template.
    pub fn from_template(t: &str) -> Result<Shape, TemplateError> {
        let parts: Vec<&str> = t.split(',').map(str::trim).collect();
        if !parts[0].is_empty()
            && canape_types::DofType::from_template(parts[0]) != Some(canape_types::DofType::Vec3)
        {
            return Err(TemplateError::ElementStateNotVec3 {
                template: t.to_string(),
            });
        }
        match parts.get(1).copied() {
            None | Some("Tetrahedron") => Ok(Shape::Tetrahedron),
            Some("Hexahedron") => Ok(Shape::Hexahedron),
            Some("Prism") => Ok(Shape::Prism),
            Some(o) => Err(TemplateError::UnknownElement {
                template: t.to_string(),
                element: o.to_string(),
            }),
        }
    }
    fn nodes(self) -> usize {
        match self {
            Shape::Tetrahedron => 4,
            Shape::Hexahedron => 8,
            Shape::Prism => 6,
        }
    }
    fn elements(self, m: &Mesh) -> Vec<Vec<u32>> {
        match self {
            Shape::Tetrahedron => m.tetrahedra.iter().map(|e| e.to_vec()).collect(),
            Shape::Hexahedron => m.hexahedra.iter().map(|e| e.to_vec()).collect(),
            Shape::Prism => m.prisms.iter().map(|e| e.to_vec()).collect(),
        }
    }
}

const HEX_SIGNS: [[f64; 3]; 8] = [
    [-1., -1., -1.],
    [1., -1., -1.],
    [1., 1., -1.],
    [-1., 1., -1.],
    [-1., -1., 1.],
    [1., -1., 1.],
    [1., 1., 1.],
    [-1., 1., 1.],
];
const TET_GRAD: [[f64; 3]; 4] = [[-1., -1., -1.], [1., 0., 0.], [0., 1., 0.], [0., 0., 1.]];

/// Quadrature points (ξ, weight) of an element shape, as SOFA's FiniteElement defines them.
fn quadrature(shape: Shape) -> Vec<([f64; 3], f64)> {
    match shape {
        Shape::Tetrahedron => vec![([0.25, 0.25, 0.25], 1.0 / 6.0)],
        Shape::Hexahedron => HEX_SIGNS
            .iter()
            .map(|s| {
                (
                    [
                        s[0] / 1.73205080757,
                        s[1] / 1.73205080757,
                        s[2] / 1.73205080757,
                    ],
                    1.0,
                )
            })
            .collect(),
        Shape::Prism => {
            // SOFA's constants: 1/√3 to 11 digits, weights ¼ (the reference prism's volume is ½)
            let (third, r) = (1.0 / 3.0, 0.57735026919);
            vec![
                ([third, third, 0.5 * (1.0 - r)], 0.25),
                ([third, third, 0.5 * (1.0 + r)], 0.25),
            ]
        }
    }
}

/// Shape functions and their reference gradients at ξ.
fn shape_functions(shape: Shape, xi: [f64; 3]) -> (Vec<f64>, Vec<[f64; 3]>) {
    match shape {
        Shape::Tetrahedron => (
            vec![1.0 - xi[0] - xi[1] - xi[2], xi[0], xi[1], xi[2]],
            TET_GRAD.to_vec(),
        ),
        Shape::Hexahedron => {
            let mut n = Vec::with_capacity(8);
            let mut g = Vec::with_capacity(8);
            for s in HEX_SIGNS {
                let f = [1.0 + s[0] * xi[0], 1.0 + s[1] * xi[1], 1.0 + s[2] * xi[2]];
                n.push(f[0] * f[1] * f[2] / 8.0);
                g.push([
                    s[0] * f[1] * f[2] / 8.0,
                    f[0] * s[1] * f[2] / 8.0,
                    f[0] * f[1] * s[2] / 8.0,
                ]);
            }
            (n, g)
        }
        Shape::Prism => {
            // the reference triangle (ξ0, ξ1) times the segment ξ2 ∈ [0, 1]
            let (a, b, c) = (xi[0], xi[1], xi[2]);
            let t = 1.0 - a - b;
            (
                vec![
                    t * (1.0 - c),
                    a * (1.0 - c),
                    b * (1.0 - c),
                    t * c,
                    a * c,
                    b * c,
                ],
                vec![
                    [c - 1.0, c - 1.0, -t],
                    [1.0 - c, 0.0, -a],
                    [0.0, 1.0 - c, -b],
                    [-c, -c, t],
                    [c, 0.0, a],
                    [0.0, c, b],
                ],
            )
        }
    }
}

/// Jacobian J(:,k) = Σ_i X_i ∂N_i/∂ξ_k.
fn jacobian(x: &[Vec3], g: &[[f64; 3]]) -> Mat3 {
    let mut j = Mat3::zeros();
    for (xi, gi) in x.iter().zip(g) {
        for r in 0..3 {
            for k in 0..3 {
                j[(r, k)] += xi[r] * gi[k];
            }
        }
    }
    j
}

/// Dense element stiffness (3n × 3n, row-major) for Young's modulus `e` and Poisson ratio `nu`.
pub fn element_stiffness(shape: Shape, x: &[Vec3], e: f64, nu: f64) -> Vec<f64> {
    let n = shape.nodes();
    let mu = e / (2.0 * (1.0 + nu));
    let lambda = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    let mut c = nalgebra::SMatrix::<f64, 6, 6>::zeros();
    for i in 0..3 {
        for j in 0..3 {
            c[(i, j)] = if i == j { lambda + 2.0 * mu } else { lambda };
        }
        c[(i + 3, i + 3)] = mu;
    }
    let m = 3 * n;
    let mut k = vec![0.0; m * m];
    for (xi, w) in quadrature(shape) {
        let (_, g) = shape_functions(shape, xi);
        let j = jacobian(x, &g);
        let det = j.determinant().abs();
        let Some(jit) = j.try_inverse().map(|i| i.transpose()) else {
            continue;
        };
        let grads: Vec<Vec3> = g
            .iter()
            .map(|gi| jit * Vec3::new(gi[0], gi[1], gi[2]))
            .collect();
        // B: 6 × 3n, Voigt [xx, yy, zz, xy, yz, zx] with engineering shear
        let mut b = vec![[0.0; 6]; m];
        for (i, d) in grads.iter().enumerate() {
            b[3 * i][0] = d.x;
            b[3 * i + 1][1] = d.y;
            b[3 * i + 2][2] = d.z;
            b[3 * i][3] = d.y;
            b[3 * i + 1][3] = d.x;
            b[3 * i + 1][4] = d.z;
            b[3 * i + 2][4] = d.y;
            b[3 * i][5] = d.z;
            b[3 * i + 2][5] = d.x;
        }
        for p in 0..m {
            let mut cb = [0.0; 6];
            for r in 0..6 {
                cb[r] = (0..6).map(|s| c[(r, s)] * b[p][s]).sum();
            }
            for q in 0..m {
                let v: f64 = (0..6).map(|r| b[q][r] * cb[r]).sum();
                k[q * m + p] += w * det * v;
            }
        }
    }
    k
}
