"""Isai: the incomplete sparse approximate inverse preconditioner (Ginkgo's preconditioner::Isai;
H. Anzt, T. Huckle, J. Bräckle, J. Dongarra, Incomplete sparse approximate inverses for
parallel preconditioning, Parallel Computing 71, 2018).

M ~ A^-1 (or T^-1 for a triangle T) with a fixed sparsity pattern, so applying it is one SpMV
instead of a triangular solve: what makes the factors of an incomplete factorization cheap to
apply on a GPU. Each row i of M is the solution of a small dense system: with J the columns of
row i, (M S)_ij = delta_ij for j in J gives S[J, J]^T m_i = e_i, solved by Gaussian elimination
with partial pivoting, one work-item per row on the executor. The pattern (a power of the
matrix's pattern) is formed on the host with SciPy and moved to the executor.

Types (``isai_type``): ``"lower"`` and ``"upper"`` invert the lower or upper triangle of the
system matrix (the other triangle is ignored), with the triangle's pattern; ``"general"``
inverts A with A's pattern; ``"spd"`` (for symmetric positive definite A; complex: Hermitian
positive definite) computes a lower G with A's lower pattern and G A G^H ~ I, and applies
M = G^H G (G^T G for real values). ``sparsity_power`` k uses the
pattern of the k-th power instead (more entries, a better inverse, a costlier apply).
A row of the inverse with more than ROW_LIMIT entries (a long row of A, or a high power) is
refused, unless ``excess_limit`` or ``excess_solver_factory`` is given (Ginkgo's excess system):
then those rows' systems are assembled into one sparse block-diagonal system (in chunks of at most
``excess_limit`` unknowns; 0: one) and solved on the executor by ``excess_solver_factory``
(default: the blocks' triangular solver for the lower and upper types, else block-Jacobi Gmres
to a relative residual of ``excess_solver_reduction``, default 1e-6). ``skip_sorting``
(Ginkgo's; ginkpy's Csr is always sorted) changes nothing.
``LowerIsai``, ``UpperIsai``, ``GeneralIsai`` and ``SpdIsai`` are Isai of one type, as in
Ginkgo; ``LowerIsai`` and ``UpperIsai`` are the triangular solvers of ``gk.preconditioner.Ilu``
and ``Ic`` (``with_l_solver(gk.preconditioner.LowerIsai.build())``).
"""
from __future__ import annotations

import copy
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import (EnableBuild, Factory, Parameters, as_factory, boolean, integer, number, one_of,
                                      parameters)
from ginkpy.core.base.lazy import sp
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.checks import system_csr
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.preconditioner.isai_limits import ROW_LIMIT

ISAI_TYPES = ("lower", "upper", "general", "spd")


