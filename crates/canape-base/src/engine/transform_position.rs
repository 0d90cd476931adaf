//! TransformPosition (Sofa/Component/Engine/Transform/src/sofa/component/engine/transform/
//! TransformPosition.inl): Vec3 positions projected on a plane, translated, rotated, scaled,
//! randomly displaced or mapped by a 4×4 affine matrix (given, or read from a .tfm, .trm,
//! .txt or .xfm file); `fixedIndices` keep their input position.

use crate::base_data;
use canape_core::component::Engine;
use canape_core::data::{Data, DataKind, DataTable, Flag, Int, Ints, Real, Reals, Text, Value};
use canape_core::impl_component;
use canape_core::scene::InitContext;
use nalgebra::{Matrix4, UnitQuaternion, Vector3, Vector4};

/// The `method` names, in SOFA's option order (the first one is the default).
const METHODS: [&str; 9] = [
    "projectOnPlane",
    "translation",
    "rotation",
    "random",
    "scale",
    "scaleTranslation",
    "scaleRotationTranslation",
    "affine",
    "fromFile",
];

/// The transformation applied to every point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    ProjectOnPlane,
    Translation,
    Rotation,
    Random,
    Scale,
    ScaleTranslation,
    ScaleRotationTranslation,
    Affine,
}

/// SOFA's `helper::RandomGenerator`: the 48-bit linear congruential generator of `drand48`,
/// whose 32 high bits scale into [min, max].
#[derive(Clone, Debug)]
pub struct Rand48 {
    state: u64,
}

impl Rand48 {
    const MULT: u64 = 0x5_DEEC_E66D;
    const ADD: u64 = 0xB;
    const MASK: u64 = (1 << 48) - 1;
    const BASE_MAX: f64 = 4_294_967_295.0;

    /// The generator as SOFA builds it without a seed (drand48's default state).
    pub fn new() -> Self {
        Rand48 {
            state: 0x1234_ABCD_330E,
        }
    }

    /// The generator after SOFA's `initSeed(seed)`: the seed's two low 16-bit words above
    /// drand48's constant low word.
    pub fn with_seed(seed: i64) -> Self {
        let s1 = (seed as u64) & 0xFFFF;
        let s2 = ((seed >> 16) as u64) & 0xFFFF;
        Rand48 {
            state: (s2 << 32) | (s1 << 16) | 0x330E,
        }
    }

    /// The next 32-bit draw (SOFA's `randomBase`).
    pub fn next_base(&mut self) -> u32 {
        self.state = (self.state.wrapping_mul(Self::MULT).wrapping_add(Self::ADD)) & Self::MASK;
        (self.state >> 16) as u32
    }

    /// A number in [min, max] (SOFA's `random<double>(min, max)`).
    pub fn uniform(&mut self, min: f64, max: f64) -> f64 {
        min + (max - min) * (f64::from(self.next_base()) / Self::BASE_MAX)
    }
}

impl Default for Rand48 {
    fn default() -> Self {
        Self::new()
    }
}

