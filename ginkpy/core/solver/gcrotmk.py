"""Gcrotmk: GCROT(m, k) (de Sturler; Hicken and Zingg), flexible GMRES(m) cycles kept orthogonal
to a recycled space of k directions, as SciPy's ``gcrotmk``.

The solver keeps pairs (c_i, u_i) with orthonormal c_i and A u_i = c_i. Each cycle runs flexible
GMRES (Gmres's kernels through RestartedCycle) on the operator (I - C C^H) A, from r, which is
orthogonal to C: a step takes z = M v and w = A z, and before the Arnoldi step projects
w = w - C (C^H w) and z = z - U (C^H w) (so that still A z = w). Since A Z = V H holds for the
projected vectors, the cycle's least-squares problem on the device gives the correction
u = Z y (SciPy's Z y - U B y) whose product c = A u lies in span(V): it is normalized, x takes the
step gamma u along it (gamma = c^H r, as SciPy's), and (c, u) joins the recycled space, the
oldest pair leaving once k are kept (``truncate="oldest"``), or the k pairs replaced by the
k - 1 combinations the cycle used most (``"smallest"``: an SVD of B R^-1 on the host once a
cycle). The cycle's true residual r = b - A x is then orthogonal to C up to rounding. A cycle
has m steps plus one per recycled pair it lacks: m + k in the first, m once k pairs are kept.
``set_recycled_space`` / ``recycled_space`` carry the pairs from one solve to the next
(SciPy's ``CU``).

The projection is one dot product and two updates per recycled pair and step (modified
Gram-Schmidt through Dense's launches); the end of a cycle is one product and the kernel
``solver.gcrotmk.recycle``. Right-preconditioned, as SciPy's gcrotmk.
"""
from __future__ import annotations

import attrs
import numpy as np
import scipy.linalg

