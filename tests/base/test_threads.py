"""Threads and processes: several threads solving on one OpenCL executor (cold program builds
included), the thread storm (scripts/thread_storm.py: many threads, every solver kind, caches off
and on, each process's exit timed), forked workers (a clear error, never a hang) and spawned ones
(multiprocessing, concurrent.futures, joblib). Each case runs in a fresh Python process with a
time limit, so that the environment (caches off) takes effect and a hang fails the test instead
of the suite; every test here has a pytest-timeout limit too."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import ginkpy as gk
from ginkpy.problems import convection_diffusion_2d, poisson_2d
from conftest import PROJECT

ROOT = PROJECT
COLD = {"PYOPENCL_NO_CACHE": "1", "POCL_KERNEL_CACHE": "0", "CUDA_CACHE_DISABLE": "1",
        "GINKPY_PROGRAM_RECORD": "0"}  # and no program record: the applies build, beside the other threads
STORM = ROOT / "scripts" / "thread_storm.py"
pytestmark = pytest.mark.timeout(400)  # above every subprocess's own limit below


def _run(tmp_path: Path, script: str, timeout: float, env: dict | None = None) -> str:
    """Run ``script`` as a file (spawned workers import their functions from it) in a fresh
    Python; its stdout, or the test fails with its output (a time-out: a hang)."""
    path = tmp_path / "case.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **(env or {}))
    try:
        run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"no answer in {timeout} s (a hang?):\n{err.stdout}\n{err.stderr}")
    assert run.returncode == 0, f"exit {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run.stdout


# -- threads -----------------------------------------------------------------------------------

# Rounds of cold builds: in each, three threads start together; each builds a program that all
# of them build (the same options: one build, the others wait for it) and one of its own, creates
# and first launches its kernel (declaring its scalar types), captures a launch and replays it
# while the others build, and checks every result.
COLD_BUILDS = """
    import threading
    from pathlib import Path
    import numpy as np
    import ginkpy as gk

    SOURCE = Path(__file__).with_name("race.cl")
    SOURCE.write_text(
        "__kernel void axpy(const int n, const ValueType a, __global const ValueType* x, __global ValueType* y)"
        "{ const int i = get_global_id(0); if (i < n) y[i] += a * x[i] * VARIANT; }")
    exec = gk.OpenCLExecutor()
    n, threads, rounds = 1000, 3, 6
    x = exec.from_host(np.ones(n))
    errors = []

    def launch(kernel, y, a):
        kernel(exec.queue, (1024,), (64,), np.int32(n), np.float64(a), x.data, y.data)

    def work(round, t, start):
        try:
            start.wait()
            for variant in (round + 1, 100 * (round + 1) + t):  # shared, then its own
                kernel = exec.kernel(str(SOURCE), np.float64, "axpy", VARIANT=variant)
                y = exec.from_host(np.zeros(n))
                launch(kernel, y, 1.0)  # y = v
                replay = exec.capture(lambda: launch(kernel, y, 2.0))  # y = 3 v
                for _ in range(3):
                    replay()  # y = 9 v
                got = exec.to_host(y)
                if not np.array_equal(got, np.full(n, 9.0 * variant)):
                    errors.append((round, t, variant, got[:3]))
        except BaseException as err:  # noqa: BLE001 - reported by the main thread
            errors.append((round, t, repr(err)))

    for round in range(rounds):
        start = threading.Barrier(threads)
        workers = [threading.Thread(target=work, args=(round, t, start)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    assert not errors, errors
    print("launches", exec.counters["launches"])
"""


@pytest.mark.slow
def test_cold_builds_in_threads(ocl, tmp_path):
    """Three threads building, creating, declaring, launching and capturing kernels at once,
    with pyopencl's and PoCL's caches off (every round builds anew)."""
    out = _run(tmp_path, COLD_BUILDS, timeout=120, env=COLD)
    assert "launches" in out


COLD_SOLVES = """
    import threading
    import numpy as np
    import ginkpy as gk
    from ginkpy.problems import poisson_2d

    S = poisson_2d(40).tocsr()  # 1600 rows
    X = np.stack([np.linspace(1.0, 2.0, S.shape[0]), np.linspace(-1.0, 3.0, S.shape[0])], axis=1)
    B = S @ X
    exec = gk.OpenCLExecutor()
    A = gk.matrix.Csr.from_scipy(exec, S)
    results, start = {}, threading.Barrier(2)

    def cg():  # one right-hand side: the whole solve in one launch (a batch of one)
        x, info = gk.linalg.cg(S, B[:, 0], rtol=1e-10, M="jacobi", executor=exec)
        return x[:, None], info

    def gmres():  # two: the loop, its iterations captured and replayed
        solver = (gk.solver.Gmres.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                  .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-10),
                                 gk.stop.Iteration.build().with_max_iters(2000)).on(exec).generate(A))
        x = gk.matrix.Dense.zeros(exec, B.shape)
        solver.apply(gk.matrix.Dense.from_numpy(exec, B), x)
        return x.to_numpy(), 0

    def work(method):
        start.wait()
        for i in range(2):  # the first builds everything, the second reuses it
            x, info = method()
            results[method.__name__, i] = (info, np.abs(x - X[:, :x.shape[1]]).max())

    workers = [threading.Thread(target=work, args=(method,)) for method in (cg, gmres)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 4, results
    for key, (info, error) in results.items():
        assert info == 0 and error < 1e-6, (key, info, error)
    print("ok")
"""


@pytest.mark.slow
def test_cold_solves_in_two_threads(ocl, tmp_path):
    """Jacobi-CG (a batch of one) and Jacobi-GMRES (the captured loop) solving at once from
    cold caches: both right."""
    assert "ok" in _run(tmp_path, COLD_SOLVES, timeout=180, env=COLD)


def _storm(*args: str, timeout: float) -> str:
    """scripts/thread_storm.py with ``args``; its summary line (the test fails with its output
    where a run crashed, hung, answered wrong or took more than its exit limit to exit)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    try:
        run = subprocess.run([sys.executable, str(STORM), *args], capture_output=True, text=True, timeout=timeout,
                             env=env)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"the storm did not end in {timeout} s:\n{err.stdout}\n{err.stderr}")
    assert run.returncode == 0, f"exit {run.returncode}:\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"
    return run.stdout.strip().splitlines()[-1]


