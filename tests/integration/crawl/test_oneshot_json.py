"""`siteaudit audit URL --json` prints the report as the REST interface serves it, `--fail-on` reads
the typed report's counts, and `--render` judges the pages a browser rendered (docs/rendering.md)."""

import json
import shutil
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from crawl_doubles import SiteServer, html

from siteaudit.adapters.render.playwright import CHROMIUM
from siteaudit.entrypoints.cli import main
from tests.local_sites import UNPACED_LOCAL_ENV

REPORT_KEYS = [
    "crawl_id", "health_score", "partial", "totals", "issues", "issue_counts", "blocked",
    "coverage_warning", "stats", "templates", "diff", "fix_prompt",
]  # fmt: skip


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    server.routes.update(
        {
            "/": html(
                '<h1>Clocks</h1><a href="/about">About</a> <a href="/gone">Gone</a>', head="<title>Hi</title>"
            ),
            "/about": html("<p>We repair clocks.</p>", head="<title>About the workshop</title>"),
            "/robots.txt": html("User-agent: *\nAllow: /\n"),
        }
    )
    yield server
    server.close()


def test_the_json_report_is_the_served_report_in_spec_order(
    site: SiteServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITEAUDIT_ALLOW_NETWORKS", "127.0.0.0/8")
    for name, value in UNPACED_LOCAL_ENV.items():  # tests/local_sites.py
        monkeypatch.setenv(name, value)
    url = site.url("/").replace("retro-clock.example", "127.0.0.1")
    result = CliRunner().invoke(main, ["audit", url, "--json", "--max-pages", "10", "--fail-on", "error"])

    report = json.loads(result.stdout)
    assert list(report) == REPORT_KEYS
    assert report["totals"]["pages"] >= 3
    assert report["issue_counts"]["error"] > 0  # the broken link to /gone
    assert "archived_identities" not in report["stats"]
    assert result.exit_code == 1  # --fail-on error, and there are errors


def test_the_summary_reads_the_typed_report(site: SiteServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEAUDIT_ALLOW_NETWORKS", "127.0.0.0/8")
    for name, value in UNPACED_LOCAL_ENV.items():  # tests/local_sites.py
        monkeypatch.setenv(name, value)
    url = site.url("/").replace("retro-clock.example", "127.0.0.1")
    result = CliRunner().invoke(main, ["audit", url, "--max-pages", "10"])

    assert result.exit_code == 0, result.output
    assert "Health score" in result.stdout and "Top issues by template" in result.stdout
    assert "http_4xx" in result.stdout or "broken_internal_link" in result.stdout


@pytest.mark.skipif(shutil.which(CHROMIUM) is None, reason="chromium is not installed")
@pytest.mark.xdist_group("chromium")
def test_render_judges_the_page_its_scripts_made(site: SiteServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEAUDIT_ALLOW_NETWORKS", "127.0.0.0/8")
    for name, value in UNPACED_LOCAL_ENV.items():  # tests/local_sites.py
        monkeypatch.setenv(name, value)
    script = "const h = document.createElement('h1'); h.textContent = 'Clocks by script'; document.body.prepend(h);"
    site.routes["/app"] = html(
        f"<p>Loading the shop.</p><script>{script}</script>", head="<title>Shop</title>"
    )
    url = site.url("/app").replace("retro-clock.example", "127.0.0.1")
    raw = CliRunner().invoke(main, ["audit", url, "--json", "--max-pages", "3"])
    rendered = CliRunner().invoke(main, ["audit", url, "--json", "--max-pages", "3", "--render"])

    assert (raw.exit_code, rendered.exit_code) == (0, 0), rendered.output
    assert "js_changed_h1" not in raw.stdout
    assert "js_changed_h1" in rendered.stdout
