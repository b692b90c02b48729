"""Shared fixtures: the executors under test and the real matrices of ../shared/matrices."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason

# The suite keeps the program record of builds up front (ginkpy/opencl/program_record.py) in a
# directory of its own, not the user's ~/.cache/ginkpy: a run neither depends on what earlier runs
# recorded (a generate builds every program recorded for its signature) nor leaves records behind.
if "GINKPY_CACHE_DIR" not in os.environ:
    os.environ["GINKPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="ginkpy-tests-")
    atexit.register(shutil.rmtree, os.environ["GINKPY_CACHE_DIR"], True)

# PoCL compiles the suite's kernels without LLVM's optimizations (clang's -cl-opt-disable, which
# PoCL adds to every clBuildProgram and also applies when it makes a kernel's work-group function
# at its first launch per local size): a cold run of the suite is mostly PoCL optimizing kernels
# the tests then launch a few times each (Gmres' orthogonalize in the GPU layout: 36 s of CPU
# optimized, 3 s not). The tests hold the kernels' results, not the optimizer's; the GPU check
# (scripts/device_check.sh) and every use outside the suite keep the driver's optimizations.
# Set POCL_EXTRA_BUILD_FLAGS yourself (empty: PoCL's default) to run the suite otherwise. Only
# PoCL reads this variable; it is set before any OpenCL context exists (importing ginkpy makes
# none), and subprocesses of the tests (CLI, mpiexec) inherit it.
os.environ.setdefault("POCL_EXTRA_BUILD_FLAGS", "-cl-opt-disable")

# Every device's local memory is taken as at most an NVIDIA GPU's 48 KiB
# (ginkpy/opencl/device_selection.py): PoCL's is far larger, and a launch that needs more than a
# GPU has passed CI and failed only on the GPU (Gmres' orthogonalize at 301 columns, 2026-12-07).
# So every layout budgets, and every launch is checked, as on an NVIDIA GPU (AMD's have 64 KiB).
# Set GINKPY_OPENCL_LOCAL_MEM yourself to test another size.
os.environ.setdefault("GINKPY_OPENCL_LOCAL_MEM", "49152")

# The real matrices live beside the checkout; GINKPY_MATRICES points elsewhere (e.g. on another machine).
PROJECT = Path(__file__).resolve().parents[1]  # the repository root (tests mirror ginkpy/ below tests/)
MATRICES = Path(os.environ.get("GINKPY_MATRICES") or PROJECT.parent / "shared" / "matrices")


def _opencl():
    try:
        return gk.OpenCLExecutor()
    except Exception as err:  # no pyopencl platform on this machine
        pytest.skip(f"no OpenCL device: {err}")


@pytest.fixture(scope="session")
def ref():
    return gk.ReferenceExecutor()


@pytest.fixture(scope="session")
def ocl():
    """The OpenCL executor (PoCL in CI, the GPU where there is one); skips without a device."""
    return _opencl()


@pytest.fixture(scope="session", params=["reference", "opencl"])
def exec(request):
    """Each executor in turn, for tests that must pass on both."""
    return gk.ReferenceExecutor() if request.param == "reference" else _opencl()


@pytest.fixture
def rng():
    return np.random.default_rng(42)


def matrix_path(name: str) -> Path:
    """Path of a real matrix in ../shared/matrices; skips the test when it is absent."""
    path = MATRICES / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def tol(dtype) -> float:
    """About 10 machine epsilons of ``dtype``: the reference-vs-device tolerance."""
    return 10 * np.finfo(dtype).eps


# -- twins: a kernel on the reference executor and on the device, on the same inputs -------------

def _to_exec(exec, value, dtype):
    """A test input on ``exec``: float and complex numpy arrays become Dense of ``dtype`` (1-D as n x 1),
    other numpy arrays (stop status, flags, indices) raw executor arrays, SciPy sparse
    matrices Csr; anything else is passed as it is."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return gk.matrix.Dense.from_numpy(exec, value, dtype)
        return exec.from_host(value)
    if sp.issparse(value):
        return gk.matrix.Csr.from_scipy(exec, value, dtype)
    return value


def _to_host(exec, value):
    if isinstance(value, gk.matrix.Dense):
        return value.to_numpy()
    if isinstance(value, gk.matrix.Csr):
        return value.to_scipy().toarray()
    if isinstance(value, (np.ndarray,)) or type(value).__module__.startswith("pyopencl"):
        return exec.to_host(value)
    return value


