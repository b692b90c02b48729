"""The sparse matrix-matrix product C = A B of two Csr matrices (Ginkgo's Csr applied to a Csr,
``matrix.spgemm`` kernels), and the transpose that keeps where each entry came from.

The product is structural: C stores every (i, j) for which some a_ik and b_kj are stored, also
where their sum cancels (SciPy's product drops exact zeros), columns sorted in each row; so new
values of A and B on the same patterns give C's new values on C's own pattern, in place
(``out``: Ginkgo 1.11's reuse of the product's structure), with no host read. Made on the
executor: on a device a row-wise merge or dense accumulator, the rows written once at upper
bounds of their lengths and compacted (two reads: the bounds' total, the size) or, above a cap
on that scratch, counted first (one read); see ``ginkpy/opencl/matrix/spgemm_kernels.cl``.

Kept apart from csr.py, which imports it; it builds its results with the type of A.
"""
from __future__ import annotations

from typing import Any



def _checked(a: Any, b: Any) -> Any:
    """b on a's executor, after checking that A B is defined (both Csr, shapes, value types)."""
    if not (type(b) is type(a)):
        raise TypeError(f"Csr.multiply needs a gk.matrix.Csr as its right factor, not {type(b).__name__} "
                        f"(make it with gk.matrix.Csr.from_scipy, or convert with to_csr())")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"Csr.multiply: A is {a.shape[0]} x {a.shape[1]} and B {b.shape[0]} x {b.shape[1]}: "
                         f"A B needs B to have as many rows as A has columns ({a.shape[1]})")
    if a.dtype != b.dtype:
        raise TypeError(f"Csr.multiply: A holds {a.dtype} and B {b.dtype} values; convert one "
                        f"(B.astype(A.dtype)) so that both have the same value type")
    return b if b.executor is a.executor else b.clone(a.executor)


def multiply(a: Any, b: Any, out: Any = None) -> Any:
    """A B as a new Csr on A's executor (B copied there where it lives elsewhere); with ``out``
    (the result of an earlier ``multiply`` of matrices with these patterns) only its values
    are computed again, in place, and ``out`` is returned.

    Parameters
    ----------
    a, b : Csr
        The factors, m x k and k x n, of one value type.
    out : Csr, optional
        A B of earlier values on the same patterns: its arrays are kept (launches recorded with
        them stay valid) and its values overwritten.

    Returns
    -------
    Csr
        C = A B, m x n, columns sorted, structural zeros kept.
    """
    b = _checked(a, b)
    exec = a.executor
    shape = (a.shape[0], b.shape[1])
    if out is None:
        return type(a)(exec, shape, *exec.run("matrix.spgemm.spgemm", a, b))
    if out.shape != shape or out.dtype != a.dtype or out.executor is not exec:
        raise ValueError(f"Csr.multiply: out must be the {shape[0]} x {shape[1]} {a.dtype} product of an earlier "
                         f"multiply on this executor, got {out!r}")
    exec.run("matrix.spgemm.spgemm_values", a, b, out)
    out.values_written()  # (what was kept of the old product's values, e.g. a Jacobi bound)
    return out


def transpose_with_source(a: Any, conjugate: bool = False) -> tuple[Any, Any]:
    """A^T (A^H with ``conjugate``) made on A's executor, columns sorted, and the source of each
    of its entries (the index of that entry among A's, an int32 array on the executor), with
    which :func:`transpose_values` takes new values of A."""
    exec = a.executor
    row_ptrs, col_idxs, values, source = exec.run("matrix.spgemm.transpose", a, bool(conjugate))
    return type(a)(exec, (a.shape[1], a.shape[0]), row_ptrs, col_idxs, values), source


def transpose_values(a: Any, t: Any, source: Any, conjugate: bool = False) -> None:
    """t's values = those of A^T (A^H) in place, t and source from :func:`transpose_with_source` of A's pattern."""
    a.executor.run("matrix.spgemm.transpose_values", a, source, t.values, bool(conjugate))


__all__ = ["multiply", "transpose_with_source", "transpose_values"]
