"""Reference kernels of Multigrid's cycle: restriction (of a residual, fused with the first
smoothing step), prolongation alone or fused with the smoothing step after it, the coarse
levels' steps run from a schedule (coarse_cycle), and the coarsest level's dense inverse."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ginkpy.core.solver.coarse_levels import (OP_COARSEST, OP_PROLONG_RELAX, OP_RELAX, OP_RELAX_FIRST,
                                               OP_RELAX_FIRST_RESTRICT, OP_RESTRICT_RESIDUAL)


def _scipy(a):
    return sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)


def _restrict(agg_ptrs, agg_rows, r):
    """P^T r: row I sums r over the rows of aggregate I, in the order of agg_rows."""
    return np.add.reduceat(r[agg_rows], agg_ptrs[:-1], axis=0) if agg_rows.size else np.zeros((0,) + r.shape[1:],
                                                                                                 r.dtype)


def restrict_residual(exec, a, agg_ptrs, agg_rows, b, x, coarse_b):
    """coarse_b = P^T (b - A x)."""
    coarse_b.values[...] = _restrict(agg_ptrs, agg_rows, b.values - _scipy(a) @ x.values)


def restrict(exec, agg_ptrs, agg_rows, r, coarse_b):
    """coarse_b = P^T r: row I sums r over the rows of aggregate I, in the order of agg_rows."""
    coarse_b.values[...] = _restrict(agg_ptrs, agg_rows, r.values)


def relax_first_restrict(exec, beta, a, inv_diag, agg_ptrs, agg_rows, b, x, coarse_b):
    """The first weighted Jacobi step from x = 0 and the restriction of the residual after it:
    x = beta D^-1 b;  coarse_b = P^T (b - A x)."""
    x.values[...] = beta * (inv_diag.values * b.values)
    restrict_residual(exec, a, agg_ptrs, agg_rows, b, x, coarse_b)


def prolong(exec, agg, coarse_x, x):
    """x = x + P e: x_i += e_I for the aggregate I of row i."""
    x.values[...] = x.values + coarse_x.values[agg]


def prolong_relax(exec, beta, a, inv_diag, agg, coarse_x, b, x, x_new):
    """The correction and a weighted Jacobi step after it: y = x + P e;
    x_new = y + beta D^-1 (b - A y)."""
    y = x.values + coarse_x.values[agg]
    x_new.values[...] = y + beta * (inv_diag.values * (b.values - _scipy(a) @ y))


def pack_coarse_levels(exec, coarse):
    """Nothing to pack on the host: coarse_cycle reads the levels as they are."""


def coarse_cycle(exec, coarse, schedule, work, b, x):
    """The steps of ``schedule`` (rows (op, level, src, dst), see core/solver/multigrid.py)
    on the levels of ``coarse``, whose vectors (b, x0, x1 per level) lie in ``work`` as
    ``coarse.layout()`` places them; level 0's b and x0 are ``b`` and ``x``."""
    meta = coarse.layout()

    def vector(t, which):
        if t == 0 and which < 2:
            return (b.values, x.values)[which]
        begin = meta[t, 5] + which * meta[t, 0]
        return work.values[begin:begin + meta[t, 0]]

    for op, t, src, dst in np.asarray(schedule).reshape(-1, 4):
        A = _scipy(coarse.matrices[t]) if op != OP_COARSEST else None
        rhs, x_src, x_dst = vector(t, 0), vector(t, 1 + src), vector(t, 1 + dst)
        if op == OP_COARSEST:
            x_src[...] = coarse.inverse.values @ rhs
            continue
        d, w = coarse.inv_diags[t].values, coarse.omegas[t]
        if op == OP_RELAX_FIRST:
            x_dst[...] = w * (d * rhs)
        elif op == OP_RELAX:
            x_dst[...] = x_src + w * (d * (rhs - A @ x_src))
        elif op == OP_PROLONG_RELAX:
            y = x_src + vector(t + 1, 1)[coarse.levels[t].agg]
            x_dst[...] = y + w * (d * (rhs - A @ y))
        else:
            level = coarse.levels[t]
            if op == OP_RELAX_FIRST_RESTRICT:
                x_dst[...] = w * (d * rhs)
                x_src = x_dst
            assert op in (OP_RELAX_FIRST_RESTRICT, OP_RESTRICT_RESIDUAL)
            vector(t + 1, 0)[...] = _restrict(level.agg_ptrs, level.agg_rows, rhs - A @ x_src)


def dense_inverse(exec, a):
    """A^-1 as a dense array (a host kernel: the coarsest level's direct solve), from the LU
    factors; the pseudo-inverse where A is singular to working precision (a pure Neumann problem
    keeps its null space down to the coarsest level)."""
    dense = _scipy(a).toarray().astype(np.result_type(a.dtype, np.float64))
    with warnings.catch_warnings():  # a singular A is handled below
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        lu, piv = scipy.linalg.lu_factor(dense, check_finite=False)
    pivots = np.abs(np.diag(lu))
    if pivots.size and pivots.min() > dense.shape[0] * np.finfo(np.float64).eps * pivots.max():
        return scipy.linalg.lu_solve((lu, piv), np.eye(dense.shape[0]), check_finite=False)
    return np.linalg.pinv(dense, hermitian=np.array_equal(dense, dense.conj().T))
