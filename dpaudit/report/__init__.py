"""Reports: self-contained HTML or Markdown pages with the plots a reader needs.

``write_report(path, audit=..., renyi=..., accountants=...)`` writes an ``.html`` file (plots
embedded as base64 SVG, nothing else needed to view it) or an ``.md`` file (PNG files beside
it). ``compare_accountants`` and ``renyi_table`` compute the data of the accountant and Renyi
sections; ``add_report_argument`` / ``maybe_write_report`` give any CLI command a
``--report FILE`` option. Plots need matplotlib (``pip install "dpaudit[plot]"``).
"""

from dpaudit._lazy import lazy_exports

_EXPORTS = {
    "write_report": "dpaudit.report.writer",
    "render_report": "dpaudit.report.writer",
    "ReportDependencyError": "dpaudit.report.plots",
    "compare_accountants": "dpaudit.report.data",
    "renyi_table": "dpaudit.report.data",
    "dp_region_tpr": "dpaudit.report.data",
    "add_report_argument": "dpaudit.report.cli_support",
    "maybe_write_report": "dpaudit.report.cli_support",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
