"""The repository documents itself: README.md is a front page with the two set-up commands, the docs/ pages
it points to exist and link to each other correctly, they list what the code has (the check catalogue, the
plans, every REST operation, MCP tool and CLI command), and code comments cite those pages rather than
documents outside the repository."""

import ast
import io
import json
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import click

from siteaudit.domain.account import DEFAULT_PLANS
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.entrypoints.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = (README, *sorted(DOCS.glob("*.md")), ROOT / "benchmarks" / "README.md")


# Documents outside the repository, issue numbers, and README sections (the front page has no sections
# worth citing: the docs pages do). `benchmarks/README.md` is a page of the repository and may be cited.
OUTSIDE = re.compile(
    r"\bSPEC\b|\bSECURITY\b|\bDESIGN\b|\bCHECKS\b|\.\./shared|\b[Ii]ssues? \d+|\b[Ii]ssue-\d+|"
    r"(?<!benchmarks/)\bREADME\b"
)
# A docs page cited in code, optionally with a section (its heading, or the heading's start): docs/cli.md,
# docs/rest-api.md "Fix impact", docs/security.md, "Strict JSON bodies", docs/agents.md#transports.
CITATION = re.compile(r'\bdocs/([\w.-]+\.md)(?:#([\w-]+)|,? "([^"\n]+)")?')
FENCE = re.compile(r"^(```|~~~)")


def prose_lines(page: Path) -> Iterator[tuple[int, str]]:
    """The page's lines outside fenced code blocks, numbered from 1."""
    fenced = False
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(page: Path) -> list[str]:
    return [line.lstrip("#").strip() for _, line in prose_lines(page) if re.match(r"#{1,6} ", line)]


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in headings(page):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def fenced_block_after(page: Path, marker: str) -> list[str]:
    """The lines of the first fenced code block after the line `marker`."""
    lines = page.read_text().splitlines()
    start = lines.index(marker)
    opening = next(i for i in range(start, len(lines)) if FENCE.match(lines[i]))
    closing = next(i for i in range(opening + 1, len(lines)) if FENCE.match(lines[i]))
    return [line for line in lines[opening + 1 : closing] if line.strip()]


# --- README.md, the front page ----------------------------------------------------------------------------


def test_the_readme_is_a_front_page() -> None:
    assert len(README.read_text().splitlines()) <= 250


def test_the_readme_quick_start_installs_and_starts_the_service_in_one_command() -> None:
    command = fenced_block_after(
        README, "## Quick start (embedded default: one process, SQLite file, no servers needed)"
    )
    assert command == ["python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/siteaudit serve"]


def test_ci_runs_exactly_the_readme_test_command_which_installs_and_tests() -> None:
    (command,) = fenced_block_after(README, "## Run the tests")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert command in ci
    assert command == "make check"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^check: install lint test$", makefile, flags=re.MULTILINE)


def test_the_readme_links_every_docs_page() -> None:
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)", README.read_text()))
    pages = {f"docs/{page.name}" for page in DOCS.glob("*.md")}
    assert pages <= linked, pages - linked


# --- links between the pages -------------------------------------------------------------------------------


def test_every_relative_link_of_the_readme_and_the_docs_points_to_a_file_and_an_anchor_that_exist() -> None:
    broken = []
    for page in PAGES:
        for number, line in prose_lines(page):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, https:, mailto:
                path, _, anchor = target.partition("#")
                destination = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(ROOT)}:{number}: {target}"
                if not destination.exists():
                    broken.append(f"{where} (no such file)")
                elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
                    broken.append(f"{where} (no such heading)")
    assert broken == []


def test_the_link_check_reads_anchors_as_github_makes_them() -> None:
    assert slug("The app at `/app` and device login") == "the-app-at-app-and-device-login"
    assert (
        slug("`siteaudit connect` and `siteaudit disconnect`") == "siteaudit-connect-and-siteaudit-disconnect"
    )
    assert (
        slug("Remote commands (a client of a running service)")
        == "remote-commands-a-client-of-a-running-service"
    )


# --- docs/checks.md is the catalogue ----------------------------------------------------------------------


def test_the_checks_page_lists_every_check_of_the_catalogue_as_the_code_has_it() -> None:
    text = (DOCS / "checks.md").read_text()
    rows = re.findall(r"^\| `([a-z0-9_]+)` \| (\w+) \| ([\w+-]+) \| ([^|]+) \|", text, flags=re.MULTILINE)
    listed = {code: (severity, scope, title.strip()) for code, severity, scope, title in rows}
    expected = {code: (s.severity.value, s.scope.value, s.title) for code, s in CATALOGUE.items()}
    assert listed == expected
    assert f"{len(CATALOGUE)} checks, by group" in text
    assert f"({len(CATALOGUE)} checks, see [docs/checks.md]" in README.read_text()


