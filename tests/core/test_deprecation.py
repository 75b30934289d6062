"""One spelling: ``sample_rate`` and ``noise_multiplier`` everywhere (issue 26, item 6).

The older spellings keep working for now: ``make_optimizer(..., sampling_rate=)`` and
``calibrate_*(q=)`` with a ``DeprecationWarning`` naming the new keyword, ``dpaudit account --q``
with a one-line notice on stderr and the same exit status. dpaudit's own code, tests and docs never
use them: pytest turns these warnings into errors (``pyproject.toml``), and the sources are scanned.
"""

from __future__ import annotations

import json
import re
import sys
import warnings

import pytest

from dpaudit import calibrate_discrete_laplace, calibrate_laplace, calibrate_sigma
from dpaudit.optimizers import make_optimizer
from tests.support import REPO
from tests.support.cli import run

ROOT = REPO


def test_optimizer_keyword_sampling_rate_warns_and_means_sample_rate():
    with pytest.warns(DeprecationWarning, match=r"sampling_rate is a deprecated dpaudit spelling.*use sample_rate"):
        old = make_optimizer("dp-sgd", sampling_rate=0.05)
    new = make_optimizer("dp-sgd", sample_rate=0.05)
    assert old.hp == new.hp and "sampling_rate" not in old.hp
    assert old.claim(50).epsilon(1e-5) == new.claim(50).epsilon(1e-5)
    with pytest.raises(ValueError, match="give sample_rate only"):
        make_optimizer("dp-sgd", sample_rate=0.05, sampling_rate=0.05)


def test_the_warning_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_optimizer("dp-sgd", sampling_rate=0.05)
    assert len(caught) == 1 and caught[0].filename == __file__


@pytest.mark.parametrize("fn, rate, kw", [(calibrate_sigma, 1.0, {"accountant": "exact"}),
                                          (calibrate_laplace, 0.02, {"accountant": "pure"}),
                                          (calibrate_discrete_laplace, 0.02, {"accountant": "pure"})])
def test_calibration_keyword_q_warns_and_means_sample_rate(fn, rate, kw):
    with pytest.warns(DeprecationWarning, match=r"q= is a deprecated dpaudit spelling.*use sample_rate="):
        old = fn(1.0, 1e-5, q=rate, steps=20, **kw)
    assert old == fn(1.0, 1e-5, sample_rate=rate, steps=20, **kw)
    with pytest.raises(ValueError, match="give sample_rate only"):
        fn(1.0, 1e-5, q=rate, sample_rate=rate, **kw)
    import inspect

    assert "sample_rate" in inspect.signature(fn).parameters and "q" not in inspect.signature(fn).parameters


def test_cli_q_is_accepted_with_a_one_line_notice_and_the_same_result(capsys):
    base = ["account", "gaussian", "--noise-multiplier", "1.1", "--steps", "100", "--delta", "1e-5", "--accountant",
            "rdp", "--json"]
    code_new, out_new, err_new = run(capsys, [*base, "--sample-rate", "0.01"])
    code_old, out_old, err_old = run(capsys, [*base, "--q", "0.01"])
    assert code_new == code_old == 0 and err_new == ""
    assert json.loads(out_old) == json.loads(out_new)
    lines = err_old.strip().splitlines()
    assert len(lines) == 1 and "--q is a deprecated dpaudit spelling" in lines[0] and "use --sample-rate" in lines[0]
    assert json.loads(out_new)["parameters"]["sample_rate"] == 0.01 and "q" not in json.loads(out_new)["parameters"]
    code, _, err = run(capsys, [*base, "--q", "0.01", "--sample-rate", "0.01"])
    assert code == 2 and "not both" in err
    # a bad value under the old spelling: the notice, then the error, same exit status as the new spelling
    code, _, err = run(capsys, [*base, "--q", "1.5"])
    assert code == 2 and "--sample-rate" in err.strip().splitlines()[-1]


def test_the_pytest_configuration_turns_these_warnings_into_errors():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    filters = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["filterwarnings"]
    from dpaudit.core.deprecation import DEPRECATED_SPELLING, deprecated_spelling_message

    entry = "error:.*deprecated dpaudit spelling:DeprecationWarning"
    assert entry in filters
    pattern = entry.split(":")[1]
    for msg in (deprecated_spelling_message("sampling_rate", "sample_rate", "optimizer 'dp-sgd'"),
                deprecated_spelling_message("q=", "sample_rate=", "calibrate_sigma()")):
        assert DEPRECATED_SPELLING in msg and re.match(pattern, msg, re.I)
    # and it is active in this run: an old spelling outside pytest.warns is an error
    with pytest.raises(DeprecationWarning):
        make_optimizer("dp-sgd", sampling_rate=0.05)


_OLD = [
    (re.compile(r"\bsampling_rate\b"), "sampling_rate"),
    (re.compile(r"calibrate_(?:sigma|laplace|discrete_laplace)\([^)]*\bq="), "calibrate_*(q=)"),
    (re.compile(r"dpaudit account[^\n`]*--q\b"), "dpaudit account --q"),
]


def test_dpaudits_own_sources_docs_and_benchmarks_use_the_new_spellings():
    """Code paths pytest does not execute (bash blocks, benchmarks, help texts) are scanned."""
    paths = [*ROOT.glob("dpaudit/**/*.py"), *ROOT.glob("docs/**/*.md"), ROOT / "README.md",
             *ROOT.glob("benchmarks/*.py"), *ROOT.glob("proofs_checks/*.py")]
    allowed = {ROOT / "dpaudit/optimizers/dp_gd.py": {"sampling_rate"},      # the deprecated alias, declared
               ROOT / "dpaudit/optimizers/factory.py": {"sampling_rate"},    # help(): names the old spelling
               ROOT / "dpaudit/core/deprecation.py": set()}
    found = []
    for path in paths:
        text = path.read_text()
        for pattern, what in _OLD:
            if what in allowed.get(path, set()):
                continue
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                if "deprecat" in text[max(0, m.start() - 200):m.end() + 200].lower():
                    continue  # a sentence documenting the deprecation
                found.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not found, "\n".join(found)
