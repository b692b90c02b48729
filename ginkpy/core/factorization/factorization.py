"""What the incomplete factorizations share: A ~ F1 F2 as two Csr factors, applied as a product.

As Ginkgo's factorizations (a Composition of the factors), the object is a LinOp:
``apply(b, x)`` computes x = F1 (F2 b). The preconditioners Ilu and Ic solve with the factors.

What keeps them from failing where an incomplete factorization exists, shared by all:

- a diagonal entry A does not store is added as a zero before factorizing (Ginkgo's
  add_diagonal_elements: :func:`with_diagonal`);
- an LU pivot u_ii that is zero or tiny, |u_ii| <= :func:`pivot_floor` ||a_i||_1 (a_i the
  row of A), is replaced by that floor with its sign (PETSc's nonzero shift; Saad's ILUT
  replaces a zero pivot the same way), and one ``logging`` line says how many were
  (:func:`report_floored_pivots`);
- an incomplete Cholesky that breaks down (a pivot not positive) on a matrix with a positive
  diagonal is retried on A + alpha diag(A), alpha = 1e-3, 2e-3, 4e-3, ... (Manteuffel's
  shifted incomplete Cholesky), which succeeds at the latest once the shifted matrix is
  diagonally dominant (:func:`shifted_cholesky`); a diagonal entry that is not positive is a
  matrix that is not symmetric positive definite, which no incomplete Cholesky suits.
"""
from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, boolean, csr_strategy, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.checks import system_csr
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.permutation import Permutation
from ginkpy.core.solver.triangular import carry_jacobi_facts


def with_pattern_power(A: Csr, power: int) -> Csr:
    """A on the pattern of |A|^power (zeros where A has none), computed on the host (SciPy's
    sparse product); A itself for power 1."""
    if power == 1:
        return A
    exec, host = A.executor, A.executor.host
    arrays = host.run("components.sparsity.power_pattern", A.to_executor(host), power)
    return Csr(exec, A.shape, *(exec.from_host(a) for a in arrays))


def like(factor: Csr) -> Csr:
    """A Csr with ``factor``'s pattern (shared) and new, uninitialized values."""
    return Csr(factor.executor, factor.shape, factor.row_ptrs, factor.col_idxs,
               factor.executor.alloc((factor.nnz,), factor.dtype))


def row_indices(factor: Csr):
    """The row of every stored entry (COO row indices), on the factor's executor."""
    rows = factor.executor.alloc((factor.nnz,), INDEX_DTYPE)
    factor.executor.run("components.format_conversion.convert_ptrs_to_idxs", factor.row_ptrs, rows)
    return rows


SHIFT_START = 1e-3  # the first diagonal shift alpha of a broken-down incomplete Cholesky


class EliminationTooCostly(ValueError):
    """An exact incomplete factorization refused because eliminating the pattern costs far more
    than the factors' entries (dense rows or blocks); the fixed-point factorizations still work."""


def pivot_floor(dtype) -> float:
    """The size, relative to its row's 1-norm ||a_i||_1, below which a pivot counts as zero and
    is replaced: sqrt(eps) of the value type (1.5e-8 in float64, 3.5e-4 in float32). On
    circuit matrices whose ILU(0) meets exact zero pivots, replacements from 1e-8 to 1e-4 of
    the row norm converged alike, 1e-3 and more slowed GMRES down, 1e-12 made it stagnate."""
    return float(np.sqrt(np.finfo(real_dtype(dtype)).eps))


def with_diagonal(A: Csr) -> Csr:
    """A with a zero stored on every diagonal position it lacks (Ginkgo's add_diagonal_elements)."""
    return Csr(A.executor, A.shape, *A.executor.run("factorization.factorization.add_diagonal_elements", A))


def pivot_floors(A: Csr) -> Dense:
    """floor_i = pivot_floor ||a_i||_1 for every row of A, on A's executor (n x 1, real)."""
    floors = Dense.empty(A.executor, (A.shape[0], 1), real_dtype(A.dtype))
    A.executor.run("factorization.factorization.pivot_floors", A, pivot_floor(A.dtype), floors)
    return floors


def report_floored_pivots(name: str, count: int, first: int, dtype) -> None:
    """The one ``logging`` line of a factorization whose zero or tiny pivots were replaced."""
    if count:
        logging.getLogger("ginkpy").warning(
            "%s: %d zero or tiny pivot%s (the first in row %d) replaced by %.1e times the row's 1-norm, "
            "as PETSc's nonzero shift does", name, count, "" if count == 1 else "s", first, pivot_floor(dtype))


