"""Page checks on hand-built facts: each code fires on its positive case and stays quiet on its negative."""

import json

import pytest
from attrs import evolve
from check_cases import CONTEXT, PAGE_NEGATIVE, PAGE_POSITIVE, REFERENCED, START, WALL, hops, page

from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.checks import PageContext, check_page
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.issue import Severity
from siteaudit.domain.thresholds import Thresholds


def codes(
    facts: PageFacts, context: PageContext = CONTEXT, thresholds: Thresholds | None = None
) -> list[str]:
    return [i.check_code for i in check_page(facts, thresholds=thresholds or Thresholds(), context=context)]


def test_a_healthy_page_has_no_issues() -> None:
    assert check_page(page(), thresholds=Thresholds(), context=CONTEXT) == []


@pytest.mark.parametrize(("code", "facts", "context"), PAGE_POSITIVE)
def test_each_page_check_reports_its_positive_case(code: str, facts: PageFacts, context: PageContext) -> None:
    assert code in codes(facts, context)


@pytest.mark.parametrize(("code", "facts", "context"), PAGE_NEGATIVE)
def test_each_page_check_stays_quiet_on_its_negative_case(
    code: str, facts: PageFacts, context: PageContext
) -> None:
    assert code not in codes(facts, context)


@pytest.mark.parametrize(("code", "facts", "context"), PAGE_POSITIVE)
def test_page_issues_carry_the_catalogue_severity_and_no_template(
    code: str, facts: PageFacts, context: PageContext
) -> None:
    for found in check_page(facts, thresholds=Thresholds(), context=context):
        if found.check_code != "noindex":
            assert found.severity is CATALOGUE[found.check_code].severity
        assert found.template == ""
        assert found.url == facts.url
        assert json.loads(json.dumps(dict(found.details))) == dict(found.details)  # plain JSON values only


def test_a_challenged_page_gets_only_bot_challenge_whatever_its_content() -> None:
    broken = page(
        status_code=403, blocked_by="datadome", html_changes={"titles": (), "h1s": (), "lang": None}
    )
    issues = check_page(broken, thresholds=Thresholds(), context=REFERENCED)
    assert [(i.check_code, i.severity, dict(i.details)) for i in issues] == [
        ("bot_challenge", Severity.ERROR, {"provider": "datadome", "status": 403})
    ]


@pytest.mark.parametrize(
    ("facts", "context", "severity"),
    [
        (page(html_changes={"meta_robots": ("noindex",)}), CONTEXT, Severity.NOTICE),
        (page(html_changes={"meta_robots": ("noindex",)}, in_sitemap=True), CONTEXT, Severity.WARNING),
        (page(html_changes={"meta_robots": ("noindex",)}), REFERENCED, Severity.WARNING),
    ],
    ids=["alone", "in-sitemap", "linked"],
)
def test_noindex_is_a_notice_raised_to_warning_when_listed_or_linked(
    facts: PageFacts, context: PageContext, severity: Severity
) -> None:
    (found,) = [
        i for i in check_page(facts, thresholds=Thresholds(), context=context) if i.check_code == "noindex"
    ]
    assert found.severity is severity


def test_a_noindex_page_is_not_judged_for_indexable_only_checks() -> None:
    hidden = page(
        html_changes={
            "meta_robots": ("noindex",),
            "h1s": (),
            "word_count": 3,
            "canonicals": (),
            "json_ld": (),
        }
    )
    found = codes(hidden)
    for code in ("h1_missing", "thin_content", "canonical_missing", "structured_data_missing"):
        assert code not in found


def test_a_long_title_says_which_title_and_how_long() -> None:
    title = "Wall clocks, cuckoo clocks and mantel clocks restored by hand in Lisbon"
    (found,) = [
        i
        for i in check_page(page(html_changes={"titles": (title,)}), thresholds=Thresholds(), context=CONTEXT)
        if i.check_code == "title_too_long"
    ]
    assert dict(found.details) == {"title": title, "length": len(title), "limit": 60}


def test_title_length_is_counted_in_code_points() -> None:
    title = "Relógios de parede restaurados à mão em Lisboa — coleção de 1950"  # 64 code points
    assert len(title) == 64
    assert "title_too_long" in codes(page(html_changes={"titles": (title,)}))
    assert "title_too_long" not in codes(page(html_changes={"titles": (title[:60],)}))


def test_a_redirect_chain_lists_its_hops() -> None:
    old, older = "https://retro-clock.example/old", "https://retro-clock.example/older"
    facts = page(old, redirects=hops((old, 301, older), (older, 308, WALL)))
    (found,) = [
        i
        for i in check_page(facts, thresholds=Thresholds(), context=CONTEXT)
        if i.check_code == "redirect_chain"
    ]
    assert found.details["hops"] == [{"url": old, "status": 301}, {"url": older, "status": 308}]
    assert found.details["final_url"] == WALL


def test_a_failed_fetch_records_its_sub_reason() -> None:
    from siteaudit.domain.facts import FetchError

    facts = page(
        status_code=None, html=None, fetch_error=FetchError.TLS, fetch_error_detail="certificate expired"
    )
    (found,) = check_page(facts, thresholds=Thresholds(), context=CONTEXT)
    assert (found.check_code, found.details["reason"], found.details["detail"]) == (
        "fetch_failed",
        "tls",
        "certificate expired",
    )


def test_thresholds_are_settings_not_constants() -> None:
    relaxed = Thresholds(title_max_chars=80, thin_content_words=10, slow_response_ms=2_000)
    facts = page(ttfb_ms=1_500, html_changes={"titles": ("W" * 70,), "word_count": 20})
    assert {"title_too_long", "thin_content", "slow_response"} <= set(codes(facts))
    assert not {"title_too_long", "thin_content", "slow_response"} & set(codes(facts, thresholds=relaxed))


def test_a_canonical_resolved_against_base_href_counts_as_self() -> None:
    facts = page(html_changes={"canonicals": ("wall",), "base_href": "https://retro-clock.example/clocks/"})
    found = codes(facts)
    assert "canonical_not_self" not in found
    assert "canonical_relative" in found


def test_soft_404_needs_a_success_status_and_a_short_text() -> None:
    missing = page(html_changes={"not_found_phrase": True, "text_chars": 799})
    assert "soft_404" in codes(missing)
    assert missing.html is not None
    assert "soft_404" not in codes(evolve(missing, html=evolve(missing.html, text_chars=800)))


def test_page_context_derives_https_from_the_start_url_unless_told() -> None:
    assert PageContext(start_url=START).https
    assert not PageContext(start_url="http://retro-clock.example/").https
    assert PageContext(start_url="http://retro-clock.example/", site_https=True).https
