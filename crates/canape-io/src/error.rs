//! The errors of canape-io's file readers and writers, as typed enums.
//!
//! Each enum names the kinds of failure one family of functions reports, with the place (line
//! or byte) and the counts where the message gives them. The `Display` text of every error is
//! the message users see in diagnostics, word for word; callers that need a `String` (a
//! component's `on_event`, a diagnostic) use `to_string()`.
//!
//! An error wrapping another one (an I/O error, a parse error with the file named) prints the
//! inner message as part of its own, and so does not also return it from
//! [`std::error::Error::source`]: a reporter walking the chain would print it twice. The inner
//! error stays reachable through the variant's `error` field.
//!
//! - [`FileReadError`]: reading a whole file under a size cap ([`crate::files::read_capped`]);
//! - [`MeshReadError`]: the mesh parsers (Gmsh, VTK, OBJ, OFF, STL, trian) and
//!   [`crate::loaders::read_mesh_file`];
//! - [`SparseGridError`]: the surface and the grids of SparseGridTopology and
//!   SparseGridRamificationTopology;
//! - [`StateFileError`]: WriteState files read back ([`crate::state_io::parse_frames`], ReadState);
//! - [`TopologyDumpError`]: topology dumps ([`crate::topo_regress::parse_topology_frames`]);
//! - [`RegressionListError`] and [`CompareError`]: regression lists and the state comparison
//!   ([`crate::regress`]);
//! - [`FileWriteError`]: the files the exporters and WriteState write.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Where in a file an error is: a line of a text file (from 1), or a byte offset of a binary one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    Line(usize),
    Byte(usize),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Line(n) => write!(f, "line {n}"),
            Position::Byte(n) => write!(f, "byte {n}"),
        }
    }
}

/// A whole file read under a size cap ([`crate::files::read_capped`]).
#[derive(Debug, thiserror::Error)]
pub enum FileReadError {
    /// The file could not be opened or read.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The file holds more than `cap` bytes.
    #[error("the file is larger than the {} MB Canapé reads from a scene", .cap >> 20)]
    TooLarge { cap: u64 },
}

/// A mesh file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum MeshReadError {
    /// The file could not be read.
    #[error("cannot read '{path}': {error}")]
    Read { path: String, error: FileReadError },
    /// The file was read, but not parsed: `error` says why.
    #[error("cannot load '{path}': {error}")]
    Load {
        path: String,
        error: Box<MeshReadError>,
    },
    /// The file's extension names no mesh format read here.
    #[error("meshes are read from .obj, .stl, .vtk/.vtu/.vtp and .msh files here")]
    UnknownExtension,
    /// The content is not a file of the format read (no header, an empty file…).
    #[error("{message}")]
    NotFormat { message: String },
    /// Malformed content at a line (text) or byte (binary).
    #[error("{at}: {message}")]
    Syntax { at: Position, message: String },
    /// Malformed content, the format giving no line to name (bad or missing tokens, sections
    /// or counts).
    #[error("{message}")]
    Malformed { message: String },
    /// Well-formed content this reader does not handle (an encoding, a data set kind…).
    #[error("{message}")]
    Unsupported { message: String },
    /// The file ends before all the items its header declares.
    #[error("the file ends after {found} of its {declared} {what}")]
    Truncated {
        what: &'static str,
        declared: usize,
        found: usize,
    },
    /// An element (a face) names a vertex the file does not have (`vertex` as the message
    /// numbers it: 0-based for elements, 1-based for OBJ faces).
    #[error("{element} uses vertex {vertex} but the file has {vertices} vertices")]
    VertexOutOfRange {
        element: &'static str,
        vertex: u64,
        vertices: usize,
    },
    /// A VTK cell names a point the file does not have.
    #[error("a cell uses point {point}, but the file has {points} points")]
    PointOutOfRange { point: u32, points: u32 },
    /// A VTK cell with a number of points its type does not have.
    #[error("a cell of type {cell_type} has {points} points")]
    CellSize { cell_type: u32, points: usize },
    /// A VTK cell type MeshVTKLoader does not keep.
    #[error("cell type {cell_type} is not supported")]
    CellType { cell_type: u32 },
    /// A VTK header announcing more entries than are ever read.
    #[error("{what} announces {count} entries (more than {max})")]
    CountTooLarge {
        what: String,
        count: usize,
        max: usize,
    },
    /// A binary STL whose size is not that of its facet count.
    #[error("a binary STL of {facets} facets has {bytes} bytes, not {expected}")]
    StlSize {
        facets: usize,
        bytes: usize,
        expected: u128,
    },
}