def shifted_cholesky(name: str, A: Csr, attempt: Callable[[float], tuple]) -> tuple:
    """``attempt(alpha)`` (the factors of A + alpha diag(A), or None and the row that broke
    down) at alpha = 0, then, where it breaks down, at alpha = SHIFT_START, twice that, ...
    (Manteuffel) until it succeeds, with one ``logging`` line; a diagonal entry that is not
    positive raises a ValueError (A is not symmetric positive definite)."""
    factors, row = attempt(0.0)
    if factors is not None:
        return factors
    host = A.executor.host
    nonpositive, bound = host.run("factorization.factorization.cholesky_shift_bound", A.to_executor(host))
    if nonpositive >= 0:
        raise ValueError(f"{name}: the diagonal entry of row {nonpositive} is not positive (or not stored), so the "
                         f"matrix is not symmetric positive definite and has no incomplete Cholesky factorization; "
                         f"use an incomplete LU (gk.preconditioner.Ilu, M='ilu')")
    alpha = SHIFT_START
    while True:
        factors, _ = attempt(alpha)
        if factors is not None:
            logging.getLogger("ginkpy").warning(
                "%s broke down (the pivot of row %d was not positive); factorized A + %.3g diag(A) instead "
                "(Manteuffel's shifted incomplete Cholesky)", name, row, alpha)
            return factors
        if alpha > 2 * bound + 1:  # A + alpha diag(A) is diagonally dominant: only rounding is left
            raise ValueError(f"{name} breaks down even on A + {alpha:.3g} diag(A), which is diagonally dominant: "
                             f"the matrix has entries that overflow {np.dtype(A.dtype)}; scale it")
        alpha *= 2


def change_norms(new: Csr, old: Csr) -> tuple:
    """(||new||, ||new - old||) over the values of two factors of one pattern (Frobenius norms),
    as arrays on the executor (enqueued, not read): how much a sweep changed a factor, read
    with :func:`relative_of`."""
    exec = new.executor
    a, b = (Dense(exec, f.values.reshape(f.nnz, 1)) for f in (new, old))
    difference = a.clone().sub_scaled(1.0, b)
    return a.compute_norm2().values, difference.compute_norm2().values


def relative_of(new_norm, change) -> float:
    """||new - old|| / ||new|| from the host copies of :func:`change_norms`' arrays (0 for a
    zero factor)."""
    new_norm, change = (float(np.asarray(v).ravel()[0]) for v in (new_norm, change))
    return change / new_norm if new_norm else 0.0


def check_pivots(factor: Csr, lower: bool, name: str) -> None:
    """Refuse factors with a zero or non-finite pivot (naming the first such row) or overflowed
    values (the pivots' floors keep every pivot nonzero, so only overflow is left)."""
    row = factor.executor.run("factorization.factorization.find_invalid_pivot", factor, lower)
    if row >= 0 or not factor.is_finite():
        _refuse(factor, name, row)


def refuse_invalid(factor: Csr, name: str, checks) -> None:
    """:func:`check_pivots` from the host copy of the ``check_factor`` kernel's checks of
    ``factor`` (first invalid pivot row, first row not finite, ...; n where none)."""
    n = factor.shape[0]
    if int(checks[0]) < n or int(checks[1]) < n:
        _refuse(factor, name, int(checks[0]) if int(checks[0]) < n else -1)


def _refuse(factor: Csr, name: str, row: int) -> None:
    where = f"the pivot of row {row} is not finite" if row >= 0 else "the factors are not finite"
    raise ValueError(f"{name} breaks down: {where}: the factors overflow {np.dtype(factor.dtype)}; scale the "
                     f"matrix (e.g. to a unit diagonal){', or use float64' if factor.dtype.itemsize < 8 else ''}")


# Ginkgo's factorize algorithms of the exact ILU(0) / IC(0): whose kernels compute the same factors
FACTORIZE_ALGORITHMS = ("sparselib", "syncfree")


