"""Checks shared by the tests of the restarted GMRES variants with a kept space (tests/solver/
test_lgmres.py, test_gcrotmk.py): each runs the same check on its own method, through
``gk.linalg.<method>`` or the builder of ``gk.solver.<Name>``."""
import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import as_scipy, matrix_path, random_values
from ginkpy.problems import convection_diffusion_2d, helmholtz_2d


def cycles_and_info_as_scipy(exec, method: str, problem: str, kwargs: dict) -> None:
    """as_scipy: both info 0, ginkpy's callbacks (x0 and one per cycle, as SciPy's) at most 1.5
    times SciPy's, the true residual within rtol."""
    A = convection_diffusion_2d(15) if problem == "convection_diffusion" else \
        sp.csr_matrix(scipy.io.mmread(matrix_path(problem)))
    b = np.random.default_rng(3).standard_normal(A.shape[0])
    scipy_kwargs = dict(kwargs)
    if scipy_kwargs.get("M") == "jacobi":
        scipy_kwargs["M"] = sp.diags(1 / A.diagonal())
    as_scipy(exec, method, A, b, scipy_kwargs=scipy_kwargs, **kwargs)


def complex_system(exec, method: str, **kwargs) -> None:
    """as_scipy on a complex Helmholtz system, ``kwargs`` to both: ginkpy's x complex."""
    A = helmholtz_2d(10, wavenumber=8.0).tocsr()
    b = random_values(np.random.default_rng(4), A.shape[0], np.complex128)
    x, _ = as_scipy(exec, method, A, b, scipy_kwargs=kwargs, **kwargs)
    assert x.dtype == np.complex128


def first_cycle_is_gmres(exec, method: str, **kwargs):
    """SciPy's test_arnoldi: one cycle (maxiter 1) of ``gk.linalg.<method>`` with ``kwargs`` is
    GMRES(10)'s (info 1 both, the same x). Returns the system A, b for the method's own checks."""
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    x1, info1 = getattr(gk.linalg, method)(A, b, maxiter=1, executor=exec, **kwargs)
    x2, info2 = gk.linalg.gmres(A, b, restart=10, maxiter=1, executor=exec)
    assert info1 == info2 == 1
    np.testing.assert_allclose(x1, x2, rtol=1e-10, atol=1e-12 * np.abs(x2).max())
    return A, b


def preconditioner_and_callback(exec, method: str) -> list:
    """Solved with M="ilu" to rtol 1e-10 (true residual checked); SciPy's callbacks: x0 first, the
    last the solution. Returns the x's the callback got."""
    A = (convection_diffusion_2d(12) + sp.diags(np.linspace(0.0, 20.0, 144))).tocsr()
    b = np.random.default_rng(6).standard_normal(144)
    calls = []
    x, info = getattr(gk.linalg, method)(A, b, rtol=1e-10, M="ilu", executor=exec,
                                         callback=lambda xk: calls.append(xk.copy()))
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)
    np.testing.assert_array_equal(calls[0], 0)
    np.testing.assert_allclose(calls[-1], x)
    return calls


def maxiter_counts_cycles(exec, method: str, **kwargs) -> None:
    """info is maxiter (the cycles run), as SciPy's, for maxiter 1 and 3."""
    A = convection_diffusion_2d(15)
    b = np.ones(A.shape[0])
    for maxiter in (1, 3):
        x, info = getattr(gk.linalg, method)(A, b, rtol=1e-14, maxiter=maxiter, executor=exec, **kwargs)
        assert info == maxiter == getattr(spla, method)(A, b, rtol=1e-14, maxiter=maxiter, **kwargs)[1]


def singular_system_ends_without_nan(exec, method: str, maxiter: int) -> None:
    """SciPy's test_breakdown_underdetermined: A nilpotent, its Krylov space breaks down; the x
    found is finite and no worse than x0 = 0."""
    A = np.array([[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=float)
    b = np.array([1.0, 1.0, 1.0, 1.0])
    x, info = getattr(gk.linalg, method)(sp.csr_matrix(A), b, maxiter=maxiter, executor=exec)
    assert info != 0 and np.isfinite(x).all()
    assert np.linalg.norm(b - A @ x) <= np.linalg.norm(b)


def next_solve_starts_at(exec, solver, b, x, max_iterations: int) -> None:
    """``solver`` (seeded with a space that holds the solution ``x``) solves ``b`` again: converged
    within ``max_iterations``, the same x."""
    log = gk.log.Convergence()
    solver.add_logger(log)
    y = gk.matrix.Dense.zeros(exec, b.shape)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), y)
    assert log.has_converged and log.num_iterations <= max_iterations
    np.testing.assert_allclose(y.to_numpy(), x.to_numpy(), rtol=1e-7, atol=1e-9)


def configuration_and_command_line(capsys, tmp_path, name: str, method: str, parameters: dict) -> None:
    """``solver::<name>`` with ``parameters``, a Jacobi preconditioner and criteria parses to
    gk.solver.<name> and writes back the same; the CLI solves with ``--solver method``."""
    config = {"type": f"solver::{name}", **parameters,
              "preconditioner": {"type": "preconditioner::Jacobi"},
              "criteria": {"iteration": 300, "relative_residual_norm": 1e-8}}
    params = gk.config.parse(config)
    assert params.product is getattr(gk.solver, name)
    written = gk.config.to_dict(params)
    assert written["type"] == f"solver::{name}"
    for key, value in parameters.items():
        assert written[key] == value
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(path, convection_diffusion_2d(6))
    from ginkpy.cli import main
    assert main(["solve", str(path), "--solver", method, "--executor", "reference"]) == 0
    assert name in capsys.readouterr().out
