"""Console domain rules: which property covers a site, which permission proves ownership, the budget's
windows, the opportunity rules, and not-indexed grouping."""

from datetime import UTC, datetime

import pytest

from siteaudit.domain.console import (
    ConsoleProperty,
    PageTotals,
    Permission,
    StoredInspection,
    budget_resets_at,
    budget_windows,
    is_low_ctr,
    is_striking_distance,
    not_indexed_groups,
    permission_of,
    property_for,
)
from siteaudit.domain.ids import SiteId

SITE = "https://retro-clock.example/"


@pytest.mark.parametrize(
    ("prop", "url", "covers"),
    [
        ("https://retro-clock.example/", "https://retro-clock.example/clocks/1", True),
        ("https://retro-clock.example/", "http://retro-clock.example/", False),
        ("https://retro-clock.example/shop/", "https://retro-clock.example/", False),
        ("https://retro-clock.example/shop/", "https://retro-clock.example/shop/1", True),
        ("https://retro-clock.example/", "https://www.retro-clock.example/", False),
        ("sc-domain:retro-clock.example", "http://www.retro-clock.example/x", True),
        ("sc-domain:retro-clock.example", "https://retro-clock.example/", True),
        ("sc-domain:retro-clock.example", "https://notretro-clock.example/", False),
    ],
)
def test_property_coverage(prop: str, url: str, covers: bool) -> None:
    assert ConsoleProperty(prop, Permission.OWNER).covers(url) is covers


def test_the_covering_property_prefers_ownership_then_the_most_specific() -> None:
    domain = ConsoleProperty("sc-domain:retro-clock.example", Permission.OWNER)
    prefix = ConsoleProperty(SITE, Permission.FULL)
    restricted = ConsoleProperty(SITE, Permission.RESTRICTED)
    unverified = ConsoleProperty(SITE, Permission.UNVERIFIED)
    assert property_for([domain, prefix], SITE) == prefix
    assert property_for([restricted, domain], SITE) == domain
    assert property_for([restricted], SITE) == restricted
    assert property_for([unverified], SITE) is None
    assert property_for([], SITE) is None


def test_owner_and_full_rights_prove_ownership() -> None:
    assert {p for p in Permission if p.proves_ownership} == {Permission.OWNER, Permission.FULL}
    assert permission_of("siteFullUser") is Permission.FULL
    assert permission_of("somethingNew") is Permission.UNVERIFIED


def test_budget_windows_are_the_utc_day_and_minute() -> None:
    now = datetime(2026, 11, 25, 23, 59, 30, tzinfo=UTC)
    assert budget_windows(now, daily=2_000, per_minute=600) == (
        ("day:2026-11-25", 2_000),
        ("minute:2026-11-25T23:59", 600),
    )
    assert budget_resets_at(now) == datetime(2026, 11, 26, tzinfo=UTC)


@pytest.mark.parametrize(
    ("page", "low_ctr", "striking"),
    [
        (PageTotals("a", clicks=1, impressions=200, position=2.0), True, False),  # 0.5% at 2 (typical 15%)
        (PageTotals("b", clicks=40, impressions=200, position=2.0), False, False),
        (PageTotals("c", clicks=0, impressions=99, position=1.0), False, False),  # too few impressions
        (PageTotals("d", clicks=0, impressions=500, position=12.0), False, True),
        (PageTotals("e", clicks=0, impressions=49, position=12.0), False, False),
        (PageTotals("f", clicks=0, impressions=500, position=21.0), False, False),
        (PageTotals("g", clicks=0, impressions=500, position=None), False, False),
        (PageTotals("h", clicks=0, impressions=300, position=9.0), True, True),
    ],
)
def test_opportunity_rules(page: PageTotals, low_ctr: bool, striking: bool) -> None:
    assert is_low_ctr(page) is low_ctr
    assert is_striking_distance(page) is striking


def test_not_indexed_pages_group_by_reason_and_template() -> None:
    at = datetime(2026, 11, 25, tzinfo=UTC)

    def seen(url: str, state: str, verdict: str = "NEUTRAL") -> StoredInspection:
        return StoredInspection(url, verdict, state, site_id=SiteId(1), inspected_at=at)

    groups = not_indexed_groups(
        [
            seen("/p/1", "Crawled - currently not indexed"),
            seen("/p/2", "Crawled - currently not indexed"),
            seen("/t/1", "Crawled - currently not indexed"),
            seen("/p/3", "Discovered - currently not indexed"),
            seen("/p/4", "Submitted and indexed", "PASS"),
        ],
        {"/p/1": "/p/*", "/p/2": "/p/*", "/p/3": "/p/*", "/p/4": "/p/*", "/t/1": "/t/*"},
    )
    assert [(g.reason, g.template, g.pages, g.sample_urls) for g in groups] == [
        ("Crawled - currently not indexed", "/p/*", 2, ("/p/1", "/p/2")),
        ("Crawled - currently not indexed", "/t/*", 1, ("/t/1",)),
        ("Discovered - currently not indexed", "/p/*", 1, ("/p/3",)),
    ]
    assert "not judged worth indexing" in groups[0].diagnosis
