"""What the console use cases say at the doors beyond their answers: the summaries a tool's caller reads
first. They read the answer as every door shows it (its JSON)."""

from collections.abc import Mapping
from typing import Any

A = Mapping[str, Any]


def _demo(answer: A) -> str:
    return (
        " DEMO DATA (no console connected: generated locally, not the engine's figures)."
        if answer["demo"]
        else ""
    )


def console_summary_text(a: A) -> str:
    h, f = a["headline"], a["funnel"]
    return (
        f"Site {a['site_id']}: {h['clicks_28d']} clicks and {h['impressions_28d']} impressions in 28 days; "
        f"{f['indexed']} of {f['inspected']} inspected pages indexed ({f['found']} found, "
        f"{f['in_sitemap']} in sitemaps); sync {a['sync']['status']}.{_demo(a)} Call list_not_indexed for "
        "why pages are not indexed, get_index_triage for what to do about them."
    )


def not_indexed_text(a: A) -> str:
    if a["urls"] is not None:
        return (
            f"{len(a['urls'])} of {a['total']} URLs of this group (page {a['page']}).{_demo(a)} "
            "Call get_console_url for one URL's details."
        )
    return (
        f"{len(a['groups'])} groups of pages not indexed, by reason and URL template.{_demo(a)} Call "
        "list_not_indexed with a group's reason and template for its URLs."
    )


def console_url_text(a: A) -> str:
    console = a["gsc"]
    state = "not inspected yet" if console is None else console["coverage_state"]
    return f"{a['url']}: {state}.{_demo(a)} Call inspect_urls for a fresh inspection."


def opportunities_text(a: A) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in a["counts"].items())
    return f"Search opportunities: {counts}.{_demo(a)}"


def inspect_text(a: A) -> str:
    b = a["budget"]
    return (
        f"{len(a['results'])} URLs inspected; {b['used']} of {b['limit']} inspections used today.{_demo(a)}"
    )


def triage_text(a: A) -> str:
    s = a["summary"]
    return (
        f"{s['not_indexed']} of {s['crawled']} crawled pages are not indexed, in {a['total_groups']} "
        f"groups.{_demo(a)} Fix the valuable_not_indexed groups first (each group's action says how)."
    )
