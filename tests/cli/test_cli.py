"""The ginkpy command line end to end on small Matrix Market files (solver choice, summaries,
hints, timings), its progress line, the residual history plots, and the main job example."""
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.cli import Progress, main, matrix_info
from ginkpy.core.log.plot import plot_residual_history
from ginkpy.problems import circuit_mna, convection_diffusion_2d, helmholtz_2d, magnetic_laplacian_2d, poisson_2d
from conftest import PROJECT, _opencl, matrix_path


@pytest.fixture
def spd_file(tmp_path):
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(path, poisson_2d(6))
    return path


def _solve(capsys, *args):
    rc = main(["solve", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out, err


def _summary(out):
    """The "key  value" rows that solve and info print (up to the first blank line, after which
    a multigrid's hierarchy or the profile may follow)."""
    return dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.strip().split("\n\n")[0].splitlines())


def test_solve_writes_solution_and_plot(capsys, tmp_path, spd_file):
    pytest.importorskip("matplotlib")  # in the test extra: .ci/run fails on this skip
    out_path, png = tmp_path / "x.mtx", tmp_path / "convergence.png"
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference", "--preconditioner", "jacobi",
                          "--rtol", "1e-10", "--out", out_path, "--plot", png)
    assert rc == 0, err
    summary = _summary(out)
    assert summary["stopped"] == "converged"
    assert summary["solver"] == ("Cg, preconditioner Jacobi (scalar) (auto: the matrix is symmetric with a positive "
                                 "diagonal)")
    assert summary["executor"].startswith("reference")
    assert int(summary["iterations"]) > 0
    assert float(summary["residual"].split("relative ")[1].rstrip(")")) <= 1e-10
    x = scipy.io.mmread(out_path)
    np.testing.assert_allclose(x, np.ones((36, 1)), rtol=1e-8)  # b = A * ones
    from matplotlib.image import imread
    image = imread(png)
    assert image.shape[0] > 200 and image.shape[1] > 300 and image.std() > 0.01


def test_solve_with_rhs_columns_and_solvers(capsys, tmp_path):
    A = convection_diffusion_2d(6)
    path, rhs, out_path = tmp_path / "cd.mtx", tmp_path / "b.mtx", tmp_path / "x.mtx"
    scipy.io.mmwrite(path, A)
    b = np.random.default_rng(1).standard_normal((36, 2))
    scipy.io.mmwrite(rhs, b)
    for solver in ("bicgstab", "gmres"):
        rc, out, err = _solve(capsys, path, "--rhs", rhs, "--solver", solver, "--executor", "reference",
                              "--out", out_path)
        assert rc == 0, err
        x = scipy.io.mmread(out_path)
        assert x.shape == (36, 2)
        assert np.linalg.norm(b - A @ x, axis=0).max() <= 1e-8 * np.linalg.norm(b, axis=0).max()


def test_solve_on_the_device(capsys, ocl, spd_file):
    rc, out, err = _solve(capsys, spd_file, "--executor", "opencl", "--solver", "gmres")
    assert rc == 0, err
    summary = _summary(out)
    assert summary["executor"] == f"opencl on {ocl.info.name} [{ocl.info.platform}]"
    assert summary["stopped"] == "converged"


def test_solve_with_config(capsys, tmp_path, spd_file):
    config = tmp_path / "solver.json"
    config.write_text(json.dumps({"type": "solver::Gmres", "krylov_dim": 5,
                                  "preconditioner": {"type": "preconditioner::Ilu"},
                                  "criteria": {"iteration": 200, "relative_residual_norm": 1e-9}}))
    rc, out, err = _solve(capsys, spd_file, "--config", config, "--executor", "reference")
    assert rc == 0, err
    assert _summary(out)["solver"] == "Gmres (5), preconditioner Ilu"
    # --max-iters replaces the configuration's iteration limit
    rc, out, err = _solve(capsys, spd_file, "--config", config, "--max-iters", "2", "--executor", "reference")
    assert rc == 1
    summary = _summary(out)
    assert summary["stopped"] == "iteration limit" and summary["iterations"] == "2"


def test_ir_takes_the_preconditioner_as_inner_solver(capsys, spd_file):
    rc, out, err = _solve(capsys, spd_file, "--solver", "ir", "--preconditioner", "jacobi", "--rtol", "1e-2",
                          "--executor", "reference")
    assert rc == 0, err
    assert _summary(out)["solver"] == "Ir, inner solver Jacobi (scalar)"


def test_real_matrix(capsys, tmp_path):
    out_path = tmp_path / "x.mtx"
    rc, out, err = _solve(capsys, matrix_path("gr_900_900_crg.mtx"), "--preconditioner", "jacobi",
                          "--executor", "reference", "--out", out_path)
    assert rc == 0, err
    np.testing.assert_allclose(scipy.io.mmread(out_path), np.ones((900, 1)), rtol=1e-6)


