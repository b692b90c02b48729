"""ProfilerHook: where a solve's time goes, per operation, as Ginkgo's ProfilerHook with its
summary writers.

Attached to an executor (``exec.add_logger(hook)``) it times every operation run there:
every kernel by its name (``solver.cg.step_1``), every ``apply`` of an operator
(``apply(Cg)``, ``apply(Jacobi)``, ``apply(Csr)``) and every ``generate`` of a factory
(``generate(Multigrid)``), nested as they run. Attached to an operator (``solver.add_logger(hook)``)
it does so during that operator's applies only; an executor's hook takes precedence over an
operator's.

Captured iterations: while a hook is attached to an executor or to an operator on it, nothing
on that executor is captured (``Executor.capture``, ``Replays``): each iteration runs its
Python, so that every kernel and every inner apply is seen and counted, at the cost of the
host time a replay saves. Removing the hook restores the captured iterations (a solver that
ran profiled captures at its next apply); without a hook the kernel path and a replay check
one attribute each.

Timing: each timed range waits for the device at its start and end (``queue.finish()``; as
Ginkgo's ProfilerHook with synchronization): an apply's or generate's time is the host's wall
time of the work in it, device work included. On OpenCL a kernel's time is either the same
(host wall time of the launches and the wait), or, with ``GINKPY_OPENCL_PROFILE=1`` set
before the device is first opened (``ginkpy solve --profile`` does), its launches' device time
from OpenCL's profiling events (and its range does not wait). Either way a profiled solve is
slower than the solve itself: the waits and the uncaptured iterations cost speed, which shows
in the applies' self times.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, TextIO

from ginkpy.core.log.logger import Logger


def _format_duration(seconds: float) -> str:
    """Ginkgo's format: ns, us, ms, s with one decimal."""
    ns = seconds * 1e9
    for limit, unit, scale in ((1e3, "ns", 1.0), (1e6, "us", 1e3), (1e9, "ms", 1e6), (float("inf"), "s ", 1e9)):
        if ns < limit:
            return f"{ns / scale:.1f} {unit}"
    return f"{seconds:.1f} s "


def _type_name(cls: type) -> str:
    """An operator type's name in the tables: ``Cg``, or ``batch.Cg`` / ``distributed.Matrix``
    for the types of those areas (a small system's Cg runs a batched Cg inside)."""
    area = cls.__module__.split(".")[2:3]
    return f"{area[0]}.{cls.__name__}" if area and area[0] in ("batch", "distributed") else cls.__name__


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table as Ginkgo's TableSummaryWriter prints it: the first column left-aligned,
    the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["|" + "|".join(h.center(w) for h, w in zip(headers, widths)) + "|",
             "|" + "|".join("-" * (w - 1) + ("-" if i == 0 else ":") for i, w in enumerate(widths)) + "|"]
    for row in rows:
        lines.append("|" + "|".join(c.ljust(w) if i == 0 else c.rjust(w)
                                    for i, (c, w) in enumerate(zip(row, widths))) + "|")
    return "\n".join(lines)


