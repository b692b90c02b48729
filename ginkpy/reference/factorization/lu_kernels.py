"""Host kernels of the sparse LU factorization (factorization.lu, run through ``exec.host``):
the numeric factorization is SuperLU's (SciPy's splu, with threshold partial pivoting), in
SuperLU's own fill-reducing ordering or on the matrix permuted by ginkpy's (sparse_lu.py).
``factorize`` keeps SuperLU's factorization as a plan; ``factors`` gives its L and U as CSR
arrays (for the executor's triangular solves); ``solve`` solves with it on the host."""
from __future__ import annotations

import numpy as np

from ginkpy.reference.factorization.sparse_lu import (SuperluPlan, solve_with, superlu, transposed_arrays,
                                                      transposed_gathers)


def factorize(exec, a, ordering, pivot_threshold):
    """The plan (SuperLU's factorization) and the row and column gathers R, C with
    A[R][:, C] = L U; ``ordering``: ginkpy's (an index array) or SuperLU's by name."""
    perm, lu = superlu(a, ordering, pivot_threshold, "Lu")
    rows, cols = transposed_gathers(perm, lu)
    return SuperluPlan(lu, perm), rows.astype(np.int32), cols.astype(np.int32)


def factors(exec, plan):
    """L (lower) and U (unit upper) of the plan as CSR arrays (three each)."""
    # L = U'^T, U = L'^T: the CSC arrays of SuperLU's factors of the transpose
    return (*transposed_arrays(plan.lu.U), *transposed_arrays(plan.lu.L))


def solve(exec, plan, b, x):
    """x = A^-1 b with the plan's factors (b, x: Dense on the host)."""
    x.values[...] = solve_with(plan, b.values)
