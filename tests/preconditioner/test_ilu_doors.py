"""The doors to the incomplete factorizations: M="ilu" / "ic" and the exact presets in
gk.linalg and on the command line, and Ginkgo's JSON configuration of the new types."""
import numpy as np
import pytest
import scipy.io

import ginkpy as gk
from ginkpy.cli import main
from ginkpy.linalg import bicgstab, cg, gmres
from ginkpy.problems import convection_diffusion_2d, poisson_2d


def test_short_names():
    names = gk.config.short_names("preconditioner")
    for name in ("ilu", "ic", "isai", "lowerisai", "upperisai", "generalisai", "spdisai", "ilu0_exact", "ic0_exact"):
        assert name in names
    exact = names["ilu0_exact"].build()
    assert exact.product is gk.preconditioner.Ilu
    assert exact.factorization.product is gk.factorization.Ilu
    assert exact.l_solver.product is gk.solver.LowerTrs and exact.u_solver.product is gk.solver.UpperTrs
    assert names["ic0_exact"].build().factorization.product is gk.factorization.Ic


@pytest.mark.parametrize("M", ["ilu", "ilu0_exact", "isai", "generalisai"])
def test_linalg_nonsymmetric(exec, M):
    m = convection_diffusion_2d(15)
    b = m @ np.ones(m.shape[0])
    for solve in (bicgstab, gmres):
        x, info = solve(m, b, rtol=1e-10, M=M, executor=exec)
        assert info == 0
        np.testing.assert_allclose(x, 1, rtol=1e-7)


@pytest.mark.parametrize("M", ["ic", "ic0_exact", "spdisai"])
def test_linalg_spd(exec, M):
    m = poisson_2d(15)
    x, info = cg(m, m @ np.ones(m.shape[0]), rtol=1e-10, M=M, executor=exec)
    assert info == 0
    np.testing.assert_allclose(x, 1, rtol=1e-7)


@pytest.mark.parametrize("precond", ["ilu", "ilu0_exact", "lowerisai"])
def test_command_line(capsys, tmp_path, precond):
    path = tmp_path / "cd.mtx"
    scipy.io.mmwrite(path, convection_diffusion_2d(8))
    rc = main(["solve", str(path), "--solver", "bicgstab", "--preconditioner", precond, "--executor", "reference",
               "--rtol", "1e-10"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "converged" in out


def test_json_configuration_of_the_new_types(exec):
    config = {"type": "solver::Bicgstab",
              "preconditioner": {"type": "preconditioner::Ilu",
                                 "factorization": {"type": "factorization::ParIlu", "iterations": 3,
                                                   "sparsity_power": 2},
                                 "l_solver": {"type": "preconditioner::LowerIsai", "sparsity_power": 2},
                                 "u_solver": {"type": "preconditioner::Isai", "isai_type": "upper"}},
              "criteria": {"iteration": 200, "relative_residual_norm": 1e-10}}
    params = gk.config.parse(config)
    assert gk.config.to_dict(params) == {**config, "criteria": [
        {"type": "Iteration", "max_iters": 200}, {"type": "ResidualNorm", "reduction_factor": 1e-10}]}
    m = convection_diffusion_2d(12)
    solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, m))
    assert solver.preconditioner.u_solver.isai_type == "upper"
    x = solver.apply(gk.matrix.Dense.from_numpy(exec, m @ np.ones(144)), gk.matrix.Dense.zeros(exec, (144, 1)))
    np.testing.assert_allclose(x.to_numpy()[:, 0], 1, rtol=1e-7)
    for name in ("factorization::ParIc", "factorization::ParIlut", "factorization::ParIct", "preconditioner::SpdIsai",
                 "preconditioner::GeneralIsai", "preconditioner::UpperIsai"):
        assert name in gk.config.types()
    trs = gk.config.parse({"type": "solver::LowerTrs", "algorithm": "jacobi", "num_jacobi_sweeps": 4})
    assert (trs.algorithm, trs.num_jacobi_sweeps) == ("jacobi", 4)
    with pytest.raises(ValueError, match="fill_in_limit"):
        gk.config.parse({"type": "factorization::ParIlut", "fill_in_limit": -1})