def test_bad_input_exits_2_with_a_message(capsys, tmp_path, spd_file):
    config = tmp_path / "jacobi.json"
    config.write_text(json.dumps({"type": "preconditioner::Jacobi"}))
    short_rhs = tmp_path / "b.mtx"
    scipy.io.mmwrite(short_rhs, np.ones((5, 1)))
    cases = [
        ([spd_file, "--config", config, "--executor", "reference"], "not an iterative solver"),
        ([spd_file, "--config", config, "--solver", "cg"], "leave out --solver"),
        ([tmp_path / "missing.mtx", "--executor", "reference"], "missing.mtx"),
        ([spd_file, "--rhs", short_rhs, "--executor", "reference"], "has 5 rows but the matrix has 36"),
        ([spd_file, "--executor", "cuda"], "unknown executor 'cuda'"),
        ([spd_file, "--rtol", "-1", "--executor", "reference"], "--rtol must be a relative tolerance >= 0"),
    ]
    for args, message in cases:
        rc, out, err = _solve(capsys, *args)
        assert rc == 2, args
        assert err.startswith("ginkpy solve: error:") and message in err, err
    with pytest.raises(SystemExit):  # argparse: unknown choice
        main(["solve", str(spd_file), "--solver", "nosuchsolver"])
    assert "invalid choice: 'nosuchsolver'" in capsys.readouterr().err


def test_plot_needs_matplotlib(capsys, monkeypatch, spd_file, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'pip install "ginkpy\[plot\]"'):
        plot_residual_history([1.0, 0.1])
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference", "--plot", tmp_path / "c.png")
    assert rc == 2 and "ginkpy[plot]" in err and out == ""  # refused before solving
    assert not (tmp_path / "c.png").exists()


def test_info(capsys, spd_file, tmp_path):
    assert main(["info", str(spd_file)]) == 0
    info = _summary(capsys.readouterr().out)
    assert info["size"] == "36 x 36"
    assert info["nonzeros"].startswith("156 stored")
    assert info["row lengths"].startswith("min 3, mean 4.33, max 5")
    assert info["symmetry"] == "symmetric"
    assert info["dominance"].startswith("weakly diagonally dominant")


@pytest.mark.parametrize("executor", ["reference", "opencl"])
def test_info_says_how_the_spmv_runs(capsys, spd_file, executor):
    if executor == "opencl":
        _opencl()  # skips without a device
    assert main(["info", str(spd_file), "--executor", executor]) == 0
    spmv = _summary(capsys.readouterr().out)["SpMV"]
    expected = "SciPy's sequential CSR product" if executor == "reference" else \
        ("row_blocks: ", "classical: ", "vector: ", "long_rows: ", "merge_path: ")
    assert spmv.startswith(expected), spmv


def test_matrix_info_cases():
    info = dict(matrix_info(convection_diffusion_2d(4)))
    assert info["symmetry"] == "structurally symmetric, values nonsymmetric"
    A = sp.csr_matrix(np.array([[4.0, 1, 0], [0, 0, 2], [1, 0, 3]]))
    info = dict(matrix_info(A))
    assert info["symmetry"] == "nonsymmetric"
    assert info["dominance"] == "not diagonally dominant (2 of 3 rows are, 2 strictly)"
    assert info["diagonal"] == "2 positive, 0 negative, 1 zero or missing"
    rounded = poisson_2d(3) + sp.csr_matrix(([1e-14], ([0], [1])), shape=(9, 9))
    assert dict(matrix_info(rounded))["symmetry"].startswith("numerically symmetric")
    info = dict(matrix_info(sp.csr_matrix(np.ones((2, 3)))))
    assert info["size"] == "2 x 3" and info["symmetry"] == "not square"


def test_devices(capsys):
    from ginkpy.opencl.devices import describe_devices
    assert main(["devices"]) == 0
    assert capsys.readouterr().out.strip() == describe_devices().strip()


def test_python_dash_m_entry_point(spd_file):
    result = subprocess.run([sys.executable, "-m", "ginkpy", "info", str(spd_file)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "36 x 36" in result.stdout


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_only_on_a_terminal(ref, spd_file):
    A = gk.read(spd_file, ref)
    b = gk.matrix.Dense.from_numpy(ref, np.ones(36))
    for stream, shown in ((_Terminal(), True), (io.StringIO(), False)):
        solver = gk.solver.Cg.build().with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)) \
            .on(ref).generate(A)
        solver.add_logger(Progress(np.array([6.0]), stream=stream, interval=0.0))
        solver.apply(b, gk.matrix.Dense.zeros(ref, (36, 1)))
        text = stream.getvalue()
        if shown:
            assert text.count("\riteration") > 2 and "relative residual 1.000e+00" in text
            assert text.endswith("\r")  # the line is cleared for the summary
        else:
            assert text == ""


def test_plot_residual_history_per_column():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    history = [np.array([1.0, 2.0]), np.array([0.1, 0.5]), np.array([0.0, 0.01])]
    ax = Figure().add_subplot()
    assert plot_residual_history(history, ax=ax, title="two columns") is ax
    assert ax.get_yscale() == "log" and ax.get_title() == "two columns"
    lines = ax.get_lines()
    assert len(lines) == 2
    np.testing.assert_array_equal(lines[1].get_ydata(), [2.0, 0.5, 0.01])
    assert np.isnan(lines[0].get_ydata()[2])  # a zero norm cannot be drawn on a log axis
    with pytest.raises(ValueError, match="empty"):
        plot_residual_history([], ax=Figure().add_subplot())


def test_convergence_logger_plots(ref, spd_file):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    logger = gk.log.Convergence()
    solver = gk.solver.Cg.build().with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)) \
        .on(ref).generate(gk.read(spd_file, ref))
    solver.add_logger(logger)
    solver.apply(gk.matrix.Dense.from_numpy(ref, np.ones(36)), gk.matrix.Dense.zeros(ref, (36, 1)))
    ax = logger.plot(ax=Figure().add_subplot())
    assert len(ax.get_lines()[0].get_ydata()) == logger.num_iterations + 1


# -- choosing the solver and explaining how a solve ended ------------------------------------

