"""Scores a site owner can trust (`docs/scoring.md`), end to end through the real crawler on 127.0.0.1:
an audit that audited no HTML page (the site is down, robots.txt answers 500, every answer is JSON) has
no score, a coverage warning saying why, and makes the one-shot CLI exit 5; images are resources, not
pages: not in `pages_crawled`, the page cap or the credits."""

import json
import socket
from collections.abc import Iterator
from typing import Any

import falcon.testing
import pytest
from click.testing import CliRunner
from crawl_doubles import Answer, SiteServer, html

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.ids import AuditId
from siteaudit.entrypoints.cli import main
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL, UNPACED_LOCAL_ENV

LOOPBACK = "127.0.0.0/8"
STARTING_CREDITS = 1000
EXIT_NO_SCORE = 5  # docs/cli.md: the audit audited no HTML page
PNG = Answer(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 500, {"Content-Type": "image/png"})
JSON = Answer(200, b'{"status": "ok"}', {"Content-Type": "application/json"})


class Service:
    """The REST interface of a one-process service (memory database), whose crawl runs when asked."""

    def __init__(self) -> None:
        settings = Settings(
            database_url="memory://", allow_networks=(LOOPBACK,), **UNPACED_LOCAL, slice_pages=50
        )
        self.app: App = bootstrap(settings, queue=MemoryTaskQueue())
        issued = self.app.application.ensure_local_owner(plan="scale", starting_credits=STARTING_CREDITS)
        assert issued is not None
        self.headers = {"Authorization": f"Bearer {issued.raw}"}
        self.client = falcon.testing.TestClient(self.app.rest_api())

    def get(self, path: str) -> Any:
        answer = self.client.simulate_get(f"/v1{path}", headers=self.headers)
        assert answer.status_code == 200, answer.text
        return answer.json

    def audit(self, url: str, **body: Any) -> int:
        """POST /crawls, the crawl run slice after slice, finalised: the audit's id."""
        started = self.client.simulate_post("/v1/crawls", json={"url": url, **body}, headers=self.headers)
        assert started.status_code == 202, started.text
        audit_id = AuditId(started.json["crawl_id"])
        application = self.app.application
        while application.run_crawl_slice(audit_id).next == "slice":
            pass
        application.finalize_audit(audit_id)
        return int(audit_id)


@pytest.fixture
def service() -> Service:
    return Service()