/// C's `atof`: the longest leading number of `s` (0 when there is none).
fn atof(s: &str) -> f64 {
    let s = s.trim_start();
    (1..=s.len())
        .rev()
        .filter(|&n| s.is_char_boundary(n))
        .find_map(|n| s[..n].parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// The words of a line as `strtok(line, " ")` splits them (spaces only).
fn words(line: &str) -> Vec<&str> {
    line.split(' ').filter(|w| !w.is_empty()).collect()
}

/// Why a .tfm file gave no matrix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TfmError {
    #[error("transformation not found (no line holding 'Parameters')")]
    NoParameters,
    #[error("the 'Parameters' line holds {count} numbers, expected 12")]
    ParameterCount { count: usize },
}

/// The affine matrix of a .tfm file: the 12 numbers of its first line holding "Parameters",
/// the first 9 the rotation rows, and the translation read backwards from the last three (as
/// SOFA reads them). Errors are the messages to report; the matrix is then the identity.
pub fn parse_tfm(text: &str) -> Result<Matrix4<f64>, TfmError> {
    let mut mat = Matrix4::identity();
    let Some(line) = text.lines().find(|l| l.contains("Parameters")) else {
        return Err(TfmError::NoParameters);
    };
    let values: Vec<f64> = words(line)
        .into_iter()
        .filter(|w| w.contains(|c: char| c.is_ascii_digit() || c == '.' || c == '-'))
        .map(atof)
        .collect();
    if values.len() != 12 {
        return Err(TfmError::ParameterCount {
            count: values.len(),
        });
    }
    for i in 0..3 {
        for j in 0..3 {
            mat[(i, j)] = values[3 * i + j];
        }
        mat[(i, 3)] = values[values.len() - 1 - i];
    }
    Ok(mat)
}

/// A matrix file read line by line: `width` numbers a line, at most 4 non-empty lines, each
/// written into the matrix by `put(line number from 1, values)`. Short lines are reported and
/// skipped, as SOFA does.
fn parse_lines(
    text: &str,
    width: usize,
    mut put: impl FnMut(usize, &[f64]),
) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut n = 0;
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        n += 1;
        if n > 4 {
            errors.push("the file has more than 4 lines".to_string());
            break;
        }
        let w = words(line);
        if w.len() < width {
            errors.push(format!("line {n} should hold {width} numbers"));
            continue;
        }
        if w.len() > width {
            errors.push(format!("line {n} should hold {width} numbers"));
        }
        let v: Vec<f64> = w[..width].iter().map(|s| atof(s)).collect();
        put(n, &v);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The affine matrix of a .trm file (a translation line, then the 3 rotation rows) and its
/// translation.
pub fn parse_trm(text: &str) -> (Matrix4<f64>, Option<Vector3<f64>>, Vec<String>) {
    let mut mat = Matrix4::identity();
    let mut translation = None;
    let errors = parse_lines(text, 3, |n, v| {
        if n == 1 {
            for (i, x) in v.iter().enumerate() {
                mat[(i, 3)] = *x;
            }
            translation = Some(Vector3::new(v[0], v[1], v[2]));
        } else {
            for (i, x) in v.iter().enumerate() {
                mat[(n - 2, i)] = *x;
            }
        }
    })
    .err()
    .unwrap_or_default();
    (mat, translation, errors)
}

/// The affine matrix of a .txt/.xfm file: 4 lines of 4 numbers.
pub fn parse_xfm(text: &str) -> (Matrix4<f64>, Vec<String>) {
    let mut mat = Matrix4::identity();
    let errors = parse_lines(text, 4, |n, v| {
        for (i, x) in v.iter().enumerate() {
            mat[(n - 1, i)] = *x;
        }
    })
    .err()
    .unwrap_or_default();
    (mat, errors)
}

canape_core::data_schema! {
    /// TransformPosition's own Data (after the base Data).
    pub struct TransformPositionData {
        origin: Reals = ("origin", DataKind::Vector(3), "0 0 0", "A 3d point on the plane/Center of the scale"),
        input_position: Reals = ("input_position", DataKind::Reals(3), "", "input array of 3d points") alias ["inputPosition"],
        normal: Reals = ("normal", DataKind::Vector(3), "0 0 0", "plane normal"),
        translation: Reals = ("translation", DataKind::Vector(3), "0 0 0", "translation vector "),
        rotation: Reals = ("rotation", DataKind::Vector(3), "0 0 0", "rotation vector "),
        scale: Reals = ("scale", DataKind::Vector(3), "1 1 1", "scale factor"),
        matrix: Reals = ("matrix", DataKind::Vector(16), "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1", "4x4 affine matrix"),
        method: Text = ("method", DataKind::Str, "projectOnPlane", "transformation method either translation or scale or rotation or random or projectOnPlane"),
        seed_value: Int = ("seedValue", DataKind::Int, "0", "the seed value for the random generator"),
        max_random_displacement: Real = ("maxRandomDisplacement", DataKind::Real, "1", "the maximum displacement around initial position for the random transformation"),
        fixed_indices: Ints = ("fixedIndices", DataKind::Ints(0), "", "Indices of the entries that are not transformed"),
        filename: Text = ("filename", DataKind::File, "", "filename of an affine matrix. Supported extensions are: .trm, .tfm, .xfm and .txt(read as .xfm)"),
        draw_input: Flag = ("drawInput", DataKind::Bool, "0", "Draw input points"),
        draw_output: Flag = ("drawOutput", DataKind::Bool, "0", "Draw output points"),
        point_size: Real = ("pointSize", DataKind::Real, "1", "Point size"),
        output_position: Reals => ("output_position", DataKind::Reals(3), "output array of 3d points projected on a plane") alias ["outputPosition"],
    }
}

/// TransformPosition: `output_position` = `input_position` transformed by `method`.
#[derive(Clone)]
pub struct TransformPosition {
    data: DataTable,
    /// Typed handles to the Data in `data`.
    d: TransformPositionData,
}

impl Default for TransformPosition {
    fn default() -> Self {
        Self::new()
    }
}

impl TransformPosition {
    pub fn new() -> Self {
        let (data, d) = TransformPositionData::declare(base_data(DataTable::new()));
        TransformPosition { data, d }
    }

    fn vec3(&self, h: Data<Reals>) -> Vector3<f64> {
        match self.data.get(h) {
            [x, y, z] => Vector3::new(*x, *y, *z),
            _ => Vector3::zeros(),
        }
    }

    /// The `matrix` Data, row-major.
    fn matrix(&self) -> Matrix4<f64> {
        let m = self.data.get(self.d.matrix);
        if m.len() == 16 {
            Matrix4::from_row_slice(m)
        } else {
            Matrix4::identity()
        }
    }

    /// Read `filename` into the `matrix` Data (and `translation` for a .trm file), as SOFA's
    /// `fromFile` method does; problems are reported and leave the matrix as it is.
    fn read_matrix_file(&mut self, ctx: &mut InitContext<'_>) {
        let fname = self.data.get(self.d.filename).to_string();
        if fname.is_empty() {
            // a file that was not found has already been reported by the scene builder
            if !self.data.was_set(self.d.filename) {
                ctx.error("method 'fromFile' without a filename: the 'matrix' Data is used");
            }
            return;
        }
        let lower = fname.to_ascii_lowercase();
        let ext = lower.rsplit('.').next().unwrap_or("");
        if !matches!(ext, "tfm" | "trm" | "txt" | "xfm") {
            ctx.error(format!(
                "unknown extension of '{fname}' (expected .tfm, .trm, .txt or .xfm): the 'matrix' Data is used"
            ));
            return;
        }
        let text = match std::fs::read_to_string(&fname) {
            Ok(t) => t,
            Err(e) => {
                ctx.error(format!(
                    "could not open '{fname}' ({e}): the matrix is the identity"
                ));
                return;
            }
        };
        let (mat, errors) = match ext {
            "tfm" => match parse_tfm(&text) {
                Ok(m) => (m, Vec::new()),
                Err(e) => (Matrix4::identity(), vec![e.to_string()]),
            },
            "trm" => {
                let (m, t, errors) = parse_trm(&text);
                if let Some(t) = t {
                    let _ = self
                        .data
                        .put(self.d.translation, Value::Reals(vec![t.x, t.y, t.z]));
                }
                (m, errors)
            }
            _ => parse_xfm(&text),
        };
        for e in errors {
            ctx.error(format!("in '{fname}': {e}"));
        }
        let rows: Vec<f64> = (0..4)
            .flat_map(|i| (0..4).map(move |j| (i, j)))
            .map(|(i, j)| mat[(i, j)])
            .collect();
        let _ = self.data.put(self.d.matrix, Value::Reals(rows));
    }

    /// The method named by the `method` Data (reading the file of `fromFile`).
    fn method(&mut self, ctx: &mut InitContext<'_>) -> Method {
        let name = self.data.get(self.d.method).trim().to_string();
        let index = METHODS
            .iter()
            .position(|m| *m == name)
            .or_else(|| name.parse::<usize>().ok().filter(|&i| i < METHODS.len()));
        let Some(index) = index else {
            ctx.error(format!(
                "unknown method '{name}' (expected one of {}): 'projectOnPlane' is used",
                METHODS.join(", ")
            ));
            return Method::ProjectOnPlane;
        };
        match METHODS[index] {
            "projectOnPlane" => Method::ProjectOnPlane,
            "translation" => Method::Translation,
            "rotation" => Method::Rotation,
            "random" => Method::Random,
            "scale" => Method::Scale,
            "scaleTranslation" => Method::ScaleTranslation,
            "scaleRotationTranslation" => Method::ScaleRotationTranslation,
            "affine" => Method::Affine,
            _ => {
                self.read_matrix_file(ctx);
                Method::Affine
            }
        }
    }

    fn init_impl(&mut self, ctx: &mut InitContext<'_>) {
        let method = self.method(ctx);
        let input: Vec<Vector3<f64>> = self
            .data
            .get(self.d.input_position)
            .chunks_exact(3)
            .map(|p| Vector3::new(p[0], p[1], p[2]))
            .collect();
        let (origin, translation, scale) = (
            self.vec3(self.d.origin),
            self.vec3(self.d.translation),
            self.vec3(self.d.scale),
        );
        // SOFA's Euler angles in degrees, R = Rz Ry Rx
        let r = self.vec3(self.d.rotation) * (std::f64::consts::PI / 180.0);
        let q = UnitQuaternion::from_euler_angles(r.x, r.y, r.z);
        let mut out: Vec<Vector3<f64>> = match method {
            Method::ProjectOnPlane => {
                let n = self.vec3(self.d.normal);
                if n.norm() == 0.0 {
                    ctx.error("method 'projectOnPlane' needs a non-zero 'normal': the positions are left unchanged");
                    input.clone()
                } else {
                    let n = n.normalize();
                    input.iter().map(|p| p + n * (origin - p).dot(&n)).collect()
                }
            }
            Method::Translation => input.iter().map(|p| p + translation).collect(),
            Method::Rotation => input.iter().map(|p| q * p).collect(),
            Method::Random => {
                let dis = self.data.get(self.d.max_random_displacement);
                let seed = self.data.get(self.d.seed_value);
                let mut rg = if seed != 0 {
                    Rand48::with_seed(seed)
                } else {
                    Rand48::new()
                };
                // SOFA draws x, y and z as the arguments of one constructor call, whose order
                // C++ leaves unspecified; they are drawn in order here
                input
                    .iter()
                    .map(|p| {
                        let x = rg.uniform(-dis, dis);
                        let y = rg.uniform(-dis, dis);
                        let z = rg.uniform(-dis, dis);
                        p + Vector3::new(x, y, z)
                    })
                    .collect()
            }
            Method::Scale => input
                .iter()
                .map(|p| origin + (p - origin).component_mul(&scale))
                .collect(),
            Method::ScaleTranslation => input
                .iter()
                .map(|p| p.component_mul(&scale) + translation)
                .collect(),
            Method::ScaleRotationTranslation => input
                .iter()
                .map(|p| q * p.component_mul(&scale) + translation)
                .collect(),
            Method::Affine => {
                let m = self.matrix();
                input
                    .iter()
                    .map(|p| {
                        let c = m * Vector4::new(p.x, p.y, p.z, 1.0);
                        // SOFA leaves the output point unset (zero) at infinity
                        if c.w.abs() > 1e-10 {
                            c.xyz() / c.w
                        } else {
                            Vector3::zeros()
                        }
                    })
                    .collect()
            }
        };
        let mut bad = Vec::new();
        for &i in self.data.get(self.d.fixed_indices) {
            match input.get(i as usize) {
                Some(p) => out[i as usize] = *p,
                None => bad.push(i),
            }
        }
        if !bad.is_empty() {
            ctx.error(format!(
                "fixedIndices {bad:?} are out of range ({} input points) and are ignored",
                input.len()
            ));
        }
        let flat: Vec<f64> = out.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
        let _ = self.data.put(self.d.output_position, Value::Reals(flat));
    }
}

impl_component!(TransformPosition, "TransformPosition", init);

impl Engine for TransformPosition {
    fn reads_context_state(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run the engine's init with `attrs` set; the diagnostics' count and the output.
    fn run(attrs: &[(&str, &str)]) -> (usize, Vec<f64>) {
        let mut e = TransformPosition::new();
        let n = crate::engine::test_support::init_alone(&mut e, attrs);
        (n, e.data.reals("output_position").to_vec())
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn projection_translation_scale_and_fixed_points() {
        let pts = "1 2 3 4 5 6";
        let (n, out) = run(&[
            ("input_position", pts),
            ("normal", "0 0 2"),
            ("origin", "0 0 1"),
        ]);
        assert_eq!(n, 0);
        assert!(close(&out, &[1.0, 2.0, 1.0, 4.0, 5.0, 1.0]), "{out:?}");
        let (_, out) = run(&[
            ("input_position", pts),
            ("method", "translation"),
            ("translation", "1 0 -1"),
            ("fixedIndices", "1"),
        ]);
        assert!(close(&out, &[2.0, 2.0, 2.0, 4.0, 5.0, 6.0]), "{out:?}");
        let (_, out) = run(&[
            ("input_position", pts),
            ("method", "scale"),
            ("origin", "1 1 1"),
            ("scale", "2 3 4"),
        ]);
        assert!(close(&out, &[1.0, 4.0, 9.0, 7.0, 13.0, 21.0]), "{out:?}");
    }

    #[test]
    fn rotation_is_rz_ry_rx_in_degrees() {
        // 90° about z: x → y
        let (_, out) = run(&[
            ("input_position", "1 0 0"),
            ("method", "scaleRotationTranslation"),
            ("rotation", "0 0 90"),
            ("scale", "2 1 1"),
            ("translation", "0 0 1"),
        ]);
        assert!(close(&out, &[0.0, 2.0, 1.0]), "{out:?}");
        // 90° about x then 90° about z: y → z stays z
        let (_, out) = run(&[
            ("input_position", "0 1 0"),
            ("method", "rotation"),
            ("rotation", "90 0 90"),
        ]);
        assert!(close(&out, &[0.0, 0.0, 1.0]), "{out:?}");
    }

    #[test]
    fn affine_matrix_divides_by_w() {
        let (_, out) = run(&[
            ("input_position", "1 2 3"),
            ("method", "affine"),
            ("matrix", "2 0 0 1  0 2 0 0  0 0 2 0  0 0 0 2"),
        ]);
        assert!(close(&out, &[1.5, 2.0, 3.0]), "{out:?}");
    }

    #[test]
    fn bad_method_and_zero_normal_are_reported() {
        let (n, out) = run(&[("input_position", "1 2 3"), ("method", "shear")]);
        // the unknown method and the zero normal of the projection it falls back to
        assert_eq!(n, 2);
        assert!(close(&out, &[1.0, 2.0, 3.0]));
        let (n, _) = run(&[("input_position", "1 2 3"), ("fixedIndices", "4")]);
        assert_eq!(n, 2);
    }

    #[test]
    fn random_displacement_is_drand48() {
        // drand48's first draws from its default state: 0x1234ABCD330E → …
        let mut rg = Rand48::new();
        let mut x: u64 = 0x1234_ABCD_330E;
        for _ in 0..3 {
            x = (x * 0x5_DEEC_E66D + 0xB) & ((1 << 48) - 1);
            assert_eq!(rg.next_base(), (x >> 16) as u32);
        }
        // a seeded generator is reproducible and stays within the bound
        let (_, a) = run(&[
            ("input_position", "0 0 0 1 1 1"),
            ("method", "random"),
            ("seedValue", "7"),
            ("maxRandomDisplacement", "0.5"),
        ]);
        let (_, b) = run(&[
            ("input_position", "0 0 0 1 1 1"),
            ("method", "random"),
            ("seedValue", "7"),
            ("maxRandomDisplacement", "0.5"),
        ]);
        assert_eq!(a, b);
        assert!(a[..3].iter().all(|v| v.abs() <= 0.5));
        assert!(a[3..].iter().all(|v| (v - 1.0).abs() <= 0.5));
        assert_ne!(a[0], a[1]);
        let mut rg = Rand48::with_seed(7);
        let first = rg.uniform(-0.5, 0.5);
        assert_eq!(a[0], first);
    }

    #[test]
    fn matrix_files() {
        let m = parse_tfm("#Insight\nParameters: 1 0 0 0 1 0 0 0 1 7 8 9\nFixed: 0 0 0\n").unwrap();
        // SOFA reads the translation backwards from the end of the line
        assert_eq!((m[(0, 3)], m[(1, 3)], m[(2, 3)]), (9.0, 8.0, 7.0));
        assert!(parse_tfm("Parameters: 1 2 3").is_err());
        let (m, t, errors) = parse_trm("1 2 3\n0 -1 0\n1 0 0\n0 0 1\n");
        assert!(errors.is_empty());
        assert_eq!(t, Some(Vector3::new(1.0, 2.0, 3.0)));
        assert_eq!((m[(0, 1)], m[(1, 0)], m[(2, 3)]), (-1.0, 1.0, 3.0));
        let (m, errors) = parse_xfm("1 0 0 5\n0 1 0 6\n0 0 1\n0 0 0 1\n");
        assert_eq!(errors.len(), 1);
        assert_eq!((m[(0, 3)], m[(1, 3)], m[(2, 3)]), (5.0, 6.0, 0.0));
        assert_eq!(atof("2.5e1abc"), 25.0);
        assert_eq!(atof("x"), 0.0);
    }
}
