"""The search-console use cases (docs/rest-api.md "Search console"), each declared once: its inputs with
their bounds, its result, and how `/v1` and the tools offer it. Every door is derived from these
(docs/architecture.md, "Adding a use case"); the handlers are in `read.py`. The console's paths are under
`/sites/{id}/gsc/...` and their alias `/sites/{id}/sengine/...` (docs/rest-api.md "Renamed identifiers");
inspecting URLs has a stricter limit of 10 requests a minute per key, on top of the shared 60."""

from typing import Final, Literal

from attrs import field, frozen

from siteaudit.domain.console import FILTER_MAX, INSPECT_MAX_URLS
from siteaudit.domain.console_answers import ConsoleSummary, InspectAnswer, NotIndexedAnswer, Opportunities
from siteaudit.domain.error import ErrorCode
from siteaudit.domain.ids import SiteId
from siteaudit.domain.site import MAX_URL_LENGTH
from siteaudit.domain.triage import IndexTriage
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.usecases import (
    SITE_ID,
    STARTS_WORK,
    Alias,
    Http,
    Tool,
    UseCase,
    page_of,
    query,
    url_list,
)
from siteaudit.services.console import doors
from siteaudit.services.console.answers import ConsoleUrlAnswer

INSPECT_LIMIT: Final = ("inspect", Limit(10, 60.0))
# What every console tool says of its answer.
_ERRORS: Final = (ErrorCode.NOT_FOUND, ErrorCode.SITE_NOT_VERIFIED, ErrorCode.VALIDATION_FAILED)
_ALIAS_NOTE: Final = " (the alias of the gsc path)"


def _on_console(
    method: Literal["GET", "POST"],
    path: str,
    operation: str,
    summary: str,
    errors: tuple[ErrorCode, ...],
    limit: tuple[str, Limit] | None = None,
    body_name: str | None = None,
) -> Http:
    """The binding of a console path `/v1/sites/{site_id}/gsc<path>` (its operation id `operation` with
    the vendor's name for `{}`) and of its alias under `sengine`."""
    alias = Alias(f"/v1/sites/{{site_id}}/sengine{path}", operation.format("Sengine"), summary + _ALIAS_NOTE)
    return Http(
        method,
        f"/v1/sites/{{site_id}}/gsc{path}",
        operation.format("Gsc"),
        summary,
        errors=errors,
        limit=limit,
        aliases=(alias,),
        body_name=body_name,
    )


@frozen
class GetConsoleSummary(UseCase[ConsoleSummary]):
    """A verified site's console figures: headline, indexing funnel, trend, templates, sync. Raises
    NotFound or SiteNotVerified (409)."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = _on_console(
        "GET",
        "",
        "get{}Summary",
        "Search-console summary: headline, indexing funnel, trend, templates, sync",
        _ERRORS,
    )
    tool = Tool(
        "get_console_summary",
        "Search console summary",
        (
            "A verified site's search figures: 28-day clicks, impressions, indexing funnel, trend, per "
            "template. demo=true: say so. Then list_not_indexed or get_index_triage."
        ),
        doors.console_summary_text,
        untrusted=True,
        after="start_site_audit",
    )


@frozen
class ListNotIndexed(UseCase[NotIndexedAnswer]):
    """Not-indexed groups by the engine's reason and URL template (a reason or a template alone narrows
    them), or with both one group's URLs, 100 a page. Raises NotFound or SiteNotVerified (409)."""

    site_id: SiteId = field(metadata=SITE_ID)
    reason: str | None = field(
        default=None,
        metadata=query(
            "The engine's coverage state, verbatim from a group.",
            doc="the engine's coverage state, verbatim",
            min_length=1,
            max_length=FILTER_MAX,
        ),
    )
    # Any template, "" too: the group of inspected URLs outside the latest audit.
    template: str | None = field(
        default=None, metadata=query("A URL template, from a group.", max_length=FILTER_MAX)
    )
    page: int = field(default=1, metadata=page_of("a group's URLs"))

    http = _on_console(
        "GET",
        "/not-indexed",
        "get{}NotIndexed",
        "Not-indexed groups, or one group's URLs with both reason and template",
        _ERRORS,
    )
    tool = Tool(
        "list_not_indexed",
        "Pages not indexed",
        (
            "A verified site's pages not indexed, by the engine's reason and URL template, with a fix; "
            "given both, that group's URLs (100 a page). demo=true: say so."
        ),
        doors.not_indexed_text,
        untrusted=True,
        after="get_console_summary",
    )


