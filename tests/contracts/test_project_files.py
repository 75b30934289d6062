"""The repository's LICENSE and .gitignore (issue 26, item 11): pyproject says Apache-2.0 and the LICENSE file
holds that licence's text; the reports the quick start and the CLI write into the working directory never
show up as untracked files."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support import REPO

ROOT = REPO


def test_license_file_is_the_apache_2_text_pyproject_names():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("path", ["audit-report.html", "dpaudit-report.html", "report.html", "report.md",
                                  "audit-report_files/roc.png", "report_files/roc.png"])
def test_generated_reports_are_ignored_by_git(path):
    res = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT, capture_output=True)
    assert res.returncode == 0, f"{path} is not ignored by .gitignore"


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("path", ["README.md", "CONTRIBUTING.md", "docs/index.md", "LICENSE"])
def test_sources_are_not_ignored(path):
    res = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT, capture_output=True)
    assert res.returncode == 1, f"{path} would be ignored"
