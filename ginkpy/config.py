"""Configuration as data: solvers, preconditioners and stopping criteria from Ginkgo's JSON
configuration format.

    {"type": "solver::Cg",
     "preconditioner": {"type": "preconditioner::Jacobi", "max_block_size": 1},
     "criteria": [{"type": "Iteration", "max_iters": 1000},
                  {"type": "ResidualNorm", "reduction_factor": 1e-8}]}

:func:`parse` turns such a dict (or a JSON file holding one) into the parameter object that
``gk.solver.Cg.build().with_...`` gives; call ``.on(exec)`` on it. :func:`to_dict` is the inverse.
Each key is a parameter of the named type; a dict with a ``"type"`` is a nested factory. As in
Ginkgo, ``"criteria"`` is a list of criteria, one criterion, or the short form
``{"iteration": 1000, "relative_residual_norm": 1e-8}``, and ``time_limit`` is in nanoseconds.
``"value_type"`` is the value type the object runs in (``gk.core.base.precision``: a float32
preconditioner, multigrid level or smoother inside a float64 solve, converting at its boundary);
without it an object runs in its matrix's type. ``"index_type"`` is checked and otherwise
ignored: ginkpy always uses int32 indices.

The type names come from :func:`types`, built from the public namespaces ``gk.solver``,
``gk.preconditioner``, ``gk.factorization``, ``gk.multigrid``, ``gk.reorder`` and ``gk.stop``: a type exported
there is configurable, and solvers and preconditioners are then known by name to the command
line and ``gk.linalg`` too, with the aliases of :data:`ALIASES` (``"amg"``: algebraic multigrid,
one cycle of ``solver::Multigrid`` per application; ``"cb_gmres"``: ``solver::CbGmres``, as the
command line's ``--solver cb_gmres``).
"""
from __future__ import annotations

import inspect
import json
import os
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.stop.criterion import Criterion

# Ginkgo's short form of "criteria": key -> (criterion type, parameter, fixed parameters)
_SHORT_CRITERIA = {
    "iteration": ("Iteration", "max_iters", {}),
    "time": ("Time", "time_limit", {}),
    "relative_residual_norm": ("ResidualNorm", "reduction_factor", {"baseline": "rhs_norm"}),
    "initial_residual_norm": ("ResidualNorm", "reduction_factor", {"baseline": "initial_resnorm"}),
    "absolute_residual_norm": ("ResidualNorm", "reduction_factor", {"baseline": "absolute"}),
    "relative_implicit_residual_norm": ("ImplicitResidualNorm", "reduction_factor", {"baseline": "rhs_norm"}),
    "initial_implicit_residual_norm": ("ImplicitResidualNorm", "reduction_factor", {"baseline": "initial_resnorm"}),
    "absolute_implicit_residual_norm": ("ImplicitResidualNorm", "reduction_factor", {"baseline": "absolute"}),
}
# short names for types of another kind: kind -> {name: configuration type name}
ALIASES = {"preconditioner": {"amg": "solver::Multigrid", "gauss_seidel": "preconditioner::GaussSeidel"},
           "solver": {"cb_gmres": "solver::CbGmres"}}
_NANOSECONDS = {("Time", "time_limit")}  # Ginkgo gives these in ns, ginkpy in seconds
_TYPE_KEYS = {"index_type": ("int32",)}


def types() -> dict[str, type]:
    """Every type a configuration can name, with its class: ``"solver::Cg"``,
    ``"preconditioner::Jacobi"``, ``"factorization::Ilu"``, ``"multigrid::Pgm"``, ``"reorder::Rcm"``, ``"Iteration"``,
    ``"ResidualNorm"``, ..."""
    from ginkpy import factorization, multigrid, preconditioner, reorder, solver, stop
    table = {}
    for prefix, module in (("solver::", solver), ("preconditioner::", preconditioner),
                           ("factorization::", factorization), ("multigrid::", multigrid), ("reorder::", reorder),
                           ("", stop)):
        for name in module.__all__:
            cls = getattr(module, name)
            if isinstance(cls, type) and issubclass(cls, EnableBuild) and (prefix or issubclass(cls, Criterion)):
                table[prefix + name] = cls
    return table