@frozen
class GetConsoleUrl(UseCase[ConsoleUrlAnswer]):
    """One URL's crawl facts, latest inspection and search figures. Raises NotFound, SiteNotVerified (409)
    or UrlNotInSite (422)."""

    site_id: SiteId = field(metadata=SITE_ID)
    url: str = field(
        metadata=query(
            "A URL of the site (url_not_in_site otherwise).", min_length=1, max_length=MAX_URL_LENGTH
        )
    )

    http = _on_console(
        "GET",
        "/url",
        "get{}Url",
        "One URL's crawl facts, console facts and search figures",
        (*_ERRORS, ErrorCode.URL_NOT_IN_SITE),
    )
    tool = Tool(
        "get_console_url",
        "One URL in search",
        (
            "One URL of a verified site: the latest audit's findings, last inspection, search "
            "figures. demo=true: say so. Then inspect_urls."
        ),
        doors.console_url_text,
        untrusted=True,
        after="list_not_indexed",
    )


@frozen
class GetConsoleOpportunities(UseCase[Opportunities]):
    """Low click-through, striking distance and canonical mismatches, with the rules used. Raises NotFound
    or SiteNotVerified (409)."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = _on_console(
        "GET",
        "/opportunities",
        "get{}Opportunities",
        "Low CTR, striking distance and canonical mismatches, with the rules used",
        _ERRORS,
    )
    tool = Tool(
        "get_console_opportunities",
        "Search opportunities",
        (
            "A verified site's pages worth work: low click-through, ranking just off page one, another "
            "canonical chosen. demo=true: say so."
        ),
        doors.opportunities_text,
        untrusted=True,
        after="get_console_url",
    )


@frozen
class InspectUrls(UseCase[InspectAnswer]):
    """Fresh inspections of 1-20 URLs of the site within the property's daily budget (shared with the
    daily sync). Raises NotFound, SiteNotVerified or ScNotConnected (409), UrlNotInSite (422) or
    BudgetExhausted (429)."""

    site_id: SiteId = field(metadata=SITE_ID)
    urls: tuple[str, ...] = field(metadata=url_list("URLs of the site.", INSPECT_MAX_URLS, counted=True))

    http = _on_console(
        "POST",
        "/inspect",
        "inspect{}Urls",
        "Fresh inspection of 1-20 URLs within the property's daily budget (10 requests a minute per key "
        "besides the shared limit)",
        (
            *_ERRORS,
            ErrorCode.SC_NOT_CONNECTED,
            ErrorCode.URL_NOT_IN_SITE,
            ErrorCode.BUDGET_EXHAUSTED,
            ErrorCode.PAYLOAD_TOO_LARGE,
            ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        ),
        limit=INSPECT_LIMIT,
        body_name="InspectRequest",
    )
    tool = Tool(
        "inspect_urls",
        "Inspect URLs now",
        (
            "Ask the engine now whether a verified site's URLs are indexed; a daily budget "
            "(budget_exhausted), 10 a minute; sc_not_connected. demo=true: say so."
        ),
        doors.inspect_text,
        **STARTS_WORK,
        untrusted=True,
        after="get_console_opportunities",
    )


@frozen
class GetIndexTriage(UseCase[IndexTriage]):
    """Crawled pages the console reports as not indexed, grouped by URL template and value class, with
    why and what to do. Raises NotFound or SiteNotVerified (409)."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = Http(
        "GET",
        "/v1/sites/{site_id}/index-triage",
        "getIndexTriage",
        "Crawled pages not indexed, by URL template and value class, with why and what to do",
        errors=_ERRORS,
    )
    tool = Tool(
        "get_index_triage",
        "Why pages are not indexed, and what to do",
        (
            "A verified site's audited pages not indexed, by URL pattern, valuable first, each with why "
            "and what to do. demo=true: say so."
        ),
        doors.triage_text,
        untrusted=True,
        after="inspect_urls",
    )


# In the order the doors list them (the tool list, the remote CLI's commands).
USE_CASES: Final = (
    GetConsoleSummary,
    ListNotIndexed,
    GetConsoleUrl,
    GetConsoleOpportunities,
    InspectUrls,
    GetIndexTriage,
)
