"""Reading numpydoc docstrings: their sections and the entries of a Parameters section, so that
the builder's ``with_<name>`` setters can carry the description their type's docstring gives
(:func:`parameter_doc`)."""
from __future__ import annotations

import functools
import inspect
import re
import textwrap

_HEADER = re.compile(r"^([A-Z][A-Za-z ]*)\n-{3,}[ \t]*$", re.MULTILINE)
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][\w]*(?:\s*,\s*\*{0,2}[A-Za-z_][\w]*)*)\s*(?::.*)?$")


def numpydoc_sections(doc: str) -> dict[str, str]:
    """The sections of a numpydoc docstring by title ("Parameters", "Returns", "Examples", ...),
    each its text below the underline; the text before the first title is under "".

    Parameters
    ----------
    doc : str
        The docstring (indented or not).

    Examples
    --------
    >>> numpydoc_sections("Summary.\\n\\nExamples\\n--------\\n>>> f()")["Examples"]
    '>>> f()'
    """
    doc = inspect.cleandoc(doc or "")
    sections, start, title = {}, 0, ""
    for match in _HEADER.finditer(doc):
        sections[title] = doc[start:match.start()].strip("\n")
        title, start = match.group(1).strip(), match.end() + 1
    sections[title] = doc[start:].strip("\n")
    return sections


def parameter_entries(section: str, grouped: bool = True) -> dict[str, str]:
    """The entries of a Parameters section: each name (``a, b : type`` gives both, unless
    ``grouped`` is False) mapped to its entry: the ``name : type`` line and its description
    indented by four spaces."""
    entries: dict[str, str] = {}
    names: list[str] = []
    lines: list[str] = []

    def close():
        body = textwrap.indent(textwrap.dedent("\n".join(lines[1:])).strip("\n"), "    ")
        for name in names if grouped or len(names) == 1 else ():
            entries[name] = lines[0] + ("\n" + body if body else "")

    for line in section.splitlines():
        match = _ENTRY.match(line) if line and not line[0].isspace() else None
        if match:
            close()
            names = [n.strip().lstrip("*") for n in match.group(1).split(",")]
            lines = [line]
        elif names:
            lines.append(line)
    close()
    return entries


def parameter_names(section: str) -> list[str]:
    """The names a Parameters section describes."""
    return list(parameter_entries(section))


def parameter_doc(classes, name: str) -> str | None:
    """The entry of parameter ``name`` in the Parameters section of the first of ``classes``
    (and their bases, in order) whose docstring describes it: an entry of its own first (a
    class may sum up the parameters its base describes in one grouped entry), else a grouped
    one; None where none describes it."""
    for grouped in (False, True):
        for cls in classes:
            for klass in inspect.getmro(cls):
                doc = klass.__dict__.get("__doc__")
                entry = _documented_parameters(doc, grouped).get(name) if doc else None
                if entry:
                    return entry
    return None


@functools.lru_cache(maxsize=None)
def _documented_parameters(doc: str, grouped: bool) -> dict[str, str]:
    # each class's docstring is read once, not once per setter of every subclass (import time);
    # callers only read the dict
    return parameter_entries(numpydoc_sections(doc).get("Parameters", ""), grouped)
