"""Check the house rules of ginkpy's source (issues 23 and 33): no module over 500 lines, no
function over 60 lines, no import circle of more than two modules, and the floors of the layers:
``core/base`` imports nothing above it and ``core`` imports no backend.

Usage::

    python scripts/check_house.py [--package DIR] [--max-module N] [--max-function N]
                                  [--no-allowlist]

Prints one line per finding and exits 1 when there is any, 0 otherwise.

Every ``import`` and ``from ... import`` counts, wherever it is: at module level, in a class
body, in a ``try``/``if`` block and inside a function (a deferred import is still an arrow
between two modules: it runs later, it does not go away), and so do the names a namespace
imports at first use (``_EXPORTS`` and ``_SUBMODULES`` of ``core/base/lazy.lazy_attributes``, and the
table ``FACES``/``ELSEWHERE`` of ``ginkpy/_exports.py``, whose modules it imports). Only the body of an
``if TYPE_CHECKING:`` block is left out (it never runs). ``from pkg import name`` counts as an
import of the module ``pkg.name`` where that module exists, else of ``pkg``; importing a module
also imports its parent packages, but those arrows are not drawn (a package's ``__init__``
re-exporting its children would otherwise make every package a circle with its children).

The rules on the graph:

* **circles**: the strongly connected components (Tarjan) of more than ``MAX_CIRCLE`` modules;
  a pair that imports each other (one of the two lazily) is tolerated, a longer circle is not;
* **floors**: a module of ``ginkpy.core.base`` imports only ``ginkpy.core.base``; a module of
  ``ginkpy.core`` imports no backend (``ginkpy.reference``, ``ginkpy.opencl``) and no face
  (the modules of ``ginkpy`` outside ``core``: ``ginkpy.matrix``, ``ginkpy.solver``, ...).

``DEFERRED_FOR_STARTUP`` lists the imports that are deferred only to keep ``import ginkpy``
fast and that point against the floors or close a circle: each entry says why it is there.
They are left out of both rules. ``LONG_MODULES`` and ``LONG_FUNCTIONS`` list the current
offenders of the length limits, each with the length it may not grow past (the old limits,
600 and 80); a new offender, or a listed one past its cap, is a finding. Shorten them by
splitting concepts apart, never by trimming docstrings; delete the entry once it is under the
limit (a stale entry is a finding too).
"""
import argparse
import ast
import re
import sys
from pathlib import Path

MAX_MODULE = 500
MAX_FUNCTION = 60
MAX_CIRCLE = 2

BACKENDS = ("ginkpy.reference", "ginkpy.opencl")

# (importer, imported): why the import is deferred. Only imports deferred to save start-up
# time belong here, never one deferred to hide a circle.
DEFERRED_FOR_STARTUP = {
}

# The current offenders of the limits (issue 33), each capped at the old house limit (600 lines
# a module, 80 a function) so that it does not grow further while it waits for its split; the
# comment gives its length when listed and the concept to split it by.
LONG_MODULES: dict[str, int] = {
}

LONG_FUNCTIONS = {
    "ginkpy/core/solver/gmres.py:Gmres._solve": 80,           # 79: the Arnoldi step, the cycle end
    "ginkpy/core/solver/minres.py:Minres._solve": 80,         # 62: the Lanczos step apart
    "ginkpy/core/solver/qmr.py:Qmr._solve": 80,               # 63: the Lanczos step apart
    "ginkpy/reference/batch/solver/bicgstab_kernels.py:_solve": 80,  # 80: the item step apart
    "ginkpy/reference/batch/solver/gmres_kernels.py:_solve": 80,     # 73: the item's cycle apart
}


def module_name(path, root):
    """The dotted name of the module at ``path`` inside the package directory ``root``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node, deferred=False):
    """(import statement, whether it is inside a function) for every import under ``node``,
    leaving out the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, deferred
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _import_nodes(ast.Module(body=[other], type_ignores=[]), deferred)
        else:
            inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from _import_nodes(child, inner)


