"""The record of the programs each kind of operator uses on one device, kept in memory and on disk.

Per program signature (``core/base/program_signature.py``: an operator's type, value type,
parameters and system matrix type), the kernels its first applies looked up, each as an entry
``{"file": <module path relative to ginkpy/opencl/>, "dtype": "float64", "type": false,
"name": <kernel>, "defines": [[NAME, value], ...], "scalars": [<scalar argument types>],
"copies": <private copies a capture took>}``: exactly the arguments of ``exec.kernel``, shape
dependent defines included, so that :mod:`ginkpy.opencl.prebuild` can build them all again.

On disk: one small JSON file per device and ginkpy version (``programs-<hash>.json``) beside
pyopencl's and PoCL's program caches, in ``GINKPY_CACHE_DIR`` or the user cache directory
(``~/.cache/ginkpy`` on Linux), read once per process at the first generate and written
atomically (a temporary file renamed over it) when a first apply used a kernel the record did
not have. A file that cannot be read, is not this format or belongs to another device or
version is ignored (and replaced at the next write). ``GINKPY_PROGRAM_RECORD=0`` turns the disk
record off (neither read nor written: each process starts cold, the record lives in memory).
Bounded: at most MAX_SIGNATURES signatures and MAX_ENTRIES kernels each, the least recently
recorded dropped first.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

FORMAT = 1
MAX_SIGNATURES = 128
MAX_ENTRIES = 512
_log = logging.getLogger("ginkpy")


def disk_enabled() -> bool:
    """Whether the record is kept on disk (``GINKPY_PROGRAM_RECORD`` is not ``0``)."""
    return os.environ.get("GINKPY_PROGRAM_RECORD", "1").strip().lower() not in ("0", "false", "off", "no")


def cache_dir() -> Path:
    """``GINKPY_CACHE_DIR``, else the user cache directory of ginkpy."""
    given = os.environ.get("GINKPY_CACHE_DIR")
    if given:
        return Path(given)
    try:
        import platformdirs  # pyopencl's dependency, for its own cache
        return Path(platformdirs.user_cache_dir("ginkpy", appauthor=False))
    except ImportError:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ginkpy"


def entry_key(entry: dict) -> tuple:
    """What identifies an entry (its kernel), hashable."""
    return (entry["file"], entry["dtype"], entry.get("type", False), entry["name"],
            tuple(tuple(item) for item in entry.get("defines", ())))


class ProgramRecord:
    """The record of one device (``identity``: device, driver and ginkpy version). Thread-safe."""

    def __init__(self, identity: str) -> None:
        self.identity = identity
        self.lock = threading.Lock()
        self._signatures: dict[str, dict[tuple, dict]] | None = None  # loaded at first use
        self._dropped: set[tuple[str, tuple]] = set()  # stale entries, kept out of the next write
        self.generation = 0  # changes whenever an entry does (prebuild.py's shortcut checks it)
        self.path = cache_dir() / f"programs-{hashlib.sha1(identity.encode()).hexdigest()[:16]}.json"

    def entries(self, signature: str) -> list[dict]:
        """The kernels recorded for ``signature`` (copies: the caller may keep them)."""
        with self.lock:
            return [dict(e) for e in self._loaded().get(signature, {}).values()]

    def add(self, signature: str, entries: list[dict]) -> bool:
        """Merge ``entries`` into the record of ``signature``; whether it changed."""
        with self.lock:
            signatures = self._loaded()
            known = signatures.pop(signature, {})
            changed = False
            for entry in entries:
                key = entry_key(entry)
                old = known.pop(key, None)
                if old is not None and old.get("scalars") is not None and entry.get("scalars") is None:
                    entry = dict(entry, scalars=old["scalars"])
                if old is not None:
                    entry = dict(entry, copies=max(old.get("copies", 0), entry.get("copies", 0)))
                changed |= old != entry
                known[key] = entry  # (moved last: the most recently used)
            while len(known) > MAX_ENTRIES:
                del known[next(iter(known))]
            signatures[signature] = known  # (moved last)
            while len(signatures) > MAX_SIGNATURES:
                del signatures[next(iter(signatures))]
            self.generation += changed
            return changed

    def drop(self, signature: str, entry: dict) -> None:
        """Forget a stale entry (its file, kernel or options are gone)."""
        with self.lock:
            self._loaded().get(signature, {}).pop(entry_key(entry), None)
            self._dropped.add((signature, entry_key(entry)))
            self.generation += 1

    # -- disk ---------------------------------------------------------------------------------
    def _loaded(self) -> dict[str, dict[tuple, dict]]:
        if self._signatures is None:
            self._signatures = self._read() if disk_enabled() else {}
        return self._signatures

    def _read(self) -> dict[str, dict[tuple, dict]]:
        """The record on disk; empty where there is none or it is not this device's, or not
        readable (corrupt, another format): ignored, replaced at the next write."""
        try:
            data = json.loads(self.path.read_text())
            if data.get("format") != FORMAT or data.get("identity") != self.identity:
                return {}
            return {str(signature): {entry_key(e): _checked(e) for e in entries}
                    for signature, entries in data["signatures"].items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as err:
            _log.debug("ginkpy: the program record %s is ignored (%s)", self.path, err)
            return {}

    def save(self) -> None:
        """Write the record (merged with what another process wrote meanwhile) atomically;
        a failure (read-only cache, full disk) is logged at debug level and otherwise ignored."""
        if not disk_enabled():
            return
        with self.lock:
            ours = self._loaded()
            merged = self._read()
            for signature, key in self._dropped:
                merged.get(signature, {}).pop(key, None)
            for signature, entries in ours.items():
                merged.setdefault(signature, {}).update(entries)
                merged[signature] = merged.pop(signature)  # ours last: the most recent
            data = {"format": FORMAT, "identity": self.identity,
                    "signatures": {s: list(entries.values()) for s, entries in merged.items()}}
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, temporary = tempfile.mkstemp(prefix=".programs-", suffix=".json", dir=self.path.parent)
                try:
                    with os.fdopen(fd, "w") as file:
                        json.dump(data, file, separators=(",", ":"))
                    os.replace(temporary, self.path)
                except BaseException:
                    os.unlink(temporary)
                    raise
            except (OSError, TypeError, ValueError) as err:  # (a full disk, a read-only cache; a bug)
                _log.debug("ginkpy: the program record %s could not be written (%s)", self.path, err)


def _checked(entry: Any) -> dict:
    """An entry read from disk, checked for the fields and types prebuild relies on."""
    if not (isinstance(entry, dict) and isinstance(entry.get("file"), str) and isinstance(entry.get("name"), str)
            and isinstance(entry.get("dtype"), str) and isinstance(entry.get("defines", []), list)):
        raise ValueError(f"not a program entry: {entry!r:.200}")
    scalars = entry.get("scalars")
    if scalars is not None and not (isinstance(scalars, list) and all(s is None or isinstance(s, str)
                                                                        for s in scalars)):
        raise ValueError(f"not a list of scalar types: {scalars!r:.200}")
    for item in entry.get("defines", []):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], (int, float, str))):
            raise ValueError(f"not a define: {item!r:.200}")
    if not isinstance(entry.get("copies", 0), int) or ".." in Path(entry["file"]).parts or \
            Path(entry["file"]).is_absolute():
        raise ValueError(f"not a program entry: {entry!r:.200}")
    return entry
