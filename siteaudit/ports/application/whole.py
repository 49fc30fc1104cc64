"""The whole application interface (`Application`), the union of every role, which `LocalApplication`
implements; only the composition root and what builds an application hold it (docs/architecture.md
"Roles")."""

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Protocol

from siteaudit.domain.account import Caller
from siteaudit.domain.console import PageTotals
from siteaudit.domain.ids import SiteId
from siteaudit.ports.application.admin import Admin, Operations
from siteaudit.ports.application.callers import CallerApi, RequestAdmission
from siteaudit.ports.application.devices import DeviceFlow
from siteaudit.ports.application.exports import Exports
from siteaudit.ports.application.jobs import Jobs
from siteaudit.ports.application.payments import Payments
from siteaudit.ports.application.web import WebSession


class Application(
    CallerApi, RequestAdmission, Exports, DeviceFlow, Payments, Jobs, Admin, WebSession, Operations, Protocol
):
    """The whole application interface, which `LocalApplication` implements: the callers' API and every role
    beyond it. Doors are typed against the roles they use (docs/architecture.md "Roles"); only the
    composition root holds the whole."""

    # No door calls it: fix impact reads the same inside the service; embedders and tests read it here.

    def console_page_totals(
        self, site_id: SiteId, caller: Caller, urls: Sequence[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        """Clicks and impressions (and impression-weighted position) per URL of the caller's site, summed
        over `start` to `end` inclusive from the figures the daily sync stored (one row per page and
        day). `urls` None: every URL with figures. A URL without stored figures is left out: no data,
        not zero. For fix impact and task traffic; services read the same through
        `uow.console.page_totals(site_id, urls, start, end)`. Raises NotFound for another team's site."""
        ...
