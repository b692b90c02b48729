"""The host operators by which gk.linalg's solver cache may key a kept solver (a SciPy sparse M,
a SuperLU or a LinearOperator around its ``solve``): held while the solver is kept, so that
their ids stay theirs, with a snapshot of a sparse matrix's arrays to see a change in place."""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.factory import Parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.bitwise import same_contents
from ginkpy.linalg._preconditioner import superlu_of


class KeptOperator:
    """A host operator a kept solver was built with (a SciPy sparse M, a SuperLU or a
    LinearOperator around its ``solve``), held so that its id names it while the solver is
    kept, with a snapshot of a sparse matrix's arrays: a later call with the same object whose
    arrays changed (``M.data[:] = ...``) builds anew (:meth:`holds` is False)."""

    def __init__(self, operator: Any) -> None:
        self.operator = operator if host_kept(operator) else None
        self.arrays = _sparse_arrays(operator) if sp.issparse(operator) else None
        if self.arrays is not None:
            self.arrays = [np.array(a, copy=True) for a in self.arrays]

    def holds(self, operator: Any) -> bool:
        if self.arrays is None:
            return True
        arrays = _sparse_arrays(operator)
        return arrays is not None and len(arrays) == len(self.arrays) and all(
            a.shape == b.shape and a.dtype == b.dtype and same_contents(a, b) for a, b in zip(arrays, self.arrays))


_SPARSE_ARRAYS = ("data", "indices", "indptr", "offsets", "row", "col", "coords")


def _sparse_arrays(M: Any) -> list | None:
    """The arrays that hold a SciPy sparse matrix (csr, csc, bsr, coo, dia), None for the
    formats held otherwise (dok, lil: not kept)."""
    if not sp.issparse(M) or M.format in ("dok", "lil"):
        return None
    arrays = []
    for name in _SPARSE_ARRAYS:
        value = getattr(M, name, None)
        if isinstance(value, tuple):
            arrays.extend(np.asarray(v) for v in value)
        elif isinstance(value, np.ndarray):
            arrays.append(value)
    return arrays


def host_kept(M: Any) -> bool:
    """Whether M is a host operator that a kept solver may be keyed on by identity: a SciPy
    sparse matrix whose arrays can be compared, or a SuperLU (its factors do not change) or a
    LinearOperator around its ``solve``."""
    if M is None or isinstance(M, (str, tuple, LinOp, Parameters)):
        return False
    if sp.issparse(M):
        return _sparse_arrays(M) is not None
    return superlu_of(M) is not None
