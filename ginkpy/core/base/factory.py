"""Ginkgo's builder pattern: ``Type.build().with_x(v).on(exec).generate(A)``.

``Type.build()`` returns the type's parameter object, an attrs class with one ``with_<name>``
method per field (each sets the field and returns the object, so calls chain). ``.on(exec)``
binds the parameters to an executor and gives a :class:`Factory`; ``factory.generate(...)``
gives the product. Nested factories (preconditioner, criteria, inner solvers) may be given as
parameter objects without ``.on()``: :func:`as_factory` binds them to the outer executor.
"""
from __future__ import annotations

from typing import Any, Callable

import attrs

from ginkpy.core.base.executor import Executor


def variadic(**kwargs: Any) -> Any:
    """An attrs field holding a tuple whose ``with_`` method takes the items as arguments."""
    return attrs.field(factory=tuple, converter=tuple, metadata={"variadic": True}, **kwargs)


def _make_with(name: str, is_variadic: bool) -> Callable[..., Any]:
    if is_variadic:
        def with_(self, *values):
            setattr(self, name, values)
            return self
    else:
        def with_(self, value):
            setattr(self, name, value)
            return self
    with_.__name__ = f"with_{name}"
    with_.__doc__ = f"Set the parameter '{name}' and return the parameter object."
    return with_


def parameters(cls: type) -> type:
    """Class decorator: make ``cls`` an attrs class and add ``with_<field>`` for each field."""
    cls = attrs.define(cls, kw_only=True)
    for field in attrs.fields(cls):
        setattr(cls, f"with_{field.name}", _make_with(field.name, field.metadata.get("variadic", False)))
    return cls


class Parameters:
    """Base of every parameter object. ``product`` is the type that ``generate`` builds."""

    product: type = None  # set by EnableBuild.__init_subclass__

    def on(self, exec: Executor) -> "Factory":
        """Bind these parameters to an executor."""
        if not isinstance(exec, Executor):
            raise TypeError(f"on() takes an executor (gk.ReferenceExecutor(), gk.executor('opencl')), "
                            f"not {type(exec).__name__}")
        return Factory(exec, attrs.evolve(self))


class Factory:
    """Parameters bound to an executor; ``generate(...)`` builds the product on that executor."""

    def __init__(self, exec: Executor, params: Parameters) -> None:
        self.executor = exec
        self.parameters = params

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        return self.parameters.product(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"Factory({self.parameters!r} on {self.executor!r})"


class EnableBuild:
    """Mixin for types built by factories: gives ``build()`` and ``get_parameters()``.

    A subclass declares its parameters as a nested ``Parameters`` class decorated with
    :func:`parameters` (subclassing its base's ``Parameters`` to inherit fields); one that adds
    no parameters gets its own copy of its base's.
    """

    Parameters = Parameters

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Parameters" not in cls.__dict__:
            inherited = type("Parameters", (cls.Parameters,), {"__qualname__": f"{cls.__qualname__}.Parameters",
                                                                "__module__": cls.__module__})
            cls.Parameters = parameters(inherited)
        cls.Parameters.product = cls

    @classmethod
    def build(cls) -> Any:
        """A new parameter object with the default values."""
        return cls.Parameters()

    def __init__(self, factory: Factory) -> None:
        self.factory = factory
        self.parameters = factory.parameters

    def get_parameters(self) -> Any:
        return self.parameters


def as_factory(value: Any, exec: Executor) -> Factory:
    """A factory from a factory or a parameter object (bound to ``exec``)."""
    if isinstance(value, Factory):
        return value
    if isinstance(value, Parameters):
        return value.on(exec)
    raise TypeError(f"expected a factory or parameters (Type.build()...), not {type(value).__name__}")
