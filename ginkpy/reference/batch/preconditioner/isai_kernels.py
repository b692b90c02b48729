"""Reference kernels of the batched ISAI: gathering every item's factors from its ILU(0) values
(generation), and the apply."""
from __future__ import annotations

import numpy as np

from ginkpy.reference.components.batch_solver import item_preconditioners


def gather_factors(exec, values, positions, out):
    """out[i, t] = values[i, positions[t]], or 1 where positions[t] is -1 (L's unit diagonal)."""
    out[...] = np.where(positions >= 0, values[:, np.maximum(positions, 0)], 1)


def apply(exec, isai, b, x):
    # x_i = M_U,i (M_L,i b_i)
    for i, multiply in enumerate(item_preconditioners(isai, isai.num_batch_items)):
        x.values[i] = multiply(b.values[i])
