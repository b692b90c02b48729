"""Jacobi: the block-diagonal preconditioner M = D^-1, D the (block) diagonal of A.

Generated on the executor throughout: scalar Jacobi inverts the diagonal in one kernel;
block-Jacobi finds its blocks with Ginkgo's supervariable agglomeration and inverts every
diagonal block (Gauss-Jordan with partial pivoting, each block's condition number kept as
Ginkgo's ``conditioning``) in kernels, with one read of the block count and one of the
singular-block report. Apply is a kernel there; the Krylov solvers apply scalar Jacobi inside
their own kernels (``inverse_diagonal``).
"""
from __future__ import annotations

import copy
import logging
from typing import Any, Callable

import attrs
import numpy as np

from ginkpy.core.base.checks import check_system_matrix
from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, boolean, integer, number, parameters
from ginkpy.core.base.lazy import sp
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense, overwrite

MAX_BLOCK_SIZE = 32


# the single precision of each double precision value type: block storage in reduced precision
SINGLE = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.complex64)}


def _storage_optimization(value: Any) -> str | None:
    """``storage_optimization`` as None (full precision), "float32" (single precision blocks of a
    double precision Jacobi) or "autodetect" (single where the blocks' conditioning allows);
    Ginkgo's precision_reduction pair [preserving, non-preserving] is [0, 0] for none, any
    other for single precision (ginkpy's one reduced precision)."""
    if value is None or value in ("float32", "autodetect"):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 2 and \
            all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in value):
        return None if tuple(value) == (0, 0) else "float32"
    raise ValueError(f"Jacobi.with_storage_optimization({value!r}): use None, 'float32', 'autodetect' or "
                     f"Ginkgo's precision_reduction pair [preserving, non-preserving] of integers >= 0")


