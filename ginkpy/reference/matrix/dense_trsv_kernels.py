"""Reference kernels of the dense triangular solve TRSV (BLAS level 2).

``op(A)`` is A or, with ``transpose``, A^T. Only the triangle named by ``lower`` is read; with
``unit_diagonal`` the stored diagonal is not read either and taken as 1. Several right-hand
sides (the columns of an n x k Dense) are handled at once.
"""
from __future__ import annotations

import scipy.linalg


def trsv(exec, a, x, lower, transpose, unit_diagonal):
    # x = op(A)^-1 x  (x holds b on entry, as in BLAS)
    if x.values.size:
        x.values[...] = scipy.linalg.solve_triangular(a.values, x.values, trans=1 if transpose else 0,
                                                      lower=lower, unit_diagonal=unit_diagonal,
                                                      check_finite=False)
