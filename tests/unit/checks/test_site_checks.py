"""Site checks on hand-built audits: link graph, targets, duplicates, sitemaps and robots.txt."""

import json
from collections.abc import Iterator

import pytest
from check_cases import (
    CUCKOO,
    GONE,
    OLD,
    ORIGIN,
    SITE_NEGATIVE,
    SITE_POSITIVE,
    START,
    WALL,
    FactsBuilder,
    _distinct,
    _redirect,
    home,
    hops,
    linked,
    page,
    site,
    sketch,
)

from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.checks import AuditFacts, PageContext, check_page, check_site, supersede
from siteaudit.domain.facts import Link, PageFacts, RobotsFacts
from siteaudit.domain.issue import Issue, Severity
from siteaudit.domain.thresholds import Thresholds


def run(facts: AuditFacts) -> list[Issue]:
    return check_site(facts, thresholds=Thresholds())


def of(issues: list[Issue], code: str) -> list[Issue]:
    return [i for i in issues if i.check_code == code]


def test_a_healthy_site_has_no_site_issues() -> None:
    assert (
        run(site(home(*linked(WALL, CUCKOO)), _distinct(WALL), _distinct(CUCKOO), sitemap_urls={WALL})) == []
    )


@pytest.mark.parametrize(("code", "build"), SITE_POSITIVE)
def test_each_site_check_reports_its_positive_case(code: str, build: FactsBuilder) -> None:
    assert code in {i.check_code for i in run(build())}


@pytest.mark.parametrize(("code", "build"), SITE_NEGATIVE)
def test_each_site_check_stays_quiet_on_its_negative_case(code: str, build: FactsBuilder) -> None:
    assert code not in {i.check_code for i in run(build())}


@pytest.mark.parametrize(("code", "build"), SITE_POSITIVE)
def test_site_issues_carry_the_catalogue_severity_and_no_template(code: str, build: FactsBuilder) -> None:
    for found in run(build()):
        if found.check_code not in ("noindex", "sitemap_url_non_200"):
            assert found.severity is CATALOGUE[found.check_code].severity
        assert found.template == ""
        assert json.loads(json.dumps(dict(found.details))) == dict(found.details)  # plain JSON values only


def test_a_broken_internal_link_is_one_issue_per_page_and_target() -> None:
    issues = run(
        site(
            home(*linked(GONE, GONE, WALL)),
            _distinct(WALL, links=linked(GONE, START)),
            page(GONE, status_code=404, html=None),
        )
    )
    broken = sorted(
        (i.url, i.details["target"], i.details["status"]) for i in of(issues, "broken_internal_link")
    )
    assert broken == [(START, GONE, 404), (WALL, GONE, 404)]


def test_each_link_check_is_judged_on_its_own_condition() -> None:
    # A link to a redirect that ends on a broken page is both; a plain broken link or a plain redirect
    # is one of them only.
    ends_broken = page(OLD, redirects=hops((OLD, 301, GONE)), final_url=GONE, status_code=404, html=None)
    cases = {
        "redirect-to-404": (
            site(home(*linked(OLD)), ends_broken),
            {"broken_internal_link", "internal_link_to_redirect"},
        ),
        "404": (site(home(*linked(GONE)), page(GONE, status_code=404, html=None)), {"broken_internal_link"}),
        "redirect-to-200": (
            site(home(*linked(OLD)), _redirect(OLD, 301, WALL), _distinct(WALL)),
            {"internal_link_to_redirect"},
        ),
    }
    for name, (facts, expected) in cases.items():
        on_home = {
            (i.check_code, i.details["target"])
            for i in check_site(facts)
            if i.url == START and i.check_code in {"broken_internal_link", "internal_link_to_redirect"}
        }
        target = GONE if name == "404" else OLD
        assert on_home == {(code, target) for code in expected}, name


def test_sitemap_url_non_200_is_an_error_for_errors_and_a_warning_for_redirects() -> None:
    issues = run(
        site(
            home(*linked(WALL)),
            _redirect(OLD, 301, WALL),
            _distinct(WALL),
            page(GONE, status_code=503, html=None),
            sitemap_urls={OLD, GONE},
        )
    )
    assert sorted((i.url, i.severity) for i in of(issues, "sitemap_url_non_200")) == [
        (GONE, Severity.ERROR),
        (OLD, Severity.WARNING),
    ]


