"""The layering of docs/architecture.md: nothing low imports something high.

core -> mechanisms -> accounting (+ conversions) -> bounds -> optimizers -> audit
-> testing, report, interop -> cli. Package ``__init__`` facades (lazy tables) are exempt.
"""

import ast
import pathlib

import pytest

import dpaudit

ORDER = ["core", "mechanisms", "accounting", "bounds", "optimizers", "audit", "testing", "report", "interop", "cli"]
RANK = {name: i for i, name in enumerate(ORDER)}
RANK["conversions"] = RANK["accounting"]  # facade module of dpaudit.accounting.conversions
ROOT = pathlib.Path(dpaudit.__file__).parent


def _layer(path: pathlib.Path) -> str | None:
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) > 1 else path.stem


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dpaudit."):
            yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dpaudit."):
                    yield alias.name, node.lineno


def test_no_upward_imports():
    upward = []
    for path in ROOT.rglob("*.py"):
        layer = _layer(path)
        if path.name in ("__init__.py", "__main__.py") and path.parent == ROOT or layer not in RANK:
            continue
        for module, line in _imports(ast.parse(path.read_text())):
            target = module.split(".")[1]
            if target in RANK and RANK[target] > RANK[layer]:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


#: testing, report and interop are siblings of one layer: none imports another (issue 25; the report
#: read exact_epsilon from testing until it moved to dpaudit.accounting.exact); the CLI, above them,
#: may use report and interop but never the pytest helpers of testing
SIBLINGS = ("testing", "report", "interop")
#: (importing package, imported package) allowed with a reason: none at present
SIBLING_EXCEPTIONS: set[tuple[str, str]] = set()


def sibling_imports(tree, layer: str, where: str = "") -> list[str]:
    """Imports from a module of package ``layer`` of a sibling package (or, from the CLI, of testing)."""
    banned = {"testing"} if layer == "cli" else set(SIBLINGS) - {layer} if layer in SIBLINGS else set()
    found = []
    for module, line in _imports(tree):
        target = module.split(".")[1]
        if target in banned and (layer, target) not in SIBLING_EXCEPTIONS:
            found.append(f"{where}:{line} imports {module}")
    return found


def test_testing_report_interop_do_not_import_each_other_and_cli_not_testing():
    found = []
    for path in ROOT.rglob("*.py"):
        layer = _layer(path)
        found += sibling_imports(ast.parse(path.read_text()), layer, str(path.relative_to(ROOT)))
    assert not found, "imports between sibling packages (or CLI -> testing):\n" + "\n".join(found)


@pytest.mark.parametrize("source, layer", [("from dpaudit.testing.assertions import exact_epsilon", "report"),
                                           ("def f():\n    from dpaudit.testing import x\n", "cli"),
                                           ("import dpaudit.report.data", "interop"),
                                           ("from dpaudit.interop import from_dp_event", "testing")])
def test_sibling_rule_refuses_a_bad_module(source, layer):
    assert sibling_imports(ast.parse(source), layer, "bad.py")


@pytest.mark.parametrize("source, layer", [("from dpaudit.accounting.exact import exact_epsilon", "report"),
                                           ("from dpaudit.report import cli_support", "cli"),
                                           ("from dpaudit.testing._config import x", "testing")])
def test_sibling_rule_accepts_a_good_module(source, layer):
    assert not sibling_imports(ast.parse(source), layer, "good.py")


def test_every_module_is_in_a_known_layer():
    unknown = sorted({_layer(p) for p in ROOT.rglob("*.py")} - set(RANK) - {"__init__", "__main__", "_lazy"})
    assert not unknown, f"modules outside the documented layers: {unknown}"


# -- private names across packages; import guards against the package itself ------------------------

#: (importing module, imported module, name) allowed with a reason (none at present: the last one,
#: bounds/rgm.py importing relative_gaussian._finish, became the public rgm_finish_rdp)
PRIVATE_IMPORT_EXCEPTIONS: set[tuple[str, str, str]] = set()


