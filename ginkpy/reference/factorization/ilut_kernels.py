"""Host kernel of Ilut: SciPy's spilu (SuperLU's ILUTP), run through ``exec.host``."""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from ginkpy.reference.factorization.elimination import host_matrix
from ginkpy.reference.factorization.sparse_lu import csr_arrays, gathers


def factorize(exec, a, drop_tol, fill_factor, drop_rule=None, ordering="colamd", pivot_threshold=None):
    """L (unit diagonal stored) and U as CSR arrays (three each) and the row and column gathers
    R, C (int32) with A[R][:, C] ~ L U; ``drop_rule``, ``ordering`` (SuperLU's permc_spec in
    lower case) and ``pivot_threshold`` as spilu's drop_rule, permc_spec, diag_pivot_thresh."""
    if drop_rule is not None:
        drop_rule = ",".join(word.strip() for word in drop_rule.split(","))
    try:
        ilu = spla.spilu(host_matrix(exec, a).tocsc(), drop_tol=drop_tol, fill_factor=fill_factor,
                         drop_rule=drop_rule, permc_spec=ordering.upper(), diag_pivot_thresh=pivot_threshold)
    except RuntimeError as err:  # SuperLU: "Factor is exactly singular"
        raise ValueError(f"Ilut: SuperLU's threshold factorization failed ({err}): a column had no pivot left "
                         f"after dropping (or the matrix is singular); another drop_tol or fill_factor may "
                         f"avoid it") from None
    rows, cols = gathers(np.arange(a.shape[0]), ilu)
    l_factor, u_factor = (tuple(x.astype(a.dtype, copy=False) if x.dtype.kind in "fc" else x for x in csr_arrays(f))
                          for f in (ilu.L, ilu.U))
    return (*l_factor, *u_factor, rows.astype(np.int32), cols.astype(np.int32))
