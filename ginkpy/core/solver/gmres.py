"""Gmres: the restarted generalized minimal residual method, GMRES(m), for general systems.

Right-preconditioned as in Ginkgo: the Krylov space is built from A M, and x = x0 + M V y at
the end of each cycle (with scalar Jacobi, A M is the system matrix with scaled columns, made
once). The Arnoldi step orthogonalises with classical Gram-Schmidt: the dot products with all
basis vectors in one pass over the basis, the update in a second, and by ``ortho_method`` a
second Gram-Schmidt pass: "cgs" never, "cgs2" always, "mgs" (the default) only in columns where
the first left little of w (the DGKS test ||w'||^2 <= ||w||^2 / 20, rare outside nearly dependent
bases; ORTHO_ETA2). Givens rotations keep the Hessenberg matrix triangular, so |g_{j+1}| is the
residual norm estimate that the device checks every inner iteration. An inner iteration is two
launches besides the product and M ("cgs2": three): the dot products (normalizing the new basis
vector, whose norm the last update summed, and with the Givens step of the previous Hessenberg
column), the update (w' into the next product's input, with ||w'||^2, and the DGKS test); "cgs2"
makes its second pass in a launch of its own, "mgs" lags it into the next dot products (in
columns whose test asked: v = v - V h2, and w = A M v = w - V (H h2) - h2_j v through the
Arnoldi relation A M V = V H, H unrotated, kept apart: no other vector, the same read of V;
||v|| by Pythagoras), or at the end of the cycle into the Givens step (also for a basis stored in a
lower precision, CbGmres's: the relation then holds to the storage's rounding, and the correction's
error is that rounding times the second pass's small coefficients, below the rounding of storing
v_j itself; a device whose local memory does not hold the lagged coefficients keeps the launch).
The kernels read j from the device, so the launches of inner iteration j > 0
depend on j % 2 alone (a solve captures three steps: j = 0, odd and even j).

A column whose estimate meets the criterion stops its inner iterations (status PENDING); at
the end of the cycle x is updated and the true residual b - A x decides: converged, or on with
the next cycle. Each column counts its own inner iterations, from which it takes its update.
A rank-deficient Hessenberg matrix (A or M singular: a rotated diagonal below 100 eps of its
column's norm) stops the column with a breakdown, its update keeping the steps before, so its
x is never worse than at the start of the cycle.

Left preconditioning (``preconditioner_side="left"``, SciPy's gmres) builds the space from M A
(w = M A v; scalar Jacobi folded into D^-1 A, made once) and starts each cycle from z = M r.
Its estimate |g_{j+1}| is of ||M (b - A x)||, so the cycle runs to SciPy's inner tolerance
ptol = ||M r|| min(f, thr / ||r||) (f per column: 1, x0.25 after a cycle whose estimate met ptol
but whose true residual did not, else x1.5 up to 1), kept on the device as the scale s = thr / ptol
of g: the check |g_{j+1}| <= thr is then presid <= ptol, the history reads as an estimate of the
true residual, and the update divides by s (x = x + V y / s). The true residual decides at each
restart, as SciPy's: it confirms a column whose estimate met ptol, and converges one whose cycle
ran its length where it meets the criterion (the estimate of ||M r|| need not have). An inner
iteration costs the launches of the right-preconditioned one; the end of a cycle four more (M r,
||M r||, the scaled update). The batch of one (``small_system.py``, right-preconditioned) is not
used: a small system runs the loop.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import integer, one_of, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver, PreconditionedParameters
from ginkpy.core.solver.small_system import solved_small

# the DGKS test of each ortho_method: a second Gram-Schmidt pass where ||w'||^2 <= eta2 ||w||^2
# (w' = w - V V^H w): "cgs" never, "cgs2" always, "mgs" where w lost 95% of its squared norm
ORTHO_ETA2 = {"cgs": -np.inf, "cgs2": np.inf, "mgs": 0.05}


class Gmres(IterativeSolver):
    """The restarted generalized minimal residual method GMRES(m) for general (nonsymmetric,
    indefinite) systems: Ginkgo's ``solver::Gmres``, SciPy's ``gmres``.

    Use it for nonsymmetric systems where Bicgstab is erratic or breaks down; each inner
    iteration costs a product by A, an application of M and an orthogonalization against the
    basis, so a cycle of m iterations costs O(m^2 n) besides. The residual never grows, and a
    solve that does not converge keeps the best x of its cycles.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Gmres.build()``)
    krylov_dim : int, default 30
        m, the iterations of a restart cycle (at most n).
    flexible : bool, default False
        Flexible GMRES (Ginkgo's name): keep the preconditioned vectors z_j = M v_j and update
        x = x0 + Z y, for a preconditioner that changes between applications (an inner iterative
        solver with a tolerance or a few iterations, a multigrid cycle with such a smoother or
        coarse solver). Plain GMRES updates x = x0 + M (V y) with one more application of M,
        which is only exact for a fixed linear M: with a changing one its x is off by how much
        the applications differ, and it may stagnate. Costs the m vectors of Z and one vector per
        inner iteration; without a preconditioner, or with scalar Jacobi, it changes nothing.
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        Iterations count inner iterations.
    preconditioner : factory or LinOp, default None (none)
        M, applied from the right (the criteria see the residual of A x = b itself) unless
        ``preconditioner_side`` is "left".
    preconditioner_side : {"right", "left"}, default "right"
        "right" (Ginkgo's): the space of A M, minimizing ||b - A x|| over each cycle. "left"
        (SciPy's gmres): the space of M A, minimizing ||M (b - A x)|| over each cycle to SciPy's
        inner tolerance, the true residual ||b - A x|| deciding convergence at each restart. A
        restarted GMRES(m) can stall in one where it converges in the other (nos6 with forward
        Gauss-Seidel: right stalls at 9e-6, left converges as SciPy's); the same launches per
        inner iteration. ``gk.linalg.gmres`` with M uses "left". Not with ``flexible``.
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.
    ortho_method : {"mgs", "cgs", "cgs2"}, default "mgs"
        Ginkgo's choice of Gram-Schmidt. "cgs": classical Gram-Schmidt, one pass (the launches
        and memory traffic of "mgs" where its test never asks; it may lose orthogonality on
        ill-conditioned systems, and with it convergence). "cgs2": classical
        Gram-Schmidt twice (the second pass in every inner iteration: one more launch and read
        of the basis). "mgs": ginkpy's stand-in for modified
        Gram-Schmidt (whose j + 1 dependent reductions a device cannot afford), as stable at
        the cost of CGS: classical Gram-Schmidt with the second pass only where the first left
        little of w (the DGKS test ||w'||^2 <= ||w||^2 / 20), made in the next inner iteration's
        first launch (no launch of its own).

    Examples
    --------
    >>> solver = gk.solver.Gmres.build().with_krylov_dim(50).with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    confirms_on_device = True  # the end of a cycle confirms with the true residual on the device
    keeps_best_iterate = False  # a cycle never raises the residual

    @parameters
    class Parameters(PreconditionedParameters):
        krylov_dim: int = attrs.field(default=30, validator=integer(min=1))
        flexible: bool = attrs.field(default=False, validator=one_of(True, False))
        ortho_method: str = attrs.field(default="mgs", validator=one_of("mgs", "cgs", "cgs2"))
        preconditioner_side: str = attrs.field(default="right", validator=one_of("right", "left"))

    _sides = ("right", "left")  # the preconditioner sides the method has (Lgmres, Gcrotmk: right)
    _storage_shape = ()  # the basis's trailing axes (CbGmres: (2,) for complex values in float16)

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        # a Krylov space cannot grow beyond n dimensions
        self.krylov_dim = max(1, min(int(self.parameters.krylov_dim), self.system_matrix.global_shape[0]))
        self._storage_dtype = np.dtype(self.dtype)  # the Krylov basis's storage type
        self._row_scaled_matrix: LinOp | None = None  # D^-1 A (left preconditioning with scalar Jacobi)
        if self.parameters.preconditioner_side not in self._sides:
            raise ValueError(f"{type(self).__name__}: its cycles are flexible GMRES, M applied from the right; "
                             f"use with_preconditioner_side('right'), or gk.solver.Gmres or Lgmres for left preconditioning")
        if self.parameters.flexible and self.parameters.preconditioner_side == "left":
            raise ValueError(f"{type(self).__name__}: flexible GMRES keeps the preconditioned vectors of a right "
                             f"preconditioner; use with_preconditioner_side('right') with with_flexible(True), or "
                             f"with_flexible(False) for left preconditioning")

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        left = self.parameters.preconditioner_side == "left" and not isinstance(self.preconditioner, Identity)
        AM, diag, M = self._left_preconditioned() if left else self._right_preconditioned()
        (n, k), m = x.shape, self.krylov_dim
        ws = monitor.ws
        # v: the input of the next product, v_j before its normalization (v_0 normalized)
        r, v, w = ws.vectors("r", "v", "w")
        z, u = ws.vectors("z", "u") if M is not None or left else (None, None)
        # flexible GMRES: the preconditioned basis Z, z_j = M v_j, in the value type
        flexible = self.parameters.flexible and M is not None
        zbasis = ws.array("zbasis", (m * n, k), self.dtype) if flexible else None
        # Krylov basis V, in its storage type: basis vector i in rows i n .. (i + 1) n;
        # Hessenberg H: h_{i,j} at (i, j k + column)
        basis = ws.array("basis", ((m + 1) * n, k) + self._storage_shape, self._storage_dtype)
        hessenberg = ws.vector("hessenberg", rows=m + 1, cols=m * k)
        g, nrm = ws.vector("g", rows=m + 1), ws.vector("nrm", rows=1)
        cos, sin = ws.vector("cos", rows=m), ws.vector("sin", rows=m)
        inner = ws.array("inner", (k,), np.int32)
        # the inner iteration j of the cycle at js[j % 2] (read by the kernels: an iteration's launches depend on j % 2)
        js = ws.array("step", (2,), np.int32)
        # partial sums of ||r||^2, ||w'||^2 and of the dot products with the basis
        rr, ww, h, h2 = ws.partials("rr"), ws.partials("ww"), ws.partials("h", m + 2), ws.partials("h2", m + 1)
        # per column: whether the Gram-Schmidt step needs its second pass (the DGKS test with eta2)
        reorth, eta2 = ws.array("reorth", (k,), np.uint8), ORTHO_ETA2[self.parameters.ortho_method]
        raw, final = self._lagged_hessenberg(ws, eta2)  # ("mgs": H unrotated, for the lagged second pass)
        late = (h2, reorth) if raw is not None else ()
        # r = b - A x
        monitor.start(r)
        # (the batch of one is right-preconditioned: left preconditioning runs the loop)
        if not left and solved_small(monitor, "gmres", krylov_dim=m):
            return
        stop = monitor.stop
        # left: the scale of g (1 / s, s = thr / ptol) and SciPy's factor of the inner tolerance, per column
        unscale = ws.vector("unscale", rows=1) if left else None
        factor = ws.array("ptol_factor", (k,), real_dtype(self.dtype)) if left else None

        def restart():
            # partial sums of ||r||^2: the check of the true residual;  v = r / ||r||;  g = ||r|| e_1;  j = 0
            # (left: z = M r, v = z / ||z||, g = ||z|| s e_1, s from SciPy's inner tolerance)
            exec.run("components.reduction.dots", r, r, None, rr)
            A.reduce_sums(rr)
            if left:
                self._restart_left(ws, r, z, rr, v, g, unscale, factor, inner, js, stop)
            else:
                exec.run("solver.gmres.restart", r, rr, v, g, inner, js, stop)

        def rotate(j: int) -> None:
            # the Givens step of H[:, j] (and the check of its residual estimate |g_{j+1}|)
            exec.run("solver.gmres.givens", j, ww, hessenberg, g, cos, sin, inner, stop, *late)

        def step(j: int, givens_first: bool) -> None:
            # (inner iteration j, at js[j % 2] on the device)  w = A M v (left: w = M A v)
            parity = j % 2
            self._product(left, AM, diag, M, v, z, w)
            # (with givens_first, the Givens step of H[:, j - 1] first)  v_j = v / ||v|| into the
            # basis (flexible: z_j = M v / ||v|| too);  h = V^H w and ||w||;  js[1 - parity] = j + 1
            exec.run("solver.gmres.multi_dot", js, parity, givens_first, v, basis, z if flexible else None, zbasis,
                     w, ww, nrm, h, hessenberg, g, cos, sin, inner, stop, *((raw, final) + late if late else ()))
            self._orthogonalize(js, parity, basis, w, nrm, h, hessenberg, v, ww, h2, reorth, eta2, stop, raw)

        def end_cycle(j: int) -> None:
            # the Givens step of H[:, j];  y = R^-1 g;  x = x + M V y (flexible: x + Z y; left:
            # x + V y / s);  r = b - A x
            rotate(j)
            if flexible:
                exec.run("solver.gmres.update", zbasis, hessenberg, g, inner, None, x)
            elif M is None and not left:
                exec.run("solver.gmres.update", basis, hessenberg, g, inner, diag, x)
            else:
                u.fill(0.0)
                exec.run("solver.gmres.update", basis, hessenberg, g, inner, None, u)
                x.add_scaled(unscale, u) if left else x.add_scaled(1.0, self._precondition(u, z, M))
            monitor.residual(r)
            restart()

        restart()
        # a step captured per j % 2, the cycle's first apart: the partial sums of ||w'||^2 that
        # step j > 0 reads take orthogonalize's shape (their buffer) at the solve's first step
        monitor.run_restarted(m, step, rotate, end_cycle, step_key=lambda j: (j == 0, j % 2))

    def _lagged_hessenberg(self, ws, eta2: float) -> tuple[Dense | None, Dense | None]:
        """(raw, final) where the DGKS second pass is lagged into the next multi_dot ("mgs"), else
        (None, None): H unrotated, orthogonalize's first pass and both passes with the subdiagonal,
        from which that kernel corrects w = A M v through the Arnoldi relation A M V = V H. A
        basis stored in a lower precision (CbGmres's) lags it too: its relation holds to the
        storage's rounding, so the correction of w is off by that rounding times the second
        pass's coefficients (h2, small where the test asks: w' lost most of its norm), a second
        order term beside the rounding of v_j's storage. A device whose local memory does not
        hold the lagged pass's coefficients of every column
        (``exec.device_choices().lagged_second_pass``) keeps the launch of its own."""
        m, (n, k) = self.krylov_dim, ws.shape
        if not (0 < eta2 < np.inf and self.executor.device_choices().lagged_second_pass(n, k, m, self.dtype)):
            return None, None
        return (ws.vector("hessenberg_raw", rows=m + 1, cols=m * k),
                ws.vector("hessenberg_final", rows=m + 1, cols=m * k))

    def _product(self, left: bool, AM: LinOp, diag: Dense | None, M: LinOp | None, v: Dense, z: Dense,
                 w: Dense) -> None:
        """w = A M v (right), w = M A v (left; z the intermediate), with AM as _right_preconditioned
        or _left_preconditioned made it (D^-1 folded in: one product)."""
        if M is None or left and diag is not None:
            AM.apply(v, w)
        elif left:
            self.system_matrix.apply(v, z)
            M.apply(z, w)
        else:
            self.system_matrix.apply(self._precondition(v, z, M), w)

    def _restart_left(self, ws, r, z, rr, v, g, unscale, factor, inner, js, stop) -> None:
        """After the partial sums rr of ||r||^2: z = M r, its partial sums zz of ||z||^2, and the
        restart of left preconditioning (``solver.gmres.restart_left``: the true residual's
        check, v = z / ||z||, g = ||z|| s e_1 with s from SciPy's inner tolerance)."""
        zz = ws.partials("zz")
        self.preconditioner.apply(r, z)
        self.executor.run("components.reduction.dots", z, z, None, zz)
        self.system_matrix.reduce_sums(zz)
        self.executor.run("solver.gmres.restart_left", z, rr, zz, v, g, unscale, factor, inner, js, stop)

    def _left_preconditioned(self) -> tuple[LinOp, Dense | None, LinOp]:
        """(DA, diag, M) for left preconditioning: DA = D^-1 A, made once, where M is scalar
        Jacobi and A can scale its rows (an inner iteration then applies no M), else DA = A and
        diag None; M the preconditioner (for z = M r at each restart)."""
        A, M, diag = self.system_matrix, self.preconditioner, self._diagonal_preconditioner
        if diag is None or not hasattr(A, "scale_rows"):
            return A, None, M
        if self._row_scaled_matrix is None:
            self._row_scaled_matrix = A.scale_rows(diag)
        return self._row_scaled_matrix, diag, M

    def update(self) -> bool:
        """The base class's update (:meth:`IterativeSolver.update`), and D^-1 A of left
        preconditioning with scalar Jacobi recomputed into its arrays."""
        valid = super().update()
        if self._row_scaled_matrix is not None:
            diag = self._diagonal_preconditioner
            if diag is None:  # (the preconditioner is no longer scalar Jacobi)
                self._row_scaled_matrix, valid = None, False
                self._forget_captures()
            else:
                self.executor.run("matrix.csr.scale_rows", self.system_matrix, diag, self._row_scaled_matrix.values)
        return valid

    def _orthogonalize(self, js, parity, basis, w, nrm, h, hessenberg, v, ww, h2, reorth, eta2, stop,
                       raw=None) -> None:
        """v = w' = w / ||v|| - V h, H[0:j+1, j] = h (and raw's), ||w'||^2; where the DGKS test
        with eta2 asks, the second pass: v = v - V h2, H[0:j+1, j] += h2, ||v||^2 (with raw: left
        to the next multi_dot or givens, which read h2 and reorth)."""
        exec, A = self.executor, self.system_matrix
        A.reduce_sums(h)
        exec.run("solver.gmres.orthogonalize", js, parity, basis, w, nrm, h, hessenberg, v, ww, h2, reorth, eta2, stop,
                 *(() if raw is None else (raw,)))
        if eta2 != -np.inf:  # ("cgs": no second pass)
            A.reduce_sums(h2)
            if raw is None:
                exec.run("solver.gmres.reorthogonalize", js, parity, basis, v, h2, hessenberg, reorth, ww, stop)
        A.reduce_sums(ww)
