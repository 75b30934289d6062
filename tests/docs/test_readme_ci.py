"""README's two set-up commands: the test command is what .ci/run runs, and the main job's
CLI arguments exist."""

import re

from tests.support import REPO

ROOT = REPO


def _bash_blocks(text):
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S)]


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text()
    blocks = _bash_blocks(readme)
    test_cmd = [b for b in blocks if "pytest" in b]
    assert len(test_cmd) == 1, "README must have exactly one test command"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd[0] in ci, ".ci/run must contain the README's test command verbatim"
    assert "set -euo pipefail" in "\n".join(ci)


def test_main_job_command_parses():
    """The first command installs and runs the main job, ``dpaudit demo`` with its report."""
    from dpaudit.cli import build_parser

    readme = (ROOT / "README.md").read_text()
    main_job = [b for b in _bash_blocks(readme) if "dpaudit demo" in b]
    assert len(main_job) == 1
    assert main_job[0].startswith('python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[plot]" && ')
    argv = main_job[0].split("dpaudit ", 1)[1].split()
    args = build_parser().parse_args(argv)
    assert args.command == "demo" and args.report == "audit-report.html"