def _write(tmp_path, name, matrix):
    path = tmp_path / name
    scipy.io.mmwrite(path, matrix)
    return path


AUTO = "; Bicgstab is the fastest then, and Gmres takes over if it breaks down"


def test_auto_picks_cg_minres_or_bicgstab_and_says_why(capsys, tmp_path, spd_file):
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference", "--preconditioner", "none")
    assert rc == 0, err
    assert _summary(out)["solver"] == "Cg, preconditioner none (auto: the matrix is symmetric with a positive diagonal)"
    assert "preconditioner" not in _summary(out)  # (chosen by the user: no note)
    cases = [(convection_diffusion_2d(6), "Bicgstab", "the matrix is nonsymmetric; Cg needs a symmetric positive "
                                                      f"definite one{AUTO}"),
             (-poisson_2d(6), "Minres", "the matrix is symmetric, but 36 diagonal entries are zero or negative; "
                                        "Minres takes a symmetric indefinite one")]
    for matrix, solver, why in cases:
        rc, out, err = _solve(capsys, _write(tmp_path, "A.mtx", matrix), "--solver", "auto", "--executor", "reference",
                              "--preconditioner", "none")
        assert rc == 0, err
        summary = _summary(out)
        assert summary["solver"] == f"{solver}, preconditioner none (auto: {why})"
        assert summary["stopped"] == "converged" and "hint" not in summary


def test_cg_on_a_matrix_it_does_not_suit_is_explained(capsys, tmp_path):
    nonsymmetric = _write(tmp_path, "cd.mtx", convection_diffusion_2d(6))
    rc, out, err = _solve(capsys, nonsymmetric, "--solver", "cg", "--max-iters", "20", "--executor", "reference",
                          "--preconditioner", "none")
    assert rc == 1
    summary = _summary(out)
    assert summary["solver"] == "Cg, preconditioner none"  # chosen by the user: no "auto" note
    assert summary["hint"] == ("Cg needs a symmetric positive definite matrix and this one is nonsymmetric: "
                               "use --solver bicgstab or gmres (or leave --solver out: auto picks Bicgstab here)")
    # an indefinite diagonal: Cg breaks down on p^T A p = 0
    indefinite = _write(tmp_path, "indef.mtx", sp.diags([1.0, -1.0]).tocsr())
    rhs = _write(tmp_path, "b.mtx", np.ones((2, 1)))
    rc, out, err = _solve(capsys, indefinite, "--rhs", rhs, "--solver", "cg", "--executor", "reference",
                          "--preconditioner", "none")
    summary = _summary(out)
    assert rc == 1 and summary["stopped"] == "breakdown"
    assert "this one is symmetric, but 1 diagonal entry is zero or negative" in summary["hint"]


def test_breakdown_stagnation_divergence_and_the_limit_are_explained(capsys, tmp_path, spd_file):
    swap = _write(tmp_path, "swap.mtx", sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]])))
    rotation = _write(tmp_path, "rotation.mtx", sp.csr_matrix(np.array([[0.0, 1.0], [-1.0, 0.0]])))
    e0 = _write(tmp_path, "e0.mtx", np.array([[1.0], [0.0]]))
    gmres1 = tmp_path / "gmres1.json"
    gmres1.write_text(json.dumps({"type": "solver::Gmres", "krylov_dim": 1}))
    cases = [
        # Bicgstab: r_hat^T A r = 0 at once
        ([swap, "--rhs", e0, "--solver", "bicgstab", "--preconditioner", "none"], "breakdown",
         "Bicgstab broke down: a zero divisor (such as rho = r_hat^T r)"),
        # GMRES(1) on a rotation: no step ever reduces the residual; its diagonal is zero
        ([rotation, "--rhs", e0, "--config", gmres1, "--max-iters", "20"], "iteration limit",
         "stagnating (less than 2x smaller over the last quarter of the iterations): 2 diagonal entries are zero "
         "or not stored (the first in row 0), which --preconditioner ilu handles: try a larger Krylov dimension "
         "(--krylov-dim 2), "
         "--preconditioner ilu or --preconditioner amg"),
        ([rotation, "--rhs", e0, "--solver", "gmres", "--krylov-dim", "1", "--max-iters", "20", "--preconditioner",
          "none"], "iteration limit",
         "try a larger Krylov dimension (--krylov-dim 2)"),
        # Richardson without a preconditioner on a matrix of norm 8
        ([spd_file, "--solver", "ir", "--max-iters", "400", "--preconditioner", "none"], "diverged",
         "Ir (a Richardson iteration) converges only where its inner solver approximates A^-1 well"),
        ([spd_file, "--max-iters", "3", "--preconditioner", "none"], "iteration limit",
         "still falling: allow more with --max-iters 6; add --preconditioner ic or --preconditioner amg to need "
         "fewer"),
    ]
    for args, stopped, hint in cases:
        with np.errstate(over="ignore", invalid="ignore"):
            rc, out, err = _solve(capsys, *args, "--executor", "reference")
        summary = _summary(out)
        assert rc == 1 and summary["stopped"] == stopped, out
        assert hint in summary["hint"], summary["hint"]