class Preset:
    """A configuration known by name beside the types: ``build(**options)`` gives its
    parameters. ``options`` are the keywords of ``make`` where it names them (``"ilut"``:
    drop_tol, fill_factor), or other spellings of them (``aliases``: ``"droptol"`` for
    ``"drop_tol"``, as SciPy's spilu takes both), else ``with_<option>`` parameters of what it
    makes (``"jacobi"``: ``max_block_size``, ...). An unknown option is a ValueError that lists
    the options the preset takes."""

    def __init__(self, make: Any, description: str, aliases: dict[str, str] | None = None) -> None:
        self.make = make
        self.aliases = dict(aliases or {})
        self.__doc__ = description

    def takes(self, option: str) -> bool:
        """Whether ``option`` is one of the keywords of ``make`` or another spelling of one."""
        return option in inspect.signature(self.make).parameters or option in self.aliases

    def build(self, **options: Any) -> Parameters:
        named = inspect.signature(self.make).parameters
        keywords, rest, given = {}, {}, {}
        for key, value in options.items():
            name = self.aliases.get(key, key)
            if name in given:
                raise ValueError(f"{given[name]!r} and {key!r} are the same parameter: give one of them")
            given[name] = key
            (keywords if name in named else rest)[name] = value
        params = self.make(**keywords)
        unknown = [key for key in rest if getattr(params, f"with_{key}", None) is None]
        if unknown:
            spellings = [f"{name} (or {', '.join(a for a, n in self.aliases.items() if n == name)})"
                         if name in self.aliases.values() else name for name in named]
            fields = [f.name for f in attrs.fields(type(params))]
            raise ValueError(f"the preset has no parameter {unknown[0]!r}; it takes {', '.join(spellings)}, "
                             f"or {params.product.__name__}'s parameters {', '.join(fields)}" if spellings else
                             f"{params.product.__name__} has no parameter {unknown[0]!r}; its parameters are "
                             f"{', '.join(fields)}")
        return with_options(params, rest)


def with_options(params: Parameters, options: dict) -> Parameters:
    """``params`` with ``with_<key>(value)`` for each option; an unknown key is a ValueError that
    lists the parameters there are."""
    for option, value in options.items():
        setter = getattr(params, f"with_{option}", None)
        if setter is None:
            fields = [f.name for f in attrs.fields(type(params))]
            raise ValueError(f"{params.product.__name__} has no parameter {option!r}; its parameters are "
                             f"{', '.join(fields)}")
        setter(value)
    return params


def _presets(kind: str) -> dict[str, Preset]:
    """The presets of ``kind``: the exact ILU(0) / IC(0) with exact triangular solves
    (``"ilu"`` and ``"ic"`` are the preconditioners' defaults, see gk.preconditioner.Ilu),
    ``"ilut"``, Ilu with the threshold factorization of SciPy's spilu (gk.factorization.Ilut),
    which takes spilu's ``drop_tol`` and ``fill_factor``, ``"jacobi"`` (scalar Jacobi: the
    inverse diagonal) and ``"block_jacobi"`` (Ginkgo's Jacobi default: blocks of up to 32 rows),
    and the symmetric variants of SOR and Gauss-Seidel."""
    if kind != "preconditioner":
        return {}
    from ginkpy import factorization, preconditioner, solver

    def exact(precond: type, fact: type) -> Preset:
        return Preset(lambda: precond.build().with_factorization(fact.build()).with_l_solver(solver.LowerTrs.build())
                      .with_u_solver(solver.UpperTrs.build()),
                      f"{precond.__name__} with the exact {fact.__name__} factorization and LowerTrs / UpperTrs")
    def ilut(drop_tol: float = 1e-4, fill_factor: float = 10.0) -> Any:
        return preconditioner.Ilu.build().with_factorization(
            factorization.Ilut.build().with_drop_tol(drop_tol).with_fill_factor(fill_factor))
    return {"ilu0_exact": exact(preconditioner.Ilu, factorization.Ilu),
            "ic0_exact": exact(preconditioner.Ic, factorization.Ic),
            "ilut": Preset(ilut, "Ilu with the threshold factorization of SciPy's spilu (gk.factorization.Ilut: "
                                 "drop_tol 1e-4, fill_factor 10)", aliases={"droptol": "drop_tol"}),
            "jacobi": Preset(lambda: preconditioner.Jacobi.build().with_max_block_size(1),
                             "scalar Jacobi (the inverse of the diagonal)"),
            "block_jacobi": Preset(lambda: preconditioner.Jacobi.build(),
                                   "block-Jacobi (gk.preconditioner.Jacobi's default: diagonal blocks of up to 32 rows)"),
            "ssor": Preset(lambda: preconditioner.Sor.build().with_symmetric(True), "symmetric SOR (for Cg)"),
            "symmetric_gauss_seidel": Preset(lambda: preconditioner.GaussSeidel.build().with_symmetric(True),
                                             "symmetric Gauss-Seidel (for Cg)")}


