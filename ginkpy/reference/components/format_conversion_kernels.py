"""Reference kernel of the CSR -> COO index conversion (Ginkgo's components::convert_ptrs_to_idxs)."""
from __future__ import annotations

import numpy as np


def convert_ptrs_to_idxs(exec, ptrs, idxs) -> None:
    # idxs[p] = i for every position p of row i (ptrs[i] <= p < ptrs[i + 1])
    idxs[:] = np.repeat(np.arange(ptrs.shape[0] - 1, dtype=idxs.dtype), np.diff(ptrs))