impl MeshReadError {
    pub(crate) fn not_format(message: impl Into<String>) -> Self {
        MeshReadError::NotFormat {
            message: message.into(),
        }
    }
    pub(crate) fn syntax(at: Position, message: impl Into<String>) -> Self {
        MeshReadError::Syntax {
            at,
            message: message.into(),
        }
    }
    /// Malformed content at a line of a text file.
    pub(crate) fn at_line(line: usize, message: impl Into<String>) -> Self {
        MeshReadError::syntax(Position::Line(line), message)
    }
    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        MeshReadError::Malformed {
            message: message.into(),
        }
    }
    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        MeshReadError::Unsupported {
            message: message.into(),
        }
    }
}

/// A sparse grid (SparseGridTopology, SparseGridRamificationTopology) that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SparseGridError {
    /// The surface file could not be read or parsed.
    #[error(transparent)]
    Surface(#[from] MeshReadError),
    #[error("the surface mesh has no points")]
    NoPoints,
    #[error("a face uses a point beyond the mesh's points")]
    FaceOutOfRange,
    /// The grid's cell count overflows what a grid may hold.
    #[error("a grid of {}×{}×{} cells is more than the grid may hold", .cells[0], .cells[1], .cells[2])]
    GridTooLarge { cells: [usize; 3] },
    #[error("nbVirtualFinerLevels makes the finest grid too large")]
    FinerLevelsTooLarge,
    #[error("the grid has no cell: the surface occupies none of its cells")]
    NoCell,
}

/// A WriteState file read back (ReadState, [`crate::state_io::parse_frames`]).
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    #[error("cannot open '{path}': {error}")]
    Open { path: String, error: io::Error },
    #[error("cannot read '{path}': {error}")]
    Read { path: String, error: io::Error },
    /// The file holds more than `max` bytes (decompressed).
    #[error("'{path}' holds more than {max} bytes of states")]
    TooLarge { path: String, max: u64 },
    #[error("line {line}: bad time")]
    BadTime { line: usize },
    #[error("line {line}: bad number '{token}'")]
    BadNumber { line: usize, token: String },
    /// A vector line (`key` is `X=` or `V=`) before any `T=` line.
    #[error("line {line}: {key} before T=")]
    BeforeTime { line: usize, key: &'static str },
}

/// A topology dump (`*_topology.txt.gz`) that could not be parsed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TopologyDumpError {
    #[error("expected 'T=', found '{found}'")]
    ExpectedTime { found: String },
    #[error("bad time '{token}'")]
    BadTime { token: String },
    /// The block of time `time` ends before its `key` list.
    #[error("missing '{key}' at T={time}")]
    MissingList { key: &'static str, time: f64 },
    #[error("expected '{key} n', found '{found}'")]
    ExpectedList { key: &'static str, found: String },
    #[error("bad index '{token}'")]
    BadIndex { token: String },
    /// A list of `count` elements with `found` indices where `expected` are needed.
    #[error("{key} {count} at T={time}: {found} indices, {expected} expected")]
    ListSize {
        key: &'static str,
        count: usize,
        time: f64,
        found: usize,
        expected: usize,
    },
}

/// A regression list (`*.regression-tests`) that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RegressionListError {
    #[error("cannot read '{}': {error}", .path.display())]
    Read { path: PathBuf, error: io::Error },
    #[error(
        "the list uses $REGRESSION_DIR but it is not set and no ancestor folder holds references/"
    )]
    NoRegressionDir,
    /// A malformed entry at `line` (from 1) of the list `path`.
    #[error("{}:{line}: {message}", .path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        message: &'static str,
    },
    #[error("the list names no reference folder")]
    NoReferenceFolder,
}

/// Recorded states that cannot be compared with their reference ([`crate::regress::object_error`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// No recorded frame at a reference frame's time.
    #[error("no frame recorded at T={time}")]
    MissingFrame { time: f64 },
    /// A recorded vector of another size than the reference's.
    #[error("size mismatch at T={time}: reference {reference} values, ours {ours}")]
    SizeMismatch {
        time: f64,
        reference: usize,
        ours: usize,
    },
    /// The reference has velocities, the recorded frame none.
    #[error("our frame has no velocities")]
    NoVelocities,
}

/// A file the exporters or WriteState could not write.
#[derive(Debug, thiserror::Error)]
pub enum FileWriteError {
    #[error("cannot create folder '{}': {error}", .path.display())]
    CreateFolder { path: PathBuf, error: io::Error },
    #[error("cannot create '{}': {error}", .path.display())]
    Create { path: PathBuf, error: io::Error },
    #[error("cannot write '{}': {error}", .path.display())]
    Write { path: PathBuf, error: io::Error },
}
