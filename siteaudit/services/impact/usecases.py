"""The fix-impact use cases (docs/rest-api.md "Fix impact"), each declared once: its inputs with their bounds, its result,
and how `/v1` and the tools offer it. Every door is derived from these (docs/architecture.md, "Adding a
use case"); the handlers are in `impact.py`."""

from typing import Final

from attrs import field, frozen

from siteaudit.domain.ids import SiteId
from siteaudit.domain.impact import METHODOLOGY, NOTE
from siteaudit.ports.usecases import QUERY_ERRORS, SITE_ID, Http, Tool, UseCase, how_many, lookup
from siteaudit.services.impact import doors
from siteaudit.services.impact.answers import SiteFixImpact, TeamFixImpactList

IMPACT_NOTE: Final = f"{NOTE} {METHODOLOGY}"


@frozen
class GetSiteFixImpact(UseCase[SiteFixImpact]):
    """The site's latest fix-impact events and its total over measured ones."""

    site_id: SiteId = field(metadata=SITE_ID)
    limit: int = field(default=50, metadata=how_many("events", 200))

    http = lookup(
        "/v1/sites/{site_id}/fix-impact",
        "listSiteFixImpact",
        "A site's fix impact: clicks before and after each fixed task, newest first",
        description=IMPACT_NOTE,
    )
    tool = Tool(
        "get_site_fix_impact",
        "A site's measured fix impact",
        "Per fixed task, clicks 28 days before and 7/14/28 days after the fix (estimates); needs "
        "console data.",
        doors.site_fix_impact_text,
        lists=("events",),
    )


@frozen
class GetTeamFixImpact(UseCase[TeamFixImpactList]):
    """The team's latest fix-impact events across its sites, and its total over measured ones."""

    limit: int = field(default=10, metadata=how_many("events", 50))

    http = Http(
        "GET",
        "/v1/fix-impact",
        "listTeamFixImpact",
        "The team's fix impact: its total delta_28d over measured events and its latest events",
        errors=QUERY_ERRORS,
        description=IMPACT_NOTE,
    )
    tool = Tool(
        "get_team_fix_impact",
        "The team's measured fix impact",
        "The team's latest fix-impact events and total delta_28d. Then get_site_fix_impact.",
        doors.team_fix_impact_text,
        lists=("events",),
    )


# In the order the doors list them (the tool list, the remote CLI's commands).
USE_CASES: Final = (GetSiteFixImpact, GetTeamFixImpact)
