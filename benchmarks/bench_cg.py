"""CG (or GMRES(m)) with a fixed number of iterations: ginkpy beside SciPy (host) and, with CuPy
on an NVIDIA GPU, cupyx.scipy.sparse.linalg.cg (gmres).

Every solver runs exactly --iters iterations of unpreconditioned CG from x = 0 on b = A 1:
ginkpy with only an Iteration criterion, SciPy and CuPy with a relative tolerance of 0 and
maxiter = --iters. The iteration counts are checked in an untimed run, and the final relative
residuals are printed side by side, so that the solvers are seen doing the same work. "x roof"
is ginkpy's time per iteration over the fused roofline's: the bytes a fused iteration must move
(the matrix once, p, q, r, x read or written: (v + 4) nnz + (11 v + 4) n for values of v bytes,
12 nnz + 92 n in float64, 8 nnz + 48 n in float32, 20 nnz + 180 n in complex128, 12 nnz + 92 n
in complex64) at the device's measured copy bandwidth.

Complex value types (--dtype complex128 or complex64) run CG on Hermitian matrices: the
magnetic Laplacian (magnetic_2d) by default, the real problems as complex matrices too.

``--solver gmres`` runs unpreconditioned GMRES(--restart) instead, --iters inner iterations (a
multiple of the restart; SciPy's maxiter counts restart cycles, CuPy's inner iterations), on every square
matrix (the damped Helmholtz system, helmholtz_2d, by default for complex types). Its roofline
is a lower bound: the bytes a GMRES(m) with one fused Gram-Schmidt pass must move per inner
iteration j (the matrix once, v_j read and w written by the product, the j + 1 basis vectors
and w read for the dot products, read again with w read and written for the update), averaged
over a cycle with the update of x at its end: (v + 4) nnz + 4 n + (m + 7 + 2 / m) v n. ginkpy's
DGKS second pass (only where the first left little of w) is not in it (``--ortho-method``: cgs
never takes it, cgs2 always, mgs the default's DGKS test). ``--solver cb_gmres``
runs ginkpy's CbGmres (the basis stored in ``--storage-precision``, default reduce1) beside the
same baselines; its roofline counts the basis in s bytes per entry: (v + 4) nnz + 4 n + (5 +
2 / m) v n + (m + 2) s n.

    python benchmarks/bench_cg.py [--sizes ROWS ...] [--iters N] [--mtx-dir DIR]
                                  [--executor opencl|reference] [--dtype complex128]
                                  [--solver cg|gmres|cb_gmres] [--storage-precision reduce1]
                                  [--ortho-method mgs|cgs|cgs2]
"""
from __future__ import annotations

import inspect
import sys

import numpy as np
import scipy.sparse.linalg as spla

import bench_common as bc
import ginkpy as gk


def tolerance_zero(cg) -> dict:
    """The keyword that sets a CG's relative tolerance to 0: ``rtol`` (SciPy >= 1.12) or ``tol``."""
    return {"rtol": 0.0} if "rtol" in inspect.signature(cg).parameters else {"tol": 0.0}


def is_hermitian(S) -> bool:
    """Symmetric for real S: CG's systems."""
    return S.shape[0] == S.shape[1] and abs(S - S.conj().T).max() <= 1e-12 * abs(S).max()


def ginkpy_solver(exec, S, b_host, iters, restart=None, storage=None, ortho_method="mgs"):
    """(solve function, x, iterations run) of ginkpy's Cg (or Gmres with krylov_dim
    ``restart`` and ``ortho_method``, or CbGmres with the basis in ``storage``) with only an
    Iteration criterion."""
    A = gk.matrix.Csr.from_scipy(exec, S)
    if restart is None:
        params = gk.solver.Cg.build()
    elif storage is None:
        params = gk.solver.Gmres.build().with_krylov_dim(restart).with_ortho_method(ortho_method)
    else:
        params = (gk.solver.CbGmres.build().with_krylov_dim(restart).with_storage_precision(storage)
                  .with_ortho_method(ortho_method))
    solver = (params.with_criteria(gk.stop.Iteration.build().with_max_iters(iters))
              .on(exec).generate(A))
    b = gk.matrix.Dense.from_numpy(exec, b_host)
    x = gk.matrix.Dense.zeros(exec, (S.shape[0], 1), S.dtype)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    solver.apply(b, x)  # untimed check run
    done = logger.num_iterations
    solver.remove_logger(logger)

    def solve():
        x.fill(0.0)
        solver.apply(b, x)
    return solve, x, done