def _package(module: str) -> str:
    """The top-level package of a dotted dpaudit module name ("dpaudit.audit.x" -> "audit")."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def private_imports_across_packages(tree, layer: str, where: str = "") -> list[str]:
    """Imports, from a module of package ``layer``, of a private name (leading underscore) or of a
    private module of another dpaudit package (``dpaudit._lazy``, the facades' table, excepted)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dpaudit":
            if node.module == "dpaudit._lazy" or _package(node.module) in ("", layer):
                continue
            private_module = any(p.startswith("_") for p in node.module.split(".")[1:])
            for alias in node.names:
                if (private_module or alias.name.startswith("_")) and \
                        (where, node.module, alias.name) not in PRIVATE_IMPORT_EXCEPTIONS:
                    found.append(f"{where}:{node.lineno} imports {alias.name} from {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "dpaudit" and _package(alias.name) not in ("", layer) and \
                        any(p.startswith("_") for p in parts[1:]):
                    found.append(f"{where}:{node.lineno} imports {alias.name}")
    return found


def _catches_import_error(handler) -> bool:
    names = []
    typ = handler.type
    if typ is None:
        return True  # a bare except swallows ImportError too
    for t in (typ.elts if isinstance(typ, ast.Tuple) else [typ]):
        if isinstance(t, ast.Name):
            names.append(t.id)
        elif isinstance(t, ast.Attribute):
            names.append(t.attr)
    return bool({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"} & set(names))


def _imports_dpaudit(nodes) -> bool:
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] == "dpaudit"):
                return True
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "dpaudit" for a in node.names):
                return True
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, str) and node.args[0].value.startswith("dpaudit") and \
                    getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__"):
                return True
            if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                    and str(node.values[0].value).startswith("dpaudit."):
                return True
    return False


