"""Where a cold run of the test suite spends its time: a pytest plugin, and the summary of its logs.

As a plugin (``-p cold_profile`` with ``scripts`` on ``PYTHONPATH``) it times every program
build (``pyopencl.Program.build``: for PoCL the front end, at clBuildProgram) and the first
launch of each kernel per local size (for PoCL the work-group function's compilation, which it
does at the first enqueue of a local size: the plugin finishes the queue before and after that
one launch, so that its time is the compilation's), and every test, attributing each to the
test that ran it; one JSON line each to ``$COLD_PROFILE_DIR/<xdist worker>.jsonl``. Run it on
a fresh PoCL cache (``XDG_CACHE_HOME``) to see the cold costs; a warm cache shows what is left::

    XDG_CACHE_HOME=$(mktemp -d) COLD_PROFILE_DIR=/tmp/prof PYTHONPATH=scripts \\
        python -m pytest -q -n 2 -p cold_profile tests/solver
    python scripts/cold_profile.py /tmp/prof          # per test file, per kernel name

The summary lists per test file the builds, first launches and tests with their seconds (the
wall time of each, on a loaded machine not CPU time), then the kernels whose first launches
took longest. The plugin is for measuring only: it adds a queue finish per first launch.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import time
from pathlib import Path

import pytest

_state = {"test": "<collection>", "out": None, "seen": set()}


def _log(record: dict) -> None:
    """Append one JSON line to this worker's log."""
    if _state["out"] is None:
        folder = Path(os.environ.get("COLD_PROFILE_DIR", "cold_profile"))
        folder.mkdir(parents=True, exist_ok=True)
        name = os.environ.get("PYTEST_XDIST_WORKER", "main") + ".jsonl"
        _state["out"] = open(folder / name, "a", buffering=1)  # noqa: SIM115 - open for the session
    _state["out"].write(json.dumps({"test": _state["test"], **record}) + "\n")


def _timed_build(build):
    def timed(program, options=None, *args, **kwargs):
        start = time.perf_counter()
        result = build(program, options, *args, **kwargs)
        kept = [o for o in options or [] if not o.startswith(("-I", "-DSTATUS"))]
        _log({"kind": "build", "seconds": time.perf_counter() - start, "options": " ".join(kept)})
        return result
    return timed


def _timed_first_launch(call):
    def timed(kernel, queue, global_size, local_size, *args):
        key = (id(kernel._program), kernel._name, None if local_size is None else tuple(local_size))
        if key in _state["seen"]:
            return call(kernel, queue, global_size, local_size, *args)
        _state["seen"].add(key)
        queue.finish()
        start = time.perf_counter()
        result = call(kernel, queue, global_size, local_size, *args)
        queue.finish()
        _log({"kind": "first_launch", "seconds": time.perf_counter() - start, "kernel": kernel._name,
              "local": key[2]})
        return result
    return timed


def pytest_configure(config) -> None:
    """Wrap pyopencl's build and ginkpy's kernel launch (for the whole session)."""
    import pyopencl as cl

    from ginkpy.opencl import kernel
    cl.Program.build = _timed_build(cl.Program.build)
    kernel.Kernel.__call__ = _timed_first_launch(kernel.Kernel.__call__)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Attribute what follows to ``item``, and log its duration."""
    _state["test"] = item.nodeid
    start = time.perf_counter()
    yield
    _log({"kind": "test", "seconds": time.perf_counter() - start})


def summarize(folder: Path, files: int, kernels: int) -> None:
    """Print per test file and per kernel name what the logs in ``folder`` hold."""
    records = [json.loads(line) for path in folder.glob("*.jsonl") for line in path.open() if line.strip()]
    per_file = collections.defaultdict(lambda: collections.Counter())
    per_kernel = collections.defaultdict(lambda: collections.Counter())
    for r in records:
        counts = per_file[r["test"].split("::")[0]]
        counts[r["kind"]] += 1
        counts[r["kind"] + "_s"] += r["seconds"]
        if r["kind"] == "first_launch":
            per_kernel[r["kernel"]].update({"n": 1, "s": r["seconds"]})
    total = collections.Counter()
    for counts in per_file.values():
        total.update(counts)
    print(f"all: {total['test']} tests {total['test_s']:.0f} s, {total['build']} builds {total['build_s']:.0f} s, "
          f"{total['first_launch']} first launches {total['first_launch_s']:.0f} s")
    print(f"{'test file':64s} {'builds':>7s} {'s':>6s} {'firsts':>7s} {'s':>6s} {'tests s':>8s}")
    for name, c in sorted(per_file.items(), key=lambda kv: -kv[1]["test_s"])[:files]:
        print(f"{name:64s} {c['build']:7d} {c['build_s']:6.1f} {c['first_launch']:7d} {c['first_launch_s']:6.1f} "
              f"{c['test_s']:8.1f}")
    print(f"{'kernel (first launches)':64s} {'n':>7s} {'s':>6s}")
    for name, c in sorted(per_kernel.items(), key=lambda kv: -kv[1]["s"])[:kernels]:
        print(f"{name:64s} {c['n']:7d} {c['s']:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the plugin's COLD_PROFILE_DIR")
    parser.add_argument("--files", type=int, default=30, help="test files listed (the slowest)")
    parser.add_argument("--kernels", type=int, default=20, help="kernel names listed (the slowest first launches)")
    args = parser.parse_args()
    summarize(args.folder, args.files, args.kernels)


if __name__ == "__main__":
    main()
