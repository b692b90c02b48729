"""Builds up front (issue 30): a solver's generate builds every program its apply will use, from
the record of the programs the first apply of an earlier solver of its signature used (in this
process, or on disk from an earlier one), so that no apply meets a build. Builds are counted
with ``exec.counters["builds"]``; a fixture gives the device an empty program table and the
record a temporary cache folder, and puts both back afterwards."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import ginkpy as gk
from ginkpy.core.base.program_signature import program_signature
from ginkpy.problems import convection_diffusion_2d, poisson_2d
from conftest import PROJECT


def _stop():
    return (gk.stop.ResidualNorm.build().with_reduction_factor(1e-10), gk.stop.Iteration.build().with_max_iters(500))


def _amg():
    return gk.solver.Multigrid.build().with_criteria(gk.stop.Iteration.build().with_max_iters(1))


# (solver, preconditioner, system): the loop (two right-hand sides: no batch of one), captured
CASES = {"cg-jacobi": (gk.solver.Cg, lambda: gk.preconditioner.Jacobi.build().with_max_block_size(1), poisson_2d(16)),
         "bicgstab-ilu": (gk.solver.Bicgstab, gk.preconditioner.Ilu.build, convection_diffusion_2d(16)),
         "gmres-amg": (gk.solver.Gmres, _amg, convection_diffusion_2d(16)),
         "cg-block-jacobi": (gk.solver.Cg, lambda: gk.preconditioner.Jacobi.build().with_max_block_size(4),
                             poisson_2d(16))}


@pytest.fixture
def fresh(ocl, monkeypatch, tmp_path):
    """``fresh()`` empties the device's program and kernel tables (the programs are built or
    loaded again at their next use); the record is new, in ``tmp_path``. Restored afterwards."""
    device = ocl._device
    saved = device.programs, device.kernels, device.program_record
    monkeypatch.setenv("GINKPY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GINKPY_PROGRAM_RECORD", raising=False)
    device.program_record = None

    def empty() -> None:
        with device.lock:
            device.programs, device.kernels = {}, {}
    yield empty
    device.programs, device.kernels, device.program_record = saved


def _generate(exec, case: str):
    solver, preconditioner, S = CASES[case]
    A = gk.matrix.Csr.from_scipy(exec, S)
    return solver.build().with_preconditioner(preconditioner()).with_criteria(*_stop()).on(exec).generate(A), S


def _apply(exec, solver, S) -> np.ndarray:
    B = S @ np.stack([np.linspace(1.0, 2.0, S.shape[0]), np.linspace(-1.0, 1.0, S.shape[0])], axis=1)
    x = gk.matrix.Dense.zeros(exec, B.shape)
    solver.apply(gk.matrix.Dense.from_numpy(exec, B), x)
    return x.to_numpy()


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c == "cg-block-jacobi"
                                  else c for c in CASES])
def test_an_apply_after_generate_builds_nothing(ocl, fresh, case):
    fresh()
    first, S = _generate(ocl, case)
    copies_first = ocl.counters["kernel_copies"]
    x_first = _apply(ocl, first, S)  # builds what it uses, recorded
    copies_first = ocl.counters["kernel_copies"] - copies_first
    fresh()  # a process that has built nothing yet, with the record of the first
    before = dict(ocl.counters)
    second, _ = _generate(ocl, case)
    built = ocl.counters["builds"] - before["builds"]
    kernels, copies = len(ocl._device.kernels), ocl.counters["kernel_copies"]
    x_second = _apply(ocl, second, S)
    assert built > 0
    assert ocl.counters["builds"] == before["builds"] + built, "the apply built a program"
    assert len(ocl._device.kernels) == kernels, "the apply created a kernel object"
    # the copies its captures take were made at generate (how many captures a restarted method
    # makes may depend on how far the host ran ahead: a few more may be made here)
    assert ocl.counters["kernel_copies"] - copies < copies_first or copies_first == 0 == ocl.counters[
        "kernel_copies"] - copies
    np.testing.assert_allclose(x_second, x_first, rtol=1e-12, atol=1e-12 * np.abs(x_first).max())


def test_concurrent_applies_meet_no_build(ocl, fresh):
    fresh()
    first, S = _generate(ocl, "cg-jacobi")
    expected = _apply(ocl, first, S)
    fresh()
    solvers = [_generate(ocl, "cg-jacobi")[0] for _ in range(3)]  # generated here: the builds are here
    builds, results = ocl.counters["builds"], {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, _apply(ocl, solvers[i], S)))
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ocl.counters["builds"] == builds
    for i in range(3):
        np.testing.assert_allclose(results[i], expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_the_signature_keeps_what_chooses_programs():
    ref = gk.ReferenceExecutor()
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(4))
    A32 = gk.matrix.Csr.from_scipy(ref, poisson_2d(4), dtype=np.float32)

    def sig(rtol=1e-8, max_iters=100, block=1, precond=None, matrix=A):
        precond = precond or gk.preconditioner.Jacobi.build().with_max_block_size(block)
        params = gk.solver.Cg.build().with_preconditioner(precond).with_criteria(
            gk.stop.ResidualNorm.build().with_reduction_factor(rtol), gk.stop.Iteration.build().with_max_iters(max_iters))
        return program_signature(params, matrix)
    assert sig() == sig(rtol=1e-3, max_iters=900)  # tolerances and limits: kernel arguments
    assert sig() == sig(precond=gk.preconditioner.Jacobi.build().with_max_block_size(1).on(ref))  # factory or not
    assert sig() != sig(block=8)  # scalar Jacobi (in the step kernels) or block-Jacobi
    assert sig() != sig(precond=gk.preconditioner.Ilu.build())
    assert sig() != sig(matrix=A32)
    assert sig().startswith("Cg[float64](") and sig().endswith(" on Csr")
    assert "0x" not in sig(precond=A)  # an operator given as it is: its type, no address
    assert ref.prepare_programs(sig()) == 0  # the host has no programs
    with ref.record_programs(sig()):
        pass


def test_the_record_on_disk(ocl, fresh, tmp_path):
    fresh()
    solver, S = _generate(ocl, "cg-jacobi")
    _apply(ocl, solver, S)
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith("programs-"), files  # written atomically: no temporary left
    data = json.loads(files[0].read_text())
    entries = data["signatures"][solver._program_signature]
    assert data["identity"].startswith(f"ginkpy {gk.__version__}|") and ocl.info.name in data["identity"]
    assert {e["file"] for e in entries} >= {"solver/cg_kernels.py", "matrix/csr_kernels.py"}  # relative paths
    assert all(e["dtype"] == "float64" and e["scalars"] is not None for e in entries)


def test_the_disk_record_off(ocl, fresh, tmp_path, monkeypatch):
    monkeypatch.setenv("GINKPY_PROGRAM_RECORD", "0")
    fresh()
    first, S = _generate(ocl, "cg-jacobi")
    _apply(ocl, first, S)
    assert list(tmp_path.iterdir()) == []  # nothing written (nor read)
    fresh()
    before = ocl.counters["builds"]
    second, _ = _generate(ocl, "cg-jacobi")  # in this process the record still serves
    assert ocl.counters["builds"] > before


def test_a_corrupt_or_stale_record_is_ignored(ocl, fresh, tmp_path):
    from ginkpy.opencl.prebuild import record_of
    fresh()
    record = record_of(ocl)
    signature = _generate(ocl, "cg-jacobi")[0]._program_signature
    for text in ("{not json", json.dumps({"format": 1, "identity": record.identity, "signatures": {signature: [
            {"file": "../../evil.py", "dtype": "float64", "name": "x"}]}}), json.dumps([1, 2])):
        record.path.write_text(text)
        ocl._device.program_record = None
        assert record_of(ocl).entries(signature) == []
    # readable, but stale: a file and a kernel that are not there any more (dropped, not raised)
    entries = [{"file": "solver/no_such_kernels.py", "dtype": "float64", "name": "step", "defines": []},
               {"file": "solver/cg_kernels.py", "dtype": "float64", "name": "no_such_kernel", "defines": []}]
    record.path.write_text(json.dumps({"format": 1, "identity": record.identity, "signatures": {signature: entries}}))
    ocl._device.program_record = None
    assert len(record_of(ocl).entries(signature)) == 2
    solver, S = _generate(ocl, "cg-jacobi")
    assert record_of(ocl).entries(signature) == []
    _apply(ocl, solver, S)  # records what it used, written over the stale file
    saved = json.loads(record.path.read_text())["signatures"][signature]
    assert {e["name"] for e in saved} >= {"step_1", "step_2"} and "no_such_kernel" not in {e["name"] for e in saved}


def test_wrong_scalar_types_in_the_record_cost_a_declaration_not_a_wrong_launch(ocl, tmp_path):
    source = tmp_path / "scaled.cl"
    source.write_text("__kernel void scaled(const int n, const ValueType a, __global ValueType* y)"
                      "{ const int i = get_global_id(0); if (i < n) y[i] = a * (ValueType)i; }")
    n = 100
    for variant, scalars in ((1, [np.dtype(np.int32), np.dtype(np.float32), None]),  # a float where a double goes
                             (2, [np.dtype(np.int32), None, None]),  # a buffer where a double goes (numpy: dtype == None)
                             (3, [np.dtype(np.int32), np.dtype(np.float64), None])):  # right
        kernel = ocl.kernel(str(source), np.float64, "scaled", VARIANT=variant)
        kernel.predeclare(scalars)
        y = ocl.from_host(np.zeros(n))
        kernel(ocl.queue, (128,), None, np.int32(n), np.float64(2.5), y.data)
        np.testing.assert_array_equal(ocl.to_host(y), 2.5 * np.arange(n))


SECOND_PROCESS = """
    import json, sys
    import numpy as np
    import ginkpy as gk
    from ginkpy.core.solver.solver_base import IterativeSolver
    from ginkpy.problems import convection_diffusion_2d
    S = convection_diffusion_2d(20).tocsr()
    b = S @ np.ones(S.shape[0])
    exec = gk.executor("opencl")
    counts = {"apply": 0, "depth": 0}
    solve = IterativeSolver._monitored_solve

    def counted(self, *args):  # the builds inside applies (the outermost)
        before, counts["depth"] = exec.counters["builds"], counts["depth"] + 1
        try:
            return solve(self, *args)
        finally:
            counts["depth"] -= 1
            if not counts["depth"]:
                counts["apply"] += exec.counters["builds"] - before
    IterativeSolver._monitored_solve = counted
    solver = gk.linalg.Solver(S, "gmres", M="ilu", rtol=1e-8, executor=exec)  # the generate
    generate = exec.counters["builds"]
    x, info = solver.solve(b)
    x2, info2 = gk.linalg.bicgstab(S, b, rtol=1e-8, M="jacobi", executor=exec)  # a first linalg call
    print(json.dumps({"generate": generate, "apply": counts["apply"], "info": [info, info2]}))
"""


@pytest.mark.slow
def test_a_new_process_builds_at_generate(tmp_path):
    script = tmp_path / "second.py"
    script.write_text(textwrap.dedent(SECOND_PROCESS))

    def run(**env):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PROJECT), os.environ.get("PYTHONPATH", "")]),
                   GINKPY_CACHE_DIR=str(tmp_path / "cache"), **env)
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])
    cold = run()  # no record yet: the applies build, and record
    warm = run()
    off = run(GINKPY_PROGRAM_RECORD="0")
    assert cold["info"] == warm["info"] == off["info"] == [0, 0]
    assert cold["apply"] > 0 and off["apply"] > 0
    assert warm["apply"] == 0 and warm["generate"] >= cold["generate"] + 1
    assert not (tmp_path / "cache").exists() or len(list((tmp_path / "cache").iterdir())) == 1
