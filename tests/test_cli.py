"""The ginkpy command line end to end on small Matrix Market files, its progress line, and the
residual history plots."""
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
from ginkpy.problems import convection_diffusion_2d, poisson_2d
from conftest import matrix_path


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
    """The "key  value" rows that solve and info print."""
    return dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.strip().splitlines())


def test_solve_writes_solution_and_plot(capsys, tmp_path, spd_file):
    pytest.importorskip("matplotlib")
    out_path, png = tmp_path / "x.mtx", tmp_path / "convergence.png"
    rc, out, err = _solve(capsys, spd_file, "--executor", "reference", "--preconditioner", "jacobi",
                          "--rtol", "1e-10", "--out", out_path, "--plot", png)
    assert rc == 0, err
    summary = _summary(out)
    assert summary["stopped"] == "converged"
    assert summary["solver"] == "Cg, preconditioner Jacobi"
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
    assert _summary(out)["solver"] == "Gmres, preconditioner Ilu"
    # --max-iters replaces the configuration's iteration limit
    rc, out, err = _solve(capsys, spd_file, "--config", config, "--max-iters", "2", "--executor", "reference")
    assert rc == 1
    summary = _summary(out)
    assert summary["stopped"] == "iteration limit" and summary["iterations"] == "2"


def test_ir_takes_the_preconditioner_as_inner_solver(capsys, spd_file):
    rc, out, err = _solve(capsys, spd_file, "--solver", "ir", "--preconditioner", "jacobi", "--rtol", "1e-2",
                          "--executor", "reference")
    assert rc == 0, err
    assert _summary(out)["solver"] == "Ir, inner solver Jacobi"


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
        ([spd_file, "--rtol", "-1", "--executor", "reference"], "reduction_factor"),
    ]
    for args, message in cases:
        rc, out, err = _solve(capsys, *args)
        assert rc == 2, args
        assert err.startswith("ginkpy solve: error:") and message in err, err
    with pytest.raises(SystemExit):  # argparse: unknown choice
        main(["solve", str(spd_file), "--solver", "minres"])
    assert "invalid choice: 'minres'" in capsys.readouterr().err


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
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
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