def criteria(max_iters: int = 300, reduction: float | None = 1e-12) -> list:
    """Iteration(max_iters) and, unless ``reduction`` is None, ResidualNorm(reduction)."""
    crit = [gk.stop.Iteration.build().with_max_iters(max_iters)]
    if reduction is not None:
        crit.append(gk.stop.ResidualNorm.build().with_reduction_factor(reduction))
    return crit


def solver_params(name: str, criteria_=None, **params):
    """gk.solver.<name> parameters with ``criteria_`` (default :func:`criteria`) and each
    ``key=value`` of ``params`` set through ``with_<key>``."""
    p = getattr(gk.solver, name).build().with_criteria(*(criteria_ or criteria()))
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    return p


def solve(exec, name: str, A, b, x0=None, criteria=None, dtype=np.float64, **params):
    """Solve A x = b (scipy/numpy A and b, x0 default 0) with gk.solver.<name> on ``exec``;
    returns x as a numpy array and the Convergence logger."""
    A = gk.matrix.Csr.from_scipy(exec, sp.csr_matrix(A), dtype)
    b = gk.matrix.Dense.from_numpy(exec, b, dtype)
    x = gk.matrix.Dense.from_numpy(exec, np.zeros(b.shape) if x0 is None else x0, dtype)
    solver = solver_params(name, criteria, **params).on(exec).generate(A)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    solver.apply(b, x)
    return x.to_numpy(), logger


def as_scipy(exec, method: str, A, b, rtol: float = 1e-8, scipy_kwargs: dict | None = None, **kwargs):
    """``gk.linalg.<method>`` on ``exec`` against ``scipy.sparse.linalg.<method>`` on A x = b:
    both converge (info 0), ginkpy in at most 1.5 times SciPy's iterations (each counted by its
    callback) and to a true residual within rtol ||b||. Returns ginkpy's x and copies of the
    iterates its callback saw."""
    import scipy.sparse.linalg as spla
    theirs, ours = [], []
    info_s = getattr(spla, method)(A, b, rtol=rtol, callback=lambda xk: theirs.append(1), **(scipy_kwargs or {}))[1]
    x, info = getattr(gk.linalg, method)(A, b, rtol=rtol, executor=exec, callback=lambda xk: ours.append(xk.copy()),
                                         **kwargs)
    assert info == info_s == 0, (info, info_s)
    assert len(ours) <= 1.5 * len(theirs), (len(ours), len(theirs))
    assert np.linalg.norm(b - A @ x) <= rtol * np.linalg.norm(b)
    return x, ours


def assert_columns_as_alone(exec, name: str, A, dtype) -> None:
    """gk.solver.<name> on three right-hand sides of A (random, zero, A e_0) at once: every
    column converges (x = 0 for b = 0 at once), each in the iterations and to the x of its
    solve alone."""
    n = A.shape[0]
    rng = np.random.default_rng(5)
    B = random_values(rng, (n, 3), dtype)
    B[:, 1] = 0
    B[:, 2] = A @ np.eye(n)[:, 0]
    X, log = solve(exec, name, A, B, criteria=criteria(400, 1e-10), dtype=dtype)
    assert log.has_converged
    np.testing.assert_array_equal(X[:, 1], 0)
    assert (np.linalg.norm(B - A @ X, axis=0) <= 1e-10 * np.linalg.norm(B, axis=0)).all()
    for j in (0, 2):
        x, single = solve(exec, name, A, B[:, [j]], criteria=criteria(400, 1e-10), dtype=dtype)
        assert log.result.iterations[j] == single.result.iterations[0]
        np.testing.assert_allclose(X[:, j], x[:, 0], rtol=1e-8, atol=1e-12)


def residual_rounding(A, x, b) -> np.ndarray:
    """Per column, how far two computations of ||b - A x|| may differ by rounding alone (rows
    summed in another order, with or without FMA, in ginkpy and in SciPy): each entry of
    b - A x is off by at most (longest row + 1) eps (|A| |x| + |b|), twice for two computations."""
    A = sp.csr_matrix(A)
    x = np.asarray(x, dtype=np.float64).reshape(A.shape[1], -1)
    b = np.asarray(b, dtype=np.float64).reshape(A.shape[0], -1)
    longest = int(np.diff(A.indptr).max(initial=0))
    eps = np.finfo(np.float64).eps
    return 2 * (longest + 1) * eps * np.linalg.norm(abs(A) @ np.abs(x) + np.abs(b), axis=0)


