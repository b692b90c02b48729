"""CbGmres: Ginkgo's compressed-basis GMRES, GMRES(m) with its Krylov basis stored in a lower
precision (Aliaga, Anzt, Grützmacher, Quintana-Ortí, Tomás: "Compressed basis GMRES on
high-performance graphics processing units", 2022).

The arithmetic is the solve's value type, as in :class:`~ginkpy.core.solver.gmres.Gmres`; only
the basis vectors are rounded to the storage type when they are stored, and read back from it.
GMRES reads the whole basis twice per inner iteration, so the basis's bytes decide its speed on
large systems: float32 storage halves them, float16 quarters them. The Arnoldi relation then
holds up to the storage type's rounding, which on most systems costs few or no iterations (the
residual norm that decides convergence is the true one, in the value type). An inner iteration
is Gmres's launches (three with the product, "mgs" lagging its DGKS second pass into the next
dot products where local memory holds it): that lag's correction of w through the Arnoldi
relation is off by the storage's rounding times the pass's small coefficients.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import parameters
from ginkpy.core.solver.gmres import Gmres

# Ginkgo's cb_gmres::storage_precision names that ginkpy has: the value type itself, one step
# down (float64 -> float32, complex128 -> complex64; float32 -> float16), float16
STORAGE_PRECISIONS = ("keep", "reduce1", "reduce2")
_INTEGER = ("integer", "ireduce1", "ireduce2")


def _storage_precision(instance, attribute, value) -> None:
    if value in _INTEGER:
        raise ValueError(f"CbGmres.with_storage_precision({value!r}): Ginkgo's integer storage (scaled integers) is "
                         f"not implemented; use 'reduce2' (float16, the same bytes as 'ireduce2') or 'reduce1'")
    if not (isinstance(value, str) and value in STORAGE_PRECISIONS):
        raise ValueError(f"CbGmres.with_storage_precision({value!r}): storage_precision must be one of "
                         + ", ".join(repr(p) for p in STORAGE_PRECISIONS))


def storage_dtype(value_dtype, precision: str) -> np.dtype:
    """The numpy type a Krylov basis of ``value_dtype`` values is stored in for ``precision``
    (complex values in float16 are stored as pairs of float16: real and imaginary parts)."""
    value = np.dtype(value_dtype)
    if precision == "keep":
        return value
    if precision == "reduce1" and value.itemsize == (16 if value.kind == "c" else 8):
        return np.dtype(np.complex64 if value.kind == "c" else np.float32)
    return np.dtype(np.float16)


class CbGmres(Gmres):
    """GMRES(m) with the Krylov basis stored in reduced precision (Ginkgo's CbGmres).

    Use it instead of :class:`Gmres` for large systems where the basis's memory traffic (2 (j + 1)
    vectors per inner iteration j) dominates the time, or where the basis does not fit in
    memory. Everything else is Gmres's: right preconditioning, restarts every ``krylov_dim``
    inner iterations, each right-hand side on its own, convergence on the true residual.

    Parameters
    ----------
    krylov_dim : int, default 30
        The restart length m (``with_krylov_dim``).
    storage_precision : str, default "reduce1"
        What the basis is stored in (``with_storage_precision``, Ginkgo's names): ``"keep"`` the
        value type (as Gmres); ``"reduce1"`` one precision down (float64 -> float32, complex128 ->
        complex64; float32 and complex64 -> float16); ``"reduce2"`` float16 (complex values as
        pairs of float16), through OpenCL's ``vload_half``/``vstore_half``.
    flexible : bool, default False
        Flexible GMRES, as :class:`Gmres`'s: for a preconditioner that changes between
        applications.
    ortho_method : {"mgs", "cgs", "cgs2"}, default "mgs"
        Ginkgo's choice of Gram-Schmidt, as :class:`Gmres`'s.
    preconditioner_side : {"right", "left"}, default "right"
        M from the right (Ginkgo's) or from the left (SciPy's gmres), as :class:`Gmres`'s.
    criteria, preconditioner, default_initial_guess
        As for every iterative solver.

    Examples
    --------
    >>> solver = (gk.solver.CbGmres.build().with_storage_precision("reduce1")
    ...           .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-8))
    ...           .on(exe).generate(A))
    """

    # the Arnoldi relation holds up to the storage's rounding only: a cycle may raise the
    # residual of a stagnating solve, so the monitor keeps the best iterate
    keeps_best_iterate = True

    @parameters
    class Parameters(Gmres.Parameters):
        storage_precision: str = attrs.field(default="reduce1", validator=_storage_precision)

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        self._storage_dtype = storage_dtype(self.dtype, self.parameters.storage_precision)
        complex_half = np.dtype(self.dtype).kind == "c" and self._storage_dtype == np.float16
        self._storage_shape = (2,) if complex_half else ()
