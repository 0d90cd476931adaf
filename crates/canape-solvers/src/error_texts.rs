//! The typed errors read as the Strings they replaced.

use crate::direct::FactorError;
use faer::sparse::linalg::LuError;
use faer::sparse::FaerError;

#[test]
fn factor_errors_read_as_before() {
    let cases: [(FactorError, &str); 7] = [
        (
            FactorError::Symbolic(FaerError::IndexOverflow),
            "symbolic factorization failed: IndexOverflow",
        ),
        (
            FactorError::SymbolicLu(FaerError::OutOfMemory),
            "symbolic LU failed: OutOfMemory",
        ),
        (
            FactorError::Singular(LuError::SymbolicSingular { index: 4 }),
            "the matrix is singular: SymbolicSingular { index: 4 }",
        ),
        (
            FactorError::Singular(LuError::Generic(FaerError::OutOfMemory)),
            "the matrix is singular: Generic(OutOfMemory)",
        ),
        (
            FactorError::ZeroPivot { column: 12 },
            "the matrix is singular (zero pivot in column 12)",
        ),
        (
            FactorError::Qr(FaerError::IndexOverflow),
            "QR factorization failed: IndexOverflow",
        ),
        (
            FactorError::NonFiniteSolution,
            "the solution is not finite: the matrix is singular or holds non-finite values",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
}

#[test]
fn svd_errors_read_as_before() {
    use crate::svd::SvdError;
    assert_eq!(
        SvdError::TooLarge { n: 5000, max: 3000 }.to_string(),
        "SVDLinearSolver: 5000 unknowns is more than the 3000 a dense decomposition is allowed here; use a sparse direct solver"
    );
    assert_eq!(
        SvdError::NoConvergence.to_string(),
        "SVDLinearSolver: the decomposition did not converge"
    );
}
