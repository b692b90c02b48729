"""Reference kernels of Coo: the triplets multiplied with scipy, in the stored order."""
from __future__ import annotations

import scipy.sparse as sp


def _scipy(a):
    """The matrix as a scipy COO matrix sharing its arrays (no copy)."""
    return sp.coo_matrix((a.values, (a.row_idxs, a.col_idxs)), shape=a.shape)


def spmv(exec, a, b, x):
    # x = A b
    x.values[...] = _scipy(a) @ b.values


def advanced_spmv(exec, alpha, a, b, beta, x):
    # x = alpha A b + beta x
    x.values[...] = alpha.values[0] * (_scipy(a) @ b.values) + beta.values[0] * x.values


def spmv2(exec, a, b, x):
    # x = x + A b
    x.values += _scipy(a) @ b.values


def advanced_spmv2(exec, alpha, a, b, x):
    # x = x + alpha A b
    x.values += alpha.values[0] * (_scipy(a) @ b.values)