def test_thread_storm_small(ocl):
    """Eight threads, warm: Jacobi-CG and AMG-CG through ginkpy.linalg and the builder's
    captured Jacobi-GMRES at once, every answer right, and the process exits at once."""
    line = _storm("--threads", "8", "--rounds", "1", "--runs", "1", "--kinds", "cg", "amg", "gmres_captured",
                  "--exit-limit", "5", timeout=300)
    assert "1/1 runs right and exited" in line and "exit <=" in line, line


def test_exit_with_daemon_threads_still_solving(ocl):
    """Daemon threads still solving when the main thread ends: the process exits at once and
    cleanly (before, a daemon thread caught inside a driver call at finalization aborted the
    process in about half the runs: "terminate called without an active exception")."""
    line = _storm("--threads", "2", "--daemons", "4", "--rounds", "1", "--runs", "3", "--kinds", "cg", "gmres_ilu",
                  "--exit-limit", "5", timeout=300)
    assert "3/3 runs right and exited" in line, line


@pytest.mark.slow
@pytest.mark.parametrize("cold", [False, True], ids=["warm", "cold"])
def test_thread_storm(ocl, cold):
    """Sixteen threads, every solver kind of the storm (Jacobi-CG, AMG-CG, BiCGStab, ILU-GMRES
    and CGS through ginkpy.linalg, the captured Jacobi-GMRES), two rounds, with the program caches
    off (every program built while the others solve) and on: every answer right, no crash, no
    hang, and each process exits within 5 s of its last line (2 s is the GPU check's limit)."""
    line = _storm("--threads", "16", "--rounds", "2", "--runs", "1", "--exit-limit", "5", "--timeout", "330",
                  *(["--cold"] if cold else []), timeout=380)
    assert "1/1 runs right and exited" in line, line


def test_concurrent_solves_share_an_executor(ocl):
    """Warm: two threads, each with its own solver on one executor and one matrix, solving
    repeatedly at once; every answer right."""
    S = poisson_2d(24).tocsr()
    A = gk.matrix.Csr.from_scipy(ocl, S)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        solver = (gk.solver.Cg.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                  .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-10),
                                 gk.stop.Iteration.build().with_max_iters(500)).on(ocl).generate(A))
        for _ in range(8):
            x_true = rng.random(S.shape[0])
            b = gk.matrix.Dense.from_numpy(ocl, S @ x_true)
            x = gk.matrix.Dense.zeros(ocl, (S.shape[0], 1))
            solver.apply(b, x)
            error = np.abs(x.to_numpy()[:, 0] - x_true).max()
            if not error < 1e-6:
                errors.append((seed, error))

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors


