"""The sparse product C = A B (``Csr.multiply``) and smoothed aggregation's setup, made on the
device, beside SciPy (and CuPy's cuSPARSE SpGEMM on an NVIDIA GPU) and beside the host path
they replace; same-run ratios.

For each problem: the products of one smoothed aggregation level (S P_t, A P, R (A P) with
R = P^T, and the transpose), each timed as a new product and as a values-only update
(``out=``). The setup itself builds P = S P_t from S's rows and the aggregates without a
product (P_t has one entry per row); the row "S P_t (SpGEMM)" times the general product on the
same operands, for comparison. Then the Pgm level itself: plain (piecewise constant) aggregation, smoothed
aggregation made on the device, the same made on the host with SciPy (:class:`HostSmoothedPgm`,
ginkpy's path before the device SpGEMM) and the device level's ``update()`` (new values on the
same pattern).

    python benchmarks/bench_spgemm.py [--sizes ROWS ...] [--problems poisson_2d poisson_3d] [--reps 5]

Whole AMG-CG solves with smoothed aggregation: ``bench_amg.py --methods ginkpy-amg
ginkpy-amg-sa ginkpy-amg-sa-host ...`` (see its docstring).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

import bench_common as bc
import ginkpy as gk
from ginkpy.core.matrix.spgemm import transpose_values, transpose_with_source


def host_smoothed_prolongation(S: sp.csr_matrix, agg: np.ndarray, num_agg: int, relax: float) -> tuple:
    """Smoothed aggregation on the host with SciPy (ginkpy's Pgm before the device SpGEMM):
    P = (I - w D^-1 A) P_t, w = relax / rho (Gershgorin), R = P^T and R A P, three (row
    pointers, column indices, values) triples, sorted."""
    n = S.shape[0]
    inv_diag = 1 / S.diagonal()
    rho = float(np.max(np.abs(inv_diag) * np.asarray(abs(S).sum(axis=1)).ravel(), initial=0.0)) or 1.0
    tentative = sp.csr_matrix((np.ones(n, S.dtype), agg, np.arange(n + 1)), shape=(n, num_agg))
    smoothing = sp.csr_matrix((S.data.copy(), agg[S.indices], S.indptr.copy()), shape=(n, num_agg))
    smoothing.sum_duplicates()
    smoothing.data *= np.repeat(inv_diag * (-relax / rho), np.diff(smoothing.indptr)).astype(S.dtype, copy=False)
    p = (tentative + smoothing).tocsr()
    r = p.T.tocsr()
    out = []
    for m in (p, r, (r @ (S @ p)).tocsr()):
        m.sort_indices()
        out.append((m.indptr.astype(np.int32), m.indices.astype(np.int32), m.data.astype(S.dtype, copy=False)))
    return tuple(out)


class HostSmoothedPgm(gk.multigrid.Pgm):
    """Pgm whose smoothed aggregation (P, R = P^T, R A P) is made on the host with SciPy and
    copied to the executor, as before the device SpGEMM: the baseline of the "-host" methods
    (no update())."""

    def _smooth(self) -> None:
        exec, A = self.executor, self.fine_op
        triples = host_smoothed_prolongation(A.to_scipy(), exec.to_host(self.agg), self.num_aggregates,
                                             self.parameters.prolongation_relax)
        n, m = A.shape[0], self.num_aggregates
        self._prolong_op, self._restrict_op, self.coarse_op = (
            gk.matrix.Csr(exec, shape, *(exec.from_host(v) for v in arrays))
            for shape, arrays in zip(((n, m), (m, n), (m, m)), triples))


def _timed(run, exec, reps: int) -> float:
    """Median seconds of ``run()`` (synchronized) over ``reps`` calls after one warm-up."""
    run()
    exec.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        exec.synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def products(exec, cupy, S: sp.csr_matrix, passes: int, reps: int) -> None:
    """The products of one smoothed aggregation level: ginkpy on the device (new and values
    only), SciPy on the host, CuPy (cuSPARSE) where present."""
    level = gk.multigrid.Pgm.build().with_aggregation_passes(passes).with_prolongation_relax(4 / 3).on(exec) \
        .generate(gk.matrix.Csr.from_scipy(exec, S))
    sa = level._sa_products
    A, P, AP, R = sa.fine, sa.prolong, sa.fine_prolonged, sa.restrict
    host = {name: m.to_scipy() for name, m in (("S", sa.smoother), ("Pt", sa.tentative), ("A", A), ("P", P),
                                                ("AP", AP), ("R", R))}
    cases = [("S P_t (SpGEMM)", sa.smoother, sa.tentative, P, "S", "Pt"), ("A P", A, P, AP, "A", "P"),
             ("R (A P)", R, AP, sa.coarse, "R", "AP")]
    bc.print_header(f"{'product':<15}{'nnz':>11}{'ginkpy':>10}{'values':>10}{'scipy':>10}{'cupy':>10}"
                    f"{'x scipy':>9}{'x cupy':>8}")
    for name, a, b, c, ha, hb in cases:
        new = _timed(lambda: a.multiply(b), exec, reps)
        values = _timed(lambda: a.multiply(b, out=c), exec, reps)
        scipy_time = _timed(lambda: host[ha] @ host[hb], exec, reps)
        cupy_time = None
        if cupy is not None:
            ca, cb = (_cupy_csr(host[h]) for h in (ha, hb))
            cupy_time = _timed(lambda: ca @ cb, _CupySync(cupy), reps)
        ratio = "" if cupy_time is None else f"{cupy_time / new:8.2f}"
        print(f"{name:<15}{c.nnz:>11}{1e3 * new:10.2f}{1e3 * values:10.2f}{1e3 * scipy_time:10.2f}"
              f"{'-' if cupy_time is None else f'{1e3 * cupy_time:.2f}':>10}{scipy_time / new:9.2f}{ratio}")
    t_new = _timed(lambda: transpose_with_source(P, conjugate=True), exec, reps)
    t_values = _timed(lambda: transpose_values(P, R, sa.source, conjugate=True), exec, reps)
    t_scipy = _timed(lambda: host["P"].T.tocsr(), exec, reps)
    print(f"{'R = P^T':<15}{R.nnz:>11}{1e3 * t_new:10.2f}{1e3 * t_values:10.2f}{1e3 * t_scipy:10.2f}"
          f"{'-':>10}{t_scipy / t_new:9.2f}  (times in ms)")


def _cupy_csr(M):
    """M on the GPU as a CuPy CSR matrix."""
    import cupyx.scipy.sparse as csp
    return csp.csr_matrix(M)


class _CupySync:
    """Stands in for an executor in :func:`_timed`: waits for CuPy's device."""

    def __init__(self, cupy) -> None:
        self.cupy = cupy

    def synchronize(self) -> None:
        self.cupy.cuda.Device().synchronize()


def levels(exec, S: sp.csr_matrix, passes: int, reps: int) -> None:
    """One Pgm level: plain, smoothed on the device, smoothed on the host, and the device
    level's update(), interleaved, medians."""
    A = gk.matrix.Csr.from_scipy(exec, S)
    pgm = gk.multigrid.Pgm.build().with_aggregation_passes(passes)
    factories = {"plain PGM": pgm.on(exec),
                 "SA device": gk.multigrid.Pgm.build().with_aggregation_passes(passes).with_prolongation_relax(4 / 3)
                 .on(exec),
                 "SA host": HostSmoothedPgm.build().with_aggregation_passes(passes).with_prolongation_relax(4 / 3)
                 .on(exec)}
    times: dict = {name: [] for name in [*factories, "SA device update"]}
    for f in factories.values():
        f.generate(A)
    for _ in range(reps):
        for name, f in factories.items():
            exec.synchronize()
            start = time.perf_counter()
            level = f.generate(A)
            exec.synchronize()
            times[name].append(time.perf_counter() - start)
            if name == "SA device":
                start = time.perf_counter()
                level.update()
                exec.synchronize()
                times["SA device update"].append(time.perf_counter() - start)
    med = {name: 1e3 * float(np.median(v)) for name, v in times.items()}
    print("level setup (ms): " + ", ".join(f"{name} {value:.1f}" for name, value in med.items()))
    print(f"  smoothed on the device: {med['SA host'] / med['SA device']:.2f}x as fast as on the host, "
          f"{med['SA device'] / med['plain PGM']:.2f}x the plain level's time; its update "
          f"{med['SA device update'] / med['SA device']:.2f}x its generation")


def main() -> int:
    p = bc.parser(__doc__.split("\n\n")[0], [160_000], ["poisson_2d", "poisson_3d"])
    args = p.parse_args()
    exec, cupy = bc.executor_and_cupy(args)
    print(f"ginkpy executor: {bc.device_name(exec)}; SciPy on the host"
          f"{'; CuPy on ' + bc.cupy_device(cupy) if cupy is not None else ''}; float64, medians of {args.reps}\n")
    for problem in args.problems:
        for rows in args.sizes:
            S = bc.GENERATORS[problem](rows).tocsr()
            passes = 3 if problem.endswith("3d") else 2
            print(f"{problem}:{S.shape[0]} ({passes} aggregation passes)")
            products(exec, cupy, S, passes, args.reps)
            levels(exec, S, passes, args.reps)
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
