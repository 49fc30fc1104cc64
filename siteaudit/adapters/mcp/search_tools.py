"""The run functions and summaries of the search-console, index-triage and billing-link tools
(docs/rest-api.md "Search console" and "Billing"), declared in `tools.HAND_WRITTEN`: each renders its answer with the REST view."""

from typing import Any

from siteaudit.adapters.mcp.spec import Call
from siteaudit.adapters.rest import views
from siteaudit.domain.billing import Interval, Pack, PlanChoice, PlanName, Tier
from siteaudit.domain.ids import SiteId
from siteaudit.ports.application import NotIndexedQuery


def _site_id(call: Call) -> SiteId:
    return SiteId(int(call.args["site_id"]))


def _demo(answer: dict[str, Any]) -> str:
    return (
        " DEMO DATA (no console connected: generated locally, not the engine's figures)."
        if answer["demo"]
        else ""
    )


def console_summary(call: Call) -> dict[str, Any]:
    return views.console_answer(call.application.console_summary(_site_id(call), call.caller))


def console_not_indexed(call: Call) -> dict[str, Any]:
    a = call.args
    query = NotIndexedQuery(reason=a["reason"], template=a["template"], page=int(a["page"]))
    return views.console_answer(call.application.console_not_indexed(_site_id(call), query, call.caller))


def console_url(call: Call) -> dict[str, Any]:
    return views.console_url_answer(
        call.application.console_url(_site_id(call), call.args["url"], call.caller)
    )


def console_opportunities(call: Call) -> dict[str, Any]:
    return views.console_answer(call.application.console_opportunities(_site_id(call), call.caller))


def inspect_urls(call: Call) -> dict[str, Any]:
    return views.console_answer(call.application.inspect_urls(_site_id(call), call.args["urls"], call.caller))


def index_triage(call: Call) -> dict[str, Any]:
    return views.console_answer(call.application.index_triage(_site_id(call), call.caller))


def console_summary_text(a: dict[str, Any]) -> str:
    h, f = a["headline"], a["funnel"]
    return (
        f"Site {a['site_id']}: {h['clicks_28d']} clicks and {h['impressions_28d']} impressions in 28 days; "
        f"{f['indexed']} of {f['inspected']} inspected pages indexed ({f['found']} found, "
        f"{f['in_sitemap']} in sitemaps); sync {a['sync']['status']}.{_demo(a)} Call list_not_indexed for "
        "why pages are not indexed, get_index_triage for what to do about them."
    )


def not_indexed_text(a: dict[str, Any]) -> str:
    if a["urls"] is not None:
        return (
            f"{len(a['urls'])} of {a['total']} URLs of this group (page {a['page']}).{_demo(a)} "
            "Call get_console_url for one URL's details."
        )
    return (
        f"{len(a['groups'])} groups of pages not indexed, by reason and URL template.{_demo(a)} Call "
        "list_not_indexed with a group's reason and template for its URLs."
    )


def console_url_text(a: dict[str, Any]) -> str:
    console = a["gsc"]
    state = "not inspected yet" if console is None else console["coverage_state"]
    return f"{a['url']}: {state}.{_demo(a)} Call inspect_urls for a fresh inspection."


def opportunities_text(a: dict[str, Any]) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in a["counts"].items())
    return f"Search opportunities: {counts}.{_demo(a)}"


def inspect_text(a: dict[str, Any]) -> str:
    b = a["budget"]
    return (
        f"{len(a['results'])} URLs inspected; {b['used']} of {b['limit']} inspections used today.{_demo(a)}"
    )


def triage_text(a: dict[str, Any]) -> str:
    s = a["summary"]
    return (
        f"{s['not_indexed']} of {s['crawled']} crawled pages are not indexed, in {a['total_groups']} "
        f"groups.{_demo(a)} Fix the valuable_not_indexed groups first (each group's action says how)."
    )


def billing_checkout(call: Call) -> dict[str, Any]:
    return views.payment_link_answer(call.application.billing_checkout(Pack(call.args["pack"]), call.caller))


def billing_subscribe(call: Call) -> dict[str, Any]:
    a = call.args
    choice = PlanChoice(PlanName(a["plan"]), Tier(a["tier"]), Interval(a["interval"]))
    return views.payment_link_answer(call.application.billing_subscribe(choice, call.caller))


def billing_portal(call: Call) -> dict[str, Any]:
    return views.payment_link_answer(call.application.billing_portal(call.caller))


def link_text(a: dict[str, Any]) -> str:
    return f"Give the user this link to open in a browser: {a['url']} (nothing is charged until they pay)."


BILLING_TEXT = (
    "Only the team owner may call it (not_team_owner). Costs nothing until paid in a browser: give the "
    "user the link, do not open it."
)
CONSOLE_TEXT = "Needs a verified site (site_not_verified). demo=true: generated data, say so."
