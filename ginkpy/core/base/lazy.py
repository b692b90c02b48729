"""Imports deferred to first use, so that ``import ginkpy`` stays fast (issue 33: at most
0.15 s on two cores): SciPy is imported when first used (its sparse module alone takes about
half a second to import), and the names of ginkpy's namespaces (``gk.solver.Cg``,
``gk.preconditioner.Ilu``, ...) load their modules at their first access, so a program pays
only for the solvers, preconditioners and formats it uses."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Iterable


class LazyModule:
    """A module that is imported at its first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


sp = LazyModule("scipy.sparse")


def lazy_attributes(namespace: dict, exports: dict[str, str],
                    submodules: Iterable[str] = ()) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """A module's ``__getattr__`` and ``__dir__`` (PEP 562) that import its names at first use.

    Parameters
    ----------
    namespace : dict
        The module's ``globals()``: a name once imported is stored there, so that later accesses
        cost nothing.
    exports : dict of str to str
        Each name mapped to the module that defines it (``{"Cg": "ginkpy.core.solver.cg"}``);
        ``"module:attr"`` where the name differs from the attribute it stands for.
    submodules : iterable of str, default ()
        Names of the module's submodules, imported at first access (``gk.linalg``).

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``, to assign at the module's top level.

    Examples
    --------
    >>> __getattr__, __dir__ = lazy_attributes(globals(), {"Cg": "ginkpy.core.solver.cg"})
    """
    package = namespace["__name__"]
    submodules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        elif name in exports:
            module, _, attr = exports[name].partition(":")
            value = getattr(importlib.import_module(module), attr or name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list:
        return sorted(set(namespace) | set(exports) | submodules)

    return __getattr__, __dir__