class Jacobi(EnableBuild, LinOp):
    """(Block-)Jacobi preconditioner: x = D^-1 b with D the diagonal (blocks) of A (Ginkgo's
    ``preconditioner::Jacobi``).

    The cheapest preconditioner: scalar Jacobi (``max_block_size`` 1) is fused into the solver
    kernels of Cg, Bicgstab and Chebyshev; block-Jacobi helps where A has small dense blocks
    (several unknowns per mesh node). Try Ilu/Ic or Multigrid where it is too weak.

    Parameters
    ----------
    max_block_size : int, default 32
        1: scalar Jacobi. 2 to 32: block-Jacobi with Ginkgo's supervariable agglomeration:
        consecutive rows with the same sparsity pattern form a supervariable (of at most
        ``max_block_size`` rows), and neighbouring supervariables merge while the block stays
        within ``max_block_size`` rows.
    block_pointers : array of int, default None
        Row offsets 0 = p_0 < p_1 < ... < p_m = n of the blocks, instead of the agglomeration.

    storage_optimization : {None, "float32", "autodetect"}, default None
        Ginkgo's adaptive precision, for block-Jacobi of a float64 or complex128 matrix:
        "float32" keeps the inverse blocks in single precision, halving what an apply reads,
        and applies them in the matrix's precision; "autodetect" does so where every block's
        condition number times float32's epsilon is below ``accuracy``, else keeps full
        precision (Ginkgo chooses per block; ginkpy for the whole preconditioner). Ginkgo's
        precision_reduction pairs ([0, 1], [1, 0], ...) mean "float32", [0, 0] none.
    accuracy : float, default 0.1
        The bound of "autodetect" (above).
    aggregate_l1 : bool, default False
        Ginkgo's L1 Jacobi, a smoother that converges where plain Jacobi need not: the blocks
        of A + diag(sum of |a_ij| over the row's entries outside its block) instead of A's.
    max_block_stride, skip_sorting
        Ginkgo's (its GPU storage layout; sorting): accepted for its configurations, they
        change nothing.

    Notes
    -----
    Scalar Jacobi replaces a diagonal entry that is zero (or too small to invert) by 1, with a
    warning through ``logging``, as PETSc's PCJACOBI does (circuit matrices have a few). For
    block-Jacobi, each diagonal block is equilibrated and inverted with partial pivoting on the
    executor; a block singular to working precision (a reciprocal condition number of the
    equilibrated block below the value type's epsilon) raises a ValueError naming it.
    :attr:`conditioning` gives each block's condition number |D_i|_1 |D_i^-1|_1.

    Examples
    --------
    >>> exe = gk.ReferenceExecutor()
    >>> A = gk.matrix.Csr.from_scipy(exe, ginkpy.problems.poisson_2d(10))
    >>> M = gk.preconditioner.Jacobi.build().with_max_block_size(8).on(exe).generate(A)
    >>> M.num_blocks, M.conditioning.max() < 10
    (13, True)
    >>> M32 = gk.preconditioner.Jacobi.build().with_storage_optimization("float32").on(exe).generate(A)
    """

    @parameters
    class Parameters(Parameters):
        max_block_size: int = attrs.field(default=MAX_BLOCK_SIZE, validator=integer(min=1, max=MAX_BLOCK_SIZE))
        block_pointers: Any = None
        storage_optimization: str | None = attrs.field(default=None, converter=_storage_optimization)
        accuracy: float = attrs.field(default=0.1, validator=number(min=0, min_open=True))
        aggregate_l1: bool = boolean()
        max_block_stride: int = attrs.field(default=0, validator=integer(min=0))
        skip_sorting: bool = boolean()

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        self.cache: dict[str, Any] = {}  # what a backend derives once for its apply
        max_block_size = int(self.parameters.max_block_size)
        if max_block_size == 1 and self.parameters.block_pointers is None:
            self._generate_scalar(exec, system_matrix)
            return
        A = _csr(system_matrix, exec)
        self._matrix = A if A is system_matrix else None  # (a converted copy does not follow a values update)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        if self.parameters.block_pointers is None:
            block_ptrs, stride = exec.run("preconditioner.jacobi.find_blocks", A, max_block_size)
        else:
            pointers = _check_block_pointers(self.parameters.block_pointers, A.shape[0], max_block_size)
            block_ptrs, stride = exec.from_host(pointers), int(np.diff(pointers).max(initial=1))
        if self.parameters.aggregate_l1:
            A = _aggregated_l1(A, exec.to_host(block_ptrs))
        # D_i^-1 for each diagonal block D_i, padded to the largest block (layout: reference kernels)
        keep_blocks(self, exec.run("preconditioner.jacobi.generate", A, block_ptrs, stride), block_ptrs, stride,
                    _singular_message)
        self._reduce_storage()

    def _reduce_storage(self) -> None:
        """Blocks of a float64 (complex128) block-Jacobi kept in float32 (complex64) where
        ``storage_optimization`` asks for it ("autodetect": where every block's condition number
        times float32's epsilon is below ``accuracy``); the apply reads them into the value type."""
        option, single = self.parameters.storage_optimization, SINGLE.get(self.dtype)
        if option is None or single is None or self._is_scalar:
            return
        if option == "autodetect" and float(self.conditioning.max(initial=1.0)) * np.finfo(np.float32).eps \
                > self.parameters.accuracy:
            return
        shape = self.blocks.shape
        self.blocks = Dense(self.executor, self.blocks.reshape(-1, 1)).astype(single).values.reshape(shape)

    @classmethod
    def from_inverse_diagonal(cls, exec, inverse_diagonal: Any) -> "Jacobi":
        """Scalar Jacobi with its D^-1 given: x = d .* b for ``inverse_diagonal`` d (n values),
        without a matrix to invert; Cg, Bicgstab and Chebyshev fuse it into their kernels as
        they fuse the Jacobi of a matrix (``inverse_diagonal``).

        Use it where the diagonal preconditioner is at hand already, as SciPy's
        ``M=scipy.sparse.diags(1 / A.diagonal())`` (``gk.linalg`` takes such an M this way).
        It follows no matrix: :meth:`update` raises (make a new one).

        Parameters
        ----------
        exec : Executor
            Where it applies.
        inverse_diagonal : array of n values, or an n x 1 Dense
            What each row is multiplied by (M's diagonal), finite.

        Examples
        --------
        >>> M = gk.preconditioner.Jacobi.from_inverse_diagonal(exec, 1 / S.diagonal())
        >>> solver = gk.solver.Cg.build().with_preconditioner(M).with_criteria(...).on(exec).generate(A)
        """
        if isinstance(inverse_diagonal, Dense):
            values = inverse_diagonal.to_executor(exec) if inverse_diagonal.executor is not exec else inverse_diagonal
            if values.shape[1] != 1:
                raise ValueError(f"inverse_diagonal must be n x 1, got {values.shape}")
            values = values.clone()
        else:
            d = np.asarray(inverse_diagonal)
            if d.ndim != 1:
                raise ValueError(f"inverse_diagonal must be a 1-D array of n values, got shape {d.shape}")
            if not np.isfinite(d).all():
                raise ValueError("inverse_diagonal contains NaN or Inf values")
            values = Dense.from_numpy(exec, np.ascontiguousarray(d).reshape(-1, 1), exec.check_dtype(
                np.promote_types(d.dtype, np.float32) if d.dtype.kind in "fc" else np.float64))
        out = cls.__new__(cls)
        EnableBuild.__init__(out, cls.build().with_max_block_size(1).on(exec))
        LinOp.__init__(out, exec, (values.shape[0], values.shape[0]), values.dtype)
        out.cache = {}
        out._matrix = None  # (no matrix: a values update cannot reach it)
        out.block_stride = 1
        out.block_ptrs = out.row_blocks = None
        out.blocks = values.values
        out._conditioning = None
        return out

    def _generate_scalar(self, exec, system_matrix: LinOp) -> None:
        """D^-1 of scalar Jacobi, on the executor."""
        A = _csr(system_matrix, exec)
        self._matrix = A if A is system_matrix else None  # (a converted copy does not follow a values update)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        if self.parameters.aggregate_l1:
            A = _aggregated_l1(A, np.arange(A.shape[0] + 1))
        inverse = Dense.empty(exec, (A.shape[0], 1), A.dtype)
        self._invert_diagonal(A, inverse)
        self.block_stride = 1
        self.block_ptrs = self.row_blocks = None
        self.blocks = inverse.values
        self._conditioning = None

    def _invert_diagonal(self, A: Csr, inverse: Dense) -> None:
        """inverse = D^-1 (a diagonal entry too small to invert replaced by 1, with a warning)."""
        exec = self.executor
        replaced = exec.run("preconditioner.jacobi.invert_diagonal", A, inverse)
        if replaced:
            d = exec.to_host(A.extract_diagonal().values)[:, 0]
            with np.errstate(divide="ignore", over="ignore"):
                first = int(np.flatnonzero(~np.isfinite(1 / d))[0])
            logging.getLogger("ginkpy").warning(
                "Jacobi: %d diagonal entr%s of the matrix %s zero or too small to invert (the first in row %d); "
                "replaced by 1, as PETSc's PCJACOBI does", replaced, "y" if replaced == 1 else "ies",
                "is" if replaced == 1 else "are", first)

    def update(self) -> bool:
        """Follow new values of the matrix it was generated on (written in place on the same
        pattern: ``A.update_values``): D^-1 recomputed into the same arrays, the block
        structure (the blocks found at generation, or block_pointers) kept. Returns True: the
        launches recorded with this preconditioner stay valid. A matrix converted at generation
        (a Dense, another format) is a copy that does not follow: NotImplementedError (generate
        the preconditioner anew)."""
        A, exec = self._matrix, self.executor
        if A is None:
            raise NotImplementedError("Jacobi was generated on a converted copy of its matrix (not a Csr) or made "
                                      "from a given diagonal, which a values update does not reach: generate it anew")
        if self._is_scalar:
            self._invert_diagonal(A, Dense(exec, self.blocks.reshape(self.shape[0], 1)))
            return True
        blocks, _, conditioning, bad = exec.run("preconditioner.jacobi.generate", A, self.block_ptrs,
                                                self.block_stride)
        first, count = (int(v) for v in exec.to_host(bad))
        if count:
            raise ValueError(_singular_message(exec.to_host(self.block_ptrs), first, count))
        overwrite(exec, self.blocks, blocks)
        overwrite(exec, self._conditioning, conditioning)
        self.cache.clear()  # (what a backend derived from the old blocks)
        return True

    @property
    def num_blocks(self) -> int:
        """Number of diagonal blocks."""
        return self.shape[0] if self.block_ptrs is None else int(self.block_ptrs.shape[0]) - 1

    @property
    def conditioning(self) -> np.ndarray:
        """Each diagonal block's condition number |D_i|_1 |D_i^-1|_1 (Ginkgo's
        ``get_conditioning()``; 1 for every row of scalar Jacobi), a host copy."""
        if self._conditioning is None:
            return np.ones(self.shape[0], dtype=real_dtype(self.dtype))
        return self.executor.to_host(self._conditioning)

    @property
    def block_pointers(self) -> np.ndarray:
        """First row of each block, then n (a host copy)."""
        if self.block_ptrs is None:
            return np.arange(self.shape[0] + 1, dtype=INDEX_DTYPE)
        return self.executor.to_host(self.block_ptrs)

    def transpose(self) -> "Jacobi":
        """The Jacobi preconditioner of A^T: each inverse block transposed (once, through the
        host; scalar Jacobi is its own transpose)."""
        return self._transposed(conjugate=False)

    def conj_transpose(self) -> "Jacobi":
        """The Jacobi preconditioner of A^H: each inverse block conjugate-transposed (once,
        through the host; the transpose for real values). Bicg uses it for its shadow system."""
        return self._transposed(conjugate=self.dtype.kind == "c")

    def _transposed(self, conjugate: bool) -> "Jacobi":
        if self._is_scalar and not conjugate:
            return self
        out = copy.copy(self)
        out._loggers = []
        out.cache = {}
        out._matrix = None  # (the blocks of A^T: no values update)
        blocks = self.executor.to_host(self.blocks)
        blocks = blocks.conj() if self._is_scalar else blocks.swapaxes(1, 2).conj() if conjugate else blocks.swapaxes(1, 2)
        out.blocks = self.executor.from_host(np.ascontiguousarray(blocks))
        return out

    @property
    def inverse_diagonal(self) -> Dense | None:
        """D^-1 as an n x 1 Dense for scalar Jacobi (solvers apply it inside their own kernels),
        None for block-Jacobi."""
        if not self._is_scalar:
            return None
        return Dense(self.executor, self.blocks.reshape(self.shape[0], 1))

    @property
    def _is_scalar(self) -> bool:
        return self.block_stride <= 1

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        # x = D^-1 b
        if self._is_scalar:
            self.executor.run("preconditioner.jacobi.simple_scalar_apply", self, b, x)
        else:
            self.executor.run("preconditioner.jacobi.simple_apply", self, b, x)

    def _apply_advanced_impl(self, alpha: Dense, b: Dense, beta: Dense, x: Dense) -> None:
        # x = alpha D^-1 b + beta x
        if self._is_scalar:
            self.executor.run("preconditioner.jacobi.scalar_apply", alpha, self, b, beta, x)
        else:
            self.executor.run("preconditioner.jacobi.apply", alpha, self, b, beta, x)


