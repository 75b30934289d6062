"""Issue 26, item 8: no overlapping labels in the report, checked where a reader sees them.

* In the browser (headless Chromium, as ``tests/report/test_writer_screenshots.py``): a script appended to a copy of each
  report measures, after layout, every label of the inline SVG number line (claim, proved, computed, ticks): none
  overlaps another or leaves its SVG, and the page is no wider than the window.
* In the PNG figures of the same audits: every text matplotlib draws lies inside the saved figure and apart from
  the others (the figures are saved as laid out, uncropped).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

import dpaudit  # noqa: E402
from dpaudit.cli.demo import audit_both, write_demo_report  # noqa: E402
from dpaudit.report import compare_accountants, plots, write_report  # noqa: E402
from tests.support.figures import drawn_texts, overlapping, texts_outside  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
REQUIRED = os.environ.get("DPAUDIT_REQUIRE_BROWSER", "") not in ("", "0")
needs_browser = pytest.mark.skipif(CHROMIUM is None and not REQUIRED,
                                   reason="headless Chromium is not installed (apt-get install chromium)")
WIDTH, HEIGHT = 1280, 4200

#: appended to a copy of a report: measures the SVG labels once laid out, writes what it finds into the DOM
CHECK = """<script>
(function () {
  var out = [], r = function (e) { return e.getBoundingClientRect(); };
  var hit = function (a, b) { return a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
                                     a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5; };
  var svgs = document.querySelectorAll('svg'), n = 0;
  svgs.forEach(function (svg, k) {
    var box = r(svg);
    var texts = Array.prototype.filter.call(svg.querySelectorAll('text'), function (t) {
      return t.textContent.trim(); });
    n += texts.length;
    texts.forEach(function (t) {
      var b = r(t);
      if (b.width <= 0 || b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 ||
          b.bottom > box.bottom + 0.5) { out.push('outside its svg: ' + t.textContent); }
    });
    for (var i = 0; i < texts.length; i++) for (var j = i + 1; j < texts.length; j++)
      if (hit(r(texts[i]), r(texts[j]))) out.push('overlap: ' + texts[i].textContent + ' | ' + texts[j].textContent);
  });
  if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push('page wider than the window');
  var pre = document.createElement('pre');
  pre.id = 'overlap-check';
  pre.textContent = JSON.stringify({svgs: svgs.length, labels: n, problems: out});
  document.body.appendChild(pre);
})();
</script>"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("overlap")
    demo = audit_both(2000, 1, 0.95)
    dpgd = dpaudit.audit_optimizer("dp-gd", trials=1000, seed=1)
    faint = dpaudit.audit_mechanism(dpaudit.Gaussian(20.0).sample, 0.0, 1.0, epsilon=0.5, delta=1e-5, trials=300,
                                    seed=2)
    close = dpaudit.audit_mechanism(dpaudit.Laplace(1.0).sample, 0.0, 1.0, epsilon=0.97, trials=20_000, seed=3)
    acc = compare_accountants(dpaudit.Gaussian(10.0), [1, 3, 10, 30, 100], delta=1e-5)
    paths = {
        "demo": write_demo_report(out / "demo.html", demo),
        "optimizer": write_report(out / "optimizer.html", audit=dpgd, accountants=acc),
        "inconclusive": write_report(out / "inconclusive.html", audit=faint, mechanism=dpaudit.Gaussian(20.0)),
        "close numbers": write_report(out / "close.html", audit=close, mechanism=dpaudit.Laplace(1.0)),
    }
    results = {"demo": [r for _, _, r in demo], "optimizer": [dpgd], "inconclusive": [faint],
               "close numbers": [close]}
    return paths, results


def _measured(page: Path) -> dict:
    probe = page.with_name(page.stem + "-probe.html")
    probe.write_text(page.read_text().replace("</body>", CHECK + "</body>"))
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}",
           f"--user-data-dir={page.parent / ('.chromium-' + page.stem)}", "--dump-dom", probe.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)  # type: ignore[arg-type]
    m = re.search(r'<pre id="overlap-check">(.*?)</pre>', done.stdout, re.S)
    assert m is not None, done.stderr[-2000:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


@pytest.fixture(autouse=True)
def _browser_present():
    if CHROMIUM is None and REQUIRED:
        pytest.fail("DPAUDIT_REQUIRE_BROWSER is set but no chromium is installed (apt-get install chromium)")


@needs_browser
@pytest.mark.parametrize("name", ["demo", "optimizer", "inconclusive", "close numbers"])
def test_number_line_labels_apart_and_inside_in_the_browser(reports, name):
    paths, results = reports
    found = _measured(paths[name])
    assert found["svgs"] == len(results[name])  # one number line per certified audit
    assert found["labels"] >= 4 * found["svgs"]  # claim, proved, ticks (and the computed bound)
    assert found["problems"] == [], found["problems"]


@needs_browser
def test_the_browser_check_sees_an_overlap(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><svg width="200" height="40"><text x="10" y="20">claim 1</text>'
                    '<text x="14" y="22">proved 0.9</text><text x="190" y="20">cut off</text></svg></body></html>')
    problems = _measured(page)["problems"]
    assert "overlap: claim 1 | proved 0.9" in problems and "outside its svg: cut off" in problems


@pytest.mark.parametrize("name", ["demo", "optimizer", "inconclusive", "close numbers"])
def test_figure_labels_apart_and_inside(reports, name):
    for result in reports[1][name]:
        d = result.to_dict()
        for linear in (True, False):
            texts, width, height = drawn_texts(plots.draw_roc(d, linear), plots.DPI)
            assert texts_outside(texts, width, height) == []
            assert overlapping(texts) == []
