"""Programs built up front (issue 30): what an operator's first apply used is recorded, and built
again at the generate of the next operator of its kind, in the generating thread.

A program is built (or loaded from pyopencl's disk cache) at the first launch of one of its
kernels, under the device's lock and the process-wide build lock (``shared_device.py``): every
other thread's launch waits meanwhile, 30-60 ms per program loaded from the cache on PoCL, up
to a second compiled. So that no apply meets a build, ``exec.record_programs(signature)`` runs
around an operator's first apply (per shape of its right-hand sides): each kernel looked up
meanwhile in this thread, with its defines (shape dependent ones as used), the scalar types of
its arguments and the private copies a capture took of it, goes into the device's
:class:`~ginkpy.opencl.program_record.ProgramRecord` under the operator's signature; and
``exec.prepare_programs(signature)`` at the generate of an operator builds every program
recorded for its signature, creates the kernel objects, declares their scalar argument types
(checked again at their first launch: a wrong record costs a declaration, never a wrong
launch) and makes the private copies the capture will take. The record is kept on disk, so a
new process builds at generate what its applies will use.

Cost on the launch path: one attribute test per kernel look-up (``device.recordings``, the
number of recordings running in any thread); the rest only while a recording runs.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ginkpy.opencl.program_record import ProgramRecord

# the prefix every recorded module path has: ginkpy/opencl/ as this package's modules see it
# (their __file__ strings, not resolved, so that a rebuilt key is the same string)
PREFIX = str(Path(__file__).parent) + os.sep
_records_lock = threading.Lock()
_log = logging.getLogger("ginkpy")


class _Recording:
    """What one running recording saw: the kernels looked up (key -> Kernel) and the private
    copies a capture took of each."""

    def __init__(self) -> None:
        self.kernels: dict[tuple, Any] = {}
        self.copies: dict[Any, int] = {}


def record_of(exec) -> ProgramRecord:
    """The program record of ``exec``'s device (made at its first use)."""
    device = exec._device
    if device.program_record is None:
        with _records_lock:
            if device.program_record is None:
                # (the package's version, read where it is: importing ginkpy here would close a circle)
                version = getattr(sys.modules.get("ginkpy"), "__version__", "unknown")
                dev = exec.device
                identity = "|".join((f"ginkpy {version}", dev.platform.name.strip(), dev.platform.version.strip(),
                                     dev.name.strip(), dev.driver_version.strip(), dev.version.strip()))
                device.program_record = ProgramRecord(identity)
    return device.program_record


def note_kernel(device, key: tuple, kernel: Any) -> None:
    """A kernel looked up while a recording may run (``device.recordings`` > 0)."""
    for recording in getattr(device.recording, "active", ()):
        recording.kernels[key] = kernel


def note_copy(device, kernel: Any) -> None:
    """A private copy of ``kernel`` taken by a capture while a recording may run."""
    for recording in getattr(device.recording, "active", ()):
        recording.copies[kernel] = recording.copies.get(kernel, 0) + 1


@contextlib.contextmanager
def recording(exec, signature: str) -> Iterator[None]:
    """Record the kernels this thread looks up meanwhile under ``signature``; then merge them
    into the device's record, written to disk where it grew."""
    exec._check_process()  # (a forked child: the apply's own error, before the lock is taken)
    device = exec._device
    local = device.recording
    outer = getattr(local, "active", ())
    mine = _Recording()
    local.active = (*outer, mine)
    with device.lock:  # (the count is read without the lock: an attribute test per look-up)
        device.recordings += 1
    try:
        yield
    finally:
        local.active = outer
        with device.lock:
            device.recordings -= 1
        _merge(exec, signature, mine)


def _merge(exec, signature: str, mine: _Recording) -> None:
    """Merge what a recording saw into the device's record; written to disk where it grew. The
    record only saves time: a failure here is logged (debug) and never fails the apply."""
    try:
        entries = [entry for key, knl in mine.kernels.items()
                   if (entry := _entry(key, knl, mine.copies.get(knl, 0))) is not None]
        record = record_of(exec)
        if entries and record.add(signature, entries):
            record.save()
    except Exception as err:  # noqa: BLE001 - see above
        _log.debug("ginkpy: the programs of %s were not recorded (%s)", signature, err)


def _entry(key: tuple, kernel: Any, copies: int) -> dict | None:
    """The record entry of ``exec.kernel``'s key (None for a source outside ginkpy/opencl/)."""
    module_file, dtype, name, *defines = key
    if not isinstance(module_file, str) or not module_file.startswith(PREFIX):
        return None
    values = [_plain(v) for _, v in defines]
    if any(v is None for v in values):
        return None
    scalars = kernel.declared_scalars()
    return {"file": module_file[len(PREFIX):], "dtype": np.dtype(dtype).name, "type": isinstance(dtype, type),
            "name": name, "defines": [[k, v] for (k, _), v in zip(defines, values)],
            "scalars": None if scalars is None else [None if s is None else np.dtype(s).str for s in scalars],
            "copies": copies}


def _plain(value: Any) -> Any:
    """A define's value as JSON keeps it (a numpy number as a Python one; the option string
    ``-DNAME=value`` is the same), or None for a value it cannot keep."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value if isinstance(value, str) else None


def prepare(exec, signature: str) -> int:
    """Build every program recorded for ``signature`` and create its kernels (see the module's
    notes); returns how many programs were built or loaded. An entry that no longer builds
    (its file, kernel or options gone) is dropped from the record. Once a signature is
    prepared, a later generate of it (the record and the kernel table unchanged) only makes the
    private copies its captures will take: ~0.1 ms less per generate than the full pass."""
    exec._check_process()
    record, device = record_of(exec), exec._device
    done = device.prepared.get(signature)
    if done is not None and done[0] is record and done[1] == record.generation and done[2] is device.kernels:
        for kernel, copies in done[3]:  # prepared before: only the copies of this solver's captures
            kernel.reserve(copies)
        return 0
    generation, entries = record.generation, record.entries(signature)
    before, reserved = device.counters["builds"], []
    for entry in entries:
        try:
            dtype = np.dtype(entry["dtype"])
            kernel = exec.kernel(PREFIX + entry["file"], dtype.type if entry.get("type") else dtype, entry["name"],
                                 **dict(entry.get("defines", ())))
            if entry.get("scalars") is not None:
                kernel.predeclare([None if s is None else np.dtype(s) for s in entry["scalars"]])
            if entry.get("copies"):
                kernel.reserve(entry["copies"])
                reserved.append((kernel, entry["copies"]))
        except Exception as err:  # noqa: BLE001 - a stale entry: the apply builds what it needs itself
            _log.debug("ginkpy: a recorded program of %s does not build any more, dropped (%s)", signature, err)
            record.drop(signature, entry)
            generation = None
    if generation is not None:
        device.prepared[signature] = (record, generation, device.kernels, reserved)
    return device.counters["builds"] - before
