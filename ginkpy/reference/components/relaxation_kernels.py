"""Reference kernels of the relaxation steps shared by Chebyshev and Multigrid's smoother.

A step is x_new = x + d with the update d = alpha d + beta D^-1 (b - A x) (d as before the step
where it is kept, 0 otherwise): weighted Jacobi with alpha = 0, a Chebyshev step otherwise.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _scipy(a):
    return sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)


def invert_diagonal(exec, a, inv_diag) -> int:
    """inv_diag = 1 / a_ii (an n x 1 Dense); returns the first row whose diagonal entry is zero or
    not stored (its inverse is then 0), or -1 where there is none."""
    diag = _scipy(a).diagonal()
    zero = diag == 0
    inv_diag.values[:, 0] = np.where(zero, 0, 1 / np.where(zero, 1, diag))
    return int(np.argmax(zero)) if zero.any() else -1


def relax_first(exec, beta, inv_diag, b, x, d):
    """The first step from x = 0: x = beta D^-1 b, and d = x where d is kept (not None)."""
    x.values[...] = beta * (inv_diag.values * b.values)
    if d is not None:
        d.values[...] = x.values


def residual(exec, a, b, x, r):
    """r = b - A x."""
    r.values[...] = b.values - _scipy(a) @ x.values


def relax(exec, alpha, beta, a, inv_diag, b, x, d, x_new):
    """d = alpha d + beta D^-1 (b - A x) (only the second term where d is None or alpha is 0,
    so that d need not be initialized then); x_new = x + d."""
    update = beta * (inv_diag.values * (b.values - _scipy(a) @ x.values))
    if d is not None:
        if alpha != 0:
            update = alpha * d.values + update
        d.values[...] = update
    x_new.values[...] = x.values + update


def add_running(exec, update, x, status):
    """x = x + update in the columns still running (status 0); stopped columns stay as they are."""
    x.values[:, status == 0] += update.values[:, status == 0]


def gershgorin_bound(exec, a, inv_diag) -> float:
    """max over rows i of |inv_diag_i| sum_j |a_ij|: Gershgorin's bound on the eigenvalues of
    D^-1 A (of A with inv_diag all ones); 0 for a matrix without entries."""
    abs_a = sp.csr_matrix((np.abs(a.values), a.col_idxs, a.row_ptrs), shape=a.shape)
    sums = np.asarray(abs_a.sum(axis=1)).ravel()
    return float(np.max(np.abs(inv_diag.values[:, 0]) * sums, initial=0))


def jacobi_setup(exec, a, inv_diag):
    """The setup of weighted Jacobi without a host read: inv_diag = 1 / a_ii (0 where the
    diagonal entry is zero or not stored); returns two arrays of the executor: the first row
    whose diagonal entry is zero or not stored (n where there is none), and partial bounds whose
    largest is Gershgorin's bound max_i |inv_diag_i| sum_j |a_ij| (0 for a matrix without
    entries)."""
    zero_row = invert_diagonal(exec, a, inv_diag)
    return (np.array([a.shape[0] if zero_row < 0 else zero_row], dtype=np.int32),
            np.array([gershgorin_bound(exec, a, inv_diag)], dtype=np.finfo(a.dtype).dtype))
