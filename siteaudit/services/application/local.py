"""`LocalApplication`: the whole application interface in this process, the union of each role's module
over the ports `LocalPorts` holds (docs/architecture.md "Roles")."""

from collections.abc import Mapping, Sequence
from datetime import date

from siteaudit.domain.account import Caller
from siteaudit.domain.console import PageTotals
from siteaudit.domain.ids import SiteId
from siteaudit.services.application.admin import LocalAdmin
from siteaudit.services.application.callers import LocalCallerApi
from siteaudit.services.application.devices import LocalDeviceFlow
from siteaudit.services.application.jobs import LocalJobs
from siteaudit.services.application.keys import LocalPersonKeys
from siteaudit.services.application.payments import LocalPayments
from siteaudit.services.application.web import LocalWebSession
from siteaudit.services.console import read as console_read


class LocalApplication(
    LocalCallerApi, LocalDeviceFlow, LocalPayments, LocalJobs, LocalAdmin, LocalWebSession, LocalPersonKeys
):
    """`siteaudit.ports.application.Application` in this process, over the driven ports given."""

    __slots__ = ()

    # The whole interface's own method (no door calls it; embedders and tests read it here).

    def console_page_totals(
        self, site_id: SiteId, caller: Caller, urls: Sequence[str] | None, start: date, end: date
    ) -> Mapping[str, PageTotals]:
        return console_read.page_totals(site_id, caller.team_id, urls, start, end, self.console_deps)