def reduction_tol(dtype, n: int) -> float:
    """Relative tolerance for a sum of n terms of one sign (a norm, b . b) computed in two orders:
    a sequential stretch of up to n terms (a CPU device's layout) gathers rounding errors like a
    random walk, about sqrt(n) eps; never below :func:`tol`."""
    return max(tol(dtype), 2 * np.sqrt(n) * np.finfo(dtype).eps)


# -- twin of the solve-loop kernels: partial sums, a device stop state, shared arguments --------

def taken_for(ocl, kind: str):
    """A new executor on ``ocl``'s device that takes itself for a CPU (``kind`` "cpu") or a GPU
    ("gpu"), whatever the device is (``info.is_cpu`` / ``is_gpu`` set): its launch layouts and
    per-device choices are those of that kind, so that PoCL also runs a GPU's and a GPU a CPU's."""
    import attrs
    exe = gk.OpenCLExecutor(ocl.device)
    exe.info = attrs.evolve(ocl.info, is_cpu=kind == "cpu", is_gpu=kind == "gpu")
    return exe


# The GPU layout's kernels (large work-groups, tree sums in local memory) took PoCL 1-480 s each
# to optimize, most of a cold run (1213 s of work-group compilation in its 339 tests, main at
# 9b5b6c4); without optimizations (POCL_EXTRA_BUILD_FLAGS above) its tests take 30 s in all, cold.
# The fast tier (-m "not slow") runs every twin in the CPU layout, the full suite in both.
@pytest.fixture(scope="session", params=["cpu_layout", pytest.param("gpu_layout", marks=pytest.mark.slow)])
def dev(request, ocl):
    """The device executor launching as on a CPU or as on a GPU (:func:`taken_for`); the GPU
    layout is a slow test (PoCL compiles its kernels for seconds each)."""
    return taken_for(ocl, request.param.removesuffix("_layout"))


def sum_tol(dtype, terms: int) -> float:
    """The tolerance of a sum of ``terms`` terms relative to the sum of their magnitudes:
    :func:`tol` grown with sqrt(terms), as rounding errors of any summation order grow."""
    return tol(dtype) * max(1.0, float(np.sqrt(terms)))


def assert_sums(device, reference, magnitude, terms: int, dtype, what: str = "partial sums", factor: float = 1.0):
    """Partial sums (groups x count on the device, 1 x count on the reference) whose sums over
    the rows agree within ``factor`` x :func:`sum_tol` of ``magnitude`` (per column: the sum of
    |terms|); ``factor`` > 1 where the terms themselves differ by more than a rounding (computed
    in the same kernel from other sums)."""
    device, reference = np.asarray(device), np.asarray(reference)
    assert reference.shape[0] == 1 and device.shape[1:] == reference.shape[1:], (what, device.shape, reference.shape)
    err = np.abs(device.astype(np.float64).sum(axis=0) - reference.astype(np.float64).sum(axis=0))
    bound = factor * sum_tol(dtype, terms) * np.asarray(magnitude, np.float64)
    assert (err <= bound).all(), f"{what}: error {err.max():.3g} > {bound[np.argmax(err - bound)]:.3g}"


PARTIAL_GROUPS = 37  # partial sums per column given to a consumer kernel: more than its lanes


def random_partials(rng, sums, dtype, groups: int = PARTIAL_GROUPS) -> np.ndarray:
    """``groups`` x count partial sums, as a reduction kernel writes them, that add up to about
    ``sums`` (count values): random shares of one sign per column, so that their sum rounds
    like one of positive terms; exactly 0 where the sum is 0, NaN where it is NaN."""
    sums = np.asarray(sums, np.float64).ravel()
    weights = rng.uniform(0.5, 1.5, (groups, sums.size))
    return (weights / weights.sum(axis=0) * sums).astype(dtype)


def random_values(rng, shape, dtype) -> np.ndarray:
    """Standard normal values of ``dtype``, real and imaginary parts for a complex type."""
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


HISTORY_UNSET = -1.0  # what a stop state's history holds where no check wrote (norms are >= 0)


class Stop:
    """A :class:`~ginkpy.core.stop.stop_state.StopState` for a twin test: per column the
    ``status`` (StopReason codes), the ``threshold`` and the ``checks`` it has had (0 by
    default), and ``max_iters``. Its history starts as HISTORY_UNSET, so that the rows a
    kernel wrote can be told."""

    def __init__(self, status, threshold, max_iters: int = 100, checks=None) -> None:
        self.status = np.asarray(status, STATUS_DTYPE)
        self.threshold = np.asarray(threshold, np.float64)
        self.checks = np.zeros(self.status.size, np.int32) if checks is None else np.asarray(checks, np.int32)
        self.max_iters = max_iters

    def on(self, exec, dtype):
        from ginkpy.core.stop.stop_state import StopState
        stop = StopState(exec, self.status.size, dtype)
        stop.reset(self.status, self.threshold, self.max_iters)
        exec.write(stop.checks, self.checks)
        exec.write(stop.history.values, np.full(stop.history.shape, HISTORY_UNSET))
        return stop