def short_names(kind: str) -> dict[str, Any]:
    """The types of ``kind`` (``"solver"`` or ``"preconditioner"``) by lowercase class name, the
    aliases of :data:`ALIASES` and the presets (``"ilu0_exact"``, ``"ic0_exact"``, ``"ilut"``,
    ``"jacobi"`` for scalar Jacobi and ``"block_jacobi"``, which stand in for the class name
    ``"jacobi"``), as the command line and ``gk.linalg`` accept them: ``{"cg": Cg, ...}``,
    ``{"ilu": Ilu, ..., "amg": Multigrid}``; ``.build()`` on any of them gives its parameters."""
    prefix = f"{kind}::"
    table = types()
    names = {name[len(prefix):].lower(): cls for name, cls in table.items() if name.startswith(prefix)}
    return {**names, **{alias: table[name] for alias, name in ALIASES.get(kind, {}).items()}, **_presets(kind)}


def solver_methods() -> dict[str, type]:
    """The solvers known by name to the command line's ``--solver`` and to
    ``gk.linalg.Solver(A, method)``: every iterative solver of ``short_names("solver")``
    (``"cg"``, ``"gmres"``, ``"gcr"``, ``"chebyshev"``, ``"pipecg"``, ``"cb_gmres"``, ...) and
    ``"direct"`` (gk.solver.Direct, a sparse LU), one table for both doors. It takes no
    parameters.

    Examples
    --------
    >>> sorted(gk.config.solver_methods())[:3]
    ['bicg', 'bicgstab', 'cb_gmres']
    """
    from ginkpy.core.solver.solver_base import IterativeSolver
    return {name: cls for name, cls in short_names("solver").items()
            if issubclass(cls, IterativeSolver) or name == "direct"}


def type_name(cls: type) -> str:
    """The configuration name of a type (``gk.solver.Cg`` -> ``"solver::Cg"``)."""
    for name, known in types().items():
        if known is cls:
            return name
    raise TypeError(f"{cls.__name__} is not exported by gk.solver, gk.preconditioner, gk.factorization, "
                    f"gk.multigrid or gk.stop, so it has no configuration name")


