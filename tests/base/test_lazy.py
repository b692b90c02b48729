"""ginkpy/core/base/lazy.py: ``import ginkpy`` loads only the executors (issue 33: at most
0.15 s on two cores); each name of the namespaces loads its module at first use."""
import subprocess
import sys

import pytest

import ginkpy as gk
from conftest import PROJECT

NAMESPACES = [gk.solver, gk.preconditioner, gk.factorization, gk.matrix, gk.stop, gk.log, gk.multigrid]

# what ``import ginkpy`` must not load: SciPy, pyopencl, attrs (every solver's parameters), the
# doors, the CLI, and any solver, preconditioner, factorization or format
HEAVY = ("scipy", "pyopencl", "attr", "mpi4py", "ginkpy.linalg", "ginkpy.cli", "ginkpy.config", "ginkpy.batch",
         "ginkpy.core.solver", "ginkpy.core.preconditioner", "ginkpy.core.factorization", "ginkpy.core.matrix",
         "ginkpy.core.multigrid", "ginkpy.core.stop", "ginkpy.core.log", "ginkpy.opencl")


def test_import_ginkpy_loads_no_heavy_module():
    code = (f"import sys, ginkpy; heavy = {HEAVY!r}; "
            "print(sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in heavy)))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=PROJECT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stdout


@pytest.mark.parametrize("namespace", NAMESPACES, ids=lambda m: m.__name__)
def test_every_exported_name_resolves_and_is_listed(namespace):
    for name in namespace.__all__:
        value = getattr(namespace, name)
        assert getattr(value, "__name__", name) == name, (namespace.__name__, name, value)
    assert set(namespace.__all__) <= set(dir(namespace))


def test_from_import_and_star_import():
    from ginkpy.solver import Cg
    assert Cg is gk.solver.Cg
    scope: dict = {}
    exec("from ginkpy.preconditioner import *", scope)
    assert scope["Jacobi"] is gk.preconditioner.Jacobi and "Isai" in scope


def test_top_level_lazy_names():
    assert gk.read.__module__ == "ginkpy.core.matrix.mtx_io"
    assert gk.linalg.__name__ == "ginkpy.linalg"
    assert set(gk.__all__) <= set(dir(gk))


def test_a_missing_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="'ginkpy.solver' has no attribute 'Cgg'"):
        gk.solver.Cgg
    with pytest.raises(ImportError, match="cannot import name 'Nope'"):
        exec("from ginkpy.stop import Nope", {})
