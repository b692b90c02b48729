"""Whole solves with incomplete factorizations: ginkpy's combinations beside SciPy (spilu) and,
with CuPy on an NVIDIA GPU, CuPy (cuSPARSE ILU(0)), in one run.

For every matrix: the generate time of each factorization alone (exact ILU(0) / IC(0) on the
host, ParILU / ParIC on the executor, ParILUT / ParICT, Ilut: SciPy's spilu on the host), then
whole solves, b = A * ones to ||r|| <= rtol ||b||: setup (the solver's generate, the
preconditioner's included), solve time and iterations. Nonsymmetric matrices: BiCGStab and
GMRES(30) with Jacobi, exact ILU(0) with exact triangular solves (ilu0_exact), ParILU with ISAI
(parilu+isai) and with Jacobi sweeps (parilu+sweeps), the default Ilu (ilu: what M="ilu"
picks) and the threshold ILU (ilut: M="ilut", spilu's factors with drop_tol 1e-4 and
fill_factor 10); symmetric ones: CG with the IC counterparts. Beside them SciPy's bicgstab /
gmres with Jacobi and with spilu(drop_tol=1e-4, fill_factor=10) (on symmetric matrices cg
with Jacobi and bicgstab with spilu, which is not symmetric), and CuPy's gmres / cgs (CuPy has
no bicgstab) / cg with Jacobi and with spilu(fill_factor=1) (cuSPARSE's ILU(0)). The ratios
at the end of each matrix compare the fastest ILU-type ginkpy solve with ginkpy's Jacobi solve,
SciPy's fastest and CuPy's fastest (> 1: ginkpy's ILU solve is faster).

``--reps N`` runs every ginkpy solve N times, the variants interleaved (a changing load on a
shared machine then hits them alike), and reports the repetition of median total time.

``--iterations`` prints instead one row of iteration counts per matrix: GMRES(30) and BiCGStab
(CG for a symmetric matrix) with exact ILU(0) / IC(0), the default M="ilu" / "ic" and
M="ilut", beside SciPy's gmres and bicgstab with spilu(drop_tol=1e-4, fill_factor=10) (left
preconditioned; its GMRES count is of inner iterations), and the default's ratio to the exact
one (the target: at most 1.5).

    python benchmarks/bench_ilu.py [--sizes ROWS ...] [--problems ...] [--mtx-dir DIR]
                                   [--executor opencl|reference] [--solvers ...] [--skip ...] [--no-scipy]
                                   [--iterations]
"""
from __future__ import annotations

import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bench_common as bc
import ginkpy as gk
from ginkpy import problems

bc.GENERATORS.setdefault("convection_diffusion_2d",
                         lambda rows: problems.convection_diffusion_2d(max(2, round(rows ** 0.5))))
