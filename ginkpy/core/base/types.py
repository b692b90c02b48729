"""The value types ginkpy computes in: float32, float64 and, as Ginkgo's std::complex<float>
and std::complex<double>, complex64 and complex128. Norms, thresholds and the stop state of
a solve are in the real type of its value type (float32 for complex64, float64 for complex128).

The names a factory's ``value_type`` accepts (Ginkgo's configuration names and numpy's) and
their canonical form live here too, beside the types they name."""
from __future__ import annotations

from typing import Any

import numpy as np

VALUE_TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
INDEX_DTYPE = np.dtype(np.int32)  # the index type of every sparse format, permutation and partition


def is_complex(dtype: Any) -> bool:
    """Whether ``dtype`` is a complex value type."""
    return np.dtype(dtype).kind == "c"


def real_dtype(dtype: Any) -> np.dtype:
    """The real type of a value type: itself when real, the type of the parts when complex."""
    dtype = np.dtype(dtype)
    return np.dtype(np.finfo(dtype).dtype) if dtype.kind == "c" else dtype


# accepted names -> (real precision, complex): Ginkgo's configuration names and numpy's
VALUE_TYPE_NAMES = {"float64": ("float64", False), "float32": ("float32", False), "double": ("float64", False),
                    "float": ("float32", False), "complex<float64>": ("float64", True),
                    "complex<float32>": ("float32", True), "complex128": ("float64", True),
                    "complex64": ("float32", True), "complex<double>": ("float64", True),
                    "complex<float>": ("float32", True)}
# the canonical names (Ginkgo's) of the stored parameter
CANONICAL = {("float64", False): "float64", ("float32", False): "float32", ("float64", True): "complex<float64>",
             ("float32", True): "complex<float32>"}


def value_type_name(value: Any) -> str | None:
    """The canonical value type name (Ginkgo's: ``"float64"``, ``"float32"``,
    ``"complex<float64>"``, ``"complex<float32>"``) of a name or numpy dtype; None stays None.
    The converter of every factory's ``value_type`` parameter."""
    if value is None:
        return None
    if isinstance(value, str):
        key = VALUE_TYPE_NAMES.get(value.strip())
    else:
        try:
            dtype = np.dtype(value)
        except TypeError:
            key = None
        else:
            key = VALUE_TYPE_NAMES.get(dtype.name)
    if key is None:
        raise ValueError(f"value_type {value!r} is not a value type ginkpy computes in: use 'float64', 'float32', "
                         f"'complex<float64>' or 'complex<float32>' (or numpy's float64, float32, complex128, complex64)")
    return CANONICAL[key]


def dtype_in(value_type: str, system_dtype: Any) -> np.dtype:
    """The numpy dtype of ``value_type`` (canonical) for a system of ``system_dtype``: the
    precision of the value type, complex where the system is."""
    precision, complex_ = VALUE_TYPE_NAMES[value_type]
    system = np.dtype(system_dtype)
    if complex_ and system.kind != "c":
        raise ValueError(f"value_type {value_type!r} is complex, the system {system} is real: use "
                         f"'{precision}' (a real value type) for a real system")
    return np.dtype({("float64", False): np.float64, ("float32", False): np.float32, ("float64", True): np.complex128,
                     ("float32", True): np.complex64}[(precision, system.kind == "c")])
