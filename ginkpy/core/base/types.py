"""The value types ginkpy computes in: float32, float64 and, as Ginkgo's std::complex<float>
and std::complex<double>, complex64 and complex128. Norms, thresholds and the stop state of
a solve are in the real type of its value type (float32 for complex64, float64 for complex128)."""
from __future__ import annotations

from typing import Any

import numpy as np

VALUE_TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def is_complex(dtype: Any) -> bool:
    """Whether ``dtype`` is a complex value type."""
    return np.dtype(dtype).kind == "c"


def real_dtype(dtype: Any) -> np.dtype:
    """The real type of a value type: itself when real, the type of the parts when complex."""
    dtype = np.dtype(dtype)
    return np.dtype(np.finfo(dtype).dtype) if dtype.kind == "c" else dtype