def test_context_calls_hold_the_device_lock(ocl, monkeypatch):
    """Every call that creates or enqueues on the context (program builds, kernel creation,
    declaring scalar types, setting arguments and launching a shared kernel, the private copies of
    a capture and their replays, copies, fills, maps, buffers, pool allocations) runs while the
    device's lock is held, a build also under the process's build lock: checked call by call on a
    fresh context, whatever the device (a race need not show on PoCL)."""
    import pyopencl as cl
    import pyopencl.tools as cl_tools

    from ginkpy.opencl import shared_device
    monkeypatch.setattr(shared_device, "_devices", {})  # a fresh context: everything built anew
    calls, unlocked = [], []
    locks = []

    def note(what):
        calls.append(what)
        if locks and not locks[0]._is_owned():
            unlocked.append(what)
        if what == "build" and not shared_device.BUILD_LOCK.locked():
            unlocked.append("build without BUILD_LOCK")

    class Watched(cl.Kernel):
        def __init__(self, *args):
            note("create")
            super().__init__(*args)

        def set_scalar_arg_dtypes(self, dtypes):
            note("declare")
            super().set_scalar_arg_dtypes(dtypes)

        def set_arg(self, index, arg):
            note("set_arg")
            super().set_arg(index, arg)

        def __call__(self, *args, **kwargs):
            note("launch")
            return super().__call__(*args, **kwargs)

    def watched(name, fn):
        def call(*args, **kwargs):
            note(name)
            return fn(*args, **kwargs)
        return call

    class WatchedPool(cl_tools.MemoryPool):
        def __call__(self, size):
            note("pool")
            return super().__call__(size)

    class WatchedBuffer(cl.Buffer):
        def __init__(self, *args, **kwargs):
            note("buffer")
            super().__init__(*args, **kwargs)

    build = cl.Program.build
    monkeypatch.setattr(cl, "Kernel", Watched)
    monkeypatch.setattr(cl, "Buffer", WatchedBuffer)
    monkeypatch.setattr(cl_tools, "MemoryPool", WatchedPool)
    monkeypatch.setattr(cl.Program, "build", lambda self, *a, **k: (note("build"), build(self, *a, **k))[1])
    for name in ("enqueue_copy", "enqueue_fill_buffer", "enqueue_map_buffer", "enqueue_nd_range_kernel",
                 "enqueue_marker"):
        monkeypatch.setattr(cl, name, watched(name, getattr(cl, name)))
    exec = gk.OpenCLExecutor()
    locks.append(exec._device.lock)
    S = poisson_2d(12).tocsr()
    B = S @ np.ones((S.shape[0], 2))
    x, info = gk.linalg.cg(S, B[:, 0], rtol=1e-10, M="jacobi", executor=exec)  # a batch of one
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = (gk.solver.Bicgstab.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
              .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-10),
                             gk.stop.Iteration.build().with_max_iters(500)).on(exec).generate(A))
    X = gk.matrix.Dense.zeros(exec, B.shape)
    for _ in range(2):  # the loop captured, then replayed
        X.fill(0.0)
        solver.apply(gk.matrix.Dense.from_numpy(exec, B), X)
    amg, amg_info = gk.linalg.cg(S, B[:, 0], rtol=1e-10, M="amg", executor=exec)  # multigrid setup and cycle
    assert info == 0 and amg_info == 0 and np.allclose(x, 1.0) and np.allclose(amg, 1.0)
    assert np.allclose(X.to_numpy(), 1.0)
    assert {"build", "create", "declare", "set_arg", "launch", "enqueue_nd_range_kernel", "enqueue_copy",
            "pool", "buffer"} <= set(calls), set(calls)
    assert not unlocked, f"called without the device lock: {sorted(set(unlocked))}"


# -- processes ----------------------------------------------------------------------------------

