"""The docs on the README's install (issue 26, items 4, 11 and 12), in a fresh virtual environment.

One slow test builds a venv with ``python -m venv``, installs exactly the README's first install
(``pip install -e ".[plot]"`` from this checkout; pip may use its cache) and, in that environment only:

* runs the README's main job (``dpaudit demo ...``) and compares what it prints with the README's quick-start
  output -- the issue's "done when": ``dpaudit.Laplace(1.0).sample`` consistent, the textbook float Laplace a
  floating-point violation beside the mathematical mechanism's bound;
* audits a lambda with ``Execution(workers=2)`` (no extra needed: loky is a core dependency) and gets the
  result of one process;
* runs every docs page with ``tests/support/docs_runner.py --check``: each page prints what it shows, or declares the
  optional modules it needs beyond that install (``<!-- docs-test: requires (...) -->``) and is skipped there
  with that reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.support import REPO

ROOT = REPO
from tests.support.docs_runner import PAGES, required_modules  # noqa: E402

#: modules the README's install must NOT bring (so that pages needing them are really tested without them)
NOT_IN_THE_INSTALL = ("pytest", "hypothesis", "sklearn", "dp_accounting", "distributed", "torch", "jax")

LAMBDA_AUDIT = """
import json, dpaudit
from dpaudit.core.runner import ProcessPool
scale = 1.0
sampler = lambda x, rng, size: x + scale * rng.laplace(size=size)
kw = dict(epsilon=1.0, trials=4000, seed=11, statistic="auto-real")
one = dpaudit.audit_mechanism(sampler, 0.0, 1.0, execution=dpaudit.Execution(workers=1), **kw)
two = dpaudit.audit_mechanism(sampler, 0.0, 1.0, execution=dpaudit.Execution(workers=2), **kw)
print(json.dumps({"one": one.epsilon_lower, "two": two.epsilon_lower, "loky": ProcessPool(2).uses_cloudpickle}))
"""


def readme_quick_start() -> tuple[str, list[str], str]:
    """(the extras of the README's first install, the main job's argv after ``dpaudit``, its output block)."""
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"```bash\n(?P<cmd>[^\n]*dpaudit demo[^\n]*)\n```\n(?:(?!```).)*?```output\n(?P<out>.*?)```",
                  readme, re.S)
    assert m is not None
    steps = m.group("cmd").split(" && ")
    assert steps[:2] == ["python3 -m venv .venv", ". .venv/bin/activate"], steps
    install = re.fullmatch(r'pip install -e "\.\[(?P<extras>[\w,-]+)\]"', steps[2])
    assert install is not None, f"the README's install is not `pip install -e \".[EXTRAS]\"`: {steps[2]}"
    assert steps[3].startswith("dpaudit ")
    return install.group("extras"), steps[3].split()[1:], m.group("out")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["DPAUDIT_PROGRESS"] = "0"
    return env


def _run(argv, cwd, timeout=900):
    res = subprocess.run([str(a) for a in argv], cwd=cwd, env=_env(), capture_output=True, text=True,
                         timeout=timeout)
    assert res.returncode == 0, f"{' '.join(map(str, argv))} exited {res.returncode}:\n{res.stdout}\n{res.stderr}"
    return res.stdout


@pytest.fixture(scope="module")
def readme_venv(tmp_path_factory):
    """A fresh venv with exactly the README's first install of this checkout."""
    extras, _, _ = readme_quick_start()
    venv = tmp_path_factory.mktemp("readme-install") / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=ROOT)
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", f"{ROOT}[{extras}]"], cwd=ROOT)
    return venv


@pytest.mark.slow
def test_docs_run_on_the_readme_install(readme_venv, tmp_path):
    python = readme_venv / "bin" / "python"
    present = json.loads(_run([python, "-c", "import importlib.util, json, sys; print(json.dumps("
                                             "[m for m in sys.argv[1:] if importlib.util.find_spec(m)]))",
                               *NOT_IN_THE_INSTALL], cwd=tmp_path))
    assert present == [], f"the README's install brought {present}: this is not the install the docs describe"

    # the README's main job, as typed, prints the README's quick-start output
    _, argv, shown = readme_quick_start()
    printed = _run([readme_venv / "bin" / "dpaudit", *argv], cwd=tmp_path)
    assert printed.rstrip() == shown.rstrip(), f"the README's quick start prints:\n{printed}"
    assert "consistent:" in printed and "VIOLATION through floating-point representation" in printed
    assert "The mathematical mechanism is consistent" in printed
    assert (tmp_path / argv[argv.index("--report") + 1]).stat().st_size > 10_000

    # process pools on the base install: a lambda with two workers, the result of one process
    pools = json.loads(_run([python, "-c", LAMBDA_AUDIT], cwd=tmp_path))
    assert pools["loky"] and pools["two"] == pools["one"] > 0

    # every docs page: its output, or skipped for a module it declares and the install lacks
    rows = json.loads(_run([python, ROOT / "tests" / "support" / "docs_runner.py", "--check"], cwd=tmp_path))
    assert [r["page"] for r in rows] == [str(p.relative_to(ROOT)) for p in PAGES]
    bad = [r for r in rows if r["status"] not in ("ok", "skipped")]
    assert not bad, "\n\n".join(f"{r['page']}: {r['status']}\n{r['detail']}" for r in bad)
    for row in rows:
        if row["status"] == "skipped":
            declared = required_modules(ROOT / row["page"])
            assert declared and "needs the optional" in row["detail"], row
    ran = {r["page"] for r in rows if r["status"] == "ok"}
    assert {"README.md", "docs/index.md", "docs/cli.md", "docs/floating-point.md"} <= ran
