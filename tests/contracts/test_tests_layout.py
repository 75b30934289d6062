"""Where the tests live (issue 25, item 5; docs/architecture.md, "Where the tests live").

The tests of module ``dpaudit/<package>/<module>.py`` are ``tests/<package>/test_<module>.py``, or
``tests/<package>/test_<module>_<aspect>.py`` when a module has several suites; ``dpaudit/_private.py`` is
``test_private...``. Suites that check something across the package are named by what they check, not by the
work that wrote them: the folders of ``SUITES`` below. Nothing sits flat in tests/ but conftest.py, and no file
name carries a work-stream word.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import REPO

#: cross-cutting suites (top-level folders of tests/ that do not mirror a dpaudit package), and why each exists
SUITES = {
    "contracts": "rules over the whole code base: layering, the accountant contract, ruff, mypy, the public API, "
                 "extension in one file, the project files, this layout",
    "properties": "Hypothesis property suites and fuzzers over several layers",
    "numerics": "numerical edge cases across layers: regressions, sweeps against mpmath, the oracles' self-checks",
    "docs": "the docs pages, README and docstring examples run; README and .ci/run kept in sync",
    "cli": "the command line end to end (it also mirrors dpaudit/cli)",
    "benchmarks": "smoke tests of the scripts in benchmarks/: test_<script>[_<aspect>].py",
    "support": "helpers imported by the tests (no tests)",
}

#: words naming the work stream that wrote a test rather than what it tests
WORK_STREAM_WORDS = ("trust", "libs", "peers", "arch2", "realcode", "mech18")
WORK_STREAM_PATTERN = re.compile(r"(?:^|_)(?:" + "|".join(WORK_STREAM_WORDS) + r"|arch\d+|mech\d+|issue\d+)(?:_|$)")


def _modules(directory: Path) -> set[str]:
    """Module and subpackage names of ``directory``, a leading underscore dropped (``_subsampled_rdp`` -> ...)."""
    names = {p.stem for p in directory.glob("*.py") if p.stem != "__init__"}
    names |= {p.parent.name for p in directory.glob("*/__init__.py")}
    return {n.lstrip("_") for n in names}


def _names_a_module(stem: str, modules: set[str]) -> bool:
    """``test_<module>`` or ``test_<module>_<aspect>`` for one of ``modules``."""
    name = stem.removeprefix("test_")
    return any(name == m or name.startswith(m + "_") for m in modules)


def layout_problems(tests: Path, package: Path, benchmarks: Path) -> list[str]:
    """Every way the files under ``tests`` break the layout (empty when it holds)."""
    problems = []
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(tests)
        if "__pycache__" in rel.parts or path.name == "__init__.py":
            continue
        if len(rel.parts) == 1:
            if path.name != "conftest.py":
                problems.append(f"{rel}: flat in tests/ (only conftest.py may sit there): move it to "
                                f"tests/<package>/test_<module>.py or a suite folder")
            continue
        if path.name.startswith("test_") and WORK_STREAM_PATTERN.search(path.stem):
            problems.append(f"{rel}: the name carries a work-stream word ({', '.join(WORK_STREAM_WORDS)}, ...): "
                            f"name it by the module or property it tests")
        top, folder = rel.parts[0], rel.parent
        if top == "support":
            if path.name.startswith("test_"):
                problems.append(f"{rel}: tests/support/ holds helpers only")
        elif top == "benchmarks":
            if path.name.startswith("test_") and not _names_a_module(path.stem, _modules(benchmarks)):
                problems.append(f"{rel}: not test_<script>[_<aspect>].py for a script of benchmarks/")
        elif top not in SUITES:
            mirrored = package.joinpath(*folder.parts)
            if not (mirrored / "__init__.py").is_file():
                problems.append(f"{rel}: tests/{folder.as_posix()}/ mirrors no dpaudit package and is no suite "
                                f"({', '.join(SUITES)})")
            elif path.name.startswith("test_") and not _names_a_module(path.stem, _modules(mirrored)):
                problems.append(f"{rel}: not test_<module>[_<aspect>].py for a module of "
                                f"dpaudit/{folder.as_posix()}/ ({', '.join(sorted(_modules(mirrored)))})")
    for folder in sorted({p.parent for p in tests.rglob("*.py") if "__pycache__" not in p.parts}):
        if not (folder / "__init__.py").is_file():
            problems.append(f"{folder.relative_to(tests).as_posix() or '.'}/: no __init__.py (every test folder is a "
                            f"package, so that pool and Dask workers import tests.<package>.test_<module>)")
    return problems


def test_the_tests_follow_the_layout():
    problems = layout_problems(REPO / "tests", REPO / "dpaudit", REPO / "benchmarks")
    assert not problems, "\n".join(problems)


def test_every_suite_folder_exists_and_says_why():
    for name, why in SUITES.items():
        assert (REPO / "tests" / name / "__init__.py").is_file() and why


def test_architecture_doc_shows_the_layout():
    text = (REPO / "docs" / "architecture.md").read_text()
    assert "## Where the tests live" in text
    section = text.split("## Where the tests live", 1)[1].split("\n## ", 1)[0]
    for name in SUITES:
        assert f"tests/{name}/" in section, name


def _fake_tree(tmp_path: Path, files: list[str]) -> tuple[Path, Path, Path]:
    for rel in ["dpaudit/__init__.py", "dpaudit/core/__init__.py", "dpaudit/core/runner.py",
                "dpaudit/core/_private.py", "benchmarks/memory.py", "tests/__init__.py", "tests/conftest.py",
                "tests/core/__init__.py", "tests/support/__init__.py", "tests/benchmarks/__init__.py", *files]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    return tmp_path / "tests", tmp_path / "dpaudit", tmp_path / "benchmarks"


def test_a_good_tree_passes(tmp_path):
    tree = _fake_tree(tmp_path, ["tests/core/test_runner.py", "tests/core/test_runner_pools.py",
                                 "tests/core/test_private.py", "tests/support/helpers.py",
                                 "tests/benchmarks/test_memory.py", "tests/contracts/__init__.py",
                                 "tests/contracts/test_anything.py"])
    assert layout_problems(*tree) == []


@pytest.mark.parametrize("bad, says", [
    ("tests/test_runner.py", "flat in tests/"),
    ("tests/core/test_trust_runner.py", "work-stream word"),
    ("tests/core/test_runner_libs.py", "work-stream word"),
    ("tests/contracts/test_arch2_layers.py", "work-stream word"),
    ("tests/core/test_scaleout.py", "not test_<module>"),
    ("tests/widgets/test_runner.py", "mirrors no dpaudit package"),
    ("tests/support/test_helpers.py", "helpers only"),
    ("tests/benchmarks/test_speed.py", "script of benchmarks/"),
    ("tests/contracts/test_lint.py", "no __init__.py"),
])
def test_each_rule_catches_its_breach(tmp_path, bad, says):
    problems = layout_problems(*_fake_tree(tmp_path, [bad]))
    assert any(says in p for p in problems), problems
