"""One seed story (issue 26, item 11): without a seed, Python (``seed=None``) and the CLI (no ``--seed``) both draw
fresh entropy and record it so the run can be repeated; the README and docs/cli.md say the same."""

from __future__ import annotations

import re

import dpaudit
from tests.support import REPO

ROOT = REPO


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_readme_and_cli_page_tell_the_same_seed_story():
    for page in ("README.md", "docs/cli.md"):
        text = _flat((ROOT / page).read_text())
        assert "seed=None" in text, page
        assert "fresh" in text and "entropy" in text, page
        assert "--seed" in text and "repeat" in text, page
        assert "the same seed gives the same result from" in text, page


def test_python_records_the_fresh_seed_it_drew_and_it_repeats_the_audit():
    sample = dpaudit.Laplace(1.0).sample
    first = dpaudit.audit_mechanism(sample, 0.0, 1.0, epsilon=1.0, trials=500)
    seed = first.details["seed"]
    assert isinstance(seed, int) and seed >= 2**64  # 128 bits drawn, as the CLI's resolve_seed
    again = dpaudit.audit_mechanism(sample, 0.0, 1.0, epsilon=1.0, trials=500, seed=seed)
    assert again.epsilon_lower == first.epsilon_lower
    assert again.details["threshold_test"] == first.details["threshold_test"]
