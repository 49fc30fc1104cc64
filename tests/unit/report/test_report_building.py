"""The stored report: its exact shape, the counts in it, the coverage warning, templates, diff, scale."""

import json
import random
import time

import pytest

from siteaudit.adapters.report_json import report_json
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.diff import PreviousAudit
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.issue import Severity
from siteaudit.domain.prompt import MAX_PROMPT_CHARS
from siteaudit.domain.report import AllowListAdvice, Timings, coverage_warning
from siteaudit.domain.tally import EXCLUDED, AuditIdentity, PageOutcome, ReportTally
from siteaudit.domain.task import TaskIssues
from siteaudit.domain.template import infer_templates
from siteaudit.domain.thresholds import Thresholds

SITE = "https://retro-clock.example"
E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTICE
AUDIT = AuditIdentity(crawl_id=42, site_url=SITE + "/", partial=True)


TIMINGS = Timings(crawl_s=12.5, finalize_s=0.4, site_checks_s=0.1, templates_s=0.2, pages_crawled=11)


def build(tally: ReportTally, **kw: object) -> dict[str, object]:
    """The report as it is stored and served (JSON values in SPEC order)."""
    return report_json(
        tally.build(
            AUDIT,
            catalogue=CATALOGUE,
            thresholds=Thresholds().as_dict(),
            timings=TIMINGS,
            **kw,  # type: ignore[arg-type]
        )
    )


def small_site(
    *, previous: PreviousAudit | None = None, reverse: bool = False, tasks: bool = False
) -> ReportTally:
    """`tasks`: fed as finalisation feeds it for a registered site, each row's first-of-its-(check, URL)
    told by the fix tasks' findings."""
    pages = [
        PageOutcome(f"{SITE}/", "/", 200),
        *[PageOutcome(f"{SITE}/blog/post-{i}", "/blog/[slug]", 200) for i in range(5)],
        PageOutcome(f"{SITE}/old", "/old", 301, redirected=True),
        PageOutcome(f"{SITE}/gone", "/gone", 404),
        PageOutcome(f"{SITE}/down", "/down", None, fetch_failed=True),
        PageOutcome(f"{SITE}/logo.png", "/logo.png", 200, is_html=False),
        PageOutcome(f"{SITE}/shop/clock", "/shop/[slug]", 403, blocked_by="cloudflare"),
    ]
    issues = [
        *[("h1_missing", W, f"{SITE}/blog/post-{i}", "/blog/[slug]", None) for i in range(5)],
        ("title_missing", E, f"{SITE}/blog/post-1", "/blog/[slug]", None),
        ("title_too_long", N, f"{SITE}/blog/post-2", "/blog/[slug]", "A very long title about clocks"),
        ("http_4xx", E, f"{SITE}/gone", "/gone", None),
        ("fetch_failed", E, f"{SITE}/down", "/down", None),
        ("bot_challenge", E, f"{SITE}/shop/clock", "/shop/[slug]", None),
        ("robots_txt_missing", N, f"{SITE}/robots.txt", "", None),
        ("broken_internal_link", E, f"{SITE}/", "/", None),
        ("broken_internal_link", E, f"{SITE}/", "/", None),  # a second broken link on the same page
    ]
    if reverse:
        pages.reverse()
        issues.reverse()
    tally = ReportTally(previous=previous)
    for page in pages:
        tally.add_page(page)
    if tasks:
        kept = TaskIssues()
        tally.add_issues(issues, firsts=[kept.add(c, s, u, t) for c, s, u, t, _ in issues])
    else:
        tally.add_issues(issues)
    tally.add_blocked_skipped(3)
    return tally


def test_the_report_has_exactly_the_fields_of_the_spec() -> None:
    report = build(small_site())

    assert list(report) == [
        "crawl_id", "health_score", "partial", "totals", "issues", "issue_counts", "blocked",
        "coverage_warning", "stats", "templates", "diff", "fix_prompt",
    ]  # fmt: skip
    assert report["crawl_id"] == 42 and report["partial"] is True
    assert json.loads(json.dumps(report)) == report


def test_totals_put_every_url_in_one_bucket() -> None:
    assert build(small_site())["totals"] == {
        "pages": 11,
        "ok": 7,
        "redirects": 1,
        "broken": 1,
        "fetch_errors": 1,
        "blocked": 1,
    }


