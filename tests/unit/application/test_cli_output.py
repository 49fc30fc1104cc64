"""The one-shot audit's output (issue 12, "CLI output"): data printed as it is (no Rich markup taken from
template names), whole lines through a pipe, and `--fail-on` naming the checks that failed the run."""

import io
import json
import re

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer
from rich.console import Console

from siteaudit.domain.issue import Severity
from siteaudit.domain.report import Report
from siteaudit.entrypoints.cli import main
from siteaudit.entrypoints.oneshot import (
    PIPE_WIDTH,
    AuditOptions,
    failing_checks,
    one_shot_application,
    output_console,
    print_summary,
    run_audit,
)
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL, UNPACED_LOCAL_ENV

# A section name longer than a terminal line: piped output must not cut it.
SECTION = "/retro-clock-restoration-guides-for-mantel-clocks-carriage-clocks-and-longcase-clocks-of-every-era"
ITEMS = 6


def page(title: str, links: list[str]) -> str:
    anchors = "".join(f"<a href='{href}'>{href}</a>" for href in links)
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{anchors}</body></html>"
    )


@pytest.fixture
def site(httpserver: HTTPServer) -> str:
    """A home page linking to a dozen pages of one shape under a long section name (no descriptions)."""
    items = [f"{SECTION}/{n}" for n in range(1, ITEMS + 1)]
    html = "text/html; charset=utf-8"
    httpserver.expect_request("/").respond_with_data(page("Retro Clock", items), content_type=html)
    for n, path in enumerate(items, start=1):
        httpserver.expect_request(path).respond_with_data(page(f"Clock {n}", ["/"]), content_type=html)
    httpserver.no_handler_status_code = 404
    return httpserver.url_for("/")


@pytest.fixture
def report(site: str) -> Report:
    settings = Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL)
    return run_audit(one_shot_application(settings), AuditOptions(site, max_rps=3), progress=False)


def templates_of(report: Report) -> list[str]:
    return [group.template for group in report.templates if group.issues]


def test_template_names_print_as_they_are_on_a_terminal(report: Report) -> None:
    templates = templates_of(report)
    assert any("[" in t for t in templates), templates  # a parameter such as [id] in brackets
    screen = io.StringIO()
    print_summary(report, Console(file=screen, force_terminal=True, width=100, color_system=None))
    shown = screen.getvalue()
    # The template column, its folded cells joined: a name folded over several lines reads as one.
    column = "".join(line.split("│")[1].strip() for line in shown.splitlines() if line.count("│") > 2)
    for template in templates:
        assert template in column, (template, shown)
    assert "…" not in shown  # folded, never cut


def test_piped_output_keeps_whole_lines(report: Report) -> None:
    piped = io.StringIO()
    console = output_console(piped)
    assert (console.is_terminal, console.width) == (False, PIPE_WIDTH)
    print_summary(report, console)
    lines = piped.getvalue().splitlines()
    for template in templates_of(report):
        assert any(template in line for line in lines), template
    long_lines = [line for line in lines if SECTION in line]
    assert long_lines and all(len(line.rstrip()) > 80 for line in long_lines)
    for issue in (i for group in report.templates for i in group.issues):
        assert any(issue.check_code in line for line in lines)


def test_the_cli_through_a_pipe_prints_whole_template_names_and_why_fail_on_failed(site: str) -> None:
    cli = CliRunner(
        env={"SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8", "SITEAUDIT_DATABASE_URL": None, **UNPACED_LOCAL_ENV}
    )
    as_json = cli.invoke(main, ["audit", site, "--max-rps", "3", "--json"], catch_exceptions=False)
    templates = [g["template"] for g in json.loads(as_json.stdout)["templates"] if g["issues"]]

    result = cli.invoke(
        main, ["audit", site, "--max-rps", "3", "--fail-on", "warning"], catch_exceptions=False
    )
    assert result.exit_code == 1
    for template in templates:
        assert any(template in line for line in result.stdout.splitlines()), (template, result.stdout)
    assert "…" not in result.stdout
    why = result.stderr.strip()
    assert len(result.stderr.splitlines()) == 1
    assert re.match(r"^failed: --fail-on warning found \d+ checks: ", why), why
    for code, severity, count, pages in re.findall(
        r"(\w+) \((error|warning), (\d+) issues on (\d+) pages\)", why
    ):
        assert severity in ("error", "warning") and int(count) >= int(pages) >= 1, code
    assert len(re.findall(r"\w+ \((?:error|warning), \d+ issues on \d+ pages\)", why)) == int(
        why.split(" found ")[1].split()[0]
    )


def test_fail_on_error_passes_a_report_with_only_warnings(site: str, report: Report) -> None:
    assert report.issue_counts.error == 0 and report.issue_counts.warning > 0
    assert failing_checks(report, Severity.ERROR) == []
    cli = CliRunner(
        env={"SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8", "SITEAUDIT_DATABASE_URL": None, **UNPACED_LOCAL_ENV}
    )
    result = cli.invoke(main, ["audit", site, "--max-rps", "3", "--fail-on", "error"], catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (0, "")