def test_float32_with_an_unreachable_tolerance_warns(capsys, tmp_path):
    # an SPD system whose solution is not exact in float32 (poisson_2d's, all ones, is: its true
    # residual reaches 0)
    spd_file = tmp_path / "S.mtx"
    scipy.io.mmwrite(spd_file, poisson_2d(6) + scipy.sparse.diags(np.linspace(0.1, 0.7, 36)))
    rc, out, err = _solve(capsys, spd_file, "--dtype", "float32", "--rtol", "1e-10", "--max-iters", "200",
                          "--executor", "reference", "--preconditioner", "none")
    assert err.startswith("ginkpy solve: warning: the tolerance 1e-10 is below what float32 resolves")
    assert "--rtol 1e-06 or more, or --dtype float64" in err
    summary = _summary(out)
    assert summary["hint"].startswith("the residual reached float32's precision")
    rc, out, err = _solve(capsys, spd_file, "--dtype", "float32", "--rtol", "1e-5", "--executor", "reference")
    assert rc == 0 and err == ""


def test_several_right_hand_sides_are_summarised_per_column(capsys, tmp_path, spd_file):
    A = poisson_2d(6)
    # b = A 1 (6 iterations), b = 0 (converged at once), a random b (not in 8 iterations)
    b = np.c_[A @ np.ones(36), np.zeros(36), np.random.default_rng(0).standard_normal(36)]
    rc, out, err = _solve(capsys, spd_file, "--rhs", _write(tmp_path, "b.mtx", b), "--max-iters", "8",
                          "--executor", "reference", "--preconditioner", "none")
    assert rc == 1
    summary = _summary(out)
    assert summary["iterations"] == "8 (the most of any column; fewest 0)"
    assert summary["stopped"] == "2 converged, 1 iteration limit (of 3 columns)"
    assert summary["residual"].endswith("at worst (column 2), best 0.000e+00")
    assert summary["column 1"] == "0 iterations, relative residual 0.000e+00, converged"
    assert re.fullmatch(r"8 iterations, relative residual \S+, iteration limit", summary["column 2"])
    assert summary["hint"].startswith("column 2: the iteration limit came")
    # many columns: only those that did not converge are listed
    many = np.c_[np.tile(A @ np.ones((36, 1)), 12), b[:, 2:]]
    rc, out, err = _solve(capsys, spd_file, "--rhs", _write(tmp_path, "b13.mtx", many), "--max-iters", "8",
                          "--executor", "reference", "--preconditioner", "none")
    summary = _summary(out)
    assert summary["stopped"] == "12 converged, 1 iteration limit (of 13 columns)"
    assert [key for key in summary if key.startswith("column")] == ["column 12"]


# -- devices and timings -----------------------------------------------------------------------

def test_a_missing_device_lists_the_devices_there_are(capsys, ocl, spd_file):
    rc, out, err = _solve(capsys, spd_file, "--executor", "opencl:7:7")
    assert rc == 2 and out == ""
    assert err.startswith("ginkpy solve: error: no OpenCL device 7:7; the OpenCL devices here are:")
    assert f"{ocl.info.name} [{ocl.info.platform}]" in err
    assert "pip install" not in err


def test_profile_rows(capsys, exec, spd_file):
    rc, out, err = _solve(capsys, spd_file, "--profile", "--executor", exec.backend, "--preconditioner", "none")
    assert rc == 0, err
    out, profile = out.split("\n\nprofile: ")  # then gk.log.ProfilerHook's table of every operation
    assert "| apply(Cg) " in profile  # its iterations' kernels, or one launch for a small system on a device:
    assert "| solver.cg.step_2 " in profile or "| batch.solver.cg.apply " in profile
    summary = _summary(out)
    for phase in ("device", "read", "transfer", "generate", "solve", "compile"):
        assert re.fullmatch(r"\d+\.\d{3} s .*|none .*", summary[phase]), (phase, summary[phase])
    assert re.search(r"\d+ iterations, \d+ iterations/s, [\d.]+ ms per iteration", summary["solve"])
    assert "time" not in summary
    if exec.backend == "reference":
        assert summary["compile"].startswith("none")
    rc, out, err = _solve(capsys, spd_file, "--executor", exec.backend)
    time_row = _summary(out)["time"]
    assert re.match(r"setup \d+\.\d{3} s, solve \d+\.\d{3} s \(\d+ iterations/s\)", time_row)
    assert ("kernels compiled or loaded from cache in" in time_row) == (exec.backend != "reference")


def test_warm_up_runs_every_kernel_of_the_solve(ocl, monkeypatch, tmp_path):
    # what the timed solve launches, the warm-up has compiled before: every program (a kernel of
    # a compiled program is made at once; the end of a solve that did not converge may launch
    # kernels of the programs the warm-up compiled that the warm-up did not need)
    import argparse
    from ginkpy.cli.solver_options import solver_parameters
    from ginkpy.cli.timed_solve import WARM_UP_ITERATIONS, warm_up
    from ginkpy.opencl.executor import OpenCLExecutor
    A = gk.matrix.Csr.from_scipy(ocl, convection_diffusion_2d(12))
    B = gk.matrix.Dense.from_numpy(ocl, np.random.default_rng(3).standard_normal((144, 2)))
    launched = []
    kernel = OpenCLExecutor.kernel

    def recording(self, module_file, dtype, name, **defines):
        launched[-1].add((module_file, np.dtype(dtype), *sorted(defines.items())))
        return kernel(self, module_file, dtype, name, **defines)

    monkeypatch.setattr(OpenCLExecutor, "kernel", recording)
    restarted = tmp_path / "gmres3.json"
    restarted.write_text(json.dumps({"type": "solver::Gmres", "krylov_dim": 3}))
    for solver, preconditioner, config in (("gmres", "ilu", None), ("cg", "jacobi", None), ("bicgstab", None, None),
                                           ("", None, restarted)):
        args = argparse.Namespace(config=config, preconditioner=preconditioner, rtol=1e-8, max_iters=None,
                                  krylov_dim=None)
        params = solver_parameters(args, solver)
        launched.append(set())
        warm_up(params, ocl, A, B)
        launched.append(set())
        s = params.on(ocl).generate(A)
        logger = gk.log.Convergence()
        s.add_logger(logger)
        s.apply(B, gk.matrix.Dense.zeros(ocl, B.shape))
        assert logger.num_iterations > 2 * WARM_UP_ITERATIONS
        assert launched[-1] <= launched[-2], (solver, launched[-1] - launched[-2])