def test_a_linked_noindex_page_is_raised_to_warning_and_replaces_the_page_notice() -> None:
    hidden = _distinct(WALL, meta_robots=("noindex",))
    page_issues = check_page(hidden, thresholds=Thresholds(), context=PageContext(start_url=START))
    assert [i.severity for i in of(page_issues, "noindex")] == [Severity.NOTICE]
    site_issues = run(site(home(*linked(WALL)), hidden))
    merged = supersede(page_issues, site_issues)
    assert [(i.severity, i.details["has_inlinks"]) for i in of(merged, "noindex")] == [
        (Severity.WARNING, True)
    ]


def test_http_4xx_is_reported_for_the_start_url_even_without_inlinks() -> None:
    issues = run(site(page(START, status_code=404, html=None)))
    assert [(i.url, i.details["status"]) for i in of(issues, "http_4xx")] == [(START, 404)]


def test_a_temporary_redirect_linked_from_several_pages_is_one_issue_on_the_redirecting_url() -> None:
    issues = run(site(home(*linked(OLD)), _distinct(WALL, links=linked(OLD)), _redirect(OLD, 302, WALL)))
    assert [(i.url, i.details["status"]) for i in of(issues, "redirect_temporary")] == [(OLD, 302)]
    assert sorted(i.url for i in of(issues, "internal_link_to_redirect")) == [START, WALL]


def test_duplicate_titles_name_the_other_pages() -> None:
    issues = run(
        site(
            home(),
            _distinct(WALL, titles=("Clocks",)),
            _distinct(CUCKOO, titles=("Clocks",)),
            _distinct(f"{ORIGIN}/clocks/mantel", titles=("Clocks",)),
        )
    )
    found = {i.url: i.details for i in of(issues, "title_duplicate")}
    assert set(found) == {WALL, CUCKOO, f"{ORIGIN}/clocks/mantel"}
    assert found[WALL]["count"] == 3
    assert set(found[WALL]["others"]) == {CUCKOO, f"{ORIGIN}/clocks/mantel"}


def test_near_duplicates_report_their_similar_pages_and_similarity() -> None:
    issues = run(
        site(
            home(),
            _distinct(WALL, sketch=sketch(1)),
            _distinct(CUCKOO, sketch=sketch(2, differ_from=1, positions=6)),
            _distinct(f"{ORIGIN}/clocks/mantel", sketch=sketch(3)),
        )
    )
    found = {i.url: i.details for i in of(issues, "duplicate_content_near")}
    assert set(found) == {WALL, CUCKOO}
    assert found[WALL]["similar_to"] == [CUCKOO]
    assert found[WALL]["similarity"] == round(122 / 128, 3)


def test_near_duplicates_are_found_whatever_width_their_values_take() -> None:
    # One-byte values first, then a sketch whose changed values need eight: those read before are
    # re-packed wider, and their bands still meet the newcomer's.
    narrow = tuple(range(128))
    wide = tuple(2**56 + v if v % 21 == 0 else v for v in narrow)  # 7 of 128 values differ
    issues = run(
        site(
            home(),
            _distinct(WALL, sketch=narrow),
            _distinct(f"{ORIGIN}/clocks/mantel", sketch=sketch(3)),
            _distinct(CUCKOO, sketch=wide),
        )
    )
    found = {i.url: i.details for i in of(issues, "duplicate_content_near")}
    assert set(found) == {WALL, CUCKOO}
    assert found[CUCKOO]["similarity"] == round(121 / 128, 3)


def test_near_duplicates_of_an_exact_duplicate_group_cover_every_member() -> None:
    mantel = f"{ORIGIN}/clocks/mantel"
    issues = run(
        site(
            home(),
            _distinct(WALL, fingerprint="a", sketch=sketch(1)),
            _distinct(mantel, fingerprint="a", sketch=sketch(1)),
            _distinct(CUCKOO, fingerprint="b", sketch=sketch(2, differ_from=1, positions=4)),
        )
    )
    assert {i.url for i in of(issues, "duplicate_content_near")} == {WALL, mantel, CUCKOO}
    assert {i.url for i in of(issues, "duplicate_content_exact")} == {WALL, mantel}