WORKER = """
    import multiprocessing
    import sys
    import numpy as np
    import ginkpy as gk
    from ginkpy.problems import poisson_2d

    S = poisson_2d(20).tocsr()

    def solve(i, executor="opencl"):
        b = S @ np.full(S.shape[0], float(i))
        x, info = gk.linalg.cg(S, b, rtol=1e-10, executor=executor)
        return info, float(np.abs(x - i).max())

    def solve_reference(i):
        return solve(i, "reference")

    def check(results):
        assert [info for info, _ in results] == [0] * len(results), results
        assert max(error for _, error in results) < 1e-6, results
"""

FORK = WORKER + """
    def on_parent_objects(_):
        return gk.linalg.cg(A, np.ones(S.shape[0]))[1]

    def refused(run, why):
        try:
            run()
        except gk.ForkedProcessError as err:
            assert "spawn" in str(err), err
            print("refused:", why)
        else:
            raise AssertionError(f"{why}: no ForkedProcessError")

    if __name__ == "__main__":
        fork = multiprocessing.get_context("fork")
        with fork.Pool(2) as pool:  # the parent has not used OpenCL yet: the workers may
            check(pool.map(solve, range(1, 5)))
        A = gk.matrix.Csr.from_scipy(gk.OpenCLExecutor(), S)
        check([solve(1)])
        with fork.Pool(2) as pool:
            refused(lambda: pool.map(solve, range(1, 5)), "new executors in forked workers")
            refused(lambda: pool.map(on_parent_objects, [0]), "the parent's matrix in a forked worker")
            check(pool.map(solve_reference, range(1, 5)))  # the reference executor works there
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(2, mp_context=fork) as pool:
            refused(lambda: list(pool.map(solve, range(1, 3))), "ProcessPoolExecutor with fork")
        check([solve(2)])  # and the parent goes on
        print("ok")
"""


def test_forked_workers_raise_instead_of_hanging(ocl, tmp_path):
    """A fork pool whose parent has solved on OpenCL: a ForkedProcessError naming the spawn
    method, for new executors and for the parent's matrices; no hang. Before the parent used
    OpenCL, and with the reference executor, forked workers solve."""
    out = _run(tmp_path, FORK, timeout=90)
    assert out.count("refused:") == 3 and "ok" in out, out


SPAWN = WORKER + """
    if __name__ == "__main__":
        check([solve(1)])  # the parent solves first
        spawn = multiprocessing.get_context("spawn")
        with spawn.Pool(2) as pool:
            check(pool.map(solve, range(1, 5)))
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(2, mp_context=spawn) as pool:
            check(list(pool.map(solve, range(1, 5))))
        from joblib import Parallel, delayed
        check(Parallel(n_jobs=2)(delayed(solve)(i) for i in range(1, 5)))  # loky: fresh processes
        print("ok")
"""


@pytest.mark.slow
def test_spawned_workers_solve(ocl, tmp_path):
    """After a parent solve, spawn pools (multiprocessing, concurrent.futures) and joblib's
    default backend solve right."""
    assert "ok" in _run(tmp_path, SPAWN, timeout=180)


# -- concurrent solves (formerly tests/base/test_nothing_wrong.py) -------------------------------

def test_concurrent_solves_on_one_executor(exec):
    # threads solving with their own solvers, sharing one solver, and through a second executor
    # object on the same device: every result equal to the serial one
    S = convection_diffusion_2d(12)
    rng = np.random.default_rng(7)
    rhs = [rng.standard_normal(S.shape[0]) for _ in range(6)]
    A = gk.matrix.Csr.from_scipy(exec, S)

    def make(e=exec):
        return (gk.solver.Bicgstab.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                .with_criteria(gk.stop.Iteration.build().with_max_iters(400),
                               gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)).on(e).generate(A))

    def run(solver, b):
        e = solver.executor
        X = gk.matrix.Dense.zeros(e, (S.shape[0], 1))
        solver.apply(gk.matrix.Dense.from_numpy(e, b), X)
        return X.to_numpy()[:, 0]

    serial = [run(make(), b) for b in rhs]
    other = gk.executor("opencl") if exec.backend == "opencl" else gk.ReferenceExecutor()
    shared = make()
    errors, results = [], {}

    def worker(t):
        try:
            for rep in range(4):
                for i, b in enumerate(rhs):
                    solver = shared if t == 0 else make(other if t == 2 else exec)
                    results.setdefault((t, rep, i), run(solver, b))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for (t, rep, i), x in results.items():
        np.testing.assert_allclose(x, serial[i], rtol=1e-12, atol=1e-14)
