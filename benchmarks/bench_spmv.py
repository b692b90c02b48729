"""SpMV y = A x: ginkpy beside SciPy (host) and, with CuPy on an NVIDIA GPU, cuSPARSE.

Achieved bandwidth counts the bytes an SpMV must move at least: values, column indices and row
pointers of A, x read once and y written once; it is compared with the copy bandwidth of the
same memory, measured in the same run.

    python benchmarks/bench_spmv.py [--sizes ROWS ...] [--problems ...] [--mtx-dir DIR]
                                    [--executor opencl|reference] [--strategy NAME ...]
"""
from __future__ import annotations

import sys

import numpy as np

import bench_common as bc
import ginkpy as gk
from ginkpy.opencl.matrix.csr_strategy import CACHE_KEY, STRATEGIES, select_strategy


def spmv_bytes(S) -> int:
    n, m = S.shape
    item = S.dtype.itemsize
    return S.nnz * (item + 4) + (n + 1) * 4 + m * item + n * item


def main() -> int:
    p = bc.parser(__doc__.split("\n")[0], [10_000, 490_000], list(bc.GENERATORS))
    p.add_argument("--strategy", choices=STRATEGIES,
                   help="force the OpenCL SpMV strategy (default: chosen per matrix)")
    p.add_argument("--work-group", type=int, help="force the OpenCL work-group size")
    p.add_argument("--lanes", type=int, help="vector strategy: work-items per row")
    p.add_argument("--items", type=int,
                   help="merge_path: path steps per work-item; row_blocks: per block")
    args = p.parse_args()
    exec = gk.executor(args.executor)
    forced = {k: v for k, v in (("name", args.strategy), ("work_group", args.work_group),
                                ("lanes", args.lanes), ("items", args.items)) if v is not None}
    cupy = bc.import_cupy(args.no_cupy)

    copy = bc.copy_bandwidth(exec, args.reps)
    print(f"ginkpy executor: {bc.device_name(exec)}, copy bandwidth {copy / 1e9:.1f} GB/s")
    host_copy = bc.copy_bandwidth(gk.ReferenceExecutor(), args.reps)
    print(f"SciPy on the host: copy bandwidth {host_copy / 1e9:.1f} GB/s")
    if cupy is not None:
        cupy_copy = bc.cupy_copy_bandwidth(cupy, args.reps)
        print(f"CuPy (cuSPARSE) on {bc.cupy_device(cupy)}: "
              f"copy bandwidth {cupy_copy / 1e9:.1f} GB/s")
    print(f"value type {args.dtype}; times are the median of {args.reps} repetitions, ms per SpMV\n")
    header = (f"{'matrix':<22}{'rows':>10}{'nnz':>11}  {'strategy':<11}{'ginkpy':>9}{'GB/s':>8}{'%copy':>7}"
              f"{'scipy':>9}{'GB/s':>8}{'cupy':>9}{'GB/s':>8}{'%copy':>7}{'x scipy':>9}{'x cupy':>8}")
    bc.print_header(header)
    failures = 0
    for name, S in bc.matrices(args, exec):
        n, m = S.shape
        nbytes = spmv_bytes(S)
        rng = np.random.default_rng(0)
        x_host = rng.standard_normal(m).astype(S.dtype)

        # ginkpy
        A = gk.matrix.Csr.from_scipy(exec, S)
        strategy = "-"
        if forced and not isinstance(exec, gk.ReferenceExecutor):
            select_strategy(exec, A, **forced)
        x = gk.matrix.Dense.from_numpy(exec, x_host)
        y = gk.matrix.Dense.zeros(exec, (n, 1), S.dtype)
        t_gk = bc.measure(lambda: A.apply(x, y), exec.synchronize, args.reps)
        if CACHE_KEY in A.cache:
            strategy = A.cache[CACHE_KEY].name

        # SciPy, which is also the check of ginkpy's result
        y_ref = S @ x_host
        t_sp = bc.measure(lambda: S @ x_host, lambda: None, args.reps)
        scale = abs(S) @ np.abs(x_host.astype(np.float64))
        wrong = not (np.abs(y.to_numpy()[:, 0] - y_ref) <= 100 * np.finfo(S.dtype).eps * scale).all()
        failures += wrong

        # CuPy / cuSPARSE
        t_cp = None
        if cupy is not None:
            import cupyx.scipy.sparse as cusp
            A_cp = cusp.csr_matrix(S)
            x_cp = cupy.asarray(x_host)
            t_cp = bc.measure(lambda: A_cp @ x_cp, cupy.cuda.Device().synchronize, args.reps)

        gbs = lambda t: None if t is None else nbytes / t / 1e9  # noqa: E731
        print(f"{name:<22}{n:>10}{S.nnz:>11}  {strategy:<11}{t_gk * 1e3:>9.3f}{gbs(t_gk):>8.1f}"
              f"{100 * nbytes / t_gk / copy:>6.0f}%{t_sp * 1e3:>9.3f}{gbs(t_sp):>8.1f}"
              f"{bc.fmt(t_cp and t_cp * 1e3, '.3f'):>9}{bc.fmt(gbs(t_cp), '.1f'):>8}"
              f"{bc.fmt(t_cp and 100 * nbytes / t_cp / cupy_copy, '.0f'):>6}{'%' if t_cp else ' '}"
              f"{t_sp / t_gk:>8.2f}x{bc.fmt(t_cp and t_cp / t_gk, '.2f'):>7}{'x' if t_cp else ' '}"
              f"{'  WRONG RESULT' if wrong else ''}")
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