def test_a_large_family_of_near_duplicates_is_found_without_comparing_every_pair() -> None:
    family = [
        _distinct(f"{ORIGIN}/p/{n}", sketch=sketch(n + 10, differ_from=1, positions=n % 5))
        for n in range(150)
    ]
    issues = run(site(home(), *family))
    assert {i.url for i in of(issues, "duplicate_content_near")} == {p.url for p in family}


def test_site_facts_can_be_streamed_from_generators() -> None:
    pages = [home(*linked(GONE)), page(GONE, status_code=404, html=None)]

    def stream_pages() -> Iterator[PageFacts]:
        yield from pages

    def stream_links() -> Iterator[tuple[str, Link]]:
        for p in pages:
            for link in p.html.links if p.html else ():
                yield p.url, link

    facts = AuditFacts(
        start_url=START,
        pages=stream_pages(),
        links=stream_links(),
        robots=RobotsFacts(status_code=200, sitemaps=(f"{ORIGIN}/sitemap.xml",)),
        llms_txt_found=True,
    )
    assert sorted(i.check_code for i in run(facts)) == ["broken_internal_link", "http_4xx"]


def test_host_file_issues_are_reported_on_the_file_urls() -> None:
    issues = run(site(home(), robots=RobotsFacts(status_code=404), sitemaps=(), llms_txt_found=False))
    assert sorted((i.check_code, i.url) for i in issues) == [
        ("llms_txt_missing", f"{ORIGIN}/llms.txt"),
        ("robots_txt_missing", f"{ORIGIN}/robots.txt"),
        ("sitemap_missing", f"{ORIGIN}/sitemap.xml"),
    ]


def test_hreflang_target_invalid_says_why() -> None:
    pt = f"{ORIGIN}/pt/clocks/wall"
    issues = run(
        site(
            home(),
            _distinct(WALL, hreflangs=_pairs(("en", WALL), ("pt", pt), ("x-default", WALL))),
            _distinct(
                pt, meta_robots=("noindex",), hreflangs=_pairs(("pt", pt), ("en", WALL), ("x-default", WALL))
            ),
        )
    )
    assert [(i.url, i.details["reason"]) for i in of(issues, "hreflang_target_invalid")] == [
        (WALL, "noindex")
    ]
    assert of(issues, "hreflang_missing_return") == []


def test_an_hreflang_target_robots_txt_excludes_is_invalid_because_of_robots_txt() -> None:
    """It was never requested, so it has no status: the reason is robots.txt, not "non_200" (issue 12)."""
    pt = f"{ORIGIN}/pt/clocks/wall"
    issues = run(
        site(
            home(),
            _distinct(WALL, hreflangs=_pairs(("en", WALL), ("pt", pt), ("x-default", WALL))),
            page(pt, disallowed=True, html=None, status_code=None),
        )
    )
    assert [(i.url, i.details["reason"]) for i in of(issues, "hreflang_target_invalid")] == [
        (WALL, "blocked_by_robots_txt")
    ]


def _pairs(*pairs: tuple[str, str]) -> tuple[object, ...]:
    from check_cases import hreflangs

    return hreflangs(*pairs)


def test_a_url_stored_twice_is_not_its_own_duplicate() -> None:
    wall = _distinct(WALL)
    issues = run(site(home(*linked(WALL)), wall, wall))
    assert issues == []


def test_supersede_keeps_every_other_issue() -> None:
    hidden = _distinct(WALL, meta_robots=("noindex",), titles=("Clocks",))
    page_issues = check_page(hidden, thresholds=Thresholds(), context=PageContext(start_url=START))
    merged = supersede(page_issues, run(site(home(*linked(WALL)), hidden)))
    assert sorted(i.check_code for i in merged) == ["noindex", "title_too_short"]


def test_a_duplicate_title_is_quoted_as_its_first_page_wrote_it_not_case_folded() -> None:
    issues = of(
        run(
            site(
                home(),
                _distinct(WALL, titles=("Clocks  Restored by Hand",)),
                _distinct(CUCKOO, titles=("clocks restored BY HAND",)),
            )
        ),
        "title_duplicate",
    )
    assert {i.url for i in issues} == {WALL, CUCKOO}
    assert {i.details["title"] for i in issues} == {"Clocks Restored by Hand"}