def test_the_rest_api_page_lists_every_operation_of_the_openapi_document() -> None:
    """The pinned document is the served one (tests/unit/pinned); `sengine` paths are aliases of `gsc`."""
    pinned = json.loads((ROOT / "tests" / "unit" / "pinned" / "pins" / "openapi.json").read_text())
    served = {
        f"{method.upper()} {path.replace('/sengine', '/gsc')}"
        for path, operations in pinned["paths"].items()
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    }
    text = (DOCS / "rest-api.md").read_text().split("## Endpoints", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `((?:GET|POST|PUT|PATCH|DELETE) /v1/\S*)` \|", text, flags=re.MULTILINE))
    assert listed == served


def test_the_agents_page_names_every_mcp_tool() -> None:
    pinned = json.loads((ROOT / "tests" / "unit" / "pinned" / "pins" / "mcp_tools.json").read_text())
    text = (DOCS / "agents.md").read_text()
    assert [tool["name"] for tool in pinned["tools"] if f"`{tool['name']}`" not in text] == []


def test_the_cli_page_names_every_command() -> None:
    text = (DOCS / "cli.md").read_text()
    commands = [name for name in main.commands if f"siteaudit {name}" not in text and f"`{name}" not in text]
    admin = main.commands["admin"]
    assert isinstance(admin, click.Group)
    assert commands == []
    assert [name for name in admin.commands if f"siteaudit admin {name}" not in text] == []


def test_the_metrics_table_of_the_operations_page_is_the_metrics_of_the_code() -> None:
    """Counters are scraped with Prometheus' `_total` suffix, as the page names them."""
    code = (ROOT / "siteaudit" / "adapters" / "metrics.py").read_text()
    defined = {name.removesuffix("_total") for name in re.findall(r'"(siteaudit_[a-z_]+)"', code)}
    text = (DOCS / "operations.md").read_text()
    listed = {
        name.removesuffix("_total")
        for name in re.findall(r"^\| `(siteaudit_[a-z_]+)` \|", text, re.MULTILINE)
    }
    assert listed == defined


def test_the_plans_table_of_the_rest_api_page_is_the_plans_of_the_code() -> None:
    text = (DOCS / "rest-api.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| ([\d,]+) \| ([\d,]+) \| (yes|no) \|$", text, flags=re.MULTILINE)
    listed = {
        name: (int(pages.replace(",", "")), int(sites.replace(",", "")), monitoring == "yes")
        for name, pages, sites, monitoring in rows
    }
    expected = {
        name: (plan.max_pages_per_audit, plan.max_sites, plan.monitoring)
        for name, plan in DEFAULT_PLANS.items()
    }
    assert listed == expected


# --- code comments cite the repository's own pages ------------------------------------------------------


def served_descriptions() -> set[str]:
    """The descriptions the OpenAPI document serves: class docstrings rendered into it are served text,
    which changes only with the pinned document (tests/unit/pinned)."""
    pinned = json.loads((ROOT / "tests" / "unit" / "pinned" / "pins" / "openapi.json").read_text())
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "description" and isinstance(value, str):
                    found.add(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(pinned)
    return found


def commentary(source: str) -> Iterator[tuple[int, str]]:
    """The comments and docstrings of a module, with their line numbers."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None and node.body:
                yield node.body[0].lineno, docstring


def modules() -> Iterator[tuple[str, str]]:
    for path in sorted((ROOT / "siteaudit").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text()


def test_comments_cite_the_docs_pages_not_documents_outside_the_repository() -> None:
    served = served_descriptions()
    offenders = []
    for name, source in modules():
        for line, text in commentary(source):
            if " ".join(text.split()) in served:
                continue
            for match in OUTSIDE.finditer(text):
                offenders.append(f"{name}:{line}: {match.group()}")
    assert offenders == []


def test_every_docs_page_cited_in_the_code_exists_with_the_section_cited() -> None:
    missing = []
    for name, source in modules():
        for match in CITATION.finditer(source):
            page, anchor, section = match.groups()
            target = DOCS / page
            cited = f"{name}: {match.group()}"
            if not target.exists():
                missing.append(f"{cited} (no such page)")
            elif anchor and anchor not in anchors(target):
                missing.append(f"{cited} (no such anchor)")
            elif section and not any(heading.startswith(section) for heading in headings(target)):
                missing.append(f"{cited} (no such section)")
    assert missing == []


def test_the_citation_checks_catch_what_they_look_for() -> None:
    """The patterns above on the forms they must catch, and on the ones they must let through."""
    caught = [
        "(SPEC 4.9)",
        "SECURITY 3",
        "DESIGN 4",
        "CHECKS.md",
        "../shared/SPEC.md",
        "issue 18",
        "issue-18",
        'README "CLI"',
    ]
    assert all(OUTSIDE.search(text) for text in caught)
    passed = [
        "MAX_EXTERNAL_CHECKS",
        "INSPECT_MAX_URLS",
        "CheckSpec",
        "benchmarks/README.md",
        "the issues list",
    ]
    assert not any(OUTSIDE.search(text) for text in passed)
    for cited, groups in (
        ('docs/rest-api.md "Fix impact"', ("rest-api.md", None, "Fix impact")),
        ('docs/security.md, "Strict JSON bodies"', ("security.md", None, "Strict JSON bodies")),
        ("docs/agents.md#transports", ("agents.md", "transports", None)),
    ):
        match = CITATION.search(cited)
        assert match is not None and match.groups() == groups