def import_guards_on_the_package(tree, where: str = "") -> list[str]:
    """``try: <import of a dpaudit module> except ImportError`` (or ModuleNotFoundError, a bare or
    broad except), and the ``__import__("dpaudit....")`` idiom: dpaudit's own modules are always
    there; only optional third-party packages may be guarded."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and _imports_dpaudit(node.body) and \
                any(_catches_import_error(h) for h in node.handlers):
            found.append(f"{where}:{node.lineno} guards an import of dpaudit with except ImportError")
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__" and node.args and \
                isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("dpaudit"):
            found.append(f"{where}:{node.lineno} __import__({node.args[0].value!r}): use a plain import")
    return found


def _package_modules():
    for path in ROOT.rglob("*.py"):
        yield path, _layer(path), str(path.relative_to(ROOT)), ast.parse(path.read_text())


def test_no_private_names_imported_across_packages():
    found = [f for path, layer, where, tree in _package_modules()
             for f in private_imports_across_packages(tree, layer, where)]
    assert not found, "private names imported across packages:\n" + "\n".join(found)


def test_no_import_guards_against_the_package_itself():
    found = [f for _, _, where, tree in _package_modules() for f in import_guards_on_the_package(tree, where)]
    assert not found, "dpaudit guarded against its own modules:\n" + "\n".join(found)


def test_every_private_import_exception_is_still_needed():
    used = set()
    for _path, _layer_name, where, tree in _package_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                used |= {(where, node.module, a.name) for a in node.names}
    assert PRIVATE_IMPORT_EXCEPTIONS <= used, PRIVATE_IMPORT_EXCEPTIONS - used


# the rules fail on synthetic bad modules (a rule that cannot fail is a defect)
BAD_PRIVATE = [
    "from dpaudit.accounting.conversions import _helper",
    "from dpaudit.mechanisms._subsampled_rdp import expm1mx",
    "from dpaudit.mechanisms import _subsampled_rdp as K",
    "import dpaudit.mechanisms._subsampled_rdp",
    "def f():\n    from dpaudit.audit.optimizer import _declared\n    return _declared",
]
GOOD_PRIVATE = [
    "from dpaudit.audit._private import thing",  # same package
    "from dpaudit.audit.optimizer import _declared",  # same package
    "from dpaudit.accounting.conversions import gaussian_epsilon",
    "from dpaudit._lazy import make_getattr",
    "from numpy import _private",
]
BAD_GUARDS = [
    "try:\n    from dpaudit.accounting.pld import PLDAccountant\nexcept ImportError:\n    PLDAccountant = None",
    "try:\n    import dpaudit.report.plots\nexcept (ImportError, AttributeError):\n    pass",
    "def f():\n    try:\n        from dpaudit.mechanisms import x\n    except ModuleNotFoundError:\n        return None",
    "import importlib\ntry:\n    m = importlib.import_module('dpaudit.cli.audit')\nexcept ImportError:\n    m = None",
    "def f(name):\n    try:\n        return importlib.import_module(f'dpaudit.cli.{name}')\n    except ImportError:\n        return None",
    "x = __import__('dpaudit.report.cli_support').report.cli_support",
    "try:\n    from . import sibling\nexcept ImportError:\n    sibling = None",
]
GOOD_GUARDS = [
    "try:\n    import matplotlib\nexcept ImportError:\n    matplotlib = None",
    "try:\n    from distributed import Client\nexcept ImportError:\n    Client = None",
    "from dpaudit.report import cli_support",
    "try:\n    from dpaudit.core import numeric\nexcept ValueError:\n    pass",
]


@pytest.mark.parametrize("source", BAD_PRIVATE)
def test_private_rule_refuses_a_bad_module(source):
    assert private_imports_across_packages(ast.parse(source), "report", "bad.py")


@pytest.mark.parametrize("source", GOOD_PRIVATE)
def test_private_rule_accepts_a_good_module(source):
    assert not private_imports_across_packages(ast.parse(source), "audit", "good.py")


@pytest.mark.parametrize("source", BAD_GUARDS)
def test_guard_rule_refuses_a_bad_module(source):
    assert import_guards_on_the_package(ast.parse(source), "bad.py")


@pytest.mark.parametrize("source", GOOD_GUARDS)
def test_guard_rule_accepts_a_good_module(source):
    assert not import_guards_on_the_package(ast.parse(source), "good.py")


# -- the audit wing in layers: stats -> attacks -> protocol -> auditors -------------------------------
#: sub-layers of dpaudit.audit, low to high; a module directly in dpaudit/audit/ is an auditor
AUDIT_LAYERS = ("stats", "attacks", "protocol")
AUDIT = ROOT / "audit"


def _audit_rank(module: str):
    """(rank, name) of a dotted dpaudit.audit module: stats 0, attacks 1, protocol 2, an auditor 3."""
    parts = module.split(".")
    if parts[:2] != ["dpaudit", "audit"] or len(parts) < 3:
        return None
    return (AUDIT_LAYERS.index(parts[2]), parts[2]) if parts[2] in AUDIT_LAYERS else (3, parts[2])


def audit_layer_violations(tree, module: str) -> list[str]:
    """Imports of ``module`` (a dpaudit.audit module) that go up the audit layers or from one auditor to another."""
    own = _audit_rank(module)
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom) and node.module:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        for t in targets:
            r = _audit_rank(t)
            if r is None or (isinstance(node, ast.ImportFrom) and t != getattr(node, "module", None)
                             and _audit_rank(node.module) is not None):
                continue
            if r[0] > own[0]:
                found.append(f"{module}:{node.lineno} imports {t} (layer {AUDIT_LAYERS[r[0]] if r[0] < 3 else 'auditor'}"
                             f" above {AUDIT_LAYERS[own[0]] if own[0] < 3 else 'auditor'})")
            elif r[0] == own[0] == 3 and r[1] != own[1]:
                found.append(f"{module}:{node.lineno} imports the auditor {t} (auditors do not import each other)")
    return found


def _audit_modules():
    for path in AUDIT.rglob("*.py"):
        if path.name == "__init__.py" and path.parent == AUDIT:
            continue  # the package facade (lazy table)
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield "dpaudit." + ".".join(parts), ast.parse(path.read_text())


def test_audit_wing_layers():
    found = [f for module, tree in _audit_modules() for f in audit_layer_violations(tree, module)]
    assert not found, "imports against the audit layers:\n" + "\n".join(found)


def test_every_audit_module_is_in_a_sub_layer_or_an_auditor():
    subpackages = {p.name for p in AUDIT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert subpackages == set(AUDIT_LAYERS), subpackages


BAD_AUDIT = [
    ("dpaudit.audit.stats.rules", "from dpaudit.audit.attacks.selection import TieBreak"),
    ("dpaudit.audit.attacks.selection", "from dpaudit.audit.protocol.result import AuditResult"),
    ("dpaudit.audit.protocol.two_sample", "from dpaudit.audit.mechanism import audit_mechanism"),
    ("dpaudit.audit.floating", "from dpaudit.audit.mechanism import audit_mechanism"),
    ("dpaudit.audit.training", "import dpaudit.audit.optimizer"),
]
GOOD_AUDIT = [
    ("dpaudit.audit.protocol.two_sample", "from dpaudit.audit.stats.rules import HeldOut"),
    ("dpaudit.audit.mechanism", "from dpaudit.audit.protocol.sampler import run_sampler_audit"),
    ("dpaudit.audit.attacks.families", "from dpaudit.audit.attacks.base import AttackFamily"),
    ("dpaudit.audit.stats.rules", "from dpaudit.audit.stats.thresholds import select_test"),
]


@pytest.mark.parametrize("module, source", BAD_AUDIT)
def test_audit_layer_rule_refuses_a_bad_import(module, source):
    assert audit_layer_violations(ast.parse(source), module)


@pytest.mark.parametrize("module, source", GOOD_AUDIT)
def test_audit_layer_rule_accepts_a_good_import(module, source):
    assert not audit_layer_violations(ast.parse(source), module)


# -- no private name crosses a module boundary (anywhere in the package) -----------------------------
def private_names_across_modules(tree, module: str) -> list[str]:
    """``from dpaudit.x import _name`` in any module but ``dpaudit.x`` itself (a private name is its module's own);
    private *modules* may be imported by their own package only (checked above)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dpaudit" \
                and node.module != module and node.module != "dpaudit._lazy":
            for alias in node.names:
                sub = ROOT.joinpath(*node.module.split(".")[1:], alias.name)
                if alias.name.startswith("_") and not alias.name.startswith("__") and \
                        not (sub.with_suffix(".py").exists() or sub.is_dir()):  # a private module of its package
                    found.append(f"{module}:{node.lineno} imports {alias.name} from {node.module}")
    return found


def test_no_private_names_across_modules():
    found = []
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        module = "dpaudit." + ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found += private_names_across_modules(ast.parse(path.read_text()), module)
    assert not found, "private names imported from another module:\n" + "\n".join(found)


def test_private_module_rule_refuses_and_accepts():
    assert private_names_across_modules(ast.parse("from dpaudit.audit.protocol.two_sample import _halves"),
                                        "dpaudit.audit.optimizer")
    assert not private_names_across_modules(ast.parse("from dpaudit.audit.protocol.two_sample import split_trials"),
                                            "dpaudit.audit.optimizer")


# -- size: no function over 80 lines of code --------------------------------------------------------
#: lines of code of a function: its lines that are not blank, not comments and not its docstring
MAX_FUNCTION_LINES = 80


def function_lengths(source: str):
    """(name, first line, lines of code) of every function of ``source``."""
    tree = ast.parse(source)
    lines = source.split("\n")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = None
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value,
                                                                                                  str):
                doc = (first.lineno, first.end_lineno)
            n = sum(1 for i in range(node.lineno, node.end_lineno + 1)
                    if lines[i - 1].strip() and not lines[i - 1].strip().startswith("#")
                    and not (doc and doc[0] <= i <= doc[1]))
            yield node.name, node.lineno, n