def closed_port() -> int:
    """A port of 127.0.0.1 nobody listens on: connections to it are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class JsonEverywhere(dict[str, Any]):
    """Routes answering JSON at every path, robots.txt and sitemaps included (an API at the site's address)."""

    def get(self, key: str, default: Any = None) -> Any:
        return JSON


@pytest.fixture
def json_site() -> Iterator[SiteServer]:
    server = SiteServer()
    server.routes = JsonEverywhere()
    yield server
    server.close()


@pytest.fixture
def robots_failing_site() -> Iterator[SiteServer]:
    server = SiteServer(
        {
            "/robots.txt": Answer(500, "Internal Server Error", {"Content-Type": "text/plain"}),
            "/": html("<h1>Clocks</h1><p>We repair clocks.</p>", head="<title>Retro Clock repairs</title>"),
        }
    )
    yield server
    server.close()


@pytest.fixture
def six_page_site() -> Iterator[SiteServer]:
    """Six HTML pages showing eight images between them."""
    paths = ["/", "/about", "/shop", "/shop/mantel", "/shop/cuckoo", "/contact"]
    nav = "".join(f'<a href="{path}">{path}</a> ' for path in paths)
    routes: dict[str, Any] = {
        "/robots.txt": Answer(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"})
    }
    for index, path in enumerate(paths):
        images = "".join(f'<img src="/img/{(index + k) % 8}.png" alt="clock {k}">' for k in range(3))
        routes[path] = html(
            f"<h1>Page {index}</h1>{nav}{images}", head=f"<title>Retro Clock page {index}</title>"
        )
    for number in range(8):
        routes[f"/img/{number}.png"] = PNG
    server = SiteServer(routes)
    yield server
    server.close()


def local(site: SiteServer) -> str:
    return site.url("/", host="127.0.0.1")


def assert_no_score(service: Service, audit_id: int, code: str) -> dict[str, Any]:
    """The audit is done with no score anywhere REST shows one, and the warning `code`."""
    report = service.get(f"/crawls/{audit_id}/report")
    assert report["health_score"] is None
    assert report["stats"]["score"]["value"] is None
    warning = report["coverage_warning"]
    assert warning["code"] == code, warning
    assert warning["blocked_ratio"] == 0.0
    assert "no health score" in warning["message"]
    detail = service.get(f"/crawls/{audit_id}")
    assert detail["status"] == "done"
    (row,) = [row for row in service.get("/crawls")["data"] if row["crawl_id"] == audit_id]
    assert row["health_score"] is None
    prompt = service.get(f"/crawls/{audit_id}/fix-prompt")["prompt"]
    assert "Health score: none" in prompt and "/100" not in prompt
    return report


def test_a_site_that_is_down_has_no_score(service: Service) -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    audit_id = service.audit(url)

    report = assert_no_score(service, audit_id, "site_unreachable")
    assert report["totals"]["pages"] == 0
    assert "robots_txt_unreachable" in {row["check_code"] for row in report["issues"]}
    assert "`robots_txt_unreachable`" in service.get(f"/crawls/{audit_id}/fix-prompt")["prompt"]
    assert service.get("/account")["balance"] == STARTING_CREDITS  # nothing was crawled, nothing charged


def test_a_site_answering_json_everywhere_has_no_score(service: Service, json_site: SiteServer) -> None:
    audit_id = service.audit(local(json_site))

    report = assert_no_score(service, audit_id, "no_html_pages")
    assert report["totals"]["pages"] == 0
    assert report["stats"]["resources"]["checked"] >= 1  # the start URL answered JSON: a resource
    assert service.get(f"/crawls/{audit_id}")["pages_crawled"] == 0


def test_a_site_whose_robots_txt_answers_500_has_no_score(
    service: Service, robots_failing_site: SiteServer
) -> None:
    audit_id = service.audit(local(robots_failing_site))

    report = assert_no_score(service, audit_id, "robots_txt_unreachable")
    assert report["issues"][0]["check_code"] == "robots_txt_unreachable"
    assert "status 500" in report["coverage_warning"]["message"]
    assert "/" not in robots_failing_site.paths()  # RFC 9309: a robots.txt that fails disallows everything


def test_images_are_resources_not_pages(service: Service, six_page_site: SiteServer) -> None:
    # A cap of 10: the six pages and eight images are 14 URLs, so images counted as pages would hit it.
    audit_id = service.audit(local(six_page_site), max_pages=10)

    detail = service.get(f"/crawls/{audit_id}")
    assert detail["pages_crawled"] == 6
    report = service.get(f"/crawls/{audit_id}/report")
    assert report["partial"] is False
    assert report["totals"]["pages"] == 6 and report["totals"]["ok"] == 6
    assert report["stats"]["resources"] == {
        "checked": 8, "ok": 8, "redirects": 0, "broken": 0, "fetch_errors": 0, "blocked": 0,
    }  # fmt: skip
    assert report["stats"]["score"]["inputs"]["audited_pages"] == 6
    assert report["health_score"] is not None and report["coverage_warning"] is None
    assert sum(1 for path in six_page_site.paths() if path.startswith("/img/")) == 8
    assert service.get("/account")["balance"] == STARTING_CREDITS - 6  # 1 credit per page, none per image


# --- the one-shot CLI -----------------------------------------------------------------------------------


@pytest.fixture
def loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEAUDIT_ALLOW_NETWORKS", LOOPBACK)
    for name, value in UNPACED_LOCAL_ENV.items():  # tests/local_sites.py
        monkeypatch.setenv(name, value)


@pytest.mark.usefixtures("loopback")
def test_the_one_shot_cli_prints_no_score_and_exits_5_for_a_site_that_is_down() -> None:
    result = CliRunner().invoke(main, ["audit", f"http://127.0.0.1:{closed_port()}/"])

    assert result.exit_code == EXIT_NO_SCORE, result.output
    assert "Health score" not in result.stdout and "/100" not in result.stdout
    assert "No health score" in result.stdout and "site_unreachable" in result.stdout
    assert "Site-wide: robots_txt_unreachable (error" in result.stdout
    assert "no health score (site_unreachable)" in result.stderr


@pytest.mark.usefixtures("loopback")
def test_the_one_shot_cli_exits_5_for_a_json_site(json_site: SiteServer) -> None:
    result = CliRunner().invoke(main, ["audit", local(json_site), "--json"])

    assert result.exit_code == EXIT_NO_SCORE, result.output
    report = json.loads(result.stdout)
    assert report["health_score"] is None and report["coverage_warning"]["code"] == "no_html_pages"


@pytest.mark.usefixtures("loopback")
def test_the_one_shot_cli_names_the_robots_txt_failure(robots_failing_site: SiteServer) -> None:
    result = CliRunner().invoke(main, ["audit", local(robots_failing_site), "--fail-on", "error"])

    assert result.exit_code == EXIT_NO_SCORE, result.output
    assert "robots_txt_unreachable:" in result.stdout  # the coverage warning
    assert "Site-wide: robots_txt_unreachable (error" in result.stdout
    assert "--fail-on error found" in result.stderr  # still said, before the no-score exit


@pytest.mark.usefixtures("loopback")
def test_the_one_shot_cli_counts_images_apart(six_page_site: SiteServer) -> None:
    result = CliRunner().invoke(main, ["audit", local(six_page_site), "--max-pages", "10"])

    assert result.exit_code == 0, result.output
    assert "6 pages: 6 ok" in result.stdout and "8 resources checked" in result.stdout


def test_an_audit_without_a_score_claims_no_fix_and_is_skipped_by_the_next_diff(service: Service) -> None:
    """A down audit saw no page: its diff is null (not "everything fixed"), and the audit after it is
    compared with the last audit that saw the site, so nothing reads as new that was there before."""
    untitled = html("<h1>Clocks</h1><p>We repair clocks.</p>")  # no <title>: an error on every audit
    up = {
        "/robots.txt": Answer(200, "User-agent: *\nAllow: /\n", {"Content-Type": "text/plain"}),
        "/": untitled,
    }
    site = SiteServer(dict(up))
    try:
        first = service.audit(local(site))
        assert service.get(f"/crawls/{first}/report")["issue_counts"]["error"] > 0
        site.routes["/robots.txt"] = Answer(500, "Internal Server Error", {"Content-Type": "text/plain"})
        down = service.audit(local(site))
        assert assert_no_score(service, down, "robots_txt_unreachable")["diff"] is None
        site.routes.update(up)
        again = service.audit(local(site))
        diff = service.get(f"/crawls/{again}/report")["diff"]
    finally:
        site.close()
    assert diff["previous_crawl_id"] == first
    assert (diff["new"], diff["fixed"], diff["health_delta"]) == (0, 0, 0)
