"""The scaling of a solve whose norms are far from 1: b and x are multiplied by a power of 2
per column (exact), so that the sums of squares in the kernels neither underflow nor
overflow; the solution and the norms are scaled back at the end."""
from __future__ import annotations

import numpy as np

# norms outside [2^-SCALE_RANGE, 2^SCALE_RANGE] make a solve run on b and x scaled by a power of 2
SCALE_RANGE = 60


def power_of_two_scale(b_norm: np.ndarray, x_norm: np.ndarray) -> np.ndarray:
    """Per column the power of 2 that brings max(||b||, ||x||) near 1 where it lies outside
    [2^-SCALE_RANGE, 2^SCALE_RANGE], else 1.

    Examples
    --------
    >>> power_of_two_scale(np.array([1e-30, 3.0]), np.zeros(2))
    array([1.2676506e+30, 1.0000000e+00])
    """
    size = np.maximum(b_norm, x_norm)
    far = (size > 0) & ((size < 2.0 ** -SCALE_RANGE) | (size > 2.0 ** SCALE_RANGE))
    exponent = np.where(far, -np.round(np.log2(np.where(size > 0, size, 1))), 0)
    return np.ldexp(1.0, exponent.astype(int))


def host_norms(exec, d) -> np.ndarray:
    """A 1 x k Dense (norms) as k float64 host values (a blocking read)."""
    return exec.to_host(d.values)[0].astype(np.float64)
