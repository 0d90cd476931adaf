//! Von Mises stresses of the tetrahedra (per element, and averaged at the nodes).

use super::TetrahedronFemForceField;
use canape_types::{get3, Vec3};

impl TetrahedronFemForceField {
    /// Von Mises stress per element from the corotational (small) strain in the element frame of
    /// the last `add_force`, as SOFA's `computeVonMisesStress=1` (TetrahedronFEMForceField.inl);
    /// Canapé also uses it for `=2` (full Green strain), which only differs at large strains.
    pub fn von_mises_per_element(&self, x: &[f64]) -> Vec<f64> {
        self.elems
            .iter()
            .zip(&self.shapes)
            .map(|(el, sh)| {
                let p: [Vec3; 4] = el.idx.map(|i| get3(x, i as usize));
                // ∇x applied to x gives 1: this normalises the scaled gradients (6V, with sign)
                let norm: f64 = (0..4).map(|k| el.g[k][0] * sh.rest[k][0]).sum();
                if norm == 0.0 || !norm.is_finite() {
                    return 0.0;
                }
                let mut e = [0.0; 6];
                for k in 1..4 {
                    let u = el.rot * (p[k] - p[0]) - (sh.rest[k] - sh.rest[0]);
                    let [gx, gy, gz] = el.g[k];
                    e[0] += gx * u.x;
                    e[1] += gy * u.y;
                    e[2] += gz * u.z;
                    e[3] += gy * u.x + gx * u.y;
                    e[4] += gz * u.y + gy * u.z;
                    e[5] += gz * u.x + gx * u.z;
                }
                // node 0's gradient is minus the sum of the others: its term is zero for u₀ = 0
                let e = e.map(|v| v / norm);
                // the stored material is divided by 6·|6V|: undo it for stresses in scene units
                let s = el.mat.apply(&e).map(|v| v * 6.0 * norm.abs());
                (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] - s[0] * s[1] - s[1] * s[2] - s[2] * s[0]
                    + 3.0 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]))
                    .max(0.0)
                    .sqrt()
            })
            .collect()
    }

    /// Element von Mises stresses averaged at the nodes.
    pub fn von_mises_per_node(&self, x: &[f64]) -> Vec<f64> {
        let n = x.len() / 3;
        let mut sum = vec![0.0; n];
        let mut count = vec![0u32; n];
        for (el, vm) in self.elems.iter().zip(self.von_mises_per_element(x)) {
            for &i in &el.idx {
                sum[i as usize] += vm;
                count[i as usize] += 1;
            }
        }
        sum.iter()
            .zip(&count)
            .map(|(s, &c)| if c > 0 { s / c as f64 } else { 0.0 })
            .collect()
    }
}
