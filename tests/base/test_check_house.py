"""scripts/check_house.py: deferred imports count, circles of more than two modules and arrows
against the floors are findings, the allowlists hold only what they list."""
import importlib.util
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def house():
    spec = importlib.util.spec_from_file_location("check_house", ROOT / "scripts" / "check_house.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_package(tmp_path, layout):
    """A package ``ginkpy`` under tmp_path from ``layout``, a text (indented as you like): each
    file is a line ``--- relative/path.py`` and its source below it."""
    root = tmp_path / "ginkpy"
    for part in textwrap.dedent(layout).split("--- ")[1:]:
        rel, _, source = part.partition("\n")
        path = root / rel.strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            init = root / parent / "__init__.py"
            if not init.exists():
                init.write_text("")
        path.write_text(source)
    return root


def findings(house, root):
    return house.check(root, allowlists=False)


def test_ginkpy_keeps_the_house_rules(house):
    assert house.check(ROOT / "ginkpy") == []


def test_a_circle_through_imports_inside_functions_is_found(house, tmp_path):
    root = make_package(tmp_path, """
        --- core/a.py
        from ginkpy.core import b
        --- core/b.py
        def f():
            from ginkpy.core.c import g
            return g
        --- core/c.py
        class C:
            def m(self):
                import ginkpy.core.a
        """)
    found = findings(house, root)
    assert found == ["import circle of 3 modules: ginkpy.core.a <-> ginkpy.core.b <-> ginkpy.core.c"]
    assert house.largest_circle(root) == 3


def test_names_imported_at_first_use_count_as_deferred_imports(house, tmp_path):
    # a namespace's _EXPORTS (and a package's _SUBMODULES) of core/base/lazy.lazy_attributes
    root = make_package(tmp_path, """
        --- solver.py
        _EXPORTS = {'Cg': 'ginkpy.core.cg', 'Ir': 'ginkpy.core.ir:Ir'}
        --- core/cg.py
        def f():
            from ginkpy.core import ir
        --- core/ir.py
        import ginkpy.solver
        --- __init__.py
        _SUBMODULES = ('solver',)
        """)
    assert findings(house, root) == [
        "floor: ginkpy/core/ir.py:1 ginkpy.core.ir -> ginkpy.solver (import): core imports no face",
        "import circle of 3 modules: ginkpy.core.cg <-> ginkpy.core.ir <-> ginkpy.solver"]
    names, trees = house.load(root)
    assert "ginkpy.solver" in house.imports(trees["ginkpy"], "ginkpy", True, names)


def test_the_table_of_public_names_counts_as_deferred_imports(house, tmp_path):
    # ginkpy/_exports.py: a name of FACES lives in core.<face>.<name in snake case> or ELSEWHERE
    root = make_package(tmp_path, """
        --- _exports.py
        FACES = {'solver': 'LowerTrs Cg'}
        ELSEWHERE = {'solver.Cg': 'krylov'}
        --- core/solver/lower_trs.py
        x = 1
        --- core/solver/krylov.py
        from ginkpy.core.solver.lower_trs import x
        """)
    names, trees = house.load(root)
    assert house.imports(trees["ginkpy._exports"], "ginkpy._exports", False, names) == {
        "ginkpy.core.solver.lower_trs", "ginkpy.core.solver.krylov"}
    root.joinpath("core/solver/lower_trs.py").write_text("def f():\n    import ginkpy._exports\n")
    assert findings(house, root) == [
        "floor: ginkpy/core/solver/lower_trs.py:2 ginkpy.core.solver.lower_trs -> ginkpy._exports (deferred import): "
        "core imports no face",
        "import circle of 3 modules: ginkpy._exports <-> ginkpy.core.solver.krylov <-> ginkpy.core.solver.lower_trs"]


def test_a_pair_is_tolerated_and_type_checking_imports_do_not_count(house, tmp_path):
    root = make_package(tmp_path, """
        --- core/a.py
        from ginkpy.core.b import x
        --- core/b.py
        x = 1
        def f():
            from ginkpy.core.a import y
        --- core/c.py
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from ginkpy.core.a import y
        --- core/d.py
        from ginkpy.core.c import z
        """)
    root.joinpath("core/a.py").write_text("from ginkpy.core.b import x\nfrom ginkpy.core.d import w\n")
    # a -> d -> c, and c -> a only under TYPE_CHECKING: no circle of 3; a <-> b is a pair
    assert findings(house, root) == []


def test_imports_against_the_floors_are_found(house, tmp_path):
    root = make_package(tmp_path, """
        --- core/base/types.py
        def f():
            from ginkpy.core.matrix import csr
        --- core/matrix/csr.py
        from ginkpy.reference import kernels
        --- core/solver/cg.py
        import ginkpy.matrix
        --- matrix.py
        from ginkpy.core.matrix.csr import Csr
        --- reference/kernels.py
        from ginkpy.core.matrix import csr
        """)
    found = findings(house, root)
    assert "floor: ginkpy/core/base/types.py:2 ginkpy.core.base.types -> ginkpy.core.matrix.csr " \
           "(deferred import): core/base imports nothing above it" in found
    assert any("ginkpy.core.matrix.csr -> ginkpy.reference.kernels (import): core imports no backend" in f
               for f in found)
    assert any("ginkpy.core.solver.cg -> ginkpy.matrix (import): core imports no face" in f for f in found)
    assert len(found) == 3


def test_the_allowlists_hold_what_they_list_and_no_more(house, tmp_path, monkeypatch):
    root = make_package(tmp_path, "--- core/base/a.py\ndef f():\n    import ginkpy.core.solver.b\n"
                        + "--- core/solver/b.py\n" + "x = 1\n" * 12
                        + "--- core/solver/c.py\ndef g():\n" + "    pass\n" * 8)
    monkeypatch.setattr(house, "DEFERRED_FOR_STARTUP", {("ginkpy.core.base.a", "ginkpy.core.solver.b"): "start-up"})
    monkeypatch.setattr(house, "LONG_MODULES", {"ginkpy/core/solver/b.py": 12})
    monkeypatch.setattr(house, "LONG_FUNCTIONS", {"ginkpy/core/solver/c.py:g": 9, "ginkpy/core/solver/c.py:h": 9})
    found = house.check(root, max_module=10, max_function=5)
    assert found == ["stale allowlist entry LONG_FUNCTIONS['ginkpy/core/solver/c.py:h']: no longer over 5 lines"]
    monkeypatch.setattr(house, "LONG_MODULES", {"ginkpy/core/solver/b.py": 11})
    assert "module ginkpy/core/solver/b.py: 12 lines (> 11)" in house.check(root, max_module=10, max_function=5)
