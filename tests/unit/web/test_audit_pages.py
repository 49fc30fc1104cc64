"""The app's reports through falcon.testing: the team's audits with filters, paging and live progress,
an audit's report as a page with its drill-downs, the downloads, team isolation on every one of them, and
the service root (docs/app.md, "Reports")."""

import csv
import io
import re

import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditRequest, AuditStatus
from siteaudit.domain.credit import credits
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.services import audit as audits
from siteaudit.services.audits.usecases import GetReport, ListIssues
from tests.unit.services.test_archive import a_site, run_audit
from tests.unit.web.conftest import MEMBER, PASSWORD, Site

SITE = "https://retro-clock.example"
RIVAL = "rival@other-shop.example"
OWNER_CALLER = Caller(UserId(1), TeamId(1))


def _h1s(page: str) -> list[str]:
    return re.findall(r"<h1>(.*?)</h1>", page)


def _done(site: Site, *, broken: tuple[str, ...] = ("/gone",), caller: Caller = OWNER_CALLER) -> AuditId:
    app = site.app
    return run_audit(app.uow, app.crawl, site.clock, caller, a_site(broken=broken))


def _running(site: Site, pages: int = 3) -> AuditId:
    app = site.app
    started = audits.start_audit(
        AuditRequest(url=SITE + "/", max_pages=100), OWNER_CALLER, uow=app.uow(), clock=site.clock,
        queue=MemoryTaskQueue(),
    )  # fmt: skip
    audit_id = started.audit.id
    audits.begin_audit(audit_id, uow=app.uow(), clock=site.clock)
    app.crawl.frontier_add(audit_id, [(f"{SITE}/q{n}", 1) for n in range(7)])
    audits.record_progress(
        audit_id, pages_crawled=pages, pages_not_modified=0, uow=app.uow(), clock=site.clock
    )
    site.clock.advance(120)
    return audit_id


@pytest.fixture
def rival(site: Site) -> Caller:
    application = site.app.application
    application.create_user(RIVAL, plan="growth")
    team = application.create_team("Other Shop", owner_email=RIVAL)
    application.grant_credits(RIVAL, credits(1_000), idempotency_key="rival")
    application.set_password(RIVAL, PASSWORD)
    return Caller(UserId(3), team.id)


def test_the_audits_list_shows_the_teams_audits_with_score_status_and_trigger(site: Site) -> None:
    first, second = _done(site), _done(site, broken=("/gone", "/lost"))
    browser = site.browser()
    browser.sign_in()
    page = browser.get("/app/audits")
    assert page.status_code == 200
    assert _h1s(page.text) == ["Audits"]
    for audit_id in (first, second):
        assert f'href="/app/audits/{audit_id}"' in page.text
    assert page.text.index(f"#{second}<") < page.text.index(f"#{first}<")  # newest first
    assert "2 audits" in page.text and ">api<" in page.text and "status-done" in page.text
    assert 'http-equiv="refresh"' not in page.text  # nothing running: nothing to refresh
    assert 'aria-current="page">Audits<' in page.text
    # Every control has its label.
    for control in ("filter-site", "filter-status"):
        assert f'<label class="grow" for="{control}">' in page.text or f'<label for="{control}">' in page.text


def test_the_list_filters_by_status_and_pages_twenty_at_a_time(site: Site) -> None:
    done = _done(site)
    running = _running(site)
    browser = site.browser()
    browser.sign_in()
    only_running = browser.get("/app/audits", status="running").text
    assert f"#{running}<" in only_running and f"#{done}<" not in only_running
    only_done = browser.get("/app/audits", status="done").text
    assert f"#{done}<" in only_done and f"#{running}<" not in only_done
    assert browser.get("/app/audits", status="everything").status_code == 400
    for _ in range(20):
        _done(site)
    browser.sign_in()  # each audit moved the clock an hour: the session idled out
    first = browser.get("/app/audits").text
    assert "Page 1 of 2" in first and 'href="/app/audits?page=2"' in first
    second = browser.get("/app/audits", page="2").text
    assert f"#{done}<" in second and f"#{running}<" in second and 'href="/app/audits"' in second


