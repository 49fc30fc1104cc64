"""An audit that audited no HTML page has no health score (null), and its coverage warning says why;
resources (images, external targets, non-HTML answers) are not pages (`docs/scoring.md`)."""

import pytest

from siteaudit.adapters.report_json import report_json
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.facts import FetchError, RobotsFacts
from siteaudit.domain.report import Timings
from siteaudit.domain.tally import AuditIdentity, PageOutcome, ReportTally

SITE = "https://retro-clock.example"
ROBOTS_OK = RobotsFacts(status_code=200)
TIMINGS = Timings(crawl_s=1.0, finalize_s=0.0, site_checks_s=0.0, templates_s=0.0, pages_crawled=0)


def build(tally: ReportTally, robots: RobotsFacts | None = ROBOTS_OK) -> dict:  # type: ignore[type-arg]
    report = tally.build(
        AuditIdentity(crawl_id=1, site_url=f"{SITE}/"),
        catalogue=CATALOGUE,
        thresholds={},
        timings=TIMINGS,
        robots=robots,
    )
    return report_json(report)


def tally_of(*pages: PageOutcome) -> ReportTally:
    tally = ReportTally()
    for page in pages:
        tally.add_page(page)
    return tally


@pytest.mark.parametrize(
    ("robots", "code"),
    [
        (RobotsFacts(fetch_error=FetchError.CONNECT), "site_unreachable"),
        (RobotsFacts(fetch_error=FetchError.DNS), "site_unreachable"),
        (RobotsFacts(status_code=500), "robots_txt_unreachable"),
        (RobotsFacts(status_code=503), "robots_txt_unreachable"),
        (RobotsFacts(fetch_error=FetchError.TIMEOUT), "robots_txt_unreachable"),
    ],
)
def test_an_audit_kept_out_by_robots_txt_has_no_score_and_says_why(robots: RobotsFacts, code: str) -> None:
    report = build(ReportTally(), robots=robots)

    assert report["health_score"] is None
    assert report["stats"]["score"]["value"] is None
    warning = report["coverage_warning"]
    assert warning["code"] == code
    assert warning["blocked_ratio"] == 0.0
    assert "no health score" in warning["message"]
    assert "Health score: none" in report["fix_prompt"]
    assert warning["message"][:60] in report["fix_prompt"]


def test_a_site_whose_pages_gave_no_answer_is_unreachable() -> None:
    report = build(tally_of(PageOutcome(f"{SITE}/", "/", None, is_html=False, fetch_failed=True)))

    assert report["health_score"] is None
    assert report["coverage_warning"]["code"] == "site_unreachable"
    assert report["totals"]["pages"] == 1 and report["totals"]["fetch_errors"] == 1


def test_a_site_answering_json_everywhere_has_no_score() -> None:
    report = build(tally_of(PageOutcome(f"{SITE}/", "/", 200, is_html=False, resource=True)))

    assert report["health_score"] is None
    assert report["coverage_warning"]["code"] == "no_html_pages"
    assert report["totals"]["pages"] == 0
    assert report["stats"]["resources"]["checked"] == 1 and report["stats"]["resources"]["ok"] == 1


def test_a_site_robots_txt_disallows_entirely_has_no_score() -> None:
    report = build(tally_of(PageOutcome(f"{SITE}/", "/", None, is_html=False, disallowed=True)))

    assert report["health_score"] is None
    assert report["coverage_warning"]["code"] == "robots_txt_disallow_all"


def test_a_site_blocked_entirely_has_no_score_and_the_firewall_warning() -> None:
    report = build(tally_of(PageOutcome(f"{SITE}/", "/", 403, blocked_by="cloudflare")))

    assert report["health_score"] is None
    assert report["coverage_warning"]["code"] == "blocked_by_firewall"
    assert report["coverage_warning"]["blocked_ratio"] == 1.0


def test_a_site_with_one_html_page_is_scored_and_its_images_are_resources() -> None:
    report = build(
        tally_of(
            PageOutcome(f"{SITE}/", "/", 200),
            PageOutcome(f"{SITE}/logo.png", "/logo.png", 200, is_html=False, resource=True),
            PageOutcome(f"{SITE}/gone.png", "/gone.png", 404, is_html=False, resource=True),
        )
    )

    assert report["health_score"] == 100  # the broken image is a finding of the page, not a broken page
    assert report["coverage_warning"] is None
    assert report["totals"] == {
        "pages": 1,
        "ok": 1,
        "redirects": 0,
        "broken": 0,
        "fetch_errors": 0,
        "blocked": 0,
    }
    assert report["stats"]["resources"] == {
        "checked": 2, "ok": 1, "redirects": 0, "broken": 1, "fetch_errors": 0, "blocked": 0,
    }  # fmt: skip
    assert report["stats"]["score"]["inputs"] == {"pages_with_errors": 0, "audited_pages": 1, "html_pages": 1}
    assert [group["template"] for group in report["templates"]] == ["/"]
