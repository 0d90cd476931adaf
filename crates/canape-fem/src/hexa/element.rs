//! One hexahedron's stiffness by 2×2×2 Gauss quadrature and its rotated rest frame ("large":
//! averaged edge directions; "polar": polar decomposition), after SOFA's
//! HexahedronFEMForceField.inl.

use super::{HexaMethod, K24};
use crate::common::{polar_q, Material};
use canape_types::{Mat3, Vec3};
use nalgebra::SMatrix;

/// Reference-cell corner signs in SOFA's hexahedron vertex order.
pub(super) const COEF: [[f64; 3]; 8] = [
    [-1.0, -1.0, -1.0],
    [1.0, -1.0, -1.0],
    [1.0, 1.0, -1.0],
    [-1.0, 1.0, -1.0],
    [-1.0, -1.0, 1.0],
    [1.0, -1.0, 1.0],
    [1.0, 1.0, 1.0],
    [-1.0, 1.0, 1.0],
];

/// Element stiffness of a trilinear hexahedron by 2×2×2 Gauss quadrature (weights 1).
pub fn hexa_stiffness(mat: &Material, n: &[Vec3; 8]) -> K24 {
    let m = mat.matrix();
    let mut k = K24::zeros();
    let lx = n[1] - n[0];
    let ly = n[3] - n[0];
    let lz = n[4] - n[0];
    let close = |v: Vec3, l: &Vec3| v.norm() < 0.001 * l.norm();
    let parallel = close(n[3] + lx - n[2], &lx)
        && close(n[0] + lz - n[4], &lz)
        && close(n[1] + lz - n[5], &lz)
        && close(n[2] + lz - n[6], &lz)
        && close(n[3] + lz - n[7], &lz);
    let g = 1.0 / 3.0_f64.sqrt();
    for gx1 in [-1.0, 1.0] {
        for gx2 in [-1.0, 1.0] {
            for gx3 in [-1.0, 1.0] {
                let (xi, eta, zeta) = (gx1 * g, gx2 * g, gx3 * g);
                let jac = if parallel {
                    Mat3::from_columns(&[lx / 2.0, ly / 2.0, lz / 2.0])
                } else {
                    let c0 = ((n[1] - n[0]) * ((1.0 - eta) * (1.0 - zeta))
                        + (n[2] - n[3]) * ((1.0 + eta) * (1.0 - zeta))
                        + (n[5] - n[4]) * ((1.0 - eta) * (1.0 + zeta))
                        + (n[6] - n[7]) * ((1.0 + eta) * (1.0 + zeta)))
                        / 8.0;
                    let c1 = ((n[3] - n[0]) * ((1.0 - xi) * (1.0 - zeta))
                        + (n[2] - n[1]) * ((1.0 + xi) * (1.0 - zeta))
                        + (n[7] - n[4]) * ((1.0 - xi) * (1.0 + zeta))
                        + (n[6] - n[5]) * ((1.0 + xi) * (1.0 + zeta)))
                        / 8.0;
                    let c2 = ((n[4] - n[0]) * ((1.0 - xi) * (1.0 - eta))
                        + (n[5] - n[1]) * ((1.0 + xi) * (1.0 - eta))
                        + (n[6] - n[2]) * ((1.0 + xi) * (1.0 + eta))
                        + (n[7] - n[3]) * ((1.0 - xi) * (1.0 + eta)))
                        / 8.0;
                    Mat3::from_columns(&[c0, c1, c2])
                };
                let det = jac.determinant();
                let Some(ji) = jac.try_inverse() else {
                    continue;
                };
                let mut q = [[0.0; 3]; 8];
                for i in 0..8 {
                    let s = COEF[i];
                    let dxi = s[0] * (1.0 + s[1] * eta) * (1.0 + s[2] * zeta) / 8.0;
                    let deta = (1.0 + s[0] * xi) * s[1] * (1.0 + s[2] * zeta) / 8.0;
                    let dzeta = (1.0 + s[0] * xi) * (1.0 + s[1] * eta) * s[2] / 8.0;
                    for c in 0..3 {
                        q[i][c] = dxi * ji[(0, c)] + deta * ji[(1, c)] + dzeta * ji[(2, c)];
                    }
                }
                let bmat = |i: usize| {
                    let [qx, qy, qz] = q[i];
                    SMatrix::<f64, 6, 3>::from_row_slice(&[
                        qx, 0.0, 0.0, 0.0, qy, 0.0, 0.0, 0.0, qz, qy, qx, 0.0, 0.0, qz, qy, qz,
                        0.0, qx,
                    ])
                };
                for i in 0..8 {
                    let bi = bmat(i);
                    let bim = bi.transpose() * m;
                    for j in i..8 {
                        let kij = bim * bmat(j) * det;
                        for a in 0..3 {
                            for b in 0..3 {
                                k[(3 * i + a, 3 * j + b)] += kij[(a, b)];
                            }
                        }
                    }
                }
            }
        }
    }
    for a in 0..24 {
        for b in 0..a {
            k[(a, b)] = k[(b, a)];
        }
    }
    k
}

/// Averaged edge directions of a hexahedron (x and y; z for polar).
#[inline(always)]
fn mean_edges(p: &[Vec3; 8]) -> (Vec3, Vec3, Vec3) {
    let ex = (p[1] - p[0] + p[2] - p[3] + p[5] - p[4] + p[6] - p[7]) * 0.25;
    let ey = (p[3] - p[0] + p[2] - p[1] + p[7] - p[4] + p[6] - p[5]) * 0.25;
    let ez = (p[4] - p[0] + p[5] - p[1] + p[7] - p[3] + p[6] - p[2]) * 0.25;
    (ex, ey, ez)
}

#[inline(always)]
pub(super) fn frame(method: HexaMethod, p: &[Vec3; 8]) -> Mat3 {
    match method {
        HexaMethod::Small => Mat3::identity(),
        HexaMethod::Large => {
            let (ex, ey, _) = mean_edges(p);
            let x = ex / ex.norm();
            let z = x.cross(&ey).normalize();
            let y = z.cross(&x);
            Mat3::from_rows(&[x.transpose(), y.transpose(), z.transpose()])
        }
        HexaMethod::Polar => {
            let (ex, ey, ez) = mean_edges(p);
            polar_q(&Mat3::from_rows(&[
                ex.transpose(),
                ey.transpose(),
                ez.transpose(),
            ]))
        }
    }
}