def test_a_running_audit_shows_its_live_progress_and_refreshes(site: Site) -> None:
    running = _running(site, pages=12)
    browser = site.browser()
    browser.sign_in()
    listed = browser.get("/app/audits").text
    assert '<meta http-equiv="refresh" content="5">' in listed
    assert f'id="live-{running}"' in listed and "12 of 100 pages" in listed and "7 queued" in listed
    assert "6.0/min" in listed  # 12 pages in 2 minutes
    page = browser.get(f"/app/audits/{running}").text
    assert '<meta http-equiv="refresh" content="5">' in page
    assert re.search(r'id="live-queue">7 URLs', page) and re.search(
        r'id="live-rate">6.0 pages a minute', page
    )
    assert '<progress id="progress-bar" max="100" value="12">' in page
    assert "<script" not in page  # the live view needs no script


def test_the_report_page_shows_score_totals_diff_templates_and_drill_down(site: Site) -> None:
    first = _done(site)
    second = _done(site, broken=("/gone", "/lost"))
    browser = site.browser()
    browser.sign_in()
    answer = browser.get(f"/app/audits/{second}")
    page = answer.text
    assert answer.status_code == 200 and _h1s(page) == [f"Audit #{second}"]
    report = site.app.application.handle(GetReport(second), OWNER_CALLER)
    assert f'id="health-score">{report.health_score}<' in page
    assert "audited pages have an error-level issue" in page
    assert report.diff is not None and report.diff.previous_crawl_id == first
    assert f'<a href="/app/audits/{first}">audit #{first}</a>' in page
    errors = f"{report.diff.new_errors} error" + ("" if report.diff.new_errors == 1 else "s")
    assert f'id="diff-new">{report.diff.new} ({errors})' in page
    assert f"{SITE}/lost" in page  # the new broken page, among the new issues
    for group in report.templates:
        assert (group.template or "(no template)") in page
    # Drill-down: one check's rows, paged by 25.
    check = report.issues[0].check_code
    rows = browser.get(f"/app/audits/{second}", check=check).text
    listed = site.app.application.handle(_issues(second, check), OWNER_CALLER)
    assert f"{listed.meta.total:,} rows of <code>{check}</code>" in rows
    for issue in listed.data:
        assert issue.url in rows
    pages = browser.get(f"/app/audits/{second}", status_code="404").text
    assert "2 pages answered 404" in pages and f"{SITE}/lost" in pages
    assert 'id="fix-prompt"' in page and 'data-copy="fix-prompt"' in page
    for kind in ("pages", "issues", "links"):
        for fmt in ("csv", "jsonl"):
            assert f'href="/app/audits/{second}/export?kind={kind}&amp;format={fmt}"' in page


def _issues(audit_id: AuditId, check: str) -> ListIssues:
    return ListIssues(audit_id, check=check or None, per_page=25)


def test_an_audit_without_a_score_says_why(site: Site) -> None:
    app = site.app
    down = [
        PageFacts(f"{SITE}/", depth=0, fetch_error=None, status_code=200, content_type="application/json")
    ]
    audit_id = run_audit(app.uow, app.crawl, site.clock, OWNER_CALLER, down)
    report = app.application.handle(GetReport(audit_id), OWNER_CALLER)
    assert report.health_score is None and report.coverage_warning is not None
    browser = site.browser()
    browser.sign_in()
    page = browser.get(f"/app/audits/{audit_id}").text
    assert 'id="health-score">none<' in page
    assert f"<code>{report.coverage_warning.code}</code>" in page
    assert 'id="coverage-warning"' in page
    assert "claims nothing new and nothing fixed" in page  # not "the first audit"