def _target(node, package):
    if not node.level:
        return node.module
    base = package.split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def import_edges(tree, name, is_package, modules):
    """{imported module: (line, deferred)} for the modules of ``modules`` that the module
    ``name`` imports anywhere; ``deferred`` is True when every such import is inside a
    function."""
    package = name if is_package else name.rpartition(".")[0]
    found = {}

    def add(target, node, deferred):
        if target == name:
            return
        line, was_deferred = found.get(target, (node.lineno, True))
        found[target] = (min(line, node.lineno), was_deferred and deferred)

    for node, deferred in _import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    add(alias.name, node, deferred)
            continue
        target = _target(node, package)
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in modules:
                add(sub, node, deferred)
            elif target in modules:
                add(target, node, deferred)
    for node, target in [*_lazy_exports(tree, name if is_package else None), *_face_table(tree, name)]:
        if target in modules:
            add(target, node, True)
    return found


def _lazy_exports(tree, package):
    """(node, module) for each module a namespace imports at first use through
    ``core/base/lazy.lazy_attributes``: the values of a module-level ``_EXPORTS`` dict
    (``"module"`` or ``"module:attr"``) and, in a package, its ``_SUBMODULES``. Such an import is
    deferred (to keep ``import ginkpy`` fast) and counts like one inside a function."""
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        if node.targets[0].id == "_EXPORTS" and isinstance(node.value, ast.Dict):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    yield node, value.value.partition(":")[0]
        elif node.targets[0].id == "_SUBMODULES" and package and isinstance(node.value, (ast.Tuple, ast.List)):
            for item in node.value.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    yield node, f"{package}.{item.value}"


