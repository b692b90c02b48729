"""Ginkgo's builder pattern: ``Type.build().with_x(v).on(exec).generate(A)``.

``Type.build()`` returns the type's parameter object, an attrs class with one ``with_<name>``
method per field (each sets the field and returns the object, so calls chain). ``.on(exec)``
binds the parameters to an executor and gives a :class:`Factory`; ``factory.generate(...)``
gives the product. Nested factories (preconditioner, criteria, inner solvers) may be given as
parameter objects without ``.on()``: :func:`as_factory` binds them to the outer executor.
"""
from __future__ import annotations

import contextlib
import inspect
import math
import numbers
from typing import Any, Callable, ClassVar

import attrs

from ginkpy.core.base.docs import parameter_doc
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.program_signature import program_signature
from ginkpy.core.base.types import value_type_name


# -- validators: parameters are checked where they are declared, at every with_<name> call ------

def _owner(instance: Any) -> str:
    product = getattr(type(instance), "product", None)
    return product.__name__ if product is not None else type(instance).__qualname__


def _fail(instance: Any, attribute: Any, value: Any, expected: str) -> None:
    raise ValueError(f"{_owner(instance)}.with_{attribute.name}({value!r}): {attribute.name} must be "
                     f"{expected}")


def integer(min: int | None = None, max: int | None = None, optional: bool = False) -> Callable:
    """An attrs validator: an integer (not a bool) within [min, max]; None too if ``optional``."""
    bounds = " ".join(filter(None, [f">= {min}" if min is not None else "",
                                    "and" if min is not None and max is not None else "",
                                    f"<= {max}" if max is not None else ""]))
    expected = f"an integer {bounds}".strip() + (" or None" if optional else "")

    def check(instance, attribute, value):
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or \
                (min is not None and value < min) or (max is not None and value > max):
            _fail(instance, attribute, value, expected)
    return check


def number(min: float | None = None, max: float | None = None, min_open: bool = False,
           allow_inf: bool = False, optional: bool = False) -> Callable:
    """An attrs validator: a real number (not a bool or a string), finite unless ``allow_inf``,
    within [min, max] (min excluded with ``min_open``); None too if ``optional``."""
    parts = [f"{'>' if min_open else '>='} {min}" if min is not None else "", f"<= {max}" if max is not None else ""]
    expected = (("a number" if allow_inf else "a finite number") + " " + " and ".join(filter(None, parts))).strip()
    expected += " or None" if optional else ""

    def check(instance, attribute, value):
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value) or \
                (not allow_inf and math.isinf(value)) or \
                (min is not None and (value <= min if min_open else value < min)) or \
                (max is not None and value > max):
            _fail(instance, attribute, value, expected)
    return check


def one_of(*choices: Any) -> Callable:
    """An attrs validator: one of ``choices``."""
    def check(instance, attribute, value):
        if not any(value == c and type(value) is type(c) for c in choices):
            _fail(instance, attribute, value, "one of " + ", ".join(repr(c) for c in choices))
    return check


# Ginkgo's Csr SpMV strategies (the values of its l_strategy / u_strategy keys)
CSR_STRATEGIES = ("sparselib", "cusparse", "merge_path", "classical", "load_balance", "automatical")


def boolean(default: bool = False) -> Any:
    """An attrs field holding True or False."""
    return attrs.field(default=default, validator=one_of(True, False))


def csr_strategy() -> Any:
    """An attrs field for Ginkgo's choice of a matrix's SpMV strategy (None or one of
    :data:`CSR_STRATEGIES`): accepted for Ginkgo's configurations; ginkpy's backend chooses the
    strategy of every matrix itself, so it changes nothing."""
    return attrs.field(default=None, validator=one_of(*CSR_STRATEGIES, None))


def variadic(**kwargs: Any) -> Any:
    """An attrs field holding a tuple whose ``with_`` method takes the items as arguments."""
    return attrs.field(factory=tuple, converter=tuple, metadata={"variadic": True}, **kwargs)


def _make_with(name: str, is_variadic: bool, doc: str | None = None) -> Callable[..., Any]:
    if is_variadic:
        def with_(self, *values):
            setattr(self, name, values)
            return self
    else:
        def with_(self, value):
            setattr(self, name, value)
            return self
    with_.__name__ = with_.__qualname__ = f"with_{name}"
    kind = inspect.Parameter.VAR_POSITIONAL if is_variadic else inspect.Parameter.POSITIONAL_OR_KEYWORD
    with_.__signature__ = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                             inspect.Parameter(name, kind)])
    with_.__doc__ = f"Set ``{name}`` and return this parameter object (so that calls chain)." + \
        (f"\n\n{doc}" if doc else "")
    return with_


def parameter_fields(params: type) -> tuple:
    """The attrs fields of a parameter class that ``with_<name>`` sets (every field)."""
    return attrs.fields(params)


def parameters(cls: type) -> type:
    """Class decorator: make ``cls`` an attrs class and add ``with_<field>`` for each field."""
    cls = attrs.define(cls, kw_only=True)
    _add_setters(cls)
    return cls


