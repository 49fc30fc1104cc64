"""The run functions and summaries of the fix-impact tools (SPEC 2.9, 4.7), declared in `tools.HAND_WRITTEN`:
each renders its answer with the REST view."""

from typing import TYPE_CHECKING, Any

from siteaudit.adapters.rest.impact_views import site_fix_impact_answer, team_fix_impact_answer
from siteaudit.domain.ids import SiteId

if TYPE_CHECKING:
    from siteaudit.adapters.mcp.spec import Call


def site_fix_impact(call: "Call") -> dict[str, Any]:
    site_id = SiteId(int(call.args["site_id"]))
    return site_fix_impact_answer(
        call.application.site_fix_impact(site_id, call.caller, limit=int(call.args["limit"]))
    )


def team_fix_impact(call: "Call") -> dict[str, Any]:
    return team_fix_impact_answer(
        call.application.team_fix_impact(call.caller, limit=int(call.args["limit"]))
    )


def _event_line(e: dict[str, Any]) -> str:
    where = f"site {e['site_id']}" + (f" ({e['site_host']})" if e.get("site_host") else "")
    figures = (
        f"delta_28d {e['delta_28d']:+d}"
        if e["delta_28d"] is not None
        else f"d7 {e['d7']}, d14 {e['d14']}, d28 {e['d28']}"
    )
    return f"- {e['code']} on {e['template'] or '(no template)'}, {where}: {e['status']}, {figures}"


def _text(a: dict[str, Any], whose: str) -> str:
    lines = "\n".join(_event_line(e) for e in a["events"])
    demo = " The figures are DEMO data (no search console connected): say so." if a["demo"] else ""
    return (
        f"{whose}: {a['measured_events']} measured fixes, total delta_28d {a['total_delta_28d']:+d} clicks."
        f"{demo}\n{lines or '(no fixed tasks yet: fix a task and request_recheck it)'}\n"
        "Figures are estimates, not adjusted for season (see methodology)."
    )


def site_fix_impact_text(a: dict[str, Any]) -> str:
    return _text(a, f"Site {a['site_id']}")


def team_fix_impact_text(a: dict[str, Any]) -> str:
    return _text(a, "The team")
