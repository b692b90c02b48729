"""The scaling of a solve whose norms are far from 1: b and x are multiplied by a power of 2
per column (exact), so that the sums of squares in the kernels neither underflow nor
overflow; the solution and the norms are scaled back at the end."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.types import real_dtype

# norms outside [2^-SCALE_RANGE, 2^SCALE_RANGE] make a solve run on b and x scaled by a power of 2
SCALE_RANGE = 60


def power_of_two_scale(b_norm: np.ndarray, x_norm: np.ndarray, dtype: Any = np.float64) -> np.ndarray:
    """Per column the power of 2 that brings max(||b||, ||x||) near 1 where it lies outside
    [2^-SCALE_RANGE, 2^SCALE_RANGE], else 1; at most the largest power of 2 of ``dtype``'s
    real type (a subnormal norm is scaled as far as that goes: 2^1023 for float64).

    Examples
    --------
    >>> power_of_two_scale(np.array([1e-30, 3.0]), np.zeros(2))
    array([1.2676506e+30, 1.0000000e+00])
    >>> power_of_two_scale(np.array([1e-310]), np.zeros(1))  # not 2^1030, which overflows
    array([8.98846567e+307])
    """
    size = np.maximum(b_norm, x_norm)
    far = (size > 0) & ((size < 2.0 ** -SCALE_RANGE) | (size > 2.0 ** SCALE_RANGE))
    exponent = np.where(far, -np.round(np.log2(np.where(size > 0, size, 1))), 0)
    limit = np.finfo(real_dtype(dtype)).maxexp - 1
    return np.ldexp(1.0, np.clip(exponent, -limit, limit).astype(int))


def host_norms(exec, d) -> np.ndarray:
    """A 1 x k Dense (norms) as k float64 host values (a blocking read)."""
    return exec.to_host(d.values)[0].astype(np.float64)