def keep_blocks(jacobi: Any, generated: tuple, block_ptrs: Any, stride: int,
                singular_message: Callable[[np.ndarray, int, int], str]) -> None:
    """Give ``jacobi`` (a Jacobi or a batch Jacobi) the blocks its generate kernel made,
    (blocks, row_blocks, conditioning, [first singular block, how many]), after one read of the
    singular-block report: a singular block is a ValueError, ``singular_message(block_ptrs,
    first, count)``."""
    blocks, row_blocks, conditioning, bad = generated
    exec = jacobi.executor
    first, count = (int(v) for v in exec.to_host(bad))
    if count:
        raise ValueError(singular_message(exec.to_host(block_ptrs), first, count))
    jacobi.block_stride = stride
    jacobi.block_ptrs, jacobi.row_blocks, jacobi.blocks = block_ptrs, row_blocks, blocks
    jacobi._conditioning = conditioning


def _aggregated_l1(A: Csr, block_ptrs: np.ndarray) -> Csr:
    """A + diag(r), r_i the sum of |a_ij| over row i's entries outside its diagonal block (the
    blocks given by their pointers): Ginkgo's aggregate_l1, formed on the host, vectorized."""
    S = A.to_scipy().tocoo()
    block = np.repeat(np.arange(block_ptrs.size - 1), np.diff(block_ptrs))
    outside = block[S.row] != block[S.col]
    sums = np.bincount(S.row[outside], weights=np.abs(S.data[outside]), minlength=A.shape[0])
    return Csr.from_scipy(A.executor, S.tocsr() + sp.diags(sums.astype(real_dtype(A.dtype))), A.dtype)


