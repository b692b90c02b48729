"""The manual runs: every ```python block of README.md and docs/*.md, in order within its file
and sharing one namespace per file, on the reference executor where a block names none (the
default executor, which ``ginkpy.linalg`` uses when ``executor=`` is left out, is the reference
executor here). A block that cannot run here is marked right before it with
``<!-- not run: <why> -->``; at most MAX_NOT_RUN are. Paths the pages name (benchmarks, scripts,
examples, other pages) must exist, and the README keeps its shape: at most 250 lines, the two
set-up commands byte for byte (CI runs the test one)."""
import re
from pathlib import Path

import pytest

from conftest import PROJECT

PAGES = [Path(PROJECT) / "README.md"] + sorted((Path(PROJECT) / "docs").glob("*.md"))
MAX_NOT_RUN = 4          # blocks that need mpiexec, an OpenCL device or worker processes
NOT_RUN = re.compile(r"<!--\s*not run:\s*(\S.*?)\s*-->")
FENCE = re.compile(r"^```(\S*)\s*$")
MAIN_JOB = 'python3 -m venv .venv && . .venv/bin/activate && pip install ".[pocl]" && python examples/solve.py'
TEST_JOB = 'python3 -m venv .venv && . .venv/bin/activate && pip install ".[pocl,test]" && python -m pytest -q -n auto'


def blocks(path: Path) -> list[tuple[int, str, str, str | None]]:
    """(first line number, language, code, not-run reason) of each fenced block of a page."""
    lines = path.read_text().split("\n")
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        assert end is not None, f"{page_id(path)}:{i + 1}: a block that is never closed"
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        reason = NOT_RUN.search(before)
        found.append((i + 2, opening.group(1), "\n".join(lines[i + 1:end]) + "\n",
                      reason.group(1) if reason else None))
        i = end + 1
    return found


def page_id(path: Path) -> str:
    return str(path.relative_to(PROJECT))


@pytest.fixture
def reference_default(monkeypatch):
    """The default executor is the reference executor while a page runs."""
    import ginkpy
    import ginkpy.core.base.executor as executor_module
    import ginkpy.linalg._interface as interface

    def reference():
        return executor_module.executor_class("reference")()

    for module in (executor_module, interface, ginkpy):
        monkeypatch.setattr(module, "default_executor", reference)
    yield
    ginkpy.linalg.clear_cache()


def runnable(path: Path) -> list[tuple[int, str]]:
    return [(line, code) for line, language, code, reason in blocks(path) if language == "python" and reason is None]


@pytest.mark.parametrize("path", [p for p in PAGES if runnable(p)], ids=page_id)
def test_python_blocks_run(path, reference_default, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)             # a block that writes a file writes it here
    namespace = {"__name__": "__docs__"}
    for line, code in runnable(path):       # a block that fails raises, its traceback naming page:line
        exec(compile(code, f"{page_id(path)}:{line}", "exec"), namespace)
    assert "gk" in namespace, "a page's blocks import ginkpy as gk, as a reader would"


def test_pages_without_python_blocks_are_tables_and_commands():
    assert {page_id(p) for p in PAGES if not runnable(p)} <= {"docs/cli.md", "docs/distributed.md", "docs/layout.md", "docs/performance.md"}


def test_few_blocks_are_not_run():
    marked = [(page_id(p), line, reason) for p in PAGES for line, language, _, reason in blocks(p) if reason]
    assert all(language == "python" for p in PAGES for _, language, _, reason in blocks(p) if reason), \
        "a <!-- not run: ... --> marker must stand right before a ```python block"
    assert len(marked) <= MAX_NOT_RUN, f"too many blocks marked not run: {marked}"
    assert all(len(reason) > 10 for _, _, reason in marked), f"say why a block is not run: {marked}"


def test_blocks_are_closed_and_named():
    for path in PAGES:
        for line, language, _, _ in blocks(path):
            assert language, f"{page_id(path)}:{line - 1}: name the block's language (python, bash, text)"


NAMED_PATH = re.compile(r"(?<![\w/.-])(benchmarks/\w+\.(?:py|md)|scripts/\w[\w.]*\w|examples/\w+\.py|docs/[\w.-]+\.(?:md|png))")


def test_named_paths_exist():
    missing = []
    for path in PAGES:
        text = path.read_text()
        for name in NAMED_PATH.findall(text):
            if not (Path(PROJECT) / name).exists():
                missing.append(f"{page_id(path)}: {name}")
        for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            if not (path.parent / link).exists():
                missing.append(f"{page_id(path)}: link {link}")
    assert not missing, missing


def test_readme_shape():
    readme = (Path(PROJECT) / "README.md").read_text()
    assert len(readme.split("\n")) <= 250
    assert f"```bash\n{MAIN_JOB}\n```" in readme
    assert f"```bash\n{TEST_JOB}\n```" in readme
    for page in PAGES[1:]:
        assert f"({page_id(page)})" in readme, f"the README links every page of docs/: {page_id(page)}"