def _literal(tree, target):
    """The module-level ``target = <literal dict>`` of ``tree`` as (node, dict), else (None, {})."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == target):
            try:
                return node, ast.literal_eval(node.value)
            except ValueError:
                break
    return None, {}


def _face_table(tree, name):
    """(node, module) for each module named by the table of ``ginkpy/_exports.py``: ``FACES``
    (``{face: "Name Name ..."}``, a name defined in ``<package>.core.<face>.<name in snake case>``)
    and ``ELSEWHERE`` (``{"face.Name": module}`` for a name defined in another module). The
    module holding the table imports them at first use."""
    node, faces = _literal(tree, "FACES")
    _, elsewhere = _literal(tree, "ELSEWHERE")
    package = name.partition(".")[0]
    for face, names in faces.items():
        for item in names.split():
            module = elsewhere.get(f"{face}.{item}", re.sub(r"(?<!^)(?=[A-Z])", "_", item).lower())
            yield node, f"{package}.core.{face}.{module}"


def imports(tree, name, is_package, modules):
    """The modules of ``modules`` that the module ``name`` imports, anywhere in it."""
    return set(import_edges(tree, name, is_package, modules))


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def enter(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)

    def close(node):
        component = []
        while True:
            member = stack.pop()
            on_stack.discard(member)
            component.append(member)
            if member == node:
                break
        if len(component) > 1:
            out.append(sorted(component))

    def visit(start):
        enter(start)
        work = [(start, iter(sorted(graph[start])))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    enter(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    close(node)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def floor_breach(importer, imported):
    """Why the import of ``imported`` by ``importer`` points against the layers, or None."""
    def within(module, package):
        return module == package or module.startswith(package + ".")

    if within(importer, "ginkpy.core.base") and not within(imported, "ginkpy.core.base"):
        return "core/base imports nothing above it"
    if within(importer, "ginkpy.core"):
        if any(within(imported, backend) for backend in BACKENDS):
            return "core imports no backend"
        if not within(imported, "ginkpy.core"):
            return "core imports no face"
    return None


def long_functions(tree, limit):
    """(line, qualified name, length) of every function longer than ``limit`` lines."""
    found = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualified = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    length = child.end_lineno - start + 1
                    if length > limit:
                        found.append((child.lineno, qualified, length))
                walk(child, qualified + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def _length_findings(names, trees, package, max_module, max_function, long_modules, long_functions_allowed):
    findings, seen_modules, seen_functions = [], set(), set()
    for name, path in names.items():
        rel = path.relative_to(package.parent).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > max_module:
            seen_modules.add(rel)
            if lines > long_modules.get(rel, max_module):
                findings.append(f"module {rel}: {lines} lines (> {long_modules.get(rel, max_module)})")
        for line, qualified, length in long_functions(trees[name], max_function):
            key = f"{rel}:{qualified}"
            seen_functions.add(key)
            allowed = long_functions_allowed.get(key, max_function)
            if length > allowed:
                findings.append(f"function {rel}:{line} {qualified}: {length} lines (> {allowed})")
    findings += [f"stale allowlist entry LONG_MODULES[{rel!r}]: no longer over {max_module} lines"
                 for rel in sorted(set(long_modules) - seen_modules)]
    findings += [f"stale allowlist entry LONG_FUNCTIONS[{key!r}]: no longer over {max_function} lines"
                 for key in sorted(set(long_functions_allowed) - seen_functions)]
    return findings


def _graph_findings(package, names, trees, deferred_allowed, max_circle):
    edges = {name: import_edges(trees[name], name, names[name].name == "__init__.py", names) for name in names}
    findings, used = [], set()
    graph = {}
    for name, targets in edges.items():
        graph[name] = set()
        for target, (line, deferred) in sorted(targets.items()):
            if deferred and (name, target) in deferred_allowed:
                used.add((name, target))
                continue
            graph[name].add(target)
            why = floor_breach(name, target)
            if why:
                kind = "deferred import" if deferred else "import"
                where = names[name].relative_to(package.parent).as_posix()
                findings.append(f"floor: {where}:{line} {name} -> {target} ({kind}): {why}")
    for component in cycles(graph):
        if len(component) > max_circle:
            findings.append(f"import circle of {len(component)} modules: " + " <-> ".join(component))
    findings += [f"stale allowlist entry DEFERRED_FOR_STARTUP[{pair!r}]: no such deferred import"
                 for pair in sorted(set(deferred_allowed) - used)]
    return findings, graph


def load(package):
    """({module name: path}, {module name: ast}) of every module under ``package``."""
    sources = sorted(Path(package).resolve().rglob("*.py"))
    names, trees = {}, {}
    root = Path(package).resolve()
    for path in sources:
        name = module_name(path, root)
        names[name] = path
        trees[name] = ast.parse(path.read_text(), str(path))
    return names, trees


def largest_circle(package, deferred_allowed=None):
    """The number of modules in the largest import circle of ``package`` (0 when none)."""
    names, trees = load(package)
    _, graph = _graph_findings(Path(package).resolve(), names, trees, deferred_allowed or {}, MAX_CIRCLE)
    return max((len(c) for c in cycles(graph)), default=0)


def check(package, max_module=MAX_MODULE, max_function=MAX_FUNCTION, allowlists=True):
    """The findings for the package directory ``package``, one string each."""
    package = Path(package).resolve()
    names, trees = load(package)
    findings = _length_findings(names, trees, package, max_module, max_function,
                                LONG_MODULES if allowlists else {}, LONG_FUNCTIONS if allowlists else {})
    graph_findings, _ = _graph_findings(package, names, trees, DEFERRED_FOR_STARTUP if allowlists else {}, MAX_CIRCLE)
    return findings + graph_findings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default=str(Path(__file__).resolve().parent.parent / "ginkpy"),
                        help="the package directory to check (default: ginkpy/ beside scripts/)")
    parser.add_argument("--max-module", type=int, default=MAX_MODULE,
                        help=f"most lines of a module (default {MAX_MODULE})")
    parser.add_argument("--max-function", type=int, default=MAX_FUNCTION,
                        help=f"most lines of a function (default {MAX_FUNCTION})")
    parser.add_argument("--no-allowlist", action="store_true",
                        help="ignore the allowlists: show every offender and every deferred arrow")
    args = parser.parse_args(argv)
    findings = check(args.package, args.max_module, args.max_function, not args.no_allowlist)
    for finding in findings:
        print(finding)
    print(f"{len(findings)} finding(s)" if findings else "house rules hold: no module over "
          f"{args.max_module} lines, no function over {args.max_function}, no import circle of more "
          f"than {MAX_CIRCLE} modules, core/base and core on their floors (allowlisted offenders aside)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
