"""Orderings beside SciPy's in one run: RCM's bandwidth against
``scipy.sparse.csgraph.reverse_cuthill_mckee``, AMD's fill (the entries of L + U of an exact LU
with diagonal pivots in that order, SuperLU's numeric phase) against SuperLU's COLAMD and
MMD_AT_PLUS_A, and whether Mc64 pays: GMRES(30) with exact ILU(0) on each nonsymmetric
matrix and on a circuit-like matrix with zero diagonals (modified nodal analysis), as it is and
through ``gk.solver.ScaledReordered`` with Mc64 (iterations; a breakdown or zero pivot is
"failed").

    python benchmarks/bench_reorder.py [--mtx-dir ../shared/matrices] [--problems ...] [--sizes ...]

Times are seconds of one call on the host (the orderings run there on every executor).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

import bench_common as bc
import ginkpy as gk
from ginkpy import problems


def circuit(n: int, sources: int | None = None, seed: int = 0) -> sp.csr_matrix:
    """A modified-nodal-analysis matrix [[G, B], [B^T, 0]]: G the conductances of a random
    sparse network (a little leakage to ground), B one column per voltage source between a node
    and ground; the source rows have zero diagonals."""
    rng = np.random.default_rng(seed)
    sources = sources or max(1, n // 10)
    edges = rng.integers(0, n, (3 * n, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    g = rng.uniform(0.1, 10.0, len(edges))
    W = sp.coo_matrix((g, (edges[:, 0], edges[:, 1])), shape=(n, n))
    W = W + W.T
    G = sp.diags(np.asarray(W.sum(axis=1)).ravel() + 1e-3) - W
    B = sp.coo_matrix((np.ones(sources), (rng.choice(n, sources, replace=False), np.arange(sources))),
                      shape=(n, sources))
    return sp.bmat([[G, B], [B.T, None]]).tocsr()


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _bandwidth(A, perm) -> int:
    B = sp.csr_matrix(A)[perm][:, perm].tocoo()
    return int(np.abs(B.row - B.col).max()) if B.nnz else 0


def _fill(A, perm) -> int:
    lu = spla.splu(sp.csc_matrix(A)[perm][:, perm].tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0,
                   options={"SymmetricMode": True})
    return lu.L.nnz + lu.U.nnz


def _gmres_ilu(exec, A: sp.csr_matrix, mc64: bool) -> str:
    crit = (gk.stop.Iteration.build().with_max_iters(3000), gk.stop.ResidualNorm.build().with_reduction_factor(1e-8))
    ilu = gk.config.short_names("preconditioner")["ilu0_exact"].build()
    inner = gk.solver.Gmres.build().with_krylov_dim(30).with_preconditioner(ilu).with_criteria(*crit)
    params = inner if not mc64 else \
        gk.solver.ScaledReordered.build().with_reordering(gk.reorder.Mc64.build()).with_inner_operator(inner)
    b = gk.matrix.Dense.from_numpy(exec, A @ np.ones(A.shape[0]))
    log = gk.log.Convergence()
    try:
        start = time.perf_counter()
        solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
        (solver.inner_operator if mc64 else solver).add_logger(log)
        solver.apply(b, b.empty_like().fill(0.0))
        seconds = time.perf_counter() - start
    except ValueError as err:
        return f"failed ({str(err)[:40]}...)"
    if not log.has_converged:
        return f"failed ({log.stop_reason})"
    return f"{log.num_iterations} it, {seconds:.2f} s"


def main() -> None:
    p = bc.parser(__doc__.splitlines()[0], [99856], ["poisson_2d", "poisson_3d", "power_law"])
    p.set_defaults(executor="reference")
    args = p.parse_args()
    host = gk.ReferenceExecutor()
    rng = np.random.default_rng(0)
    print(f"{'matrix':22s} {'rows':>7s} | {'RCM bw':>7s} {'s':>6s} {'SciPy bw':>8s} {'s':>6s} | "
          f"{'AMD fill':>10s} {'s':>6s} {'COLAMD':>10s} {'MMD_AT+A':>10s}")
    for name, S in bc.matrices(args, host):
        S = sp.csr_matrix(S, dtype=np.float64)
        # RCM of a generated matrix in a shuffled numbering (its own is banded already); the fill
        # orderings in the original one (SuperLU's MMD takes minutes on a shuffled grid)
        shuffled = S
        if name.startswith(("poisson", "power")):
            shuffle = rng.permutation(S.shape[0])
            shuffled = S[shuffle][:, shuffle].tocsr()
        A = gk.matrix.Csr.from_scipy(host, shuffled)
        rcm, t_rcm = _timed(lambda: gk.reorder.Rcm.build().on(host).generate(A).to_numpy())
        sci, t_sci = _timed(lambda: csgraph.reverse_cuthill_mckee(shuffled, symmetric_mode=False))
        A = gk.matrix.Csr.from_scipy(host, S)
        amd, t_amd = _timed(lambda: gk.reorder.Amd.build().on(host).generate(A).to_numpy())
        fills = []
        for spec in ("COLAMD", "MMD_AT_PLUS_A"):
            lu = spla.splu(sp.csc_matrix(S), permc_spec=spec)
            fills.append(lu.L.nnz + lu.U.nnz)
        print(f"{name:22s} {S.shape[0]:7d} | {_bandwidth(shuffled, rcm):7d} {t_rcm:6.3f} {_bandwidth(shuffled, sci):8d} "
              f"{t_sci:6.3f} | {_fill(S, amd):10d} {t_amd:6.3f} {fills[0]:10d} {fills[1]:10d}")
    exec = gk.executor(args.executor)
    print(f"\nMc64: GMRES(30) + exact ILU(0), rtol 1e-8, on {args.executor}")
    print(f"{'matrix':22s} {'plain':>34s} {'Mc64 (ScaledReordered)':>34s}")
    cases = [(f"circuit:{n}", circuit(n)) for n in (2000, 20000)]
    if args.mtx_dir is not None:
        for path in sorted(args.mtx_dir.glob("*.mtx")):
            S = gk.read(path, host).to_scipy()
            if abs(S - S.T).max() > 0:
                cases.append((path.stem, S))
    for name, S in cases:
        print(f"{name:22s} {_gmres_ilu(exec, S, False):>34s} {_gmres_ilu(exec, S, True):>34s}")


if __name__ == "__main__":
    main()