def test_plot_with_the_result_shows_relative_residual_tolerance_and_ends():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure
    from ginkpy.log import SolveResult
    from ginkpy.core.stop.stopping_status import StopReason
    # column 0 converges at iteration 2, column 1 stops at the limit (3), column 2 diverges at 2;
    # the monitor keeps logging a stopped column's last norm, which must not be drawn on
    history = [[1.0, 2.0, 4.0], [0.1, 1.0, 8.0], [1e-9, 0.5, np.inf], [1e-9, 0.25, np.inf]]
    reasons = [StopReason.CONVERGED, StopReason.ITERATION_LIMIT, StopReason.DIVERGED]
    result = SolveResult(np.array([2, 3, 2]), np.array([1e-9, 0.25, np.inf]), reasons, 0.0,
                         rhs_norm=np.array([1.0, 2.0, 4.0]), threshold=np.array([1e-8, 2e-8, 4e-8]))
    ax = plot_residual_history(history, ax=Figure().add_subplot(), result=result)
    assert ax.get_ylabel().startswith("relative residual")
    columns = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_allclose(columns["right-hand side 0"].get_ydata(), [1.0, 0.1, 1e-9])
    np.testing.assert_allclose(columns["right-hand side 1"].get_ydata(), [1.0, 0.5, 0.25, 0.125])
    np.testing.assert_allclose(columns["right-hand side 2"].get_ydata(), [1.0, 2.0, np.nan])
    assert columns["tolerance 1e-08"].get_ydata()[0] == 1e-8 and columns["tolerance 1e-08"].get_linestyle() == "--"
    markers = {line.get_marker(): (line.get_xdata()[0], line.get_ydata()[0]) for line in ax.get_lines()
               if line.get_marker() not in ("None", None, "") and line.get_label().startswith("_")}
    assert markers == {"o": (2, 1e-9), ">": (3, 0.125), "^": (1, 2.0)}  # diverged: at the last finite norm
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["right-hand side 0", "right-hand side 1", "right-hand side 2", "tolerance 1e-08",
                      "converged", "iteration limit", "diverged"]
    assert all(float(t).is_integer() for t in ax.get_xticks())
    # tolerances that differ relative to ||b||: one line per column
    result.threshold = np.array([1e-8, 1e-6, 1e-4])
    ax = plot_residual_history(history, ax=Figure().add_subplot(), result=result)
    assert "tolerance of each column" in [t.get_text() for t in ax.get_legend().get_texts()]
    with pytest.raises(ValueError, match="the result has 3 columns, the history 2"):
        plot_residual_history([[1.0, 1.0]], ax=Figure().add_subplot(), result=result)


def test_convergence_plot_needs_a_solve():
    with pytest.raises(RuntimeError, match="no solve has completed yet"):
        gk.log.Convergence().plot()


def test_main_job_example_reports_compile_apart(exec):
    # the README's main job, small: setup and solve times, the warm-up (compilation) apart
    root = PROJECT
    result = subprocess.run([sys.executable, str(root / "examples" / "solve.py"), "--grid", "12",
                             "--executor", exec.backend], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "iterations: " in result.stdout and "(converged)" in result.stdout
    assert re.search(r"time: +setup \d+\.\d{3} s, solve \d+\.\d{3} s \(\d+ iterations/s\)", result.stdout)
    assert re.search(r"warm-up: +\d+\.\d{3} s \(compiling the kernels", result.stdout)


def test_examples_take_help(capsys, monkeypatch):
    # every example explains its arguments without a traceback (none needs MPI or a device for it)
    import runpy
    root = PROJECT / "examples"
    for path in sorted(root.glob("*.py")):
        monkeypatch.setattr(sys, "argv", [str(path), "--help"])
        with pytest.raises(SystemExit) as exit:
            runpy.run_path(str(path), run_name="__main__")
        assert exit.value.code == 0, path.name
        assert "usage:" in capsys.readouterr().out, path.name


def test_solve_example_fits_the_method_and_fails_with_status_1(tmp_path):
    # a nonsymmetric file runs ILU-GMRES (Jacobi-CG broke down at its first iteration); a solve
    # that does not converge exits with 1
    path = _write(tmp_path, "cd.mtx", convection_diffusion_2d(10))
    example = PROJECT / "examples" / "solve.py"
    for max_iters, rc, stopped in ((200, 0, "(converged)"), (1, 1, "(iteration limit)")):
        result = subprocess.run([sys.executable, str(example), str(path), "--executor", "reference",
                                 "--max-iters", str(max_iters)], capture_output=True, text=True, timeout=120)
        assert result.returncode == rc, result.stderr
        assert "solver:     ILU-GMRES" in result.stdout and stopped in result.stdout


def test_info_reports_entries_that_are_not_finite(capsys, tmp_path):
    path = tmp_path / "nan.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.0\n2 2 nan\n3 3 inf\n1 2 2.0\n")
    assert main(["info", str(path)]) == 0
    info = _summary(capsys.readouterr().out)
    assert info["values"].startswith("1 NaN (the first at row 2, column 2), 1 infinite (the first at row 3, "
                                     "column 3): no solver takes this matrix")
    assert info["symmetry"] == info["dominance"] == "unknown (NaN or infinite entries)"
    assert dict(matrix_info(poisson_2d(3)))["values"] == "all finite"