from ginkpy.core.base.factory import integer, one_of, parameters
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.gmres import Gmres
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.restarted_cycle import RestartedCycle, ring_order, seed_pair


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
    truncate : {"oldest", "smallest"}, default "oldest"
        How the full recycled space makes room: drop the oldest pair, or keep the k - 1
        combinations the last cycle used most (SciPy's "smallest": an SVD of a k x m matrix per
        column on the host at the end of each cycle, so that its solve reads the device once a
        cycle and each step keeps its projections).
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        Iterations count the Arnoldi steps of the cycles.
    preconditioner : factory or LinOp, default None (none)
        M, applied from the right (it may change between applications: the cycle keeps M v).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
    flexible, ortho_method, preconditioner_side
        Gmres's, accepted for its configurations: the cycles are always flexible (M from the
        right: ``preconditioner_side="left"`` is refused), and orthogonalize as Gmres's.

    Examples
    --------
    >>> solver = gk.solver.Gcrotmk.build().with_krylov_dim(20).with_recycle_dim(10).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    _sides = ("right",)  # (flexible cycles)

    @parameters
    class Parameters(Gmres.Parameters):
        krylov_dim: int = attrs.field(default=20, validator=integer(min=1))
        recycle_dim: int | None = attrs.field(default=None, validator=attrs.validators.optional(integer(min=0)))
        truncate: str = attrs.field(default="oldest", validator=one_of("oldest", "smallest"))

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        k = self.parameters.recycle_dim
        self.recycle_dim = self.krylov_dim if k is None else int(k)
        self.slots = max(self.recycle_dim, 1)  # (SciPy keeps the last cycle's pair even with k = 0)

    def cycle_lengths(self, cycles: int) -> list[int]:
        """The steps of the first ``cycles`` cycles: m + k - (pairs kept), m + k, m + k - 1, ..., m
        (SciPy's ``maxiter`` counts cycles: ``gk.linalg.gcrotmk`` limits the steps to their sum)."""
        m, k = self.krylov_dim, self.recycle_dim
        return [m + max(k - min(c, self.slots), 0) for c in range(cycles)]

    def _solve(self, monitor: IterationMonitor) -> None:
        A, x = self.system_matrix, monitor.x
        m, k, slots = self.krylov_dim, self.recycle_dim, self.slots
        cycle = RestartedCycle(self, monitor, m + k)
        ws = monitor.ws
        # the recycled pairs (c_i, u_i), a ring: cycle t's in slot t mod slots;  cx = A u
        pairs = [ws.vectors(f"rec_c{i}", f"rec_u{i}") for i in range(slots)]
        cx = ws.vector("cx")
        beta, cc, cr = ws.scalars("beta", "cc", "cr")
        # truncate="smallest" (k >= 2): the projections beta_ij = c_i^H w of each step j and its
        # ||v_j|| kept for the host's SVD at the end of the cycle
        smallest = self.parameters.truncate == "smallest" and k >= 2
        betas = [[ws.scalars(f"beta{i}_{j}")[0] for j in range(m + k)] for i in range(slots)] if smallest else None
        norms = [ws.scalars(f"nrm{j}")[0] for j in range(m + k)] if smallest else None
        monitor.start(cycle.r)
        seeded = self._take_seed(pairs, cycle, beta)
        # cycle: the cycle running (from 0, given pairs counting as cycles before); kept: the pairs it
        # projects against (slots 0 .. kept - 1)
        state = {"cycle": seeded - 1, "kept": 0}

        def length() -> int:
            state["cycle"] += 1
            state["kept"] = min(state["cycle"], slots)
            return m + max(k - state["kept"], 0)

        def step(j: int, givens_first: bool) -> None:
            # z = M v;  w = A z
            z = self._precondition(cycle.v, cycle.z)
            if state["kept"] and isinstance(self.preconditioner, Identity):
                z = cycle.z.copy_from(cycle.v)  # (z is projected below: not v itself)
            A.apply(z, cycle.w)
            # (each kept pair in turn)  beta = c_i^H w;  w = w - beta c_i;  z = z - beta u_i
            self._project(pairs[:state["kept"]], [b[j] for b in betas] if smallest else None, beta, z, cycle.w)
            cycle.arnoldi(j, givens_first, z, cycle.w)
            if smallest:
                norms[j].copy_from(cycle.nrm)

        def end_cycle(j: int) -> None:
            # the Givens step of H[:, j];  u = Z y;  cx = A u;  c = cx / ||cx||, u = u / ||cx|| into
            # this cycle's slot;  x = x + (c^H r) u (a correction that overflowed: the column
            # diverged);  r = b - A x and the next cycle's start
            cycle.rotate(j)
            u = cycle.correction(cx, cc, cr)
            if smallest:
                slot = min(state["cycle"], slots - 1)
                if state["kept"] == slots:
                    self._keep_largest(pairs, betas, norms, cycle, beta)
            else:
                slot = state["cycle"] % slots
            cycle.keep(cc, cr, cx, u, x, *pairs[slot])
            monitor.residual(cycle.r)
            cycle.restart()

        cycle.restart()
        monitor.run_restarted(length, step, cycle.rotate, end_cycle,
                              step_key=lambda j: (j == 0, j % 2, state["kept"], j if smallest else None),
                              end_key=lambda j: (j, state["cycle"] % slots, state["kept"]))
        # the pairs kept, oldest first (for recycled_space)
        order = range(min(state["cycle"] + 1, slots)) if smallest else ring_order(state["cycle"], slots)
        self._recycled = [pairs[i] for i in order]

    @staticmethod
    def _project(pairs, betas, beta, z, w) -> None:
        """For each pair (c_i, u_i) in turn (modified Gram-Schmidt): beta_i = c_i^H w;
        w = w - beta_i c_i;  z = z - beta_i u_i (beta_i into ``betas[i]`` where given, else ``beta``)."""
        for i, (c, u) in enumerate(pairs):
            b = beta if betas is None else betas[i]
            c.compute_conj_dot(w, b)
            w.sub_scaled(b, c)
            z.sub_scaled(b, u)

    def set_recycled_space(self, U, C=None) -> None:
        """Start the next apply from the recycled pairs (c_i, u_i) of an earlier solve with the
        same matrix (SciPy's ``CU``): the columns of U (n x s, the same for every right-hand
        side), and of C = A U where given (else computed). They are made orthonormal as SciPy's
        (QR with column pivoting of C, U = U P R^-1, dropping the columns after the first with
        |r_jj| < 1e-12 |r_00|), the first k kept, and x0 first takes the step U C^H r0."""
        self._seed = seed_pair("set_recycled_space", ("U", "C"), U, C, self.system_matrix.global_shape[0])

    def recycled_space(self) -> tuple[np.ndarray, np.ndarray]:
        """(C, U): the recycled pairs after the last apply, as the columns of two n x s arrays
        (those of the first right-hand side): C orthonormal, A U = C; oldest first, as far as the
        host knows (cycles it enqueued after the column converged leave the pairs as they were)."""
        pairs = getattr(self, "_recycled", [])
        n = self.system_matrix.global_shape[0]
        if not pairs:
            return np.zeros((n, 0), self.dtype), np.zeros((n, 0), self.dtype)
        return tuple(np.stack([pair[i].to_numpy()[:, 0] for pair in pairs], axis=1) for i in (0, 1))

    def _take_seed(self, pairs, cycle, beta) -> int:
        """The pairs of set_recycled_space into slots 0, 1, ... (C = A U computed on the device
        where not given; orthonormalized on the host, once a solve), and x0's step along them
        (beta = c_i^H r;  x = x + beta u_i;  r = r - beta c_i); how many."""
        seed, self._seed = getattr(self, "_seed", None), None
        if seed is None or seed[0].shape[1] == 0:
            return 0
        U, C = seed
        exec, A, k = self.executor, self.system_matrix, cycle.r.shape[1]
        if C is None:  # c_i = A u_i
            C = np.empty(U.shape, self.dtype)
            for i in range(U.shape[1]):
                exec.write(cycle.u.values, np.repeat(U[:, i:i + 1].astype(self.dtype), k, axis=1))
                A.apply(cycle.u, cycle.w)
                C[:, i] = cycle.w.to_numpy()[:, 0]
        Q, R, P = scipy.linalg.qr(C.astype(self.dtype), mode="economic", pivoting=True)
        kept = []
        for j in range(min(R.shape[1], len(pairs))):
            if abs(R[j, j]) < 1e-12 * abs(R[0, 0]) or not np.isfinite(R[j, j]):
                break  # (dependent on the ones before: dropped with the rest)
            # u_j = (u_P[j] - sum_{i<j} r_ij u_new_i) / r_jj
            u = U[:, P[j]].astype(self.dtype) - sum((R[i, j] * kept[i] for i in range(j)), np.zeros(U.shape[0]))
            kept.append(u / R[j, j])
        for j, u in enumerate(kept):
            exec.write(pairs[j][0].values, np.repeat(Q[:, j:j + 1], k, axis=1))
            exec.write(pairs[j][1].values, np.repeat(u.reshape(-1, 1), k, axis=1))
        for c, u in pairs[:len(kept)]:
            c.compute_conj_dot(cycle.r, beta)
            cycle.monitor.x.add_scaled(beta, u)
            cycle.r.sub_scaled(beta, c)
        return len(kept)

    def _keep_largest(self, pairs, betas, norms, cycle, scratch) -> None:
        """truncate="smallest" (SciPy's, after de Sturler): the k - 1 combinations C W, U W of the
        k pairs that the last cycle used most, W the leading left singular vectors of
        D = B R^-1 (B = C^H A Z, the cycle's projections, R its triangular factor), orthonormalized
        (modified Gram-Schmidt), into slots 0 .. k - 2. The small problem is solved on the host
        (one read of B, R and the steps per column a cycle); the k - 1 combinations on the device."""
        exec, ws = self.executor, cycle.monitor.ws
        kcols, slots = cycle.inner.shape[0], len(pairs)
        # the cycle's projections, ||v_j|| and R per column, and the steps each column took
        inner = np.asarray(exec.to_host(cycle.inner))
        steps = int(inner.max(initial=0))
        hessenberg = cycle.hessenberg.to_numpy()
        B = np.array([[betas[i][j].to_numpy()[0] for j in range(steps)] for i in range(slots)]).reshape(
            slots, steps, kcols)
        nrm = np.array([norms[j].to_numpy()[0] for j in range(steps)]).reshape(steps, kcols)
        weights = np.zeros((slots, slots - 1, kcols), self.dtype)
        for c in range(kcols):
            L = int(inner[c])
            R = hessenberg[:L, c::kcols][:, :L]
            Bc = B[:, :L, c] / np.where(nrm[:L, c] != 0, nrm[:L, c], 1)
            D = np.linalg.lstsq(R.T, Bc.T, rcond=None)[0].T if L else np.zeros((slots, 0))
            if L and np.isfinite(D).all():
                weights[:, :, c] = np.linalg.svd(D)[0][:, :slots - 1]
            else:  # (a column that took no step, or a singular R: the newest pairs kept)
                weights[1:, :, c] = np.eye(slots - 1)
        coef = [[ws.scalars(f"weight{i}_{l}")[0] for l in range(slots - 1)] for i in range(slots)]
        spare = [ws.vectors(f"new_c{l}", f"new_u{l}") for l in range(slots - 1)]
        zero = ws.scalars("zero")[0].fill(0.0)
        for l, (c_new, u_new) in enumerate(spare):
            # c_new = C W[:, l];  u_new = U W[:, l]
            c_new.fill(0.0)
            u_new.fill(0.0)
            for i, (c, u) in enumerate(pairs):
                exec.write(coef[i][l].values, weights[i, l].reshape(1, kcols))
                c_new.add_scaled(coef[i][l], c)
                u_new.add_scaled(coef[i][l], u)
        for l, (c_new, u_new) in enumerate(spare):
            # orthogonal to the ones before (MGS), then normalized into slot l (cr = 0: x as it is)
            for c_p, u_p in pairs[:l]:
                c_p.compute_conj_dot(c_new, scratch)
                c_new.sub_scaled(scratch, c_p)
                u_new.sub_scaled(scratch, u_p)
            c_new.compute_conj_dot(c_new, scratch)
            exec.run("solver.gcrotmk.recycle", scratch, zero, c_new, u_new, cycle.w, *pairs[l],
                     cycle.monitor.stop.status)
