"""Every public name of ginkpy's namespaces explains itself (numpydoc, as SciPy's): a docstring
of its own that says what it does, a Parameters section naming each parameter it takes (for a
built type: each ``with_<name>`` parameter) and an Examples section; the builder's ``with_*``
setters carry their parameter's own description."""
from __future__ import annotations

import enum
import importlib
import inspect

import pytest

from ginkpy.core.base.docs import numpydoc_sections, parameter_names
from ginkpy.core.base.factory import EnableBuild, Parameters, parameter_fields

NAMESPACES = ["ginkpy", "ginkpy.solver", "ginkpy.preconditioner", "ginkpy.matrix", "ginkpy.stop", "ginkpy.log",
              "ginkpy.factorization", "ginkpy.multigrid", "ginkpy.reorder", "ginkpy.batch", "ginkpy.batch.solver",
              "ginkpy.batch.matrix", "ginkpy.batch.preconditioner", "ginkpy.batch.log", "ginkpy.distributed",
              "ginkpy.linalg"]


def _public():
    """(qualified name, object) of every public class and function of the namespaces, once each."""
    seen, out = set(), []
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            try:
                obj = getattr(module, name)
            except ImportError as err:  # an optional dependency (pyopencl, mpi4py) is absent
                pytest.skip(f"{namespace}.{name}: {err}")
            if inspect.ismodule(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{namespace}.{name}", obj))
    return out


PUBLIC = _public()


def _own_doc(obj) -> str:
    return (obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__) or ""


def _taken(obj) -> list[str]:
    """The parameters a user passes: a built type's ``with_`` parameters, else the signature's."""
    if inspect.isclass(obj) and issubclass(obj, EnableBuild):
        return [f.name for f in parameter_fields(obj.Parameters)]
    if inspect.isclass(obj) and issubclass(obj, enum.Enum):
        return []
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")
            and not p.name.startswith("_") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _shared_names() -> set[str]:
    """Parameters every built type takes, documented once on the base parameter object."""
    return set(parameter_names(numpydoc_sections(Parameters.__doc__ or "").get("Parameters", "")))


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_public_names_explain_themselves(name, obj):
    doc = inspect.cleandoc(_own_doc(obj))
    assert doc, f"{name} has no docstring of its own"
    summary = doc.split("\n\n")[0]
    assert len(summary.split()) >= 5, f"{name}'s docstring does not say what it does: {summary!r}"
    sections = numpydoc_sections(doc)
    assert "Examples" in sections, f"{name}'s docstring has no Examples section"
    assert ">>>" in sections["Examples"], f"{name}'s Examples show no code"
    shared = _shared_names()  # (value_type: documented once, on the base parameter object)
    taken = [p for p in _taken(obj) if p not in shared]
    if taken:
        assert "Parameters" in sections, f"{name} takes {taken} but its docstring has no Parameters section"
        documented = set(parameter_names(sections["Parameters"])) | shared
        missing = [p for p in taken if p not in documented]
        assert not missing, f"{name}'s Parameters section does not describe {missing}"


BUILT = [(name, obj) for name, obj in PUBLIC if inspect.isclass(obj) and issubclass(obj, EnableBuild)]


@pytest.mark.parametrize("name, obj", BUILT, ids=[name for name, _ in BUILT])
def test_with_setters_say_what_their_parameter_is(name, obj):
    params = obj.build()
    for field in parameter_fields(obj.Parameters):
        doc = getattr(params, f"with_{field.name}").__doc__ or ""
        assert "\n\n" in doc and field.name in doc.split("\n\n", 1)[1], \
            f"{name}.build().with_{field.name} says only {doc!r}"


def test_help_of_cg_names_the_method_and_its_criteria():
    import ginkpy as gk
    assert "Base of the Krylov solvers" not in (gk.solver.Cg.__doc__ or "")
    assert gk.solver.Cg.__doc__.lstrip().startswith("The conjugate gradient method")
    doc = gk.solver.Cg.build().with_criteria.__doc__
    assert "ResidualNorm" in doc and "Iteration" in doc


def test_linalg_cg_documents_scipys_arguments_returns_and_info():
    import ginkpy.linalg as gl
    sections = numpydoc_sections(inspect.cleandoc(gl.cg.__doc__))
    for section in ("Parameters", "Returns", "Examples"):
        assert section in sections
    documented = set(parameter_names(sections["Parameters"]))
    assert set(inspect.signature(gl.cg).parameters) <= documented
    assert "info" in sections["Returns"] and "> 0" in sections["Returns"] and "< 0" in sections["Returns"]