def counted(cg, A, b, iters, **kwargs) -> tuple:
    """(x, iterations) of one run of a SciPy-style cg, iterations counted by its callback."""
    count = [0]
    x, _ = cg(A, b, maxiter=iters, callback=lambda xk: count.__setitem__(0, count[0] + 1),
              **tolerance_zero(cg), **kwargs)
    return x, count[0]


def gmres_arguments(gmres, iters, restart) -> dict:
    """Keywords of a SciPy-style gmres running iters / restart cycles of GMRES(restart) with a
    relative tolerance of 0: SciPy's maxiter counts restart cycles, CuPy's inner iterations
    (its loop adds restart per cycle and stops once maxiter is reached)."""
    cycles = not gmres.__module__.startswith("cupyx")
    return {"restart": restart, "maxiter": iters // restart if cycles else iters, **tolerance_zero(gmres)}


def counted_gmres(gmres, A, b, iters, restart, per_cycle: bool) -> tuple:
    """(x, inner iterations) of one run of a SciPy-style gmres: SciPy's callback ("pr_norm")
    comes every inner iteration, CuPy's (``per_cycle``) every restart cycle."""
    count = [0]
    x, _ = gmres(A, b, callback=lambda r: count.__setitem__(0, count[0] + 1), callback_type="pr_norm",
                 **gmres_arguments(gmres, iters, restart))
    return x, count[0] * (restart if per_cycle else 1)


def roofline_bytes(S, restart=None, basis_item=None) -> float:
    """Bytes a fused CG iteration (``restart`` None) or an inner GMRES(restart) iteration, its
    basis in ``basis_item`` bytes per entry (default the value type's), must move at least (see
    the module docstring)."""
    n, item = S.shape[0], S.dtype.itemsize
    if restart is None:
        return S.nnz * (item + 4) + n * (11 * item + 4)
    basis_item = item if basis_item is None else basis_item
    return S.nnz * (item + 4) + 4 * n + (5 + 2 / restart) * item * n + (restart + 2) * basis_item * n


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [490_000], None, dtypes=bc.REAL_DTYPES + bc.COMPLEX_DTYPES)
    p.add_argument("--iters", type=int, default=100, help="iterations every solver runs (GMRES: inner ones)")
    p.add_argument("--solver", default="cg", choices=["cg", "gmres", "cb_gmres"])
    p.add_argument("--storage-precision", default="reduce1", choices=["keep", "reduce1", "reduce2"],
                   help="CbGmres's basis storage (--solver cb_gmres)")
    p.add_argument("--restart", type=int, default=30, help="GMRES's restart (Krylov dimension)")
    p.add_argument("--ortho-method", default="mgs", choices=["mgs", "cgs", "cgs2"],
                   help="GMRES's Gram-Schmidt (gk.solver.Gmres's ortho_method)")
    p.add_argument("--no-scipy", action="store_true", help="skip SciPy (slow at the largest sizes)")
    p.set_defaults(reps=3)
    args = p.parse_args()
    complex_type = np.dtype(args.dtype).kind == "c"
    gmres = args.solver in ("gmres", "cb_gmres")
    storage = args.storage_precision if args.solver == "cb_gmres" else None
    if gmres and args.iters % args.restart:
        raise SystemExit(f"--iters {args.iters} must be a multiple of --restart {args.restart} for GMRES")
    if args.problems is None:
        args.problems = (["helmholtz_2d" if complex_type else "poisson_2d"] if gmres else
                         ["magnetic_2d"] if complex_type else ["poisson_2d", "poisson_3d"])
    restart = args.restart if gmres else None
    exec, cupy = bc.executor_and_cupy(args)
    print(f"ginkpy executor: {bc.device_name(exec)}; SciPy on the host"
          + (f"; CuPy on {bc.cupy_device(cupy)}" if cupy else ""))
    what = f"GMRES({args.restart})" if gmres else "CG"
    if storage is not None:
        what += f" (ginkpy: CbGmres, basis {storage})"
    print(f"value type {args.dtype}, {args.iters} {what} iterations from x = 0, b = A 1; "
          f"median of {args.reps} solves, ms per iteration; res = ||b - A x|| / ||b|| at the end\n")
    bandwidth = bc.copy_bandwidth(exec, args.reps)
    print(f"copy bandwidth of the ginkpy executor: {bandwidth / 1e9:.0f} GB/s\n")
    header = (f"{'matrix':<22}{'rows':>10}{'nnz':>11}{'ginkpy':>10}{'res':>10}{'scipy':>10}{'res':>10}"
              f"{'cupy':>10}{'res':>10}{'x scipy':>9}{'x cupy':>8}{'x roof':>8}")
    bc.print_header(header)
    failures = 0
    keep = (lambda S: S.shape[0] == S.shape[1]) if gmres else is_hermitian
    for name, S in bc.matrices(args, exec, keep=keep):
        n = S.shape[0]
        b_host = S @ np.ones(n, S.dtype)
        relres = lambda x: float(np.linalg.norm(b_host - S @ x) / np.linalg.norm(b_host))  # noqa: E731
        notes = []

        solve, x, done = ginkpy_solver(exec, S, b_host, args.iters, restart, storage, args.ortho_method)
        if done != args.iters:
            notes.append(f"ginkpy stopped after {done} iterations")
        t_gk = bc.measure(solve, exec.synchronize, args.reps, warmup=1) / args.iters
        res_gk = relres(x.to_numpy()[:, 0])

        t_sp = res_sp = t_cp = res_cp = None
        if not args.no_scipy:
            t_sp, x_sp = library_solve(spla, S, b_host, args, gmres, restart, notes, "scipy", lambda: None)
            res_sp = relres(x_sp)
        if cupy is not None:
            import cupyx.scipy.sparse as cusp
            import cupyx.scipy.sparse.linalg as cuspla
            t_cp, x_cp = library_solve(cuspla, cusp.csr_matrix(S), cupy.asarray(b_host), args, gmres, restart, notes,
                                       "cupy", cupy.cuda.Device().synchronize)
            res_cp = relres(cupy.asnumpy(x_cp))

        failures += bool(notes)
        basis_item = None
        if storage is not None:
            from ginkpy.core.solver.cb_gmres import storage_dtype
            stored = storage_dtype(S.dtype, storage)
            basis_item = stored.itemsize * (2 if stored == np.float16 and S.dtype.kind == "c" else 1)
        roofline = roofline_bytes(S, restart, basis_item) / bandwidth
        print(f"{name:<22}{n:>10}{S.nnz:>11}{t_gk * 1e3:>10.3f}{res_gk:>10.2e}{bc.fmt(t_sp and t_sp * 1e3, '.3f'):>10}"
              f"{bc.fmt(res_sp, '.2e'):>10}{bc.fmt(t_cp and t_cp * 1e3, '.3f'):>10}{bc.fmt(res_cp, '.2e'):>10}"
              f"{bc.fmt(t_sp and t_sp / t_gk, '.2f'):>8}x{bc.fmt(t_cp and t_cp / t_gk, '.2f'):>7}{'x' if t_cp else ' '}"
              f"{t_gk / roofline:>8.2f}"
              + "".join(f"  ({note})" for note in notes))
        sys.stdout.flush()
    return 1 if failures else 0


def library_solve(linalg, A, b, args, gmres: bool, restart: int, notes: list, who: str, sync):
    """SciPy's or CuPy's (``linalg``) cg or gmres run for exactly ``args.iters`` iterations:
    seconds per iteration (median of ``args.reps``) and its x; a shortfall goes to ``notes``.
    CuPy's gmres callback comes once per restart cycle, SciPy's once per inner iteration."""
    if gmres:
        x, done = counted_gmres(linalg.gmres, A, b, args.iters, restart, per_cycle=who == "cupy")
        run = lambda: linalg.gmres(A, b, **gmres_arguments(linalg.gmres, args.iters, restart))  # noqa: E731
    else:
        x, done = counted(linalg.cg, A, b, args.iters)
        run = lambda: linalg.cg(A, b, maxiter=args.iters, **tolerance_zero(linalg.cg))  # noqa: E731
    if done != args.iters:
        notes.append(f"{who} ran {done} iterations")
    return bc.measure(run, sync, args.reps, warmup=1) / args.iters, x


if __name__ == "__main__":
    sys.exit(main())