def test_urls_robots_txt_excludes_are_in_no_total_and_counted_in_stats() -> None:
    """Never requested (issue 12): not fetch errors, not pages, not audited, not a template's pages."""
    tally = small_site()
    excluded = [
        PageOutcome.from_facts(
            PageFacts(f"{SITE}/private/{name}", depth=1, disallowed=True), "/private/[slug]"
        )
        for name in ("plans", "prices")
    ]
    assert {page.outcome for page in excluded} == {EXCLUDED}
    for page in excluded:
        tally.add_page(page)
    tally.add_issue("blocked_by_robots_txt", W, f"{SITE}/private/plans", "/private/[slug]")
    report, before = build(tally), build(small_site())

    assert report["totals"] == before["totals"]
    stats, stats_before = report["stats"], before["stats"]
    assert isinstance(stats, dict) and isinstance(stats_before, dict)
    assert (stats["excluded_by_robots"], stats_before["excluded_by_robots"]) == (2, 0)
    assert stats["score"] == stats_before["score"]
    assert report["coverage_warning"] == before["coverage_warning"]
    groups = {group["template"]: group for group in report["templates"]}  # type: ignore[attr-defined]
    assert groups["/private/[slug]"]["pages"] == 0
    assert [row["check_code"] for row in groups["/private/[slug]"]["issues"]] == ["blocked_by_robots_txt"]


def test_the_score_counts_error_pages_among_audited_pages_only() -> None:
    report = build(small_site())

    # Audited: /, 5 posts, /gone, /down (not the redirect, the image or the blocked page) = 8.
    # With an error: / (broken link), post-1, /gone, /down = 4; the bot challenge does not count.
    assert report["health_score"] == 50
    stats = report["stats"]
    assert isinstance(stats, dict)
    assert stats["score"]["inputs"] == {"pages_with_errors": 4, "audited_pages": 8, "html_pages": 8}
    assert stats["thresholds"]["title_max_chars"] == 60
    assert stats["timings"] == {
        "crawl_s": 12.5,
        "finalize_s": 0.4,
        "site_checks_s": 0.1,
        "templates_s": 0.2,
        "pages_crawled": 11,
    }


def test_issues_are_per_check_most_valuable_first_with_the_catalogue_fix() -> None:
    issues = build(small_site())["issues"]
    assert isinstance(issues, list)

    assert [row["check_code"] for row in issues] == [
        "broken_internal_link", "bot_challenge", "fetch_failed", "http_4xx", "title_missing",
        "h1_missing", "robots_txt_missing", "title_too_long",
    ]  # fmt: skip
    assert issues[0] == {
        "check_code": "broken_internal_link",
        "severity": "error",
        "count": 2,
        "pages": 1,
        "fix": CATALOGUE["broken_internal_link"].fix,
    }


def test_issue_counts_are_per_severity() -> None:
    assert build(small_site())["issue_counts"] == {"error": 6, "warning": 5, "notice": 2}


def test_blocked_pages_are_reported_by_provider_and_section() -> None:
    assert build(small_site())["blocked"] == {
        "count": 1,
        "skipped": 3,
        "providers": {"cloudflare": 1},
        "by_section": {"/shop": 1},
        "sample_urls": [f"{SITE}/shop/clock"],
    }


def test_template_groups_mark_issues_on_nearly_every_page_as_template_wide() -> None:
    templates = build(small_site())["templates"]
    assert isinstance(templates, list)
    blog = next(group for group in templates if group["template"] == "/blog/[slug]")

    assert blog["pages"] == 5
    assert blog["issues"][0] == {
        "check_code": "h1_missing",
        "severity": "warning",
        "count": 5,
        "pages": 5,
        "template_wide": True,
        "sample_urls": [f"{SITE}/blog/post-{i}" for i in range(5)],
    }
    assert {row["check_code"]: row["template_wide"] for row in blog["issues"]} == {
        "h1_missing": True,
        "title_missing": False,
        "title_too_long": False,
    }
    assert all(group["template"] for group in templates)  # site-wide findings are in no group


def test_a_single_page_template_is_never_template_wide() -> None:
    templates = build(small_site())["templates"]
    assert isinstance(templates, list)
    gone = next(group for group in templates if group["template"] == "/gone")

    assert gone["issues"][0]["template_wide"] is False


def test_the_report_does_not_depend_on_reading_order() -> None:
    previous = PreviousAudit.from_issues(
        41, 60, [("http_4xx", E, f"{SITE}/gone"), ("h1_missing", W, f"{SITE}/x")]
    )

    assert build(small_site(previous=previous)) == build(small_site(previous=previous, reverse=True))


@pytest.mark.parametrize(
    "previous", [None, PreviousAudit.from_issues(41, 60, [("http_4xx", E, f"{SITE}/gone")])]
)
def test_a_tally_told_each_rows_first_by_the_fix_tasks_findings_reports_the_same(
    previous: PreviousAudit | None,
) -> None:
    told = build(small_site(previous=previous, tasks=True))

    assert told == build(small_site(previous=previous))
    issues = told["issues"]
    assert isinstance(issues, list)
    assert {row["check_code"]: row["pages"] for row in issues}["broken_internal_link"] == 1  # two rows