class ProfilerHook(Logger):
    """Times every operation of a solve: kernels by name, operators' applies and factories'
    generates, with call counts, printable as a table (Ginkgo's ``log::ProfilerHook`` with its
    summary writer, or nested summary writer).

    Use it to see where a solve's time goes (which kernel, the preconditioner or the Krylov
    steps) before tuning; profiling waits for the device around each timed range and runs the
    iterations uncaptured, so a profiled solve takes longer than an unprofiled one (use the
    solve's own time for that; the module's notes say what is timed how). Make one with
    :meth:`create_summary` (a flat table: each operation's total and self time) or
    :meth:`create_nested_summary` (a tree of operations within operations) and attach it to an
    executor (everything run there) or to an operator (during its applies); one hook per
    executor or operator at a time. Read it with :meth:`totals`, :meth:`summary` (``str(hook)``)
    or :meth:`write`.

    Parameters
    ----------
    nested : bool, default False
        Print the nested summary (a tree) instead of the flat one.
    name : str, default "ginkpy profile"
        The table's header.

    Examples
    --------
    >>> hook = gk.log.ProfilerHook.create_summary()
    >>> exec.add_logger(hook)            # or solver.add_logger(hook)
    >>> solver.apply(b, x); print(hook)  # a table: name, total, total (self), count, avg, avg (self)
    """

    wants_iterations = False
    profiles = True  # what add_logger recognizes a hook by

    def __init__(self, nested: bool = False, name: str = "ginkpy profile") -> None:
        self.nested, self.name = bool(nested), str(name)
        self._records: list[tuple[tuple, float, list | None]] = []
        self._stack: list[str] = []
        self._executors: list = []
        # the host cost of one timed range without waiting: the overhead estimate's unit
        start = time.perf_counter()
        for _ in range(100):
            self._stack.append("")
            self._stack.pop()
            time.perf_counter()
        self._unit_overhead = (time.perf_counter() - start) / 100

    @classmethod
    def create_summary(cls, name: str = "ginkpy profile") -> "ProfilerHook":
        """A hook that prints a flat summary: per operation its total time, the time spent in
        it outside the operations it called (self), its count and averages (Ginkgo's
        ``ProfilerHook::create_summary``)."""
        return cls(False, name)

    @classmethod
    def create_nested_summary(cls, name: str = "ginkpy profile") -> "ProfilerHook":
        """A hook that prints a nested summary: the tree of operations within operations, each
        with its total time, fraction of its caller's, count and average (Ginkgo's
        ``ProfilerHook::create_nested_summary``)."""
        return cls(True, name)

    # -- what the executors and operators call ----------------------------------------------------
    def attach(self, exec: Any) -> None:
        """Profile everything that runs on ``exec`` (and on its host executor, where setup runs);
        ``exec.add_logger(hook)`` calls this."""
        if exec._profiler not in (None, self):
            raise ValueError(f"{exec!r} has another ProfilerHook attached: remove it first (remove_logger)")
        for e in (exec, exec.host):
            if e._profiler is not None:  # (the host's may be another executor's hook: it keeps it)
                continue
            e._profiler = self
            e._profiled += 1
            if e not in self._executors:
                self._executors.append(e)

    def detach(self, exec: Any) -> None:
        """Stop profiling ``exec`` (``exec.remove_logger(hook)``)."""
        for e in (exec, exec.host):
            if e._profiler is self:
                e._profiler = None
                e._profiled -= 1

    def kernel(self, exec: Any, name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """Run the kernel ``fn`` named ``name`` on ``exec``, timed (``Executor.run`` calls this)."""
        return self._timed(name, exec, lambda: fn(exec, *args, **kwargs), kernel=True)

    def apply(self, op: Any, run: Callable[[], Any]) -> Any:
        """Run ``op``'s apply, timed as ``apply(Type)``; a hook attached to the operator itself
        profiles its executor meanwhile."""
        exec, name = op.executor, f"apply({_type_name(type(op))})"
        if exec._profiler is self:
            return self._timed(name, exec, run)
        self.attach(exec)
        try:
            return self._timed(name, exec, run)
        finally:
            self.detach(exec)

    def generate(self, product: type, exec: Any, run: Callable[[], Any]) -> Any:
        """Run a factory's generate, timed as ``generate(Type)``."""
        return self._timed(f"generate({_type_name(product)})", exec, run)

    def _timed(self, name: str, exec: Any, run: Callable[[], Any], kernel: bool = False) -> Any:
        events = getattr(getattr(exec, "_device", None), "events", None) if kernel else None
        wait = exec.asynchronous and events is None
        if wait:
            exec.synchronize()
        first = len(events) if events is not None else 0
        self._stack.append(name)
        start = time.perf_counter()
        try:
            return run()
        finally:
            if wait:
                exec.synchronize()
            elapsed = time.perf_counter() - start
            path = tuple(self._stack)
            self._stack.pop()
            self._records.append((path, elapsed, events[first:] if events is not None else None))

    # -- the summary ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget what was timed so far."""
        self._records.clear()

    def _paths(self) -> dict[tuple, list]:
        """Per path of nested operations: [count, seconds] (device seconds of a kernel where its
        launches' profiling events are there, else host seconds)."""
        for exec in self._executors:
            exec.synchronize()
        totals: dict[tuple, list] = {}
        for path, elapsed, events in self._records:
            seconds = elapsed
            if events:
                seconds = sum(e.profile.end - e.profile.start for _, e in events) * 1e-9
            entry = totals.setdefault(path, [0, 0.0])
            entry[0] += 1
            entry[1] += seconds
        return totals

    def totals(self) -> dict[str, tuple[int, float, float]]:
        """Per operation name: (count, total seconds, self seconds: not in the operations it
        called), over every place it ran."""
        paths = self._paths()
        children: dict[tuple, float] = {}
        for path, (_, seconds) in paths.items():
            if len(path) > 1:
                children[path[:-1]] = children.get(path[:-1], 0.0) + seconds
        out: dict[str, list] = {}
        for path, (count, seconds) in paths.items():
            entry = out.setdefault(path[-1], [0, 0.0, 0.0])
            entry[0] += count
            if path[-1] not in path[:-1]:  # (a recursive call's time is its outer call's already)
                entry[1] += seconds
            entry[2] += seconds - children.get(path, 0.0)
        return {name: (c, t, s) for name, (c, t, s) in out.items()}

    def summary(self) -> str:
        """The table (the flat or the nested summary, as made), with Ginkgo's columns."""
        overhead = _format_duration(len(self._records) * self._unit_overhead)
        header = f"{self.name}\nOverhead estimate {overhead}"
        if self.nested:
            return f"{header}\n{self._nested_table()}"
        rows = [[f" {name} ", f" {_format_duration(t)} ", f" {_format_duration(s)} ", f" {c} ",
                 f" {_format_duration(t / c)} ", f" {_format_duration(s / c)} "]
                for name, (c, t, s) in sorted(self.totals().items(), key=lambda kv: -kv[1][1])]
        return f"{header}\n" + _table([" name ", " total ", " total (self) ", " count ", " avg ", " avg (self) "],
                                      rows)

    def _nested_table(self) -> str:
        paths = self._paths()
        rows: list[list[str]] = []

        def visit(parent: tuple, parent_seconds: float | None, depth: int) -> None:
            kids = sorted((p for p in paths if len(p) == len(parent) + 1 and p[:-1] == parent),
                          key=lambda p: -paths[p][1])
            for path in kids:
                count, seconds = paths[path]
                fraction = f"{100 * seconds / parent_seconds:.1f} %" if parent_seconds else "100.0 %"
                rows.append([f" {'  ' * depth}{path[-1]} ", f" {_format_duration(seconds)} ", f" {fraction} ",
                             f" {count} ", f" {_format_duration(seconds / count)} "])
                visit(path, seconds, depth + 1)
        visit((), None, 0)
        return _table([" name ", " total ", " fraction ", " count ", " avg "], rows)

    def write(self, file: TextIO | None = None) -> None:
        """Print the summary to ``file`` (default: standard output)."""
        print(self.summary(), file=file or sys.stdout)

    def __str__(self) -> str:
        return self.summary()