class Isai(EnableBuild, LinOp):
    """The incomplete sparse approximate inverse M ~ A^-1 on a sparsity pattern (Ginkgo's
    ISAI): each row of M solves a small dense system, all rows in parallel on the executor;
    applying M is one SpMV. The inverse is ``approximate_inverse`` (a Csr; for spd: G, with
    M = G^H G).

    Use it where a preconditioner must apply fast on a GPU: as a cheap preconditioner of its
    own ("general", "spd") or in place of the triangular solves of Ilu/Ic ("lower", "upper":
    ``with_l_solver(gk.preconditioner.LowerIsai.build())``). The subclasses LowerIsai,
    UpperIsai, GeneralIsai and SpdIsai fix the type.

    Parameters
    ----------
    isai_type : {"general", "spd", "lower", "upper"}, default "general"
        Which inverse: of A, of an SPD A as G^H G, or of A's lower or upper triangle.
    sparsity_power : int, default 1
        M's pattern is that of |A|^sparsity_power (of the triangle for "lower"/"upper"): more
        entries, a better inverse, a costlier setup and apply.
    excess_limit : int, default 0
        Rows of the inverse with more than ROW_LIMIT entries are refused unless this or
        ``excess_solver_factory`` is given (Ginkgo's excess system): then their systems are
        assembled into one sparse block-diagonal system, in chunks of at most this many unknowns
        (0: one chunk).
    excess_solver_factory : solver factory, default None
        The excess system's solver; None: the blocks' triangular solver for "lower"/"upper",
        else block-Jacobi Gmres.
    excess_solver_reduction : float, default 1e-6
        The relative residual the default excess solver reaches.
    skip_sorting : bool, default False
        Ginkgo's: accepted; ginkpy's Csr is always sorted, it changes nothing.

    Examples
    --------
    >>> M = gk.preconditioner.Isai.build().with_isai_type("spd").with_sparsity_power(2)
    >>> solver = gk.solver.Cg.build().with_preconditioner(M).on(exec).generate(A)
    >>> x, info = gk.linalg.gmres(A, b, M="isai")
    """

    @parameters
    class Parameters(Parameters):
        isai_type: str = attrs.field(default="general", validator=one_of(*ISAI_TYPES))
        sparsity_power: int = attrs.field(default=1, validator=integer(min=1))
        skip_sorting: bool = boolean()
        excess_limit: int = attrs.field(default=0, validator=integer(min=0))
        excess_solver_factory: Any = None
        excess_solver_reduction: float = attrs.field(default=1e-6, validator=number(min=0, min_open=True))

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        name, kind = type(self).__name__, self.parameters.isai_type
        A = system_csr(system_matrix, exec, name)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        host = exec.host
        # the system matrix S and the pattern of the inverse, on the host
        system, (ptrs, cols), zero_row = host.run("preconditioner.isai.pattern", A.to_executor(host), kind,
                                                  self.parameters.sparsity_power)
        if kind in ("lower", "upper") and zero_row >= 0:
            raise ValueError(f"{name}: the diagonal entry of row {zero_row} of the {kind} triangle is zero or not "
                             f"stored, so the triangle is singular and has no inverse")
        sizes = np.diff(ptrs)
        p = self.parameters
        excess = p.excess_limit > 0 or p.excess_solver_factory is not None
        long_rows = np.flatnonzero(sizes > ROW_LIMIT)
        if long_rows.size and not excess:
            row = int(np.argmax(sizes))
            raise ValueError(f"{name}: row {row} of the approximate inverse would have {sizes[row]} entries, "
                             f"more than {ROW_LIMIT} (its dense system grows with the square): lower "
                             f"the sparsity power, solve such rows as one sparse excess system "
                             f"(with_excess_limit, with_excess_solver_factory), or use another preconditioner")
        # the rows beyond ROW_LIMIT are left empty here and solved as the excess system after
        short = sizes <= ROW_LIMIT
        short_ptrs = np.concatenate([[0], np.cumsum(np.where(short, sizes, 0))]).astype(ptrs.dtype)
        short_cols = cols[np.repeat(short, sizes)] if long_rows.size else cols
        S = Csr(exec, A.shape, *(exec.from_host(a) for a in system))
        M = Csr(exec, A.shape, exec.from_host(short_ptrs), exec.from_host(short_cols),
                exec.alloc((short_cols.size,), A.dtype))
        row = exec.run("preconditioner.isai.generate_inverse", S, M, kind == "spd")
        if row >= 0:
            raise ValueError(_failure(name, kind, row))
        if long_rows.size:
            M = self._with_excess_rows(system, ptrs, cols, M, long_rows)
        self.isai_type = kind
        self.approximate_inverse = M
        self._g_conj_transpose = M.conj_transpose() if kind == "spd" else None
        # for update(): the matrix it was generated on (not a converted copy), the system S
        self._matrix, self._system = (A if A is system_matrix else None), S
        self._transpose_of = None  # (source, transpose) of a transposed ISAI
        self._tmp: Dense | None = None

    def update(self) -> bool:
        """Follow new values of the matrix it was generated on, written in place on its pattern
        (``A.update_values``): the small systems solved again on the kept pattern of the
        inverse, into its own array (the pattern, a power of A's, is not formed again). A
        transposed ISAI (``transpose()``, the L^H solve of Ic) is transposed again from its
        source, which is updated first. Returns True: recorded launches stay valid."""
        exec, kind, name = self.executor, self.isai_type, type(self).__name__
        if self._transpose_of is not None:
            source, transpose = self._transpose_of
            fresh = source._transposed(transpose)
            self.approximate_inverse.update_values(fresh.approximate_inverse.values)
            if self._g_conj_transpose is not None:
                self._g_conj_transpose.update_values(fresh._g_conj_transpose.values)
            return True
        if self._matrix is None:
            raise NotImplementedError(f"{name} was generated on a converted copy of its matrix, which a values "
                                      f"update does not reach")
        host = exec.host
        # the system's values (A's triangle, or A), then each row of M solved again
        values, zero_row = host.run("preconditioner.isai.system_values", self._matrix.to_executor(host), kind)
        if kind in ("lower", "upper") and zero_row >= 0:
            raise ValueError(f"{name}: the diagonal entry of row {zero_row} of the {kind} triangle is zero or not "
                             f"stored, so the triangle is singular and has no inverse")
        self._system.update_values(values)
        M = self.approximate_inverse
        row = exec.run("preconditioner.isai.generate_inverse", self._system, M, kind == "spd")
        if row >= 0:
            raise ValueError(_failure(name, kind, row))
        if self._g_conj_transpose is not None:
            self._g_conj_transpose.update_values(M.conj_transpose().values)
        return True

    def _with_excess_rows(self, system: tuple, ptrs: np.ndarray, cols: np.ndarray, M: Csr,
                          long_rows: np.ndarray) -> Csr:
        """M with its rows of more than ROW_LIMIT entries computed (Ginkgo's excess system): their
        small systems S[J_i, J_i]^T m_i = e_i are assembled into one block-diagonal sparse system
        on the host (vectorized), in chunks of at most ``excess_limit`` unknowns (0: one), and
        solved on the executor by ``excess_solver_factory`` (default: the triangular solver of
        the blocks for the lower and upper types, else block-Jacobi Gmres to a relative residual
        of ``excess_solver_reduction``)."""
        exec, p, kind = self.executor, self.parameters, self.parameters.isai_type
        n, dtype = self.shape[0], self.dtype
        s = sp.csr_matrix((system[2], system[1], system[0]), shape=(n, n))
        sizes = np.diff(ptrs)
        values = np.zeros(cols.size, dtype)
        values[np.repeat(sizes <= ROW_LIMIT, sizes)] = exec.to_host(M.values)
        chunks = [long_rows]
        if p.excess_limit > 0:  # at most excess_limit unknowns a chunk (at least one row)
            ends = np.cumsum(sizes[long_rows])
            chunks = np.split(long_rows, np.flatnonzero(np.diff(ends // max(p.excess_limit, 1))) + 1)
        for rows in chunks:
            lengths = sizes[rows]
            count = int(lengths.sum())
            # the entries of these rows in M's pattern, their columns and blocks
            first = np.repeat(np.cumsum(lengths) - lengths, lengths)
            positions = np.arange(count) - first + np.repeat(ptrs[rows], lengths)
            J, block = cols[positions], np.repeat(np.arange(rows.size), lengths)
            select = sp.csr_matrix((np.ones(count), (np.arange(count), J)), shape=(count, n))
            E = (select @ s.T @ select.T).tocoo()
            within = block[E.row] == block[E.col]
            E = sp.csr_matrix((E.data[within], (E.row[within], E.col[within])), shape=(count, count))
            rhs = (J == np.repeat(rows, lengths)).astype(dtype)
            m = self._excess_solve(E, rhs)
            if kind == "spd":  # G's row scaled so that G A G^H has a unit diagonal
                d = m[rhs == 1].real
                if not (d > 0).all():
                    raise ValueError(_failure(type(self).__name__, kind, int(rows[np.argmin(d > 0)])))
                m = m / np.sqrt(np.repeat(d, lengths))
            values[positions] = m
        return Csr(exec, self.shape, exec.from_host(ptrs), exec.from_host(cols), exec.from_host(values))

    def _excess_solve(self, E, rhs: np.ndarray) -> np.ndarray:
        """The excess system E m = rhs solved on the executor (see :meth:`_with_excess_rows`)."""
        from ginkpy.core.preconditioner.jacobi import Jacobi
        from ginkpy.core.solver.gmres import Gmres
        from ginkpy.core.solver.lower_trs import LowerTrs
        from ginkpy.core.solver.upper_trs import UpperTrs
        from ginkpy.core.stop.iteration import Iteration
        from ginkpy.core.stop.residual_norm import ResidualNorm
        exec, p = self.executor, self.parameters
        factory = p.excess_solver_factory
        if factory is None:
            # (E holds the transposed blocks: a lower triangle's are upper triangular)
            factory = {"lower": UpperTrs.build(), "upper": LowerTrs.build()}.get(p.isai_type) or \
                Gmres.build().with_preconditioner(Jacobi.build().with_max_block_size(8)).with_criteria(
                    ResidualNorm.build().with_reduction_factor(p.excess_solver_reduction),
                    Iteration.build().with_max_iters(max(1000, E.shape[0])))
        solver = as_factory(factory, exec).generate(Csr.from_scipy(exec, E, self.dtype))
        b = Dense.from_numpy(exec, rhs, self.dtype)
        return solver.apply(b, Dense.zeros(exec, b.shape, self.dtype)).to_numpy()[:, 0]

    def transpose(self) -> "Isai":
        """M^T, which approximates the inverse of A^T (Ginkgo's Transposable): for the lower
        and upper types an inverse of the other triangle; spd's M = G^T G is its own transpose
        (for real values)."""
        if self._g_conj_transpose is not None and self.dtype.kind != "c":
            return self
        return self._transposed(lambda m: m.transpose())

    def conj_transpose(self) -> "Isai":
        """M^H (M^T for real values), which approximates the inverse of A^H: for the lower and
        upper types an inverse of the other triangle; spd's M = G^H G is its own conjugate
        transpose. Ic applies L^-H with it; Bicg uses it for its shadow system."""
        if self._g_conj_transpose is not None:
            return self
        return self._transposed(lambda m: m.conj_transpose())

    def _transposed(self, transpose) -> "Isai":
        out = copy.copy(self)
        out._loggers = []
        out._transpose_of, out._tmp = (self, transpose), None
        if self._g_conj_transpose is None:
            out.approximate_inverse = transpose(self.approximate_inverse)
        else:
            # M^T = G^T conj(G) = conj(G)^H conj(G): the spd form with G conjugated
            g = self.approximate_inverse.transpose().conj_transpose()
            out.approximate_inverse, out._g_conj_transpose = g, g.conj_transpose()
        out.isai_type = {"lower": "upper", "upper": "lower"}.get(self.isai_type, self.isai_type)
        return out

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if self._g_conj_transpose is None:
            # x = M b
            self.approximate_inverse.apply(b, x)
        else:
            # x = G^H (G b)
            if self._tmp is None or self._tmp.shape != b.shape:
                self._tmp = b.empty_like()  # (kept: an apply allocates nothing after the first)
            self.approximate_inverse.apply(b, self._tmp)
            self._g_conj_transpose.apply(self._tmp, x)


def _failure(name: str, kind: str, row: int) -> str:
    if kind == "spd":
        return (f"{name}: the system of row {row} is singular or gives a value that is not positive: "
                f"the matrix is not symmetric positive definite (use GeneralIsai)")
    return (f"{name}: the system of row {row} (the matrix restricted to the pattern of that row of the "
            f"inverse) is singular: try another sparsity power, or another preconditioner")


def _typed_doc(kind: str, summary: str, use: str, pattern: str, example: str) -> str:
    """The docstring of the Isai of one type."""
    return f"""{summary} (Ginkgo's ``{kind.capitalize()}Isai``):
    :class:`Isai` with ``isai_type`` "{kind}".

    Use it {use}.

    Parameters
    ----------
    sparsity_power : int, default 1
        {pattern}
    skip_sorting, excess_limit, excess_solver_factory, excess_solver_reduction
        As :class:`Isai`'s (rows beyond ROW_LIMIT entries solved as one sparse excess system).
    isai_type : "{kind}"
        Fixed.

    Examples
    --------
    {example}
    """


def _triangle_doc(kind: str, what: str, use: str, matrix: str) -> str:
    """The docstring of LowerIsai, UpperIsai or GeneralIsai."""
    name = f"{kind.capitalize()}Isai"
    return _typed_doc(kind, f"The sparse approximate inverse of {what}", f"for {use}",
                      f"The inverse's pattern is that of |{matrix}|^sparsity_power.",
                      f""">>> M = gk.preconditioner.{name}.build().with_sparsity_power(2).on(exec).generate({matrix})
    >>> x = M.apply(b, x)                       # x ~ {matrix}^-1 b""")


def _typed(kind: str) -> type:
    """The parameters of an Isai of one type (that type is the only one accepted)."""
    @parameters
    class Typed(Isai.Parameters):
        isai_type: str = attrs.field(default=kind, validator=one_of(kind))
    return Typed


class LowerIsai(Isai):
    __doc__ = _triangle_doc("lower", "a lower triangle", "the solve with L in Ilu or Ic (``with_l_solver``)", "L")
    Parameters = _typed("lower")


class UpperIsai(Isai):
    __doc__ = _triangle_doc("upper", "an upper triangle", "the solve with U in Ilu (``with_u_solver``)", "U")
    Parameters = _typed("upper")


class GeneralIsai(Isai):
    __doc__ = _triangle_doc("general", "a general matrix", "a preconditioner of its own for Gmres or Bicgstab", "A")
    Parameters = _typed("general")


class SpdIsai(Isai):
    __doc__ = _typed_doc(
        "spd", "The sparse approximate inverse of a symmetric (Hermitian) positive definite matrix,\n    "
        "M = G^H G with G ~ the inverse of A's Cholesky factor", "as Cg's preconditioner on a GPU: M is SPD, "
        "and applying it is two SpMVs", "G's pattern is that of the lower triangle of |A|^sparsity_power.",
        """>>> M = gk.preconditioner.SpdIsai.build().with_sparsity_power(2)
    >>> solver = gk.solver.Cg.build().with_preconditioner(M).on(exec).generate(A)
    >>> solver.preconditioner.approximate_inverse                    # G""")
    Parameters = _typed("spd")
