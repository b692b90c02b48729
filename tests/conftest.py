"""Shared fixtures: the executors under test and the real matrices of ../shared/matrices."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import ginkpy as gk

# The real matrices live beside the checkout; GINKPY_MATRICES points elsewhere (e.g. on another machine).
MATRICES = Path(os.environ.get("GINKPY_MATRICES") or Path(__file__).resolve().parents[2] / "shared" / "matrices")


def _opencl():
    try:
        return gk.OpenCLExecutor()
    except Exception as err:  # no pyopencl platform on this machine
        pytest.skip(f"no OpenCL device: {err}")


@pytest.fixture(scope="session")
def ref():
    return gk.ReferenceExecutor()


@pytest.fixture(scope="session")
def ocl():
    """The OpenCL executor (PoCL in CI, the GPU where there is one); skips without a device."""
    return _opencl()


@pytest.fixture(scope="session", params=["reference", "opencl"])
def exec(request):
    """Each executor in turn, for tests that must pass on both."""
    return gk.ReferenceExecutor() if request.param == "reference" else _opencl()


@pytest.fixture
def rng():
    return np.random.default_rng(42)


def matrix_path(name: str) -> Path:
    """Path of a real matrix in ../shared/matrices; skips the test when it is absent."""
    path = MATRICES / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def tol(dtype) -> float:
    """About 10 machine epsilons of ``dtype``: the reference-vs-device tolerance."""
    return 10 * np.finfo(dtype).eps
