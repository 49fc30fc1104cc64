"""The domain imports nothing but the standard library, attrs and itself; importing it stays cheap. The crawl
engine reads forward: one slice moves through its modules in order, none over 400 lines without a reason."""

import ast
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "siteaudit"
DOMAIN = PACKAGE / "domain"


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module)
    return roots


def test_the_domain_imports_only_the_standard_library_attrs_and_itself() -> None:
    offenders = {}
    for path in sorted(DOMAIN.rglob("*.py")):
        for name in imported_roots(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top == "attrs" or name.startswith("siteaudit.domain"):
                continue
            offenders.setdefault(str(path.relative_to(DOMAIN)), []).append(name)
    assert offenders == {}


def test_importing_the_domain_loads_no_framework() -> None:
    probe = (
        "import sys, siteaudit.domain.audit, siteaudit.domain.credit, siteaudit.domain.facts;"
        "print(sorted(m for m in ('falcon','sqlalchemy','httpx2','dramatiq','selectolax','cattrs') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_domain_does_not_use_future_annotations() -> None:
    # `from __future__ import annotations` breaks Hypothesis' builds() on attrs classes.
    for path in DOMAIN.rglob("*.py"):
        assert "from __future__ import annotations" not in path.read_text(), path


CRAWL_ENGINE = DOMAIN.parent / "services" / "crawl"
# One crawl slice, in the order it meets the engine's modules: each imports only modules before it.
CRAWL_ENGINE_ORDER = (
    "deps",
    "lease",
    "hostgate",
    "politeness",
    "render",
    "host_files",
    "visit",
    "record",
    "window",
    "handover",
    "slice",
)


def test_a_crawl_engine_module_over_400_lines_says_why_in_its_first_line() -> None:
    # For instance `"""... (over 400 lines: <the reason>)`.
    long = {
        path.name: lines
        for path in CRAWL_ENGINE.glob("*.py")
        if (lines := len(path.read_text().splitlines())) > 400
        and "over 400 lines" not in path.read_text().split("\n", 1)[0]
    }
    assert long == {}


def test_no_module_over_400_lines_without_a_one_line_reason_at_its_top() -> None:
    # docs/architecture.md: a long module says why in one line near its top, for instance
    # `# Over 400 lines: <the reason>`; the figure it gives is one it is over.
    unexplained = {}
    for path in PACKAGE.rglob("*.py"):
        lines = path.read_text().splitlines()
        if len(lines) <= 400:
            continue
        said = [re.search(r"[Oo]ver (\d+) lines:", line) for line in lines[:20]]
        if not any(found and int(found.group(1)) <= len(lines) for found in said):
            unexplained[str(path.relative_to(PACKAGE))] = len(lines)
    assert unexplained == {}


def test_following_a_crawl_slice_moves_forward_through_the_engine_modules() -> None:
    modules = {path.stem for path in CRAWL_ENGINE.glob("*.py")} - {"__init__"}
    assert modules == set(CRAWL_ENGINE_ORDER)
    for at, name in enumerate(CRAWL_ENGINE_ORDER):
        engine_imports = {
            imported.removeprefix("siteaudit.services.crawl.")
            for imported in imported_roots(CRAWL_ENGINE / f"{name}.py")
            if imported.startswith("siteaudit.services.crawl")
        }
        assert engine_imports <= set(CRAWL_ENGINE_ORDER[:at]), name
