"""EnableLogging: what an object that loggers attach to has (Ginkgo's ``log::EnableLogging``):
every LinOp and every batched operator."""
from __future__ import annotations

from typing import Any


class EnableLogging:
    """Mixin: ``add_logger``, ``remove_logger``, ``loggers``, and ``_log(event, ...)``, which
    calls ``logger.<event>(self, ...)`` on each attached logger. The class's constructor sets
    ``self._loggers = []``.

    Examples
    --------
    >>> logger = gk.log.Convergence()
    >>> solver.add_logger(logger)
    >>> solver.remove_logger(logger)
    """

    def add_logger(self, logger: Any) -> None:
        """Attach a logger (``gk.log.Convergence()``, ``gk.log.Stream()``,
        ``gk.batch.log.BatchConvergence()``) to this object."""
        self._loggers.append(logger)

    def remove_logger(self, logger: Any) -> None:
        """Detach a logger added with :meth:`add_logger`."""
        self._loggers.remove(logger)

    @property
    def loggers(self) -> tuple[Any, ...]:
        """The attached loggers, in the order they were added."""
        return tuple(self._loggers)

    def _log(self, event: str, *args: Any) -> None:
        for logger in self._loggers:
            getattr(logger, event)(self, *args)