def test_the_diff_is_null_for_a_first_audit_and_counted_otherwise() -> None:
    assert build(small_site())["diff"] is None

    previous = PreviousAudit.from_issues(
        41, 60, [("http_4xx", E, f"{SITE}/gone"), ("h1_missing", W, f"{SITE}/x")]
    )
    diff = build(small_site(previous=previous))["diff"]

    assert isinstance(diff, dict)
    assert (diff["previous_crawl_id"], diff["health_delta"], diff["fixed"], diff["fixed_errors"]) == (
        41,
        -10,
        1,
        0,
    )
    assert diff["new"] == 11  # 12 distinct identities, one of them already known
    assert diff["new_errors"] == 4  # http_4xx on /gone was already there


def test_the_fix_prompt_is_in_the_report_and_within_its_limit() -> None:
    prompt = build(small_site())["fix_prompt"]

    assert isinstance(prompt, str)
    assert len(prompt) <= MAX_PROMPT_CHARS
    # Errors first: a template-wide warning (h1_missing on every post) comes after an error on one post.
    assert prompt.index("`title_missing`") < prompt.index("`h1_missing`")


@pytest.mark.parametrize(("blocked", "warned"), [(0, False), (20, False), (21, True), (100, True)])
def test_the_coverage_warning_appears_above_20_percent_blocked(blocked: int, warned: bool) -> None:
    warning = coverage_warning(blocked=blocked, pages=100, providers=["cloudflare"], advice=AllowListAdvice())

    assert (warning is not None) is warned


def test_the_coverage_warning_explains_search_engines_and_how_to_allow_list() -> None:
    tally = ReportTally()
    for i in range(10):
        tally.add_page(PageOutcome(f"{SITE}/p/{i}", "/p/[id]", 403, blocked_by="datadome" if i < 3 else None))

    warning = build(
        tally, advice=AllowListAdvice(user_agent="siteaudit-bot/1.0", token_header="X-Audit-Token")
    )["coverage_warning"]

    assert isinstance(warning, dict)
    assert warning["code"] == "blocked_by_firewall"
    assert warning["blocked_ratio"] == 0.3
    assert "Search engines may still reach" in warning["message"]
    assert "verify_token" in warning["message"] and "X-Audit-Token" in warning["message"]
    assert "siteaudit-bot/1.0" in warning["message"]
    assert warning["docs"].startswith("https://")


def test_an_empty_audit_has_no_score_and_says_why() -> None:
    report = build(ReportTally())

    assert report["health_score"] is None
    assert isinstance(report["coverage_warning"], dict)
    assert report["coverage_warning"]["code"] == "no_html_pages"
    assert report["templates"] == [] and report["issues"] == []


def test_template_groups_are_capped_and_counted() -> None:
    tally = ReportTally()
    for i in range(30):
        tally.add_page(PageOutcome(f"{SITE}/page-{i}", f"/page-{i}", 200))

    report = build(tally, max_template_groups=10)

    assert len(report["templates"]) == 10  # type: ignore[arg-type]
    assert report["stats"]["templates"]["total"] == 30  # type: ignore[index]


def test_a_100000_page_audit_with_300000_issues_is_reported_whole() -> None:
    rng = random.Random(3)
    urls = [f"{SITE}/products/{i}" for i in range(60_000)] + [f"{SITE}/blog/post-{i}" for i in range(40_000)]
    mapping = infer_templates(urls)
    templates = [mapping.template_of(url) for url in urls]
    codes = [(code, spec.severity) for code, spec in CATALOGUE.items()]
    picks = [codes[rng.randrange(len(codes))] for _ in range(300_000)]
    batches = [
        [
            (*picks[i], urls[i % len(urls)], templates[i % len(urls)], None)
            for i in range(offset, offset + 50_000)
        ]
        for offset in range(0, 300_000, 50_000)  # database-sized batches
    ]
    previous = PreviousAudit.from_issues(1, 70, (row[:3] for batch in batches[::2] for row in batch))

    started = time.perf_counter()
    tally = ReportTally(previous=previous)
    for url, template in zip(urls, templates, strict=True):
        tally.add_page(PageOutcome(url, template, 200))
    for batch in batches:
        tally.add_issues(batch)
    report = build(tally)
    elapsed = time.perf_counter() - started

    assert report["totals"]["pages"] == 100_000  # type: ignore[index]
    assert sum(report["issue_counts"].values()) == 300_000  # type: ignore[attr-defined]
    assert {group["template"] for group in report["templates"]} == {"/products/[id]", "/blog/[slug]"}  # type: ignore[attr-defined]
    assert report["diff"]["fixed"] == 0  # type: ignore[index]
    assert len(report["fix_prompt"]) <= MAX_PROMPT_CHARS  # type: ignore[arg-type]
    print(f"\nreport for 100,000 pages and 300,000 issues built in {elapsed:.2f} s")
