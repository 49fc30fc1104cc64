"""What the fix-impact use cases say at the doors beyond their answers: the summaries a tool's caller
reads first. They read the answer as every door shows it (its JSON)."""

from collections.abc import Mapping
from typing import Any

A = Mapping[str, Any]


def _event_line(e: A) -> str:
    where = f"site {e['site_id']}" + (f" ({e['site_host']})" if e.get("site_host") else "")
    figures = (
        f"delta_28d {e['delta_28d']:+d}"
        if e["delta_28d"] is not None
        else f"d7 {e['d7']}, d14 {e['d14']}, d28 {e['d28']}"
    )
    return f"- {e['code']} on {e['template'] or '(no template)'}, {where}: {e['status']}, {figures}"


def _text(a: A, whose: str) -> str:
    lines = "\n".join(_event_line(e) for e in a["events"])
    demo = " The figures are DEMO data (no search console connected): say so." if a["demo"] else ""
    return (
        f"{whose}: {a['measured_events']} measured fixes, total delta_28d {a['total_delta_28d']:+d} clicks."
        f"{demo}\n{lines or '(no fixed tasks yet: fix a task and request_recheck it)'}\n"
        "Figures are estimates, not adjusted for season (see methodology)."
    )


def site_fix_impact_text(a: A) -> str:
    return _text(a, f"Site {a['site_id']}")


def team_fix_impact_text(a: A) -> str:
    return _text(a, "The team")
