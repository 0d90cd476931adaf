"""Solve the same discrete static linear-elasticity problem as Canapé with scikit-fem.

Input (argv[1]): a text file written by the Rust test, with sections
  E nu            (one line)
  points N        then N lines "x y z"
  tets M          then M lines "a b c d"
  fixed K         then K point indices
  loads L         then L lines "i fx fy fz"
  displacement N  then N lines "ux uy uz" (Canapé's solution)
Prints "max_rel_diff <value>" comparing scikit-fem's nodal displacements with Canapé's.
"""
import sys

import numpy as np
from skfem import Basis, ElementTetP1, ElementVector, MeshTet, asm, condense, solve
from skfem.models.elasticity import lame_parameters, linear_elasticity


def read(path):
    lines = [l.split() for l in open(path) if l.strip()]
    it = iter(lines)
    e, nu = map(float, next(it))
    def block(kind, conv):
        head = next(it)
        assert head[0] == kind, (head, kind)
        return [list(map(conv, next(it))) for _ in range(int(head[1]))]
    pts = np.array(block("points", float))
    tets = np.array(block("tets", int))
    fixed = np.array([r[0] for r in block("fixed", int)], dtype=int)
    loads = block("loads", float)
    disp = np.array(block("displacement", float))
    return e, nu, pts, tets, fixed, loads, disp


def main():
    e, nu, pts, tets, fixed, loads, disp = read(sys.argv[1])
    mesh = MeshTet(pts.T.copy(), tets.T.copy())
    basis = Basis(mesh, ElementVector(ElementTetP1()))
    k = asm(linear_elasticity(*lame_parameters(e, nu)), basis)
    f = np.zeros(k.shape[0])
    dofs = basis.nodal_dofs  # (3, N): the dofs of node i are dofs[:, i]
    for i, fx, fy, fz in loads:
        i = int(i)
        f[dofs[0, i]] += fx
        f[dofs[1, i]] += fy
        f[dofs[2, i]] += fz
    d = dofs[:, fixed].ravel()
    u = solve(*condense(k, f, D=d))
    ours = u[dofs].T  # (N, 3)
    scale = np.abs(ours).max()
    diff = np.abs(ours - disp).max() / scale
    print(f"max_rel_diff {diff:.3e} max_disp {scale:.6e}")


if __name__ == "__main__":
    main()