class Factorization(EnableBuild, LinOp):
    """Base of the factorizations: ``generate(A)`` converts A to Csr (from another sparse
    format) and keeps the two factors that :meth:`_factorize` computes.

    ``factors`` is the pair (F1, F2) with A ~ F1 F2, or, where the factorization permutes
    (Lu, Ilut), A[R][:, C] ~ F1 F2 with ``row_permutation`` R and ``column_permutation`` C
    (gk.matrix.Permutation; None where it does not). F1 is ``l_factor`` (lower triangular), F2
    ``u_factor`` (upper triangular); a Cholesky-type factorization (``symmetric``: A ~ L L^H)
    also names F2 ``lt_factor``, as Ginkgo's. Not used itself: see ``gk.factorization``.

    Parameters
    ----------
    skip_sorting : bool, default False
        Ginkgo's (ginkpy's Csr is always sorted): accepted for its configurations, it changes
        nothing.
    l_strategy, u_strategy : str, default None
        Ginkgo's SpMV strategy of each factor (ginkpy's backend chooses its own): accepted for
        its configurations, they change nothing.

    Examples
    --------
    >>> ilu = gk.factorization.Ilu.build().on(exec).generate(A)
    >>> L, U = ilu.l_factor, ilu.u_factor
    >>> x = ilu.apply(b, x)                     # x = L (U b)
    """

    symmetric = False  # A ~ L L^H: the second factor is L's conjugate transpose (lt_factor)

    @parameters
    class Parameters(Parameters):
        """Ginkgo's ``skip_sorting`` (ginkpy's Csr is always sorted) and ``l_strategy`` /
        ``u_strategy`` (the factors' SpMV strategy, which ginkpy's backend chooses): accepted
        for Ginkgo's configurations, they change nothing."""

        skip_sorting: bool = boolean()
        l_strategy: str | None = csr_strategy()
        u_strategy: str | None = csr_strategy()

    # whether the factors' pattern follows from A's alone (ILU(0), IC(0)): then update() can
    # write new factors into the same arrays; a threshold or pivoting one chooses it from values
    pattern_from_matrix = False

    # whether _factorize works on a host copy of A (the direct factorizations): A is then
    # copied and checked there, without a check on the executor first
    factorizes_on_host = False

    # whether _factorize refuses values of A that are not finite itself (ParIlu: such a value
    # makes a factor's value not finite, which the factors' check reads anyway, and A's check
    # then names the cause): __init__ does not check them first (one read less)
    checks_finite_itself = False

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = system_csr(system_matrix, exec.host if self.factorizes_on_host else exec, type(self).__name__,
                       finite=not self.checks_finite_itself)
        exec.check_dtype(A.dtype)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        self.row_permutation: Permutation | None = None
        self.column_permutation: Permutation | None = None
        self._matrix = A if A is system_matrix else None  # (for update(): not a converted copy)
        self._factors = self._factorize(A)

    @classmethod
    def from_factors(cls, l_factor: Csr, u_factor: Csr, row_permutation: Permutation | None = None,
                     column_permutation: Permutation | None = None) -> "Factorization":
        """A factorization of factors computed elsewhere (Ginkgo's ``create_from_composition``):
        A ~ L U, or A[R][:, C] ~ L U with ``row_permutation`` R and ``column_permutation`` C
        (both or neither), on L's executor. Preconditioners take it as their matrix
        (``gk.preconditioner.Ilu.build().on(exec).generate(fact)`` solves with L and U there);
        it follows no matrix, so :meth:`update` raises.

        Parameters
        ----------
        l_factor, u_factor : Csr
            The lower and the upper triangular factor (n x n, one value type).
        row_permutation, column_permutation : Permutation, optional
            R and C: row i of L U approximates row R[i] of A with its columns taken in C's order.

        Examples
        --------
        >>> lu = scipy.sparse.linalg.spilu(S)                # SciPy's Pr S Pc ~ L U
        >>> L, U = (gk.matrix.Csr.from_scipy(exec, F) for F in (lu.L, lu.U))
        >>> R, C = (gk.matrix.Permutation.from_numpy(exec, np.argsort(p)) for p in (lu.perm_r, lu.perm_c))
        >>> fact = gk.factorization.Ilu.from_factors(L, U, R, C)
        >>> M = gk.preconditioner.Ilu.build().on(exec).generate(fact)
        """
        if (row_permutation is None) != (column_permutation is None):
            raise ValueError("give both permutations (A[R][:, C] ~ L U) or neither")
        n = l_factor.shape[0]
        if l_factor.shape != (n, n) or u_factor.shape != (n, n):
            raise ValueError(f"the factors must be square and of one size, got {l_factor.shape} and {u_factor.shape}")
        if l_factor.dtype != u_factor.dtype:
            raise TypeError(f"the factors have different value types ({l_factor.dtype}, {u_factor.dtype})")
        exec = l_factor.executor
        out = cls.__new__(cls)
        EnableBuild.__init__(out, cls.build().on(exec))
        LinOp.__init__(out, exec, (n, n), l_factor.dtype)
        out._matrix = None
        out._factors = (l_factor, u_factor.to_executor(exec))
        for p, what in ((row_permutation, "row"), (column_permutation, "column")):
            if p is not None and p.size != n:
                raise ValueError(f"the {what} permutation has {p.size} indices, the factors {n} rows")
        out.row_permutation = None if row_permutation is None else row_permutation.to_executor(exec)
        out.column_permutation = None if column_permutation is None else column_permutation.to_executor(exec)
        return out

    def _factorize(self, A: Csr) -> tuple[Csr, Csr] | None:
        """The two factors, or None where they are made only when asked (:meth:`_deferred_factors`)."""
        raise NotImplementedError

    def _deferred_factors(self) -> tuple[Csr, Csr]:
        raise NotImplementedError

    @property
    def factors(self) -> tuple[Csr, Csr]:
        """The two factors (F1, F2) on the executor (made on first use where the factorization
        can solve without them: gk.factorization.Lu on the host)."""
        if self._factors is None:
            self._factors = self._deferred_factors()
        return self._factors

    def update(self) -> None:
        """Factorize again after new values of the matrix it was generated on (written in place
        on its pattern: ``A.update_values``), the factors' values written into their own arrays
        (their patterns, and the triangular solves prepared on them, kept). For the
        factorizations whose pattern is A's (ILU(0), IC(0), exact or by sweeps); the others
        (threshold, pivoting) raise NotImplementedError: generate them anew."""
        name = type(self).__name__
        if not self.pattern_from_matrix:
            raise NotImplementedError(f"{name} chooses its factors' pattern from the values: generate it anew")
        if self._matrix is None:
            raise NotImplementedError(f"{name} was generated on a converted copy of its matrix, which a values "
                                      f"update does not reach")
        new = self._factorize(self._matrix)
        if any(f.nnz != old.nnz for f, old in zip(new, self.factors)):
            raise NotImplementedError(f"{name}: the new factors have another pattern: generate it anew")
        for f, old in zip(new, self.factors):
            old.update_values(f.values)
            carry_jacobi_facts(f, old)  # (what ParIlu read of the new factors holds for their copy)

    def _permuted(self, arrays: tuple, rows, cols=None) -> tuple[Csr, Csr]:
        """The factors from the host kernel's CSR ``arrays``, moved to the executor, with the
        row permutation ``rows`` and the column permutation ``cols`` (``rows`` where None: a
        symmetric ordering) kept as gk.matrix.Permutation."""
        self._set_permutations(rows, cols)
        return moved_factors(self.executor, self.shape, tuple(arrays))

    def _set_permutations(self, rows, cols=None) -> None:
        """Keep the host gathers ``rows`` and ``cols`` (``rows`` where None) as the row and
        column permutations, on the executor."""
        exec = self.executor
        self.row_permutation = Permutation(exec, exec.from_host(rows))
        self.column_permutation = self.row_permutation if cols is None else Permutation(exec, exec.from_host(cols))

    @property
    def l_factor(self) -> Csr:
        """L, the lower triangular factor."""
        return self.factors[0]

    @property
    def u_factor(self) -> Csr:
        """U, the upper triangular factor (L^H where the factorization is symmetric)."""
        return self.factors[1]

    @property
    def lt_factor(self) -> Csr:
        """L^H, the second factor of a symmetric (Cholesky-type) factorization."""
        if not self.symmetric:
            raise AttributeError(f"{type(self).__name__} factors A ~ L U: its factors are l_factor and u_factor "
                                 f"(lt_factor, L^H, is the second factor of Ic, ParIc, ParIct and Cholesky)")
        return self.factors[1]

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        first, second = self.factors
        tmp = b.empty_like()
        if self.row_permutation is None:
            # x = F1 (F2 b)
            second.apply(b, tmp)
            first.apply(tmp, x)
            return
        # x = R^T F1 F2 C b  (A[R][:, C] = F1 F2)
        self.column_permutation.apply(b, tmp)
        second.apply(tmp, x)
        first.apply(x, tmp)
        self.row_permutation.compute_inverse().apply(tmp, x)


def moved_factors(exec: Executor, shape: tuple[int, int], arrays: tuple) -> tuple[Csr, Csr]:
    """The two factors from the host kernels' CSR arrays (the first's three, then the
    second's), moved to ``exec``."""
    if exec.same_memory(exec.host):
        return tuple(Csr(exec.host, shape, *arrays[i:i + 3]) for i in (0, 3))
    # (uploaded straight from the kernel's arrays: no copy on the host first)
    return tuple(Csr(exec, shape, *(exec.from_host(a) for a in arrays[i:i + 3])) for i in (0, 3))