def _add_setters(cls: type, documented_by: tuple = ()) -> None:
    """``with_<field>`` on the parameter class ``cls`` for each field, each documented by its
    entry in the Parameters section of the docstrings of ``documented_by`` or ``cls``."""
    for field in parameter_fields(cls):
        doc = parameter_doc((*documented_by, cls), field.name)
        setattr(cls, f"with_{field.name}", _make_with(field.name, field.metadata.get("variadic", False), doc))


def _value_type(value: Any) -> Any:
    return value_type_name(value)


@parameters
class Parameters:
    """Base of every parameter object. ``product`` is the type that ``generate`` builds.

    Parameters
    ----------
    value_type : str, default None
        The value type the product runs in (Ginkgo's per-object ``"value_type"``): None runs in
        the system matrix's value type; ``"float32"`` / ``"float64"`` (or numpy's dtypes, or
        Ginkgo's ``"complex<float32>"``) make the product on the matrix converted to that
        precision, applied inside the solve around it with conversions at its boundary
        (:mod:`ginkpy.core.base.precision`): a float32 preconditioner, multigrid level or
        smoother, or the inner solver of mixed-precision iterative refinement."""

    product: ClassVar[type] = None  # set by EnableBuild.__init_subclass__
    value_type: str | None = attrs.field(default=None, converter=_value_type)

    def on(self, exec: Executor) -> "Factory":
        """Bind these parameters to an executor."""
        if not isinstance(exec, Executor):
            raise TypeError(f"on() takes an executor (gk.ReferenceExecutor(), gk.executor('opencl')), "
                            f"not {type(exec).__name__}")
        return Factory(exec, attrs.evolve(self))

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """Parameters generate nothing themselves: bind them to an executor first (as in Ginkgo)."""
        name = self.product.__name__ if self.product is not None else type(self).__qualname__
        raise TypeError(f"{name}.build()...generate(): parameters must be bound to an executor first, as "
                        f"in Ginkgo: {name}.build()...on(exec).generate(...) with exec = gk.ReferenceExecutor() "
                        f"or gk.executor('opencl') (the system matrix's executor: A.executor)")


class Factory:
    """Parameters bound to an executor; ``generate(...)`` builds the product on that executor."""

    def __init__(self, exec: Executor, params: Parameters) -> None:
        self.executor = exec
        self.parameters = params

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """The product generated from ``args`` (the system matrix) on this factory's executor;
        timed as ``generate(Type)`` by a ProfilerHook attached to the executor."""
        hook = self.executor._profiler
        if hook is not None:
            return hook.generate(self.parameters.product, self.executor, lambda: self._generate(*args, **kwargs))
        return self._generate(*args, **kwargs)

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        if self.parameters.value_type is not None and args and isinstance(args[0], LinOp):
            from ginkpy.core.base.precision import generate_in
            return generate_in(self, *args, **kwargs)
        product = self.parameters.product(self, *args, **kwargs)
        if isinstance(product, EnableBuild) and isinstance(product, LinOp) and args and isinstance(args[0], LinOp) \
                and product._program_signature is None:
            # the programs its applies use, built now (an iterative solver has done so itself)
            product._program_signature = program_signature(self.parameters, args[0])
            self.executor.prepare_programs(product._program_signature)
        return product

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
        _add_setters(cls.Parameters, documented_by=(cls,))

    @classmethod
    def build(cls) -> Any:
        """A new parameter object with the default values."""
        return cls.Parameters()

    def __init__(self, factory: Factory) -> None:
        self.factory = factory
        self.parameters = factory.parameters

    def get_parameters(self) -> Any:
        return self.parameters

    # -- programs built up front (issue 30) ---------------------------------------------------
    _program_signature: str | None = None  # set at generate (core/base/program_signature.py)

    def _recording_programs(self, b: Any) -> contextlib.AbstractContextManager:
        """Around an apply of a generated operator: the first of each shape of ``b`` records the
        programs it uses under the operator's signature (``exec.record_programs``), which the
        generate of the next operator of that signature builds (``exec.prepare_programs``)."""
        signature = self._program_signature
        if signature is None:
            return contextlib.nullcontext()
        recorded = self.__dict__.setdefault("_recorded_shapes", set())
        shape = getattr(b, "shape", None)
        if shape in recorded:
            return contextlib.nullcontext()
        recorded.add(shape)
        return self.executor.record_programs(signature)

    def _apply_args(self, args: tuple) -> Any:
        """LinOp's apply (a generated operator is one), its first per shape of b recorded."""
        with self._recording_programs(args[1] if len(args) == 4 else args[0] if args else None):
            return super()._apply_args(args)


def as_factory(value: Any, exec: Executor) -> Factory:
    """A factory from a factory or a parameter object (bound to ``exec``)."""
    if isinstance(value, Factory):
        return value
    if isinstance(value, Parameters):
        return value.on(exec)
    raise TypeError(f"expected a factory or parameters (Type.build()...), not {type(value).__name__}")