class StopHost(NamedTuple):
    """A stop state on the host after a kernel: status, checks and the history ring."""
    status: np.ndarray
    checks: np.ndarray
    history: np.ndarray


class Same(NamedTuple):
    """An argument that is argument ``index`` again (the same object: the kernel sees them aliased)."""
    index: int


def twin(ref, ocl, kernel: str, *args, dtype=np.float64):
    """Run ``exec.run(kernel, *args)`` on the reference executor and on the device, each on its
    own copy of the inputs (see :func:`_to_exec`; a :class:`Stop` becomes a StopState, on the
    host a :class:`StopHost`; :class:`Same` repeats an earlier argument; a callable is called
    with the executor and its result passed as it is). Returns, per executor, the host values
    of every argument after the call (numbers as they were) followed by the return value."""
    outs = []
    for exec in (ref, ocl):
        converted = []
        for a in args:
            if isinstance(a, Same):
                converted.append(converted[a.index])
            elif callable(a):
                converted.append(a(exec))
            else:
                converted.append(a.on(exec, dtype) if isinstance(a, Stop) else _to_exec(exec, a, dtype))
        result = exec.run(kernel, *converted)
        host = [StopHost(*exec.to_host(c.status, c.checks, c.history.values)) if hasattr(c, "history_rows")
                else _to_host(exec, c) for c in converted]
        outs.append(host + [result])
    return outs


def assert_stop_twins(device: StopHost, reference: StopHost, dtype, factor: float = 1.0) -> None:
    """Status and checks equal; the history written in the same places (HISTORY_UNSET
    elsewhere), NaN where the reference has NaN, the norms within ``factor`` x tol."""
    np.testing.assert_array_equal(device.status, reference.status, err_msg="status")
    np.testing.assert_array_equal(device.checks, reference.checks, err_msg="checks")
    unset = reference.history == HISTORY_UNSET
    np.testing.assert_array_equal(device.history == HISTORY_UNSET, unset, err_msg="history rows written")
    np.testing.assert_allclose(device.history[~unset], reference.history[~unset], rtol=factor * tol(dtype),
                               err_msg="history")


def assert_twins(outs, dtype, factor: float = 1.0, skip=()) -> None:
    """The device's values (outs[1]) match the reference's (outs[0]) within ``factor`` x 10
    machine epsilons of each entry, or of the largest entry of the array where terms cancel
    (NaN where the reference has NaN); integer arrays (status, counts) exactly; stop states
    by :func:`assert_stop_twins`. ``skip`` lists argument positions not compared."""
    for i, (r, d) in enumerate(zip(*outs)):
        if i in skip or r is None or isinstance(r, (int, float, str)):
            continue
        if isinstance(r, StopHost):
            assert_stop_twins(d, r, dtype, factor)
            continue
        r, d = np.asarray(r), np.asarray(d)
        if r.dtype.kind in "iub":
            np.testing.assert_array_equal(d, r, err_msg=f"argument {i}")
        else:
            t = factor * tol(dtype)
            largest = np.nanmax(np.abs(r), initial=0)
            np.testing.assert_allclose(d, r, rtol=t, atol=t * largest, err_msg=f"argument {i}")


# The value types a twin runs in the GPU layout (the ``dev`` fixture's "gpu_layout"): one real,
# one complex. float32 and complex64 compile the same source as float64 and complex128 (only
# ValueType differs), so in the GPU layout they would test no other code path, yet each is a
# program PoCL compiles for seconds; they run in the CPU layout (and on the "ocl" executor).
GPU_LAYOUT_DTYPES = (np.dtype(np.float64), np.dtype(np.complex128))


