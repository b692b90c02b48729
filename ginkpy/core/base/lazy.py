"""SciPy imported when first used, not with ginkpy: ``import ginkpy`` stays fast (SciPy's sparse
module alone takes about half a second to import), and a program that never touches a SciPy
matrix never pays for it."""
from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """A module that is imported at its first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


sp = LazyModule("scipy.sparse")