def test_complex_matrix_files(capsys, tmp_path, exec):
    """A complex file is solved in complex128 unless --dtype says otherwise: Cg for a Hermitian
    matrix with a positive diagonal, Gmres for a complex symmetric one, the solution written as
    a complex file that SciPy reads back."""
    # (auto's preconditioner: amg takes real matrices only, Jacobi for a Hermitian one, ILU otherwise)
    cases = [(magnetic_laplacian_2d(8, shift=0.1), "Cg", "Jacobi (scalar)", "Hermitian with a positive diagonal"),
             (helmholtz_2d(8), "Bicgstab", "Ilu",
              "complex symmetric, not Hermitian; Cg needs a Hermitian positive definite one" + AUTO)]
    for matrix, solver, pname, why in cases:
        path, out_path = _write(tmp_path, "Z.mtx", matrix), tmp_path / "x.mtx"
        rc, out, err = _solve(capsys, path, "--executor", exec.backend, "--out", out_path)
        assert rc == 0, err
        summary = _summary(out)
        assert "complex128" in summary["matrix"] and summary["stopped"] == "converged"
        assert summary["solver"] == f"{solver}, preconditioner {pname} (auto: the matrix is {why})"
        x = scipy.io.mmread(out_path).ravel()
        np.testing.assert_allclose(x, np.ones(matrix.shape[0]), rtol=1e-5)
    rc, out, err = _solve(capsys, path, "--executor", exec.backend, "--dtype", "complex64", "--rtol", "1e-5")
    assert rc == 0 and "complex64" in _summary(out)["matrix"], err
    rc, out, err = _solve(capsys, path, "--executor", exec.backend, "--dtype", "float64")
    assert rc == 2 and "complex" in err


def test_nonsymmetric_systems_auto_krylov_dim_and_hints(capsys, tmp_path):
    """On nonsymmetric systems: auto runs Bicgstab and Gmres where it breaks down, --krylov-dim
    asks for Gmres, and a hint names only options the command line has, none that just failed,
    addressing the cause (zero diagonals: an ILU or amg; stagnation: a larger Krylov dimension)."""
    choices = {*gk.config.short_names("preconditioner"), "none"}
    mna = _write(tmp_path, "mna.mtx", circuit_mna())
    # zero diagonals that Jacobi cannot invert: ILU-type or amg, not jacobi again
    rc, out, err = _solve(capsys, mna, "--preconditioner", "jacobi", "--max-iters", "100", "--executor", "reference")
    hint = _summary(out)["hint"]
    assert rc == 1 and "40 diagonal entries are zero or not stored (the first in row 12), which Jacobi cannot " \
                       "invert: " in hint and hint.endswith("--preconditioner ilu or --preconditioner amg")
    # after ilu: ilut (pivoting) or amg, never ilu again
    rc, out, err = _solve(capsys, mna, "--preconditioner", "ilu", "--max-iters", "10", "--executor", "reference")
    hint = _summary(out)["hint"]
    assert rc == 1 and "add --preconditioner ilut or --preconditioner amg" in hint
    for named in re.findall(r"--preconditioner (\w+)", hint):
        assert named in choices and named != "ilu"
    # stagnation of Gmres on a rotation: a larger Krylov dimension
    rotation = _write(tmp_path, "rotation.mtx", sp.csr_matrix(np.array([[0.0, 1.0], [-1.0, 0.0]])))
    e0 = _write(tmp_path, "e0.mtx", np.array([[1.0], [0.0]]))
    rc, out, err = _solve(capsys, rotation, "--rhs", e0, "--krylov-dim", "1", "--max-iters", "20",
                          "--executor", "reference", "--preconditioner", "none")
    summary = _summary(out)
    assert summary["solver"].startswith("Gmres (1), preconditioner none (auto: the matrix is nonsymmetric")
    assert "--krylov-dim: Gmres" in summary["solver"] and "--krylov-dim 2" in summary["hint"]
    # Bicgstab breaks down at once on the rotation (r_hat . A r = 0): auto solves with Gmres
    swap = _write(tmp_path, "swap.mtx", sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]])))
    rc, out, err = _solve(capsys, rotation, "--rhs", e0, "--executor", "reference", "--preconditioner", "none")
    summary = _summary(out)
    assert rc == 0 and summary["stopped"] == "converged"
    assert summary["solver"].startswith("Gmres (30), preconditioner none (auto:")
    assert summary["solver"].endswith("Bicgstab stopped with breakdown after 1 iteration, so Gmres)")
    # --krylov-dim where it does not apply
    rc, out, err = _solve(capsys, swap, "--solver", "bicgstab", "--krylov-dim", "5", "--executor", "reference")
    assert rc == 2 and "--krylov-dim applies to the solvers with a Krylov dimension" in err
    with pytest.raises(SystemExit):
        main(["solve", str(swap), "--krylov-dim", "0"])
    assert "--krylov-dim: must be an integer >= 1, got 0" in capsys.readouterr().err


def _hints(out):
    """Every hint row of a summary (``_summary`` keeps only the last of a repeated key)."""
    return [line.split("hint", 1)[1].strip() for line in out.splitlines() if line.startswith("hint")]