def parse(source: Any, registry: dict | None = None) -> Parameters:
    """The parameter object described by ``source``: a dict in Ginkgo's configuration format or
    the path of a JSON file holding one. Call ``.on(exec)`` on the result.

    ``registry`` (Ginkgo's ``config::registry``) names objects the configuration refers to by
    a string where it takes a factory, an operator or criteria: ``{"preconditioner":
    "my_jacobi"}`` with ``registry={"my_jacobi": gk.preconditioner.Jacobi.build()}``; the
    ``generated_preconditioner`` (``generated_solver``) key takes an operator generated
    already, as Ginkgo's, for the ``preconditioner`` (``solver``) parameter.

    Examples
    --------
    >>> params = gk.config.parse("solver.json")                 # or a dict
    >>> solver = params.on(exec).generate(A)
    >>> gk.config.parse({"type": "solver::Cg", "preconditioner": "M"}, registry={"M": M})
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            try:
                source = json.load(f)
            except json.JSONDecodeError as err:
                raise ValueError(f"{os.fspath(f.name)} is not valid JSON: {err}") from None
    if registry is not None and not isinstance(registry, dict):
        raise TypeError(f"registry must be a dict of names to factories, operators or criteria, not "
                        f"{type(registry).__name__}")
    return _parse(source, "configuration", registry or {})


# Ginkgo's keys for an operator generated already: the parameter they set
_GENERATED = {"generated_preconditioner": "preconditioner", "generated_solver": "solver",
              "generated_local_solver": "local_solver"}


def _parse(config: Any, where: str, registry: dict) -> Parameters:
    if not isinstance(config, dict):
        raise TypeError(f"{where} must be a dict with a 'type' key, got {type(config).__name__}")
    known = types()
    name = config.get("type")
    if name not in known:
        raise ValueError(f"{where}: unknown type {name!r}; accepted types: {', '.join(sorted(known))}")
    cls = known[name]
    fields = {f.name: f for f in attrs.fields(cls.Parameters)}
    params = cls.build()
    for key, value in config.items():
        here = f"{where}.{key}"
        if key == "type":
            continue
        if key in _TYPE_KEYS:
            if value not in _TYPE_KEYS[key]:
                raise ValueError(f"{here}: ginkpy supports {', '.join(_TYPE_KEYS[key])}, got {value!r}")
            continue
        generated = key in _GENERATED and _GENERATED[key] in fields
        if generated:
            key = _GENERATED[key]
        if key not in fields:
            accepted = sorted([*fields, "type", *_TYPE_KEYS, *(g for g, k in _GENERATED.items() if k in fields)])
            raise ValueError(f"{here}: {name} has no parameter {key!r}; accepted keys: {', '.join(accepted)}")
        takes_objects = fields[key].metadata.get("variadic") or fields[key].type in ("Any", Any)
        if generated:
            value = _registered(value, here, registry)
            if not isinstance(value, LinOp):
                raise TypeError(f"{here}: takes an operator generated already (a LinOp in the registry), not "
                                f"{type(value).__name__}; give factories under the key {key!r}")
        elif key == "criteria":
            value = _parse_criteria(value, here, registry)
        elif fields[key].metadata.get("variadic"):
            value = tuple(_parse_value(v, f"{here}[{i}]", registry, True) for i, v in enumerate(_as_list(value)))
        else:
            value = _parse_value(value, here, registry, takes_objects)
        if (name, key) in _NANOSECONDS:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{here}: give the time limit as a number of nanoseconds, got {value!r}")
            value = value * 1e-9
        try:
            setattr(params, key, value)
        except ValueError as err:
            raise ValueError(f"{here}: {err}") from None
    return params


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _registered(value: Any, where: str, registry: dict) -> Any:
    """A registry entry named by a string (Ginkgo's references to registered objects)."""
    if isinstance(value, str):
        if value not in registry:
            raise ValueError(f"{where}: {value!r} names no object of the registry"
                             + (f" (it has {', '.join(map(repr, registry))})" if registry else
                                " (none was given: parse(config, registry={...}))"))
        return registry[value]
    return value


def _parse_value(value: Any, where: str, registry: dict, takes_objects: bool = False) -> Any:
    """A nested factory (a dict with a "type") becomes parameters; a string where a factory or
    operator is taken names a registry entry; plain values stay."""
    if isinstance(value, dict):
        return _parse(value, where, registry)
    if isinstance(value, list):
        return tuple(_parse_value(v, f"{where}[{i}]", registry, takes_objects) for i, v in enumerate(value))
    if takes_objects and isinstance(value, str):
        return _registered(value, where, registry)
    return value


def _parse_criteria(value: Any, where: str, registry: dict) -> tuple:
    if isinstance(value, str):
        value = _registered(value, where, registry)
        if isinstance(value, (list, tuple)):
            return tuple(value)
        return (value,)
    if isinstance(value, dict) and "type" not in value:
        criteria = []
        for key, v in value.items():
            if key in _TYPE_KEYS or key == "value_type":
                continue  # (Ginkgo's short form may carry the criteria's value type)
            if key not in _SHORT_CRITERIA:
                raise ValueError(f"{where}: unknown criterion {key!r}; the short form accepts "
                                 f"{', '.join(_SHORT_CRITERIA)} (or give a list of {{'type': ...}} criteria)")
            kind, param, fixed = _SHORT_CRITERIA[key]
            criteria.append({"type": kind, param: v, **fixed})
        value = criteria
    parsed = tuple(_registered(c, f"{where}[{i}]", registry) if isinstance(c, str)
                   else _parse(c, f"{where}[{i}]", registry) for i, c in enumerate(_as_list(value)))
    for i, p in enumerate(parsed):
        product = p.parameters.product if isinstance(p, Factory) else getattr(p, "product", None)
        if not (isinstance(product, type) and issubclass(product, Criterion)):
            raise ValueError(f"{where}[{i}]: {type(p).__name__ if product is None else type_name(product)} is not "
                             f"a stopping criterion")
    return parsed


def to_dict(params: Parameters | Factory) -> dict[str, Any]:
    """The configuration dict of a parameter object (or factory): ``parse(to_dict(p)) == p``.

    Only parameters that differ from their defaults are written."""
    if isinstance(params, Factory):
        params = params.parameters
    if not isinstance(params, Parameters):
        raise TypeError(f"to_dict takes parameters (Type.build()...) or a factory, not {type(params).__name__}")
    name = type_name(params.product)
    out: dict[str, Any] = {"type": name}
    defaults = type(params)()
    for field in attrs.fields(type(params)):
        value = getattr(params, field.name)
        if not isinstance(value, np.ndarray) and value == getattr(defaults, field.name):
            continue
        if (name, field.name) in _NANOSECONDS:
            value = round(value * 1e9)
        out[field.name] = _value_to_data(value, f"{name}.{field.name}")
    return out


def _value_to_data(value: Any, where: str) -> Any:
    if isinstance(value, (Parameters, Factory)):
        return to_dict(value)
    if isinstance(value, (list, tuple)):
        return [_value_to_data(v, where) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"{where}: a {type(value).__name__} cannot be written as configuration data "
                    f"(only numbers, strings, booleans and nested factories can)")
