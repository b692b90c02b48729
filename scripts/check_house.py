"""Check the house rules of ginkpy's source (issue 23's targets): no module over 600 lines, no
function over 80 lines, no import cycle between ginkpy's modules.

Usage::

    python scripts/check_house.py [--package DIR] [--max-module N] [--max-function N]

Prints one line per finding and exits 1 when there is any, 0 otherwise. Imports count where
they run when the module is imported (module level, class bodies, ``try``/``if`` blocks), not
inside functions and not under ``if TYPE_CHECKING:``; ``from pkg import name`` counts as an
import of the module ``pkg.name`` where that module exists, else of ``pkg``.
"""
import argparse
import ast
import sys
from pathlib import Path


def module_name(path, root):
    """The dotted name of the module at ``path`` inside the package directory ``root``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_time_nodes(body):
    """The statements of ``body`` that run when the module runs, into nested blocks, not into
    functions."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _import_time_nodes(node.orelse)
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _import_time_nodes(inner)


def imports(tree, name, is_package, modules):
    """The modules of ``modules`` that the module ``name`` imports when it is imported."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in _import_time_nodes(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    found.add(sub)
                elif target in modules:
                    found.add(target)
    found.discard(name)
    return found


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(start):
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


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


def check(package, max_module=600, max_function=80):
    """The findings for the package directory ``package``, one string each."""
    package = Path(package).resolve()
    sources = sorted(package.rglob("*.py"))
    trees, names = {}, {}
    for path in sources:
        name = module_name(path, package)
        names[name] = path
        trees[name] = ast.parse(path.read_text(), str(path))
    findings = []
    for name, path in names.items():
        rel = path.relative_to(package.parent)
        lines = len(path.read_text().splitlines())
        if lines > max_module:
            findings.append(f"module {rel}: {lines} lines (> {max_module})")
        for line, qualified, length in long_functions(trees[name], max_function):
            findings.append(f"function {rel}:{line} {qualified}: {length} lines (> {max_function})")
    graph = {name: imports(trees[name], name, names[name].name == "__init__.py", names) for name in names}
    for component in cycles(graph):
        findings.append("import cycle: " + " <-> ".join(component))
    return findings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default=str(Path(__file__).resolve().parent.parent / "ginkpy"),
                        help="the package directory to check (default: ginkpy/ beside scripts/)")
    parser.add_argument("--max-module", type=int, default=600, help="most lines of a module (default 600)")
    parser.add_argument("--max-function", type=int, default=80, help="most lines of a function (default 80)")
    args = parser.parse_args(argv)
    findings = check(args.package, args.max_module, args.max_function)
    for finding in findings:
        print(finding)
    print(f"{len(findings)} finding(s)" if findings else "house rules hold: no module over "
          f"{args.max_module} lines, no function over {args.max_function}, no import cycle")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
