"""Replays: the parts of a solver's iteration recorded once (``Executor.capture``) and then
enqueued again without running their Python."""
from __future__ import annotations

from typing import Any, Callable

CAPTURE_TRIES = 2  # a part that read from the device this many times runs itself from then on


class Replays:
    """The captured parts of one solve's iterations, by key (``"body"``, ``("step", j)``...).

    A part is a function that enqueues a fixed list of launches. Its first run is recorded;
    later runs replay the recording. A part that reads from the device while it runs (a host
    operator in it) cannot be replayed: it is run itself each time, and ``reads`` says so.

    Examples
    --------
    >>> replays = Replays(exec)
    >>> replays.enqueue("body", iteration)   # recorded
    >>> replays.enqueue("body", iteration)   # replayed
    """

    def __init__(self, exec) -> None:
        self.exec = exec
        self.entries: dict[Any, tuple[Callable[[], None] | None, int]] = {}
        self.reads = False  # the last capture read from the device

    def enqueue(self, key: Any, part: Callable[[], None]) -> None:
        """Run ``part``: captured the first time (and again, up to CAPTURE_TRIES, where a
        capture read from the device), replayed later."""
        if self.exec._profiled:  # a ProfilerHook: the part runs itself, each kernel and apply timed
            part()
            return
        entry = self.entries.get(key)
        if entry is None or (entry[0] is None and entry[1] < CAPTURE_TRIES):
            tries = 0 if entry is None else entry[1]
            replay = self.exec.capture(part)
            self.entries[key] = (replay, tries + 1)
            self.reads = replay is None
        else:
            (entry[0] or part)()


KEPT = 4  # sets of captured iterations a workspace keeps (for as many pairs of vectors b, x)


def kept_replays(ws, exec, mode: Any, b, x) -> Replays:
    """The captured parts of the iterations that run on the vectors ``b`` and ``x`` in ``mode``
    (what else the recorded launches depend on: blind or not, the iteration limit), kept in the
    solver's workspace ``ws`` across applies: a later apply on the same vectors replays them.
    The entry holds b and x, so that no other vectors can take their identities."""
    store = ws.get("replays", dict)
    key = (mode, id(b), id(x))
    entry = store.get(key)
    if entry is None:
        if len(store) >= KEPT:
            store.pop(next(iter(store)))
        entry = store[key] = (Replays(exec), b, x)
    return entry[0]
