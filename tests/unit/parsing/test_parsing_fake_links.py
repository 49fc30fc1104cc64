"""`uncrawlable_link` from the HTML up: a fake link is an <a> that acts as a link without a crawlable
href; an <a> that only names a place on the page is a jump target, not a link."""

from collections.abc import Mapping
from typing import Any

import pytest

from siteaudit.adapters.parse import LibraryPageParser
from siteaudit.domain.checks.page import PageContext, check_page

ORIGIN = "https://docs.retro-clock.example"
PAGE = f"{ORIGIN}/manual/escapement.html"


def fake_links(body: str) -> list[Mapping[str, Any]]:
    """The `uncrawlable_link` issues of a page with `body`, parsed and checked as a crawl does."""
    facts = LibraryPageParser().page_facts(
        url=PAGE,
        status=200,
        headers=(("content-type", "text/html"),),
        body=f"<!doctype html><html><head><title>Escapement</title></head><body>{body}</body></html>".encode(),
        origin=ORIGIN,
    )
    return [
        issue.details
        for issue in check_page(facts, context=PageContext(start_url=ORIGIN + "/"))
        if issue.check_code == "uncrawlable_link"
    ]


def test_a_page_of_named_jump_targets_has_no_fake_link() -> None:
    # What documentation builds write: headings and definitions named by <a id>, <a name> or both,
    # empty or around the text, plus a placeholder <a> and a styled one.
    body = (
        '<h2><a id="anchor-escapement"></a>The escapement</h2>'
        '<h3><a id="pallet-fork" class="legacy" aria-hidden="true">Pallet fork</a></h3>'
        '<a name="balance-wheel"></a><p>The balance wheel.</p>'
        '<a name="hairspring">Hairspring</a>'
        '<a name="mainspring" id="mainspring"></a>'
        '<a id="gear-train" name="gear-train" title="Gear train">Gear train</a>'
        "<a>Placeholder</a>"
        '<a class="toc-current" tabindex="-1">Current section</a>'
        '<a href="#anchor-escapement">Back to the escapement</a>'
        '<a href="/manual/">Manual</a>'
    )
    assert fake_links(body) == []


@pytest.mark.parametrize(
    "anchor",
    [
        pytest.param('<a onclick="openMenu()">Menu</a>', id="onclick"),
        pytest.param('<a id="buy" onclick="buy()">Buy</a>', id="onclick-with-id"),
        pytest.param('<a name="top" onmousedown="go(1)">Top</a>', id="onmousedown-with-name"),
        pytest.param('<a role="link" tabindex="0">Clocks</a>', id="role-link"),
        pytest.param('<a role="Link">Clocks</a>', id="role-link-any-case"),
        pytest.param('<a routerLink="/clocks">Clocks</a>', id="routerlink"),
        pytest.param('<a ng-href="/clocks">Clocks</a>', id="ng-href"),
        pytest.param('<a ng-click="open()">Clocks</a>', id="ng-click"),
        pytest.param('<a to="/clocks">Clocks</a>', id="to"),
        pytest.param('<a data-href="/clocks">Clocks</a>', id="data-href"),
        pytest.param('<a @click="open">Clocks</a>', id="vue-click"),
        pytest.param('<a href="#">Menu</a>', id="bare-hash"),
        pytest.param('<a href="javascript:void(0)">Open</a>', id="javascript"),
        pytest.param('<a href=" JavaScript:go()">Go</a>', id="javascript-any-case"),
    ],
)
def test_an_anchor_acting_as_a_link_without_a_crawlable_href_is_a_fake_link(anchor: str) -> None:
    page = f'<a id="top"></a><a name="intro">Intro</a>{anchor}<a href="/manual/">Manual</a>'
    assert [details["count"] for details in fake_links(page)] == [1]  # the anchor, not the targets