def test_only_the_report_page_may_run_our_own_script(site: Site) -> None:
    audit_id = _done(site)
    browser = site.browser()
    browser.sign_in()
    report = browser.get(f"/app/audits/{audit_id}")
    assert "script-src 'self'" in report.headers["Content-Security-Policy"]
    assert "'unsafe-inline'" not in report.headers["Content-Security-Policy"]
    assert '<script src="/app/static/copy.js" defer></script>' in report.text
    assert len(re.findall(r"<script", report.text)) == 1
    listed = browser.get("/app/audits")
    assert "script-src" not in listed.headers["Content-Security-Policy"]
    script = browser.get("/app/static/copy.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert "navigator.clipboard.writeText" in script.text
    assert browser.get("/app/static/reports.css").status_code == 200


def test_the_downloads_are_the_exports_for_a_signed_in_member(site: Site) -> None:
    audit_id = _done(site)
    browser = site.browser()
    browser.sign_in(MEMBER)
    answer = browser.get(f"/app/audits/{audit_id}/export", kind="issues", format="csv")
    assert answer.status_code == 200
    assert answer.headers["content-disposition"] == f'attachment; filename="crawl-{audit_id}-issues.csv"'
    rows = list(csv.reader(io.StringIO(answer.text)))
    assert rows[0] == ["check_code", "severity", "url", "template", "details"]
    assert len(rows) - 1 == site.app.application.handle(_issues(audit_id, ""), OWNER_CALLER).meta.total
    refused = browser.get(f"/app/audits/{audit_id}/export", kind="everything")
    assert refused.status_code == 422 and "kind: must be one of: pages, issues, links" in refused.text


def test_another_teams_audit_is_a_404_page_everywhere(site: Site, rival: Caller) -> None:
    ours = _done(site)
    theirs = run_audit(site.app.uow, site.app.crawl, site.clock, rival, a_site("https://other-shop.example"))
    browser = site.browser()
    browser.sign_in()
    for path in (f"/app/audits/{theirs}", f"/app/audits/{theirs}/export?kind=pages", "/app/audits/999999"):
        answer = browser.get(
            path.split("?")[0], **dict([path.split("?")[1].split("=")]) if "?" in path else {}
        )
        assert answer.status_code == 404, path
        assert "Something is not right" in answer.text and "other-shop.example" not in answer.text
    listed = browser.get("/app/audits").text
    assert f"#{theirs}<" not in listed and f"#{ours}<" in listed
    assert browser.get("/app/audits", site="999").status_code == 404  # no site of the team
    # And the other way round.
    other = site.browser()
    other.sign_in(RIVAL)
    assert other.get(f"/app/audits/{ours}").status_code == 404
    assert other.get(f"/app/audits/{theirs}").status_code == 200


def test_without_a_session_the_reports_ask_to_sign_in_and_come_back(site: Site) -> None:
    audit_id = _done(site)
    browser = site.browser()
    for path in ("/app/audits", f"/app/audits/{audit_id}", f"/app/audits/{audit_id}/export"):
        answer = browser.get(path)
        assert answer.status_code == 303
        assert answer.headers["Location"].startswith("/app/sign-in?next=%2Fapp%2Faudits")


def test_the_service_root_leads_to_the_app(site: Site) -> None:
    browser = site.browser()
    answer = browser.get("/")
    assert (answer.status_code, answer.headers["Location"]) == (302, "/app")
    assert answer.headers["X-Frame-Options"] == "DENY"
    assert browser.get("/app").headers["Location"] == "/app/sign-in"


def test_a_report_not_written_yet_says_so_and_refreshes(site: Site) -> None:
    audit_id = _running(site)
    audits.stop_crawling(audit_id, partial=False, uow=site.app.uow(), clock=site.clock)
    with site.app.uow() as uow:
        audit = uow.audits.get_any(audit_id)
        audit, _ = audit.publish_report(health_score=90, now=site.clock.now())
        uow.audits.save(audit)
        uow.commit()
    assert audit.status is AuditStatus.DONE
    browser = site.browser()
    browser.sign_in()
    page = browser.get(f"/app/audits/{audit_id}").text
    assert "The report is being written" in page and 'http-equiv="refresh"' in page