def _csr(A: Any, exec) -> Csr:
    """A as a checked Csr on ``exec``: square, finite, of a supported value type."""
    if isinstance(A, LinOp) and not isinstance(A, (Csr, Dense)):
        if not hasattr(A, "to_csr"):
            raise TypeError(f"Jacobi needs a matrix (gk.matrix.Csr, Dense or a format with to_csr()), "
                            f"not {type(A).__name__}")
        A = A.to_csr()
    A = check_system_matrix(A, exec, "matrix of the Jacobi preconditioner")
    return Csr.from_dense(A) if isinstance(A, Dense) else A


def _check_block_pointers(value: Any, n: int, max_block_size: int) -> np.ndarray:
    ptrs = np.asarray(value)
    if ptrs.ndim != 1 or ptrs.dtype.kind not in "iu" or ptrs.size < 1 + (n > 0):
        raise ValueError(f"block_pointers must be a 1-D sequence of integer row offsets "
                         f"[0, p_1, ..., {n}], got {value!r}")
    sizes = np.diff(ptrs)
    if ptrs[0] != 0 or ptrs[-1] != n or (sizes <= 0).any():
        raise ValueError(f"block_pointers must rise strictly from 0 to the number of rows {n}, got {value!r}")
    if (sizes > max_block_size).any():
        i = int(np.argmax(sizes > max_block_size))
        raise ValueError(f"block {i} (rows {ptrs[i]} to {ptrs[i + 1] - 1}) has {sizes[i]} rows, more than "
                         f"max_block_size {max_block_size}: raise max_block_size (at most {MAX_BLOCK_SIZE}) "
                         f"or split the block")
    return ptrs.astype(INDEX_DTYPE)


def _singular_message(block_ptrs: np.ndarray, first: int, count: int) -> str:
    start, end = int(block_ptrs[first]), int(block_ptrs[first + 1])
    more = f" (and {count - 1} more blocks)" if count > 1 else ""
    if end - start == 1:
        return (f"Jacobi: the diagonal entry of row {start} is zero{more}, so it cannot be inverted: "
                f"use block-Jacobi (a larger max_block_size) so that the row joins a block, "
                f"or another preconditioner")
    return (f"Jacobi: diagonal block {first} (rows {start} to {end - 1}) is singular to working precision{more}: "
            f"choose other block_pointers or max_block_size, or another preconditioner")