def test_no_function_over_80_lines_of_code():
    long = [f"{path.relative_to(ROOT)}:{line} {name}: {n} lines"
            for path in ROOT.rglob("*.py") for name, line, n in function_lengths(path.read_text())
            if n > MAX_FUNCTION_LINES]
    assert not long, "functions over 80 lines of code (split them into named steps):\n" + "\n".join(long)


def test_function_length_counts_code_not_docstrings_or_comments():
    body = "\n".join(f"    x{i} = {i}" for i in range(81))
    assert [n for *_, n in function_lengths(f"def f():\n{body}\n")] == [82]
    assert [n for *_, n in function_lengths('def f():\n    """doc\n\n    more"""\n    # c\n\n    return 1\n')] == [2]


# -- docs/architecture.md names every module ---------------------------------------------------------
def test_architecture_doc_names_every_module():
    doc = (ROOT.parent / "docs" / "architecture.md").read_text()
    missing = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if path.name == "__init__.py":
            name = "/".join(rel.parts[:-1]) + "/" if len(rel.parts) > 1 else None
        else:
            name = str(rel)
        if name and f"`{name}`" not in doc and f"`dpaudit/{name}`" not in doc:
            missing.append(str(rel))
    assert not missing, "modules docs/architecture.md does not describe (one line each, as `path/to/module.py`):\n" \
        + "\n".join(missing)