def _same_code_in_gpu_layout(item) -> bool:
    """Whether ``item`` runs the ``dev`` fixture's GPU layout in a value type not in GPU_LAYOUT_DTYPES."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if params.get("dev") != "gpu_layout" or "dtype" not in params:
        return False
    return np.dtype(params["dtype"]) not in GPU_LAYOUT_DTYPES


def pytest_collection_modifyitems(config, items):
    """A test module may leave out some of the tests it collects: those for which its function
    ``left_out(item)`` is true are deselected (tests/linalg/test_scipy_suite.py: SciPy's tests of the
    solvers ginkpy lacks); so are the GPU layout's twins in float32 and complex64
    (:data:`GPU_LAYOUT_DTYPES`)."""
    kept, dropped = [], []
    for item in items:
        left_out = getattr(getattr(item, "module", None), "left_out", None)
        drop = _same_code_in_gpu_layout(item) or left_out is not None and left_out(item)
        (dropped if drop else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (``-n``), whole test files to a worker (xdist's ``--dist loadfile``)
    where the run asked for plain load balancing, ``-n``'s default: the programs a file's tests
    compile (PoCL: up to seconds each in a cold cache) are built by one worker, not by each, and
    a file's module-level memos (test_gmres_left.py's SciPy solves) serve all its cases. Any
    other ``--dist`` is kept."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadFileScheduling
    return LoadFileScheduling(config, log)


def raised_pivot_floors(exec, A):
    """The pivots' floors of the factorizations for A (gk.core.factorization.factorization), some
    rows' raised above any pivot (those get replaced) and one zero: the floors a sweep's twin
    test gives its kernels."""
    floors = gk.core.factorization.factorization.pivot_floors(A)
    values = floors.to_numpy()
    values[::7] = 1e6
    values[3] = 0
    return gk.matrix.Dense.from_numpy(exec, values, floors.dtype)


def isai_inverse_twins(ref, ocl, m, dtype, kind: str):
    """ISAI's ``generate_inverse`` on the systems of ``m``'s pattern (power 2, ``kind``: lower, upper,
    general, spd) on both executors: the twins agree, no system failed, and the systems have several
    sizes. Returns the systems' CSR arrays, the inverse's (ptrs, cols) and both inverses (dense)."""
    from ginkpy.core.matrix.csr import Csr
    host = ref.host
    system, (ptrs, cols), _ = host.run("preconditioner.isai.pattern", Csr.from_scipy(host, sp.csr_matrix(m), dtype),
                                       kind, 2)
    out = []
    for e in (ref, ocl):
        S = Csr(e, m.shape, *(e.from_host(a) for a in system))
        M = Csr(e, m.shape, e.from_host(ptrs), e.from_host(cols), e.alloc((cols.size,), dtype))
        assert e.run("preconditioner.isai.generate_inverse", S, M, kind == "spd") == -1
        out.append([M.to_scipy().toarray()])
    assert_twins(out, dtype, factor=10)
    assert np.diff(ptrs).max() > 4  # systems of several sizes
    return system, (ptrs, cols), out


def factorization_initialize_twins(ref, ocl, kernel: str, source, dtype, *args) -> None:
    """The fixed-point factorizations' ``kernel`` (initialize_l_u, or initialize_l with ``args``) on
    ``source`` on both executors: no row failed, the patterns equal, the values within tol and of
    ``dtype``."""
    from ginkpy.core.matrix.csr import Csr
    outs = [e.run(kernel, Csr.from_scipy(e, sp.csr_matrix(source), dtype), *args) for e in (ref, ocl)]
    assert outs[0][-1] == outs[1][-1] == -1
    for r, d in zip(outs[0][:-1], outs[1][:-1]):
        host = [ocl.to_host(a) for a in d]
        np.testing.assert_array_equal(host[0], r[0])
        np.testing.assert_array_equal(host[1], r[1])
        np.testing.assert_allclose(host[2], r[2], rtol=tol(dtype))
        assert host[2].dtype == dtype


# the stop reasons the kernel twin tests write into the status array
RUNNING, CONVERGED, LIMIT, BREAKDOWN, DIVERGED = (StopReason.RUNNING, StopReason.CONVERGED,
                                                  StopReason.ITERATION_LIMIT, StopReason.BREAKDOWN,
                                                  StopReason.DIVERGED)


def batch_systems(rng, N, grid=4, kind="spd"):
    """N diffusion (or convection-diffusion) systems on a grid x grid mesh: one pattern,
    random coefficients per system."""
    from ginkpy.problems import convection_diffusion_2d, poisson_2d
    P = (poisson_2d(grid) if kind == "spd" else convection_diffusion_2d(grid)).tocsr()
    out = []
    for _ in range(N):
        d = sp.diags(np.sqrt(rng.uniform(0.5, 2.0, P.shape[0])))
        out.append((d @ P @ d).tocsr())
    return out