def test_max_iters_0_hints_a_limit_that_allows_iterations(capsys, spd_file, exec):
    rc, out, err = _solve(capsys, spd_file, "--max-iters", "0", "--executor", exec.backend, "--preconditioner", "none")
    hint, = _hints(out)
    assert rc == 1 and "--max-iters 0 allows" not in hint and "with --max-iters 0" not in hint
    assert "the iteration limit is 0 (--max-iters 0), so no iteration ran: allow some with --max-iters 1000" in hint
    rc, out, err = _solve(capsys, spd_file, "--max-iters", "3", "--executor", exec.backend, "--preconditioner", "none")
    assert "allow more with --max-iters 6;" in _hints(out)[0]


def test_an_empty_row_is_said_to_make_the_matrix_singular(capsys, tmp_path, exec):
    A = poisson_2d(5).tolil()
    A[3, :] = 0  # an empty row (zeros stored there count as none)
    path, b = _write(tmp_path, "empty.mtx", A.tocsr()), _write(tmp_path, "b.mtx", np.ones((25, 1)))
    for solver in ("gmres", "cg"):
        rc, out, err = _solve(capsys, path, "--rhs", b, "--solver", solver, "--max-iters", "40",
                              "--executor", exec.backend)
        hints = _hints(out)
        assert rc == 1 and hints[0].startswith("1 row is empty (no nonzero entry; the first is row 3), so the "
                                               "matrix is singular"), hints
        assert "fix the matrix" in hints[0] and not any("ILU handles" in h for h in hints)
    # b = A 1 is 0 in the empty row: that system has solutions, the solve converges without a hint
    rc, out, err = _solve(capsys, path, "--solver", "gmres", "--executor", exec.backend)
    assert rc == 0 and _hints(out) == []


