"""What bench_spmv.py, bench_cg.py and the others share: command line, problems, timing, copy bandwidth,
and the optional CuPy side."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import scipy.sparse as sp

import ginkpy as gk
from ginkpy import problems

GENERATORS = {
    # rows -> matrix: the grid side of the Poisson problems is taken from the row count
    "poisson_2d": lambda rows: problems.poisson_2d(max(2, round(rows ** 0.5))),
    "poisson_3d": lambda rows: problems.poisson_3d(max(2, round(rows ** (1 / 3)))),
    "power_law": problems.power_law,
    "arrow": problems.arrow,
    "webbase_like": problems.webbase_like,
}
COMPLEX_GENERATORS = {
    # complex matrices, for the complex value types only; grid side from the row count
    "magnetic_2d": lambda rows: problems.magnetic_laplacian_2d(max(2, round(rows ** 0.5))),  # Hermitian pos. def.
    "helmholtz_2d": lambda rows: problems.helmholtz_2d(max(2, round(rows ** 0.5))),  # complex symmetric
}
REAL_DTYPES = ("float64", "float32")
COMPLEX_DTYPES = ("complex128", "complex64")


def parser(description: str, default_sizes: list[int], default_problems: list[str],
           dtypes: tuple[str, ...] = REAL_DTYPES) -> argparse.ArgumentParser:
    """The common command line; ``dtypes`` are the value types the script takes (with complex
    ones, the complex problems of COMPLEX_GENERATORS can be chosen too)."""
    p = argparse.ArgumentParser(description=description)
    choices = list(GENERATORS) + (list(COMPLEX_GENERATORS) if set(dtypes) & set(COMPLEX_DTYPES) else [])
    p.add_argument("--sizes", type=int, nargs="+", default=default_sizes,
                   help="rows of the generated problems (a Poisson grid side is the square or cube root)")
    p.add_argument("--problems", nargs="*", default=default_problems, choices=choices,
                   help="generated problems to run (none: only --mtx-dir)")
    p.add_argument("--mtx-dir", type=Path, help="also run every *.mtx file in this directory")
    p.add_argument("--executor", default="opencl", help="ginkpy executor: opencl, opencl:<p>:<d>, reference")
    p.add_argument("--dtype", default="float64", choices=list(dtypes))
    p.add_argument("--reps", type=int, default=7, help="timed repetitions (the median is reported)")
    p.add_argument("--no-cupy", action="store_true", help="skip CuPy even where it is present")
    return p


def matrices(args, exec, keep: Callable[[sp.csr_matrix], bool] = lambda S: True
             ) -> Iterator[tuple[str, sp.csr_matrix]]:
    """(name, SciPy CSR) of each generated problem and size, then of each Matrix Market file
    (read with gk.read), skipping those ``keep`` rejects. A real problem in a complex value
    type is the same matrix with complex values; a complex problem (or file) in a real value
    type is skipped with a note."""
    dtype = np.dtype(args.dtype)
    for name in args.problems:
        if name in COMPLEX_GENERATORS and dtype.kind != "c":
            print(f"({name} is complex: skipped for {dtype}; run it with --dtype complex128 or complex64)")
            continue
        for rows in args.sizes:
            S = {**GENERATORS, **COMPLEX_GENERATORS}[name](rows).astype(dtype)
            if keep(S):
                yield f"{name}:{S.shape[0]}", S
    if args.mtx_dir is not None:
        files = sorted(args.mtx_dir.glob("*.mtx"))
        if not files:
            raise SystemExit(f"no .mtx files in {args.mtx_dir}")
        for path in files:
            try:
                S = gk.read(path, gk.ReferenceExecutor(), dtype=dtype).to_scipy()
            except TypeError:  # a complex file, and a real dtype
                print(f"({path.name} is complex: skipped for {dtype})")
                continue
            if keep(S):
                yield path.stem, S


def measure(run: Callable[[], object], synchronize: Callable[[], None], reps: int,
            min_batch_time: float = 0.02, warmup: int = 2) -> float:
    """Seconds per call of ``run``: the median over ``reps`` repetitions of a batch of
    back-to-back calls followed by one synchronisation, after ``warmup`` calls. The batch is as
    long as it needs to last ``min_batch_time``, so launch latency overlaps the device work as
    it does in a solver, and short calls are not lost in timer resolution."""
    for _ in range(warmup):
        run()
    synchronize()
    start = time.perf_counter()
    run()
    synchronize()
    once = time.perf_counter() - start
    batch = max(1, min(1000, int(min_batch_time / max(once, 1e-7))))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(batch):
            run()
        synchronize()
        times.append((time.perf_counter() - start) / batch)
    return float(np.median(times))


def copy_bandwidth(exec, reps: int) -> float:
    """Bytes per second (read + write) of a large buffer copy in ``exec``'s memory: pyopencl's
    enqueue_copy on an OpenCL device, numpy on the host for the reference executor."""
    if isinstance(exec, gk.ReferenceExecutor):
        nbytes = 256 << 20
        src, dst = np.ones(nbytes // 8), np.empty(nbytes // 8)
        return 2 * nbytes / measure(lambda: np.copyto(dst, src), lambda: None, reps)
    import pyopencl as cl
    nbytes = min(256 << 20, exec.info.global_mem_size // 16) // 8 * 8
    src = cl.Buffer(exec.context, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(exec.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(exec.queue, src, np.float64(1), 0, nbytes)
    seconds = measure(lambda: cl.enqueue_copy(exec.queue, dst, src), exec.synchronize, reps)
    src.release()
    dst.release()
    return 2 * nbytes / seconds


def device_name(exec) -> str:
    if isinstance(exec, gk.ReferenceExecutor):
        return "host (reference executor: numpy/scipy)"
    return f"{exec.info.name} [{exec.info.platform}]"


def import_cupy(skip: bool):
    """The cupy module when CuPy and an NVIDIA GPU are present (and not skipped), else None."""
    return import_cupy_why(skip)[0]


def import_cupy_why(skip: bool):
    """(the cupy module, "") when CuPy and an NVIDIA GPU are present and not skipped, else
    (None, why not) for a benchmark to print."""
    if skip:
        return None, "skipped (--no-cupy)"
    try:
        import cupy
        import cupyx.scipy.sparse  # noqa: F401  (loads cupyx for the callers)
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return None, "no CUDA device"
        return cupy, ""
    except Exception as error:  # no CuPy, no CUDA driver or no GPU: run without it
        return None, f"{type(error).__name__}: {error}"


def executor_and_cupy(args):
    """The ginkpy executor of ``--executor`` and the cupy module (None with ``--no-cupy`` or
    without CuPy and a GPU)."""
    return gk.executor(args.executor), import_cupy(args.no_cupy)


def cupy_device(cupy) -> str:
    """The name of the GPU CuPy runs on."""
    return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()


def print_header(header: str) -> None:
    """A table's header line, underlined."""
    print(header)
    print("-" * len(header))


def cupy_copy_bandwidth(cupy, reps: int) -> float:
    nbytes = 256 << 20
    src, dst = cupy.ones(nbytes // 8), cupy.empty(nbytes // 8)
    return 2 * nbytes / measure(lambda: cupy.copyto(dst, src), cupy.cuda.Device().synchronize, reps)


def fmt(value: float | None, spec: str) -> str:
    """``value`` formatted, or '-' where there is none."""
    return "-" if value is None else format(value, spec)
