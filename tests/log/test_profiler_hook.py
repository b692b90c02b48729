"""gk.log.ProfilerHook (issue 27 item 8): every kernel, apply and generate timed and counted,
as a flat or nested table; attached to an executor or to a solver; nothing changes without one."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ginkpy as gk
from ginkpy.problems import poisson_2d
from conftest import PROJECT

ROOT = PROJECT


def _system(exec, n=20):
    S = poisson_2d(n)
    A = gk.matrix.Csr.from_scipy(exec, S)
    b = gk.matrix.Dense.from_numpy(exec, S @ np.ones(S.shape[0]))
    return S, A, b


def _params():
    return gk.solver.Cg.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1)) \
        .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-10),
                       gk.stop.Iteration.build().with_max_iters(500))


def _solve(exec, solver, b):
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = gk.matrix.Dense.zeros(exec, b.shape)
    solver.apply(b, x)
    solver.remove_logger(log)
    return x.to_numpy(), log


def test_attached_to_the_executor_it_times_every_operation(exec):
    S, A, b = _system(exec)
    hook = gk.log.ProfilerHook.create_summary()
    exec.add_logger(hook)
    try:
        solver = _params().on(exec).generate(A)
        x, log = _solve(exec, solver, b)
    finally:
        exec.remove_logger(hook)
    totals = hook.totals()
    iterations = log.num_iterations
    assert totals["generate(Cg)"][0] == 1 and totals["generate(Jacobi)"][0] == 1
    assert totals["apply(Cg)"][0] == 1
    # each iteration's kernels: CG's steps and the product with its dot products (on a device a
    # few more: the iterations enqueued before the read that saw the solve converge); where the
    # device's SpMV forms p, that SpMV and the check in place of step_1
    forms_p = exec.run("solver.cg.forms_p", A, b)
    step_1, spmv = ("solver.cg.check", "solver.cg.spmv_p") if forms_p else ("solver.cg.step_1", "matrix.csr.spmv_dots")
    assert totals["solver.cg.step_2"][0] >= iterations and totals[step_1][0] >= iterations
    assert totals[spmv][0] == totals["solver.cg.step_2"][0]
    for name, (count, total, own) in totals.items():
        assert count > 0 and total >= 0 and own <= total * (1 + 1e-9) + 1e-12, name
    # apply(Cg) holds its kernels: its total is at least theirs
    inside = sum(totals[k][1] for k in (step_1, "solver.cg.step_2", spmv))
    assert totals["apply(Cg)"][1] >= inside * 0.999
    text = str(hook)
    assert text.startswith("ginkpy profile\nOverhead estimate") and "| apply(Cg) " in text
    assert " name " in text and " total (self) " in text and " avg (self) " in text
    # detached: the solver made under the hook captures its iterations at its next apply, then
    # replays them; nothing more is recorded, and the solve is what it was
    before = hook.totals()
    captures = exec.counters["captures"]
    _solve(exec, solver, b)
    assert exec.counters["captures"] > captures
    captures = exec.counters["captures"]
    x1, _ = _solve(exec, solver, b)
    assert exec.counters["captures"] == captures
    np.testing.assert_allclose(x1, x, rtol=1e-12, atol=1e-14)
    x2, log2 = _solve(exec, _params().on(exec).generate(A), b)
    assert hook.totals() == before
    assert log2.num_iterations == iterations
    np.testing.assert_allclose(x2, x, rtol=1e-12, atol=1e-14)


def test_nested_summary_is_a_tree(ref):
    S, A, b = _system(ref)
    hook = gk.log.ProfilerHook.create_nested_summary("my solve")
    ref.add_logger(hook)
    try:
        solver = gk.solver.Cg.build().with_preconditioner(gk.solver.Multigrid.build()).with_criteria(
            gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(ref).generate(A)
        _solve(ref, solver, b)
    finally:
        ref.remove_logger(hook)
    lines = str(hook).splitlines()
    assert lines[0] == "my solve" and " fraction " in lines[2]
    names = [line.split("|")[1] for line in lines[4:]]
    # the multigrid cycle's kernels nested in apply(Multigrid), nested in apply(Cg)
    top = next(i for i, name in enumerate(names) if name.strip() == "apply(Cg)")
    mg = next(i for i, name in enumerate(names) if name.strip() == "apply(Multigrid)" and i > top)
    assert names[mg].startswith("   apply(Multigrid)")  # one level in
    assert names[mg + 1].startswith("     ")  # its kernels two levels in
    assert any(name.strip() == "generate(Pgm)" for name in names)


def test_attached_to_a_solver_it_times_that_solver_alone(exec):
    S, A, b = _system(exec)
    solver = _params().on(exec).generate(A)
    other = _params().on(exec).generate(A)
    hook = gk.log.ProfilerHook.create_summary()
    solver.add_logger(hook)
    assert hook not in solver.loggers  # (a hook does not watch iterations: the solve runs as without it)
    _solve(exec, solver, b)
    _solve(exec, other, b)  # not attached: not timed
    totals = hook.totals()
    assert totals["apply(Cg)"][0] == 1 and "generate(Cg)" not in totals and "solver.cg.step_2" in totals
    assert exec._profiler is None  # attached to the executor only during the solver's apply
    solver.remove_logger(hook)
    _solve(exec, solver, b)
    assert hook.totals()["apply(Cg)"][0] == 1


def test_no_hook_no_cost(exec):
    # without a hook a second apply replays its captured iteration (no capture, no allocation)
    S, A, b = _system(exec)
    solver = _params().on(exec).generate(A)
    _solve(exec, solver, b)
    counters = dict(exec.counters)
    _solve(exec, solver, b)
    assert exec.counters["captures"] == counters["captures"]
    assert exec._profiler is None and exec.host._profiler is None
    with pytest.raises(TypeError, match="an executor takes a gk.log.ProfilerHook"):
        exec.add_logger(gk.log.Convergence())


def test_a_hook_on_an_inner_operator_sees_every_apply(exec):
    # the preconditioner's applies run inside Cg's iterations, which are captured without a
    # hook: with one on the preconditioner they run uncaptured, so that each is timed, and the
    # answer is the same; removing the hook brings the captured iterations back
    S, A, b = _system(exec)
    solver = _params().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(4)) \
        .on(exec).generate(A)  # (block-Jacobi: scalar Jacobi is fused into Cg's steps, never applied)
    x_plain, log_plain = _solve(exec, solver, b)
    hook = gk.log.ProfilerHook.create_nested_summary()
    jacobi = solver.preconditioner
    jacobi.add_logger(hook)
    with pytest.raises(ValueError, match="has a ProfilerHook already"):
        jacobi.add_logger(gk.log.ProfilerHook.create_summary())
    launches = exec.counters["launches"]
    x, log = _solve(exec, solver, b)
    np.testing.assert_allclose(x, x_plain, rtol=1e-12, atol=1e-14)
    assert log.num_iterations == log_plain.num_iterations
    totals = hook.totals()
    assert "apply(Cg)" not in totals  # only what runs during the preconditioner's applies
    assert totals["apply(Jacobi)"][0] >= log.num_iterations
    kernels = sum(count for name, (count, _, _) in totals.items() if "(" not in name)
    assert kernels >= totals["apply(Jacobi)"][0]
    assert exec.counters["launches"] - launches >= kernels  # launches still counted
    jacobi.remove_logger(hook)
    assert exec._profiled == 0
    captures = exec.counters["captures"]
    x, _ = _solve(exec, solver, b)  # replays the iterations captured before the hook came
    assert exec.counters["captures"] == captures
    np.testing.assert_allclose(x, x_plain, rtol=1e-12, atol=1e-14)


def test_one_hook_per_executor(ref):
    first, second = gk.log.ProfilerHook.create_summary(), gk.log.ProfilerHook.create_summary()
    ref.add_logger(first)
    try:
        with pytest.raises(ValueError, match="another ProfilerHook"):
            ref.add_logger(second)
    finally:
        ref.remove_logger(first)
    assert ref._profiler is None and ref._profiled == 0


def test_reset_and_write(ref, capsys):
    S, A, b = _system(ref, 8)
    hook = gk.log.ProfilerHook.create_summary()
    ref.add_logger(hook)
    try:
        _solve(ref, _params().on(ref).generate(A), b)
    finally:
        ref.remove_logger(hook)
    hook.write()
    assert "apply(Cg)" in capsys.readouterr().out
    hook.reset()
    assert hook.totals() == {} and " name " in hook.summary()


@pytest.mark.slow
def test_opencl_kernels_device_times_with_profiling_events(ocl):
    # with GINKPY_OPENCL_PROFILE=1 a kernel's time is its launches' device time (a new process:
    # the queue's profiling is set when the device is first opened)
    script = (
        "import numpy as np, ginkpy as gk\n"
        "from ginkpy.problems import poisson_2d\n"
        "exe = gk.OpenCLExecutor(); S = poisson_2d(30)\n"
        "A = gk.matrix.Csr.from_scipy(exe, S); b = gk.matrix.Dense.from_numpy(exe, S @ np.ones(900))\n"
        "hook = gk.log.ProfilerHook.create_summary(); exe.add_logger(hook)\n"
        "s = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(20)).on(exe).generate(A)\n"
        "s.apply(b, gk.matrix.Dense.zeros(exe, (900, 1)))\n"
        "t = hook.totals(); print(t['solver.cg.step_2'][0], t['solver.cg.step_2'][1] < t['apply(Cg)'][1])\n")
    env = {**os.environ, "GINKPY_OPENCL_PROFILE": "1", "GINKPY_SMALL_SYSTEMS": "0", "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    count, smaller = out.stdout.split()
    assert int(count) == 20 and smaller == "True"


def test_ginkpy_solve_profile_prints_the_table(tmp_path, capsys):
    from ginkpy.cli import main
    path = tmp_path / "A.mtx"
    gk.write(path, gk.matrix.Csr.from_scipy(gk.ReferenceExecutor(), poisson_2d(10)))
    assert main(["solve", str(path), "--executor", "reference", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "profile: a second generate and solve" in out and "| apply(Cg) " in out
    assert "| solver.cg.step_2 " in out and "generate(Cg)" in out
    assert main(["solve", str(path), "--executor", "reference", "--solver", "direct", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "profile: a second generate and solve" in out and "| generate(Direct) " in out
    assert "| apply(Direct) " in out