def test_plot_prints_the_path_written(capsys, tmp_path, spd_file, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference", "--plot", "noext")
    assert rc == 0 and _summary(out)["plot"] == "noext.png" and (tmp_path / "noext.png").exists()
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference", "--plot", "c.svg")
    assert rc == 0 and _summary(out)["plot"] == "c.svg" and (tmp_path / "c.svg").exists()


def test_missing_config_and_out_paths_name_the_option(capsys, tmp_path, spd_file):
    cases = [(["--config", tmp_path / "none.json"], f"--config {tmp_path / 'none.json'}: no such file"),
             (["--config", tmp_path], f"--config {tmp_path}: that is a folder"),
             (["--out", tmp_path / "no" / "x.mtx"], f"--out {tmp_path / 'no' / 'x.mtx'}: the folder "
                                                      f"{tmp_path / 'no'} does not exist"),
             (["--out", tmp_path], f"--out {tmp_path}: that is a folder"),
             (["--plot", tmp_path / "no" / "c.png"], f"--plot {tmp_path / 'no' / 'c.png'}: the folder")]
    for args, message in cases:
        rc, out, err = _solve(capsys, spd_file, "--executor", "reference", *args)
        assert rc == 2 and out == "" and message in err and "Errno" not in err, err


def test_examples_describe_themselves_in_whole_sentences_and_point_to_files_there_are(capsys, monkeypatch):
    # issue 34: amg_poisson's --help ended mid-sentence; builder_api pointed to a design.md the
    # repository lacks
    import runpy
    for path in sorted((PROJECT / "examples").glob("*.py")):
        monkeypatch.setattr(sys, "argv", [str(path), "--help"])
        with pytest.raises(SystemExit):
            runpy.run_path(str(path), run_name="__main__")
        help_text = capsys.readouterr().out
        description = " ".join(help_text.split("\n\n")[1].split())
        assert description.endswith("."), (path.name, description)
        for name in re.findall(r"\b([\w./-]+\.md)\b", path.read_text()):
            assert (PROJECT / name).exists(), (path.name, name)


def test_complex_vs_scipy_times_second_calls(exec):
    result = subprocess.run([sys.executable, str(PROJECT / "examples" / "complex_vs_scipy.py"), exec.backend,
                             "--n", "100"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("times: the second call of each solve")
    assert len(lines) == 1 + 2 * 13 and all(line.count("info   0") == 2 for line in lines[1:]), result.stdout


# -- --preconditioner auto (the default) ---------------------------------------------------------

def _auto_row(out):
    return _summary(out)["preconditioner"]


def test_auto_preconditioner_amg_for_an_spd_pde_matrix(capsys):
    """nos6 (Poisson on an L-shape, an M-matrix): amg, far fewer iterations than Jacobi's."""
    path = matrix_path("nos6.mtx")
    rc, out, err = _solve(capsys, path, "--executor", "reference")
    assert rc == 0, err
    summary = _summary(out)
    assert summary["solver"].startswith("Cg, preconditioner Multigrid (auto:")
    assert _auto_row(out).startswith("amg (auto: the matrix is symmetric with a positive diagonal and its "
                                     "off-diagonal entries are not positive (an M-matrix's sign pattern")
    rc, out, err = _solve(capsys, path, "--executor", "reference", "--preconditioner", "jacobi")
    assert rc == 0 and int(summary["iterations"]) * 3 < int(_summary(out)["iterations"])
    assert "preconditioner" not in _summary(out)  # (chosen by the user: no note)


def test_auto_preconditioner_ilu_jacobi_or_none_by_the_matrix_and_solver(capsys, tmp_path):
    B = sp.random(40, 40, density=0.2, random_state=np.random.default_rng(0), format="csr")
    not_pde = B @ B.T + 0.1 * sp.identity(40)  # SPD, positive off-diagonal entries, not diagonally dominant
    cases = [
        (convection_diffusion_2d(8), [], "Bicgstab, preconditioner Ilu", "ilu (auto: the matrix is nonsymmetric: "
                                                                        "incomplete LU)"),
        (not_pde, [], "Cg, preconditioner Jacobi (scalar)", "jacobi (auto: the matrix is symmetric with a positive "
                                                            "diagonal, but not PDE-like (amg's case): scalar Jacobi)"),
        (-poisson_2d(6), [], "Minres, preconditioner none", "none (auto: the matrix is symmetric, but 36 diagonal "
                                                           "entries are zero or negative: Minres needs a symmetric "
                                                           "positive definite preconditioner, and Jacobi of this "
                                                           "diagonal is not one)"),
        (poisson_2d(6), ["--solver", "chebyshev"], "Chebyshev, preconditioner Jacobi (scalar)",
         "jacobi (auto: Chebyshev takes scalar Jacobi or none)"),
        (poisson_2d(6), ["--solver", "bicg"], "Bicg, preconditioner Jacobi (scalar)",
         "jacobi (auto: the matrix is symmetric with a positive diagonal (amg's case, but Bicg applies M^H, which amg "
         "lacks): scalar Jacobi)"),
        (poisson_2d(6), ["--solver", "multigrid"], "Multigrid", "none (auto: Multigrid takes no preconditioner: its "
                                                               "smoothers play that part)"),
        (convection_diffusion_2d(8), ["--solver", "cg", "--max-iters", "5"], "Cg, preconditioner Jacobi (scalar)",
         "jacobi (auto: Cg needs a symmetric preconditioner: scalar Jacobi (the matrix is nonsymmetric))"),
    ]
    for matrix, args, solver, row in cases:
        rc, out, err = _solve(capsys, _write(tmp_path, "A.mtx", matrix), "--executor", "reference", *args)
        summary = _summary(out)
        assert summary["solver"].startswith(solver), out
        if row is not None:
            assert _auto_row(out) == row
        if "--max-iters" not in args:
            assert rc == 0 and summary["stopped"] == "converged", out


def test_auto_preconditioner_falls_back_to_jacobi_where_it_cannot_be_set_up(capsys, monkeypatch, spd_file):
    from ginkpy.core.solver.multigrid import Multigrid

    def refuse(self, *args, **kwargs):
        raise ValueError("no hierarchy today")
    monkeypatch.setattr(Multigrid, "__init__", refuse)
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference")
    assert rc == 0, err
    assert _summary(out)["solver"].startswith("Cg, preconditioner Jacobi (scalar)")
    assert _auto_row(out).endswith("it could not be set up (no hierarchy today), so scalar Jacobi)")
    # chosen by the user, the error stands
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference", "--preconditioner", "amg")
    assert rc == 2 and "no hierarchy today" in err


@pytest.mark.parametrize("name, twin", [("gauss_seidel", "symmetric_gauss_seidel"), ("sor", "ssor"),
                                        ("isai", "spdisai")])
def test_a_nonsymmetric_preconditioner_under_cg_hints_its_symmetric_twin(capsys, name, twin):
    path = matrix_path("nos6.mtx")
    rc, out, err = _solve(capsys, path, "--executor", "reference", "--solver", "cg", "--preconditioner", name,
                          "--max-iters", "5")
    hint, = _hints(out)
    assert rc == 1 and f"and {name} is not symmetric" in hint and f"use --preconditioner {twin} " in hint
    assert "--solver fcg" in hint


def test_every_hint_names_an_option(capsys, tmp_path, spd_file):
    """Each hint (but the empty row's, which only a fixed matrix cures) names a command-line option."""
    choices = {*gk.config.short_names("preconditioner"), "none", "auto"}
    rotation = _write(tmp_path, "rotation.mtx", sp.csr_matrix(np.array([[0.0, 1.0], [-1.0, 0.0]])))
    swap = _write(tmp_path, "swap.mtx", sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]])))
    e0 = _write(tmp_path, "e0.mtx", np.array([[1.0], [0.0]]))
    nonsymmetric = _write(tmp_path, "cd.mtx", convection_diffusion_2d(6))
    timed = tmp_path / "timed.json"
    timed.write_text(json.dumps({"type": "solver::Cg", "criteria": {"time": 0}}))
    runs = [[swap, "--rhs", e0, "--solver", "bicgstab", "--preconditioner", "none"],
            [rotation, "--rhs", e0, "--solver", "gmres", "--krylov-dim", "1", "--max-iters", "20",
             "--preconditioner", "none"],
            [spd_file, "--solver", "ir", "--max-iters", "400", "--preconditioner", "none"],
            [spd_file, "--max-iters", "0"], [spd_file, "--max-iters", "2", "--preconditioner", "none"],
            [nonsymmetric, "--solver", "cg", "--max-iters", "5"],
            [spd_file, "--solver", "cg", "--preconditioner", "gauss_seidel", "--max-iters", "3"],
            [spd_file, "--config", timed], [spd_file, "--solver", "chebyshev", "--max-iters", "2"]]
    seen = 0
    for args in runs:
        with np.errstate(over="ignore", invalid="ignore"):
            rc, out, err = _solve(capsys, *args, "--executor", "reference")
        assert rc == 1, (args, out, err)
        for hint in _hints(out):
            seen += 1
            assert re.search(r"--[a-z-]+", hint), hint
            for named in re.findall(r"--preconditioner (\w+)", hint):
                assert named in choices, hint
    assert seen >= len(runs)
