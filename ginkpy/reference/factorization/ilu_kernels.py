"""Reference kernel of the exact ILU(0) factorization, run on the host (``exec.host``): the
level-scheduled elimination of ``elimination.py``."""
from __future__ import annotations

from ginkpy.reference.factorization.elimination import host_matrix, ilu0, to_csr_arrays


def factorize(exec, a):
    """L and U of ILU(0) as CSR arrays (L's first): (row_ptrs, col_idxs, values) twice, then
    the rows whose zero or tiny pivots were replaced (a missing diagonal entry is added)."""
    l_factor, u_factor, shifted = ilu0(exec, host_matrix(exec, a))
    return (*to_csr_arrays(exec, l_factor, a.dtype), *to_csr_arrays(exec, u_factor, a.dtype), shifted)
