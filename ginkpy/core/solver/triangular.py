"""What LowerTrs and UpperTrs share: a triangular solve x = T^-1 b as a LinOp.

The system matrix is a Dense or a sparse matrix (other formats are converted to Csr). Only its
lower (LowerTrs) or upper (UpperTrs) triangle is used: entries of the other triangle are
ignored, so the full matrix A may be given to solve with its triangular part. ``generate()``
prepares the solve once and refuses a zero or missing diagonal entry unless ``unit_diagonal``
says the diagonal is 1 (the stored one is then ignored).

``algorithm`` (Ginkgo's trisolve algorithm parameter) chooses how a sparse triangle is solved:

- ``"sparselib"`` (default; ``"syncfree"``, Ginkgo's other exact algorithm, is the same here):
  exact substitution; on OpenCL by level scheduling (the rows of one level in parallel, levels
  in order; the level structure is analysed at generate()).
- ``"jacobi"``: ``num_jacobi_sweeps`` Jacobi sweeps x <- D^-1 (b - N x) from x = 0 (D the
  diagonal, N the strict triangle): an approximate solve of fixed cost, each sweep one fused
  SpMV over all rows at once (the first two together, x_2 = D^-1 (b - N D^-1 b), or three
  where no row's strict neighbours hold more than FUSED_WORK entries, each row recomputing the
  second sweep at its neighbours: s sweeps are s - 1 or s - 2 launches), with no host read per
  apply. Exact once the sweeps reach the
  triangle's level count; as the triangular solver of an ILU preconditioner a few sweeps
  usually do (Ginkgo's Ir with Jacobi on the factors). :func:`contraction_bound` q bounds the
  error of s sweeps by q^s (max-norm), which Ilu's default decides the count by on a GPU.

``num_rhs`` (Ginkgo's hint of the right-hand sides to prepare for) is accepted for its
configurations; ginkpy sizes its work per apply.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.checks import check_finite, check_system_matrix
from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, integer, one_of, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense

FUSED_WORK = 64  # the first three Jacobi sweeps run in one launch where no row reads more entries than this
ALGORITHMS = ("sparselib", "syncfree", "jacobi")  # "syncfree" (Ginkgo's): exact substitution, as "sparselib"


def _check_bool(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{attribute.name} must be True or False, not {value!r}")


def triangular_doc(lower: bool) -> str:
    """The docstring of LowerTrs (``lower``) or UpperTrs."""
    name, other, way, T = ("LowerTrs", "UpperTrs", "Forward", "L") if lower else ("UpperTrs", "LowerTrs", "Backward", "U")
    triangle, ignored, scipy = ("lower", "above", "tril") if lower else ("upper", "below", "triu")
    return f"""{way} substitution: solves {T} x = b with the {triangle} triangle {T} of its system matrix
    (entries {ignored} the diagonal are ignored): Ginkgo's ``solver::{name}``, SciPy's
    ``spsolve_triangular(lower={lower})``.

    Use it to apply the {T} factor of a factorization (Ilu and Ic preconditioners do), or as a
    Gauss-Seidel sweep; {other} solves with the other triangle. ``apply(b, x)`` overwrites x
    (there are no stopping criteria).

    Parameters
    ----------
    unit_diagonal, algorithm, num_jacobi_sweeps, num_rhs
        As :class:`TriangularSolver`'s: the diagonal taken as ones (default False);
        "sparselib" (exact, the default) or "jacobi" (approximate sweeps); the number of
        those sweeps (default 3); Ginkgo's hint of the right-hand sides (accepted, unused).

    Examples
    --------
    >>> {T} = gk.matrix.Csr.from_scipy(exec, scipy.sparse.{scipy}(S))
    >>> trs = gk.solver.{name}.build().with_unit_diagonal(False).on(exec).generate({T})
    >>> x = trs.apply(b, x)                     # x = {T}^-1 b
    """


class TriangularSolver(EnableBuild, LinOp):
    """Base of LowerTrs and UpperTrs (sparse triangular solves); ``lower`` says which triangle is
    solved. Not used itself.

    ``apply(b, x)`` overwrites x with the solution (its initial contents are not used: there
    are no stopping criteria). A zero or missing diagonal entry is a ValueError at generate
    (unless ``unit_diagonal``).

    Parameters
    ----------
    unit_diagonal : bool, default False
        Take the diagonal as ones (the stored diagonal, if any, is ignored): the L of an ILU.
    algorithm : {"sparselib", "syncfree", "jacobi"}, default "sparselib"
        "sparselib": exact substitution (level-scheduled on a GPU, in row order on a CPU
        device); "syncfree" (Ginkgo's name): the same exact substitution; "jacobi":
        ``num_jacobi_sweeps`` sweeps x = D^-1 (b - N x), an approximation that is fully
        parallel (Ginkgo's approximate triangular solve).
    num_jacobi_sweeps : int, default 3
        Sweeps of the "jacobi" algorithm.
    num_rhs : int, default 1
        Ginkgo's hint of the right-hand sides to prepare for: accepted for its configurations;
        ginkpy sizes its work per apply.

    Examples
    --------
    >>> trs = gk.solver.LowerTrs.build().with_algorithm("jacobi").on(exec).generate(L)
    >>> x = trs.apply(b, x)
    >>> ilu = gk.preconditioner.Ilu.build().with_l_solver(gk.solver.LowerTrs.build().with_algorithm("jacobi"))
    """

    lower: bool = True

    @parameters
    class Parameters(Parameters):
        unit_diagonal: bool = attrs.field(default=False, validator=_check_bool)
        algorithm: str = attrs.field(default="sparselib", validator=one_of(*ALGORITHMS))
        num_jacobi_sweeps: int = attrs.field(default=3, validator=integer(min=1))
        # Ginkgo's hint of the right-hand sides to prepare for: ginkpy sizes its work per apply
        num_rhs: int = attrs.field(default=1, validator=integer(min=1))

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = check_system_matrix(system_matrix, exec, finite=False)  # (finite: checked below)
        if not isinstance(A, (Csr, Dense)) and hasattr(A, "to_csr"):
            A = A.to_csr()  # Coo, Ell, Sellp, Hybrid
        self._follows = A is system_matrix  # (a converted copy does not see a values update)
        if not isinstance(A, (Csr, Dense)):
            raise TypeError(f"{type(self).__name__} solves with a sparse matrix (converted to Csr) or a Dense, "
                            f"not {type(A).__name__}")
        LinOp.__init__(self, exec, A.shape, A.dtype)
        self.system_matrix = A
        self.unit_diagonal = bool(self.parameters.unit_diagonal)
        self.jacobi = self.parameters.algorithm == "jacobi" and isinstance(A, Csr)
        self._three_in_one = False
        if self.jacobi:
            zero_row = self._generate_jacobi(A)
        else:
            check_finite(A)
            # analyse the triangle once (level structure on OpenCL)
            self.plan, zero_row = exec.run("solver.triangular.generate", A, self.lower, self.unit_diagonal)
        self._check_diagonal(zero_row)
        self._work: Dense | None = None

    def _generate_jacobi(self, A: Csr) -> int:
        """D^-1 of the Jacobi sweeps into ``self.plan``, after the triangle's checks (values
        finite, diagonal nonzero) from its :func:`jacobi_facts` (kept where Ilu's choice of
        sweeps computed them: then no read); the first row with a zero diagonal, -1 if none."""
        self.plan = Dense.empty(A.executor, (A.shape[0], 1), A.dtype)
        facts, zero_row = self._inverse_diagonal(A)
        # the first three sweeps in one launch where a row's neighbours' rows are short
        self._three_in_one = self.parameters.num_jacobi_sweeps >= 3 and zero_row < 0 and facts.work <= FUSED_WORK
        return zero_row

    def _inverse_diagonal(self, A: Csr) -> tuple[JacobiFacts, int]:
        """D^-1 into ``self.plan`` after the triangle's checks from its :func:`jacobi_facts`
        (kept with A's values where Ilu or ParIlu read them: then no read): the facts and the
        first row with a zero diagonal, -1 if none."""
        exec = A.executor
        facts, = jacobi_facts((A, self.lower, self.unit_diagonal))
        if facts.valid:
            # D^-1, the inverse diagonal of the triangle (known nonzero)
            exec.run("solver.triangular.jacobi_inverse_diagonal", A, self.unit_diagonal, self.plan)
            return facts, -1
        check_finite(A)  # the first offence, named
        return facts, exec.run("solver.triangular.jacobi_generate", A, self.unit_diagonal, self.plan)

    def _check_diagonal(self, zero_row: int) -> None:
        if zero_row >= 0:
            raise ValueError(f"{type(self).__name__}: the diagonal entry of row {zero_row} is zero or not stored, "
                             f"so the triangular system is singular; if the diagonal is implicitly 1, "
                             f"build with .with_unit_diagonal(True)")

    def update(self) -> bool:
        """Follow new values of the triangle written in place on its pattern
        (``T.update_values``): the prepared solve recomputed into its own arrays, its level
        structure kept (the inverse diagonal of the Jacobi sweeps, the scaled triangle on the
        host, the level-ordered values on a GPU). Returns True: launches recorded with this
        solver stay valid."""
        A, exec = self.system_matrix, self.executor
        if not self._follows:
            raise NotImplementedError(f"{type(self).__name__} was generated on a converted copy of its matrix, "
                                      f"which a values update does not reach")
        if isinstance(A, Dense):
            return True  # (read as it is at every solve)
        if self.jacobi:
            _, zero_row = self._inverse_diagonal(A)
        else:
            zero_row = exec.run("solver.triangular.update", self.plan, A, self.lower, self.unit_diagonal)
        self._check_diagonal(zero_row)
        return True

    _of_triangle: dict = {}  # LowerTrs and UpperTrs by their ``lower``

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if TriangularSolver in cls.__bases__:
            TriangularSolver._of_triangle[cls.lower] = cls

    @classmethod
    def transposed_type(cls) -> type:
        """The solver of the other triangle (UpperTrs for LowerTrs and back)."""
        return TriangularSolver._of_triangle[not cls.lower]

    def transpose(self, system_transpose: LinOp | None = None) -> "TriangularSolver":
        """The solver of T^T, with the same parameters (Ginkgo's Transposable): UpperTrs for a
        LowerTrs. ``system_transpose`` is T^T where the caller has it (else it is formed)."""
        A_t = self.system_matrix.transpose() if system_transpose is None else system_transpose
        return self._solver_of(A_t)

    def conj_transpose(self, system_conj_transpose: LinOp | None = None) -> "TriangularSolver":
        """The solver of T^H (T^T for real values), with the same parameters: UpperTrs for a
        LowerTrs. ``system_conj_transpose`` is T^H where the caller has it (else it is formed)."""
        A_h = self.system_matrix.conj_transpose() if system_conj_transpose is None else system_conj_transpose
        return self._solver_of(A_h)

    def _solver_of(self, other_triangle: LinOp) -> "TriangularSolver":
        params = self.transposed_type().Parameters(**attrs.asdict(self.parameters, recurse=False))
        return params.on(self.executor).generate(other_triangle)

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        A = self.system_matrix
        if isinstance(A, Dense):
            # x = T^-1 b by blocked dense substitution (x holds b on entry)
            x.copy_from(b)
            self.executor.run("matrix.dense_trsv.trsv", A, x, self.lower, False, self.unit_diagonal)
        elif self.jacobi:
            self._jacobi(b, x)
        else:
            # x = T^-1 b by substitution, levels in order
            self.executor.run("solver.triangular.solve", self.plan, b, x)

    def _jacobi(self, b: Dense, x: Dense) -> None:
        sweeps = self.parameters.num_jacobi_sweeps
        exec = self.executor
        if sweeps == 1:
            # x = D^-1 b (one sweep from x = 0)
            exec.run("solver.triangular.jacobi_initialize", self.plan, b, x)
            return
        first = 3 if self._three_in_one else 2  # sweeps of the first launch
        if sweeps > first and (self._work is None or self._work.shape != x.shape):
            self._work = x.empty_like()
        # the sweeps alternate between x and the work vector and end in x
        current, other = (x, self._work) if (sweeps - first) % 2 == 0 else (self._work, x)
        if first == 3:
            # x_3 = D^-1 (b - N D^-1 (b - N D^-1 b)) (the first three sweeps from x = 0, one launch)
            exec.run("solver.triangular.jacobi_three_sweeps", self.system_matrix, self.lower, self.plan, b, current)
        else:
            # x_2 = D^-1 (b - N D^-1 b) (the first two sweeps from x = 0, one launch)
            exec.run("solver.triangular.jacobi_two_sweeps", self.system_matrix, self.lower, self.plan, b, current)
        for _ in range(sweeps - first):
            # x_{s+1} = D^-1 (b - N x_s)
            exec.run("solver.triangular.jacobi_sweep", self.system_matrix, self.lower, self.plan, b, current, other)
            current, other = other, current


def contraction_bound(T: Csr, lower: bool, unit_diagonal: bool = False) -> float:
    """q = max_i |t_ii|^-1 sum_{j in N_i} |t_ij| for the triangle T (N_i: the columns of row i
    left of the diagonal with ``lower``, else right of it; t_ii = 1 with ``unit_diagonal``): the
    max-norm of D^-1 N, so that s Jacobi sweeps from 0 solve T x = b with an error of at most
    q^s ||x||_inf. inf where a diagonal entry is zero or not stored, or a value not finite. One
    launch and one read of the work-groups' maxima on a device, kept with T's values
    (:func:`jacobi_facts`)."""
    return jacobi_facts((T, lower, unit_diagonal))[0].bound


@attrs.frozen
class JacobiFacts:
    """What the Jacobi sweeps of a triangle need to know of it: ``bound`` (q of
    :func:`contraction_bound`), ``work`` (the most entries a row of the three sweeps in one
    launch reads: sum_{j in N_i} the entries of row j) and ``valid`` (every diagonal entry
    nonzero, or taken as 1, and every value finite)."""

    bound: float
    work: int
    valid: bool


_FACTS_PREFIX = "solver.triangular.jacobi_facts."


def _facts_key(lower: bool, unit_diagonal: bool) -> str:
    # (in Csr.cache, not a "pattern." key: a values update drops it)
    return f"{_FACTS_PREFIX}{int(bool(lower))}{int(bool(unit_diagonal))}"


def ilu_triangles(first: Csr, second: Csr) -> tuple[tuple[Csr, bool, bool], ...]:
    """The (T, lower, unit_diagonal) of an ILU's factors as their Jacobi sweeps see them: the
    lower factor and the upper one, each with its stored diagonal (what Ilu's choice of sweeps
    and ParIlu's carried facts, :func:`enqueue_jacobi_facts`, both name)."""
    return (first, True, False), (second, False, False)


def enqueue_jacobi_facts(*triangles: tuple[Csr, bool, bool]) -> list:
    """The device arrays (one launch each) whose host copies :func:`keep_jacobi_facts` turns
    into each triangle's :class:`JacobiFacts`: for a caller that reads them with its own, in
    one read."""
    return [T.executor.run("solver.triangular.jacobi_bound", T, lower, unit) for T, lower, unit in triangles]


def keep_jacobi_facts(triangle: tuple[Csr, bool, bool], maxima: Any) -> JacobiFacts:
    """The :class:`JacobiFacts` of (T, lower, unit_diagonal) from the host copy of its
    ``jacobi_bound`` array (:func:`enqueue_jacobi_facts`), kept in ``T.cache`` with T's values."""
    T, lower, unit = triangle
    q, work, bad = np.asarray(maxima, np.float64).reshape(-1, 3).max(axis=0)
    facts = T.cache[_facts_key(lower, unit)] = JacobiFacts(np.inf if bad else float(q), int(work), not bad)
    return facts


def carry_jacobi_facts(source: Csr, target: Csr) -> None:
    """Keep ``source``'s :class:`JacobiFacts` with ``target`` too, once ``target`` holds the same
    pattern and values (a factorization's update copies new factors' values into the old ones)."""
    target.cache.update({key: facts for key, facts in source.cache.items() if key.startswith(_FACTS_PREFIX)})


def jacobi_facts(*triangles: tuple[Csr, bool, bool]) -> list[JacobiFacts]:
    """The :class:`JacobiFacts` of each (T, lower, unit_diagonal), computed once per T's values
    (kept in ``T.cache``): one launch for each not known yet and one read for them all, so
    that Ilu's choice of sweeps and the solvers it then makes on the same factors share them
    (ParIlu reads its factors' facts with its last check: :func:`enqueue_jacobi_facts`)."""
    keys = [_facts_key(lower, unit) for _, lower, unit in triangles]
    todo = [i for i, ((T, _, _), key) in enumerate(zip(triangles, keys)) if key not in T.cache]
    by_executor: dict[int, list] = {}
    for i in todo:
        by_executor.setdefault(id(triangles[i][0].executor), []).append(i)
    for numbers in by_executor.values():
        exec = triangles[numbers[0]][0].executor
        read = exec.to_host(*enqueue_jacobi_facts(*(triangles[i] for i in numbers)))
        for i, maxima in zip(numbers, read if len(numbers) > 1 else (read,)):
            keep_jacobi_facts(triangles[i], maxima)
    return [T.cache[key] for (T, _, _), key in zip(triangles, keys)]