# the failure modes of issue 21, made by generators (olmstead(500) is olm1000)
bc.GENERATORS.setdefault("olmstead", lambda rows: problems.olmstead(max(2, rows // 2)))
bc.GENERATORS.setdefault("circuit_mna", lambda rows: problems.circuit_mna(max(20, rows * 20 // 21), max(1, rows // 21)))
bc.GENERATORS.setdefault("ic_breakdown", lambda rows: problems.ic_breakdown(max(1, round(rows ** 0.5 / 2)) ** 2))
bc.GENERATORS.setdefault("dense_row", lambda rows: problems.dense_row(max(15, round(rows ** 0.5))))
F, P, S = gk.factorization, gk.preconditioner, gk.solver
KRYLOV_DIM = 30


def _trs(algorithm: str = "sparselib"):
    return dict(l_solver=S.LowerTrs.build().with_algorithm(algorithm),
                u_solver=S.UpperTrs.build().with_algorithm(algorithm))


ISAI = dict(l_solver=P.LowerIsai.build(), u_solver=P.UpperIsai.build())


def _precond(kind, **params):
    p = kind.build()
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    return p


def variants(symmetric: bool) -> dict:
    """name -> preconditioner parameters of ginkpy's combinations."""
    if symmetric:
        return {"jacobi": P.Jacobi.build().with_max_block_size(1),
                "ic0_exact": _precond(P.Ic, factorization=F.Ic.build(), l_solver=S.LowerTrs.build()),
                "paric+isai": _precond(P.Ic, factorization=F.ParIc.build(), l_solver=P.LowerIsai.build()),
                "paric+sweeps": _precond(P.Ic, factorization=F.ParIc.build(),
                                         l_solver=S.LowerTrs.build().with_algorithm("jacobi")),
                "parict+isai": _precond(P.Ic, factorization=F.ParIct.build(), l_solver=P.LowerIsai.build()),
                "ic": P.Ic.build()}
    return {"jacobi": P.Jacobi.build().with_max_block_size(1),
            "ilu0_exact": _precond(P.Ilu, factorization=F.Ilu.build(), **_trs()),
            "parilu+isai": _precond(P.Ilu, factorization=F.ParIlu.build(), **ISAI),
            "parilu+sweeps": _precond(P.Ilu, factorization=F.ParIlu.build(), **_trs("jacobi")),
            "parilut+isai": _precond(P.Ilu, factorization=F.ParIlut.build(), **ISAI),
            "ilu": P.Ilu.build(),
            "ilut": gk.config.short_names("preconditioner")["ilut"].build()}


def _time(run, synchronize) -> float:
    start = time.perf_counter()
    run()
    synchronize()
    return time.perf_counter() - start


def generate_times(exec, A, symmetric: bool, skip: set) -> str:
    """Generate time of each factorization alone (after one warm-up on a small matrix)."""
    kinds = (F.Ic, F.ParIc, F.ParIct) if symmetric else (F.Ilu, F.ParIlu, F.ParIlut, F.Ilut)
    out = []
    for kind in kinds:
        if kind.__name__.lower() in skip:
            continue
        warm = gk.matrix.Csr.from_scipy(exec, problems.poisson_2d(20), A.dtype)
        kind.build().on(exec).generate(warm)
        try:
            seconds = _time(lambda: kind.build().on(exec).generate(A), exec.synchronize)
            out.append(f"{kind.__name__} {seconds:.3f}")
        except ValueError as err:
            out.append(f"{kind.__name__} failed ({str(err).split(':')[0]})")
    return "factorization generate (s): " + " | ".join(out)


def ginkpy_solve(exec, solver_type, precond, A, b, rtol, max_iters):
    """(iterations, converged, setup s, solve s)."""
    params = solver_type.build().with_preconditioner(precond).with_criteria(
        gk.stop.Iteration.build().with_max_iters(max_iters), gk.stop.ResidualNorm.build().with_reduction_factor(rtol))
    if solver_type is S.Gmres:
        params.with_krylov_dim(KRYLOV_DIM)
    solver = None

    def setup():
        nonlocal solver
        solver = params.on(exec).generate(A)
    t_setup = _time(setup, exec.synchronize)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    x = gk.matrix.Dense.zeros(exec, b.shape, b.dtype)
    t_solve = _time(lambda: solver.apply(b, x), exec.synchronize)
    return int(np.max(logger.num_iterations)), bool(np.all(logger.has_converged)), t_setup, t_solve


def _count(counter):
    def callback(*_):
        counter[0] += 1
    return callback


def library_solves(lib, S_host, b_host, symmetric: bool, rtol: float, max_iters: int, names):
    """(name, iterations, converged, setup s, solve s) of SciPy's ("scipy") or CuPy's ("cupy")
    preconditioned solves. SciPy's spilu (ILUTP, pivoting, equilibration) is not symmetric, so it
    goes with BiCGStab on symmetric matrices too; CuPy's ILU(0) (no pivoting) with CG."""
    if lib == "scipy":
        xp, linalg, A, b, sync = np, spla, S_host, b_host, (lambda: None)
        csc = S_host.tocsc()
        solvers = {"cg": spla.cg, "bicgstab": spla.bicgstab, "gmres": spla.gmres}

        def ilu():
            return spla.spilu(csc, drop_tol=1e-4, fill_factor=10)
        combos = [("cg", "jacobi"), ("bicgstab", "ilu")] if symmetric else \
            [(s, p) for s in ("bicgstab", "gmres") for p in ("jacobi", "ilu")]
    else:
        import cupy as xp
        import cupyx.scipy.sparse as cusp
        import cupyx.scipy.sparse.linalg as linalg
        A, b, sync = cusp.csr_matrix(S_host), xp.asarray(b_host), xp.cuda.Device().synchronize
        solvers = {"cg": linalg.cg, "cgs": linalg.cgs, "gmres": linalg.gmres}

        def ilu():
            return linalg.spilu(A, fill_factor=1)
        combos = [("cg", "jacobi"), ("cg", "ilu")] if symmetric else \
            [(s, p) for s in ("cgs", "gmres") for p in ("jacobi", "ilu")]
    # the solvers asked for (CuPy's cgs stands in for its missing bicgstab; spilu's bicgstab for cg)
    wanted = set(names) | ({"cgs"} if "bicgstab" in names else set()) | \
        ({"bicgstab"} if symmetric and "cg" in names else set())
    out = []
    preconditioners = {}
    for name, precond in combos:
        if name not in wanted:
            continue
        if precond not in preconditioners:
            try:
                start = time.perf_counter()
                if precond == "jacobi":
                    d = xp.asarray(S_host.diagonal())
                    M = linalg.LinearOperator(S_host.shape, matvec=lambda v, d=d: v / d, dtype=S_host.dtype)
                else:
                    M = linalg.LinearOperator(S_host.shape, matvec=ilu().solve, dtype=S_host.dtype)
                sync()
                preconditioners[precond] = (M, time.perf_counter() - start)
            except Exception as err:  # a singular factor
                print(f"  ({lib} {precond} failed: {err})")
                preconditioners[precond] = None
        if preconditioners[precond] is None:
            continue
        M, t_setup = preconditioners[precond]
        counter = [0]
        kwargs = dict(rtol=rtol, maxiter=max_iters, M=M, callback=_count(counter))
        if name == "gmres":
            kwargs.update(restart=KRYLOV_DIM, maxiter=max(1, max_iters // KRYLOV_DIM), callback_type="pr_norm")
        start = time.perf_counter()
        x, info = solvers[name](A, b, **kwargs)
        sync()
        t_solve = time.perf_counter() - start
        r = float(xp.linalg.norm(b - A @ x) / xp.linalg.norm(b))
        out.append((f"{lib} {name}+{precond}", counter[0], info == 0 and r <= 1.01 * rtol, t_setup, t_solve))
    return out


def _row(name, its, converged, t_setup, t_solve):
    return (f"{name:<26}{its:>7}{'yes' if converged else 'no':>6}{t_setup:>10.3f}{t_solve:>10.3f}"
            f"{t_setup + t_solve:>10.3f}")


def _best(rows, keep=lambda name: True):
    done = [r for r in rows if r[2] and keep(r[0])]
    return min(done, key=lambda r: r[3] + r[4]) if done else None


def bench_matrix(args, exec, cupy, name, S_host) -> None:
    symmetric = abs(S_host - S_host.T).max() <= 1e-12 * abs(S_host).max()
    rtol = 1e-8 if args.dtype == "float64" else 1e-5
    print(f"\n== {name}: {S_host.shape[0]} rows, {S_host.nnz} nonzeros, "
          f"{'symmetric (CG)' if symmetric else 'nonsymmetric (BiCGStab, GMRES)'} ==")
    A = gk.matrix.Csr.from_scipy(exec, S_host)
    b_host = S_host @ np.ones(S_host.shape[0], S_host.dtype)
    b = gk.matrix.Dense.from_numpy(exec, b_host)
    skip = set(args.skip)
    print(generate_times(exec, A, symmetric, skip))
    header = f"{'solve':<26}{'iters':>7}{'conv':>6}{'setup':>10}{'solve':>10}{'total':>10}"
    bc.print_header(header)
    rows = []
    solver_types = [t for t in ([S.Cg] if symmetric else [S.Bicgstab, S.Gmres]) if t.__name__.lower() in args.solvers]
    for solver_type in solver_types:
        chosen = {f"{solver_type.__name__.lower()} {vname}": precond for vname, precond in variants(symmetric).items()
                  if vname not in skip and not any(part in skip for part in vname.split("+"))}
        runs = {label: [] for label in chosen}
        for _ in range(args.reps):  # the variants interleaved, so that a changing load hits them alike
            for label, precond in chosen.items():
                if runs[label] is None:
                    continue
                try:
                    runs[label].append(ginkpy_solve(exec, solver_type, precond, A, b, rtol, args.max_iters))
                except ValueError as err:  # a matrix that is not SPD, a singular ISAI system
                    print(f"{label:<26}  failed: {err}")
                    runs[label] = None
        for label, results in runs.items():
            if results:
                # the repetition of median total time
                row = (label, *sorted(results, key=lambda r: r[2] + r[3])[len(results) // 2])
                rows.append(row)
                print(_row(*row))
        sys.stdout.flush()
    library = []
    for lib in ([] if args.no_scipy else ["scipy"]) + (["cupy"] if cupy is not None else []):
        for row in library_solves(lib, S_host, b_host, symmetric, rtol, args.max_iters, args.solvers):
            library.append(row)
            print(_row(*row))
            sys.stdout.flush()
    best_ilu = _best(rows, lambda n: "jacobi" not in n)
    jacobi = _best(rows, lambda n: "jacobi" in n)
    if best_ilu is None:
        print("ratios: no ILU-type ginkpy solve converged")
        return
    total = best_ilu[3] + best_ilu[4]
    parts = [f"fastest ILU-type ginkpy solve: {best_ilu[0]} {total:.3f} s"]
    for label, other in (("ginkpy Jacobi", jacobi), ("SciPy", _best(library, lambda n: n.startswith("scipy"))),
                         ("CuPy", _best(library, lambda n: n.startswith("cupy")))):
        if other is not None:
            parts.append(f"x {label} ({other[0]}, {other[3] + other[4]:.3f} s): {(other[3] + other[4]) / total:.2f}")
    print("ratios: " + "; ".join(parts))


def _count_iterations(exec, solver_type, precond, A, b, rtol, max_iters) -> str:
    try:
        its, converged, _, _ = ginkpy_solve(exec, solver_type, precond, A, b, rtol, max_iters)
    except ValueError as err:
        return f"error ({str(err)[:30]})"
    return f"{its}" if converged else f"{its}!"


def iteration_table(args, exec, name, S_host) -> None:
    """One row: iterations of exact ILU(0)/IC(0), the default and ilut, beside spilu's."""
    symmetric = abs(S_host - S_host.T).max() <= 1e-12 * abs(S_host).max()
    rtol = 1e-8 if args.dtype == "float64" else 1e-5
    A = gk.matrix.Csr.from_scipy(exec, S_host)
    b_host = S_host @ np.ones(S_host.shape[0], S_host.dtype)
    b = gk.matrix.Dense.from_numpy(exec, b_host)
    names = ("ic0_exact", "ic", "ilut") if symmetric else ("ilu0_exact", "ilu", "ilut")
    precs = {**variants(symmetric), "ilut": variants(False)["ilut"]}
    row = []
    for solver_type in (S.Gmres, S.Cg if symmetric else S.Bicgstab):
        # (spilu's factors are not symmetric: no CG with them)
        counts = ["-" if solver_type is S.Cg and n == "ilut" else
                  _count_iterations(exec, solver_type, precs[n], A, b, rtol, args.max_iters) for n in names]
        ratio = (f"{int(counts[1]) / max(int(counts[0]), 1):.2f}" if counts[0].isdigit() and counts[1].isdigit()
                 else "-")
        row += counts + [ratio]
    spilu = {r[0].split()[1].split("+")[0]: f"{r[1]}{'' if r[2] else '!'}" for r in
             library_solves("scipy", S_host, b_host, False, rtol, args.max_iters, ["gmres", "bicgstab"])
             if "ilu" in r[0]} if not args.no_scipy else {}
    row = row[:4] + [spilu.get("gmres", "-")] + row[4:] + [spilu.get("bicgstab", "-")]
    print(f"{name:<24}" + "".join(f"{c:>10}" for c in row))
    sys.stdout.flush()


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [250_000], ["convection_diffusion_2d", "poisson_2d"])
    p.add_argument("--max-iters", type=int, default=10_000, help="iteration limit of every solve")
    p.set_defaults(reps=1)  # whole solves: --reps N repeats them interleaved and reports the medians
    p.add_argument("--skip", nargs="*", default=[],
                   help="variants or factorizations to leave out (e.g. parilut parict ilu0_exact)")
    p.add_argument("--no-scipy", action="store_true", help="leave out SciPy's solves (slow for large problems)")
    p.add_argument("--solvers", nargs="+", default=["bicgstab", "gmres", "cg"], choices=["bicgstab", "gmres", "cg"],
                   help="the Krylov solvers to run (CuPy's cgs stands in for its missing bicgstab)")
    p.add_argument("--iterations", action="store_true",
                   help="print only iteration counts: exact ILU(0)/IC(0), the default, ilut and SciPy's spilu")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    if args.iterations:
        print(f"ginkpy executor: {bc.device_name(exec)}; GMRES(30) and BiCGStab (CG if symmetric) iterations to "
              f"rtol 1e-8, b = A 1; '!': not converged in --max-iters; ratio: default / exact")
        print(f"{'matrix':<24}" + "".join(f"{c:>10}" for c in ("G exact", "G default", "G ilut", "G ratio",
                                                               "G spilu", "B exact", "B default", "B ilut",
                                                               "B ratio", "B spilu")))
        for name, S_host in bc.matrices(args, exec, keep=lambda m: m.shape[0] == m.shape[1]):
            iteration_table(args, exec, name, sp.csr_matrix(S_host))
        return 0
    cupy = bc.import_cupy(args.no_cupy)
    print(f"ginkpy executor: {bc.device_name(exec)}; value type {args.dtype}; "
          f"rtol {1e-8 if args.dtype == 'float64' else 1e-5:g}; each solve run {args.reps} time(s) after a warm-up")
    # warm-up: compile the kernels of every combination on a small problem
    for symmetric, m in ((False, problems.convection_diffusion_2d(12)), (True, problems.poisson_2d(12))):
        W = gk.matrix.Csr.from_scipy(exec, m.astype(args.dtype))
        w = gk.matrix.Dense.from_numpy(exec, m @ np.ones(m.shape[0]), args.dtype)
        for precond in variants(symmetric).values():
            for solver_type in ([S.Cg] if symmetric else [S.Bicgstab, S.Gmres]):
                ginkpy_solve(exec, solver_type, precond, W, w, 1e-6, 100)
    for name, S_host in bc.matrices(args, exec, keep=lambda m: m.shape[0] == m.shape[1]):
        bench_matrix(args, exec, cupy, name, sp.csr_matrix(S_host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
