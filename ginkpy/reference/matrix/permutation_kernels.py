"""Reference kernels of Permutation."""
from __future__ import annotations

import numpy as np


def invert(exec, perm, out):
    # out[perm[i]] = i
    out[perm] = np.arange(perm.shape[0], dtype=out.dtype)
