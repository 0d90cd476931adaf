//! Green and Hatch's triangle–cube intersection test, as SparseGridTopology runs it.

/// Whether triangle `t` (three points in a cube's unit frame, single precision values held in
/// f64) meets the cube [−½, ½]³ (Green & Hatch, "Fast polygon-cube intersection testing",
/// Graphics Gems V), in its order of tests.
pub(super) fn triangle_meets_cube(t: &[[f64; 3]; 3]) -> bool {
    match trivial(t) {
        Some(v) => v,
        None => polygon_meets_cube(t, normal(t)),
    }
}

/// Outcode of a point against the 6 face planes (bits set for the planes it is outside of,
/// among `mask`).
fn face_planes(p: &[f64; 3], mask: u32) -> u32 {
    let mut oc = 0;
    for (k, v) in p.iter().enumerate() {
        let (pb, nb) = (1 << (2 * k), 1 << (2 * k + 1));
        if mask & (pb | nb) != 0 {
            if mask & pb != 0 && *v > 0.5 {
                oc |= pb;
            } else if mask & nb != 0 && *v < -0.5 {
                oc |= nb;
            }
        }
    }
    oc
}

fn edge_planes(p: &[f64; 3], mask: u32) -> u32 {
    let vals = [
        p[0] + p[1],
        p[0] - p[1],
        p[0] + p[2],
        p[0] - p[2],
        p[1] + p[2],
        p[1] - p[2],
    ];
    let mut oc = 0;
    for (k, v) in vals.iter().enumerate() {
        let (pb, nb) = (1 << (2 * k), 1 << (2 * k + 1));
        if mask & (pb | nb) != 0 {
            if mask & pb != 0 && *v > 1.0 {
                oc |= pb;
            } else if mask & nb != 0 && *v < -1.0 {
                oc |= nb;
            }
        }
    }
    oc
}

fn corner_planes(p: &[f64; 3], mask: u32) -> u32 {
    let vals = [
        p[0] + p[1] + p[2],
        p[0] + p[1] - p[2],
        p[0] - p[1] + p[2],
        p[0] - p[1] - p[2],
    ];
    let mut oc = 0;
    for (k, v) in vals.iter().enumerate() {
        let (pb, nb) = (1 << (2 * k), 1 << (2 * k + 1));
        if mask & (pb | nb) != 0 {
            if mask & pb != 0 && *v > 1.5 {
                oc |= pb;
            } else if mask & nb != 0 && *v < -1.5 {
                oc |= nb;
            }
        }
    }
    oc
}

/// Some(true): a vertex inside; Some(false): all outside one face, edge or corner plane.
fn trivial(t: &[[f64; 3]; 3]) -> Option<bool> {
    let all = u32::MAX;
    let mut cum = all;
    for v in t {
        let fb = face_planes(v, all);
        if fb == 0 {
            return Some(true);
        }
        cum &= fb;
    }
    if cum != 0 {
        return Some(false);
    }
    for planes in [edge_planes as fn(&[f64; 3], u32) -> u32, corner_planes] {
        let mut cum = all;
        for v in t {
            cum = planes(v, cum);
            if cum == 0 {
                break;
            }
        }
        if cum != 0 {
            return Some(false);
        }
    }
    None
}

fn sign(x: f64) -> f64 {
    if x < 0.0 {
        -1.0
    } else {
        1.0
    }
}

fn segment_meets_cube(v0: &[f64; 3], v1: &[f64; 3]) -> bool {
    let e = [v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]];
    let s = e.map(sign);
    for i in 0..3 {
        if v0[i] * s[i] > 0.5 || v1[i] * s[i] < -0.5 {
            return false;
        }
    }
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let a = e[i2] * v0[i1] - e[i1] * v0[i2];
        let b = 0.5 * (e[i2] * s[i1] + e[i1] * s[i2]);
        if a * a > b * b {
            return false;
        }
    }
    true
}

fn normal(t: &[[f64; 3]; 3]) -> [f64; 3] {
    let a = [t[1][0] - t[0][0], t[1][1] - t[0][1], t[1][2] - t[0][2]];
    let b = [t[2][0] - t[0][0], t[2][1] - t[0][1], t[2][2] - t[0][2]];
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Crossings of the polygon around `p` in the plane dropping the normal's largest axis.
fn polygon_contains(t: &[[f64; 3]; 3], n: &[f64; 3], p: &[f64; 3]) -> bool {
    let an = n.map(f64::abs);
    let max2 = |o: usize| if an[o] > an[o + 1] { o } else { o + 1 };
    let z = if an[0] > an[2] { max2(0) } else { max2(1) };
    let (xa, ya) = if n[z] < 0.0 {
        ((z + 2) % 3, (z + 1) % 3)
    } else {
        ((z + 1) % 3, (z + 2) % 3)
    };
    let side = |a: f64, b: f64, x: f64| i32::from(b > x) - i32::from(a > x);
    let mut count = 0;
    for i in 0..3 {
        let (v, w) = (&t[i], &t[(i + 1) % 3]);
        let xd = side(v[xa], w[xa], p[xa]);
        if xd != 0 {
            if side(v[ya], w[ya], p[ya]) != 0 {
                let xdf = f64::from(xd);
                if xdf * (p[xa] - v[xa]) * (w[ya] - v[ya])
                    <= xdf * (p[ya] - v[ya]) * (w[xa] - v[xa])
                {
                    count += xd;
                }
            } else if v[ya] <= p[ya] {
                count += xd;
            }
        }
    }
    count != 0
}

fn polygon_meets_cube(t: &[[f64; 3]; 3], n: [f64; 3]) -> bool {
    for i in 0..3 {
        if segment_meets_cube(&t[i], &t[(i + 1) % 3]) {
            return true;
        }
    }
    if n == [0.0; 3] {
        return false;
    }
    let d = n.map(sign);
    let tt = (n[0] * t[0][0] + n[1] * t[0][1] + n[2] * t[0][2])
        / (n[0] * d[0] + n[1] * d[1] + n[2] * d[2]);
    if (tt + 0.5) * (tt - 0.5) > 0.0 {
        return false;
    }
    polygon_contains(t, &n, &d.map(|c| c * tt))
}
