"""Gcrotmk: GCROT(m, k) (de Sturler; Hicken and Zingg), flexible GMRES(m) cycles kept orthogonal
to a recycled space of k directions, as SciPy's ``gcrotmk``.

The solver keeps pairs (c_i, u_i) with orthonormal c_i and A u_i = c_i. Each cycle runs flexible
GMRES (Gmres's kernels through RestartedCycle) on the operator (I - C C^H) A, from r, which is
orthogonal to C: a step takes z = M v and w = A z, and before the Arnoldi step projects
w = w - C (C^H w) and z = z - U (C^H w) (so that still A z = w). Since A Z = V H holds for the
projected vectors, the cycle's least-squares problem on the device gives the correction
u = Z y (SciPy's Z y - U B y) whose product c = A u lies in span(V): it is normalized, x takes the
step gamma u along it (gamma = c^H r, as SciPy's), and (c, u) joins the recycled space, the oldest
pair leaving once k are kept (``truncate="oldest"``). The cycle's true residual r = b - A x is then
orthogonal to C up to rounding. A cycle has m steps plus one per recycled pair it lacks: m + k
in the first, m once k pairs are kept.

The projection is one dot product and two updates per recycled pair and step (modified
Gram-Schmidt through Dense's launches); the end of a cycle is one product and the kernel
``solver.gcrotmk.recycle``. Right-preconditioned, as SciPy's gcrotmk.
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import integer, one_of, parameters
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.gmres import Gmres
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.restarted_cycle import RestartedCycle


class Gcrotmk(Gmres):
    """GCROT(m, k), flexible GMRES(m) with a recycled space of k directions, for general
    (nonsymmetric, indefinite) systems: SciPy's ``gcrotmk``.

    Use it where GMRES(m) stalls after its restarts and more memory is at hand: the directions
    that reduced the residual most in earlier cycles are kept, and each cycle works orthogonally
    to them, close to what full GMRES would do with m + k vectors. Costs 2 k vectors besides
    flexible GMRES's 2 m and a projection against the k directions per step.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Gcrotmk.build()``)
    krylov_dim : int, default 20
        m, the Krylov steps of a cycle once the recycled space is full (at most n).
    recycle_dim : int, default None (m)
        k, the recycled directions kept (SciPy: 0 still keeps the last cycle's one).
    truncate : {"oldest"}, default "oldest"
        Which pair leaves the full recycled space: the oldest. (SciPy's "smallest", the ones
        the last cycle used least, needs the cycle's B matrix and an SVD on the host: not
        implemented; it raises.)
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        Iterations count the Arnoldi steps of the cycles.
    preconditioner : factory or LinOp, default None (none)
        M, applied from the right (it may change between applications: the cycle keeps M v).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"

    Examples
    --------
    >>> solver = gk.solver.Gcrotmk.build().with_krylov_dim(20).with_recycle_dim(10).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    @parameters
    class Parameters(Gmres.Parameters):
        krylov_dim: int = attrs.field(default=20, validator=integer(min=1))
        recycle_dim: int | None = attrs.field(default=None, validator=attrs.validators.optional(integer(min=0)))
        truncate: str = attrs.field(default="oldest", validator=one_of("oldest", "smallest"))

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        if self.parameters.truncate != "oldest":
            raise NotImplementedError(
                f"Gcrotmk's truncate={self.parameters.truncate!r} is not implemented (it needs the cycle's "
                f"projections B and an SVD on the host): use truncate='oldest'")
        k = self.parameters.recycle_dim
        self.recycle_dim = self.krylov_dim if k is None else int(k)
        self.slots = max(self.recycle_dim, 1)  # (SciPy keeps the last cycle's pair even with k = 0)

    def cycle_lengths(self, cycles: int) -> list[int]:
        """The steps of the first ``cycles`` cycles: m + k - (pairs kept), m + k, m + k - 1, ..., m
        (SciPy's ``maxiter`` counts cycles: ``gk.linalg.gcrotmk`` limits the steps to their sum)."""
        m, k = self.krylov_dim, self.recycle_dim
        return [m + max(k - min(c, self.slots), 0) for c in range(cycles)]

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        m, k, slots = self.krylov_dim, self.recycle_dim, self.slots
        cycle = RestartedCycle(self, monitor, m + k)
        ws = monitor.ws
        # the recycled pairs (c_i, u_i), a ring: cycle t's in slot t mod slots;  cx = A u
        pairs = [ws.vectors(f"rec_c{i}", f"rec_u{i}") for i in range(slots)]
        cx = ws.vector("cx")
        beta, cc, cr = ws.scalars("beta", "cc", "cr")
        identity = isinstance(self.preconditioner, Identity)
        monitor.start(cycle.r)
        # cycle: the cycle running (from 0); kept: the pairs it projects against (slots 0 .. kept - 1)
        state = {"cycle": -1, "kept": 0}

        def length() -> int:
            state["cycle"] += 1
            state["kept"] = min(state["cycle"], slots)
            return m + max(k - state["kept"], 0)

        def step(j: int, givens_first: bool) -> None:
            # z = M v;  w = A z
            z = self._precondition(cycle.v, cycle.z)
            if state["kept"] and identity:
                z = cycle.z.copy_from(cycle.v)  # (z is projected below: not v itself)
            A.apply(z, cycle.w)
            for c, u in pairs[:state["kept"]]:
                # beta = c_i^H w;  w = w - beta c_i;  z = z - beta u_i
                c.compute_conj_dot(cycle.w, beta)
                cycle.w.sub_scaled(beta, c)
                z.sub_scaled(beta, u)
            cycle.arnoldi(j, givens_first, z, cycle.w)

        def end_cycle(j: int) -> None:
            # the Givens step of H[:, j];  u = Z y;  cx = A u;  c = cx / ||cx||, u = u / ||cx|| into
            # this cycle's slot;  x = x + (c^H r) u (a correction that overflowed: the column
            # diverged);  r = b - A x and the next cycle's start
            cycle.rotate(j)
            u = cycle.update_into(cycle.u)
            A.apply(u, cx)
            cx.compute_conj_dot(cx, cc)
            cx.compute_conj_dot(cycle.r, cr)
            exec.run("solver.gcrotmk.recycle", cc, cr, cx, u, x, *pairs[state["cycle"] % slots], monitor.stop.status)
            monitor.residual(cycle.r)
            cycle.restart()

        cycle.restart()
        monitor.run_restarted(length, step, cycle.rotate, end_cycle,
                              step_key=lambda j: (j == 0, j % 2, state["kept"]),
                              end_key=lambda j: (j, state["cycle"] % slots))
