"""`LocalApplication`: the whole application interface in this process, the union of each role's module
over the ports `LocalPorts` holds (docs/architecture.md "Roles")."""

from siteaudit.services.application.admin import LocalAdmin
from siteaudit.services.application.callers import LocalCallerApi
from siteaudit.services.application.devices import LocalDeviceFlow
from siteaudit.services.application.jobs import LocalJobs
from siteaudit.services.application.keys import LocalPersonKeys
from siteaudit.services.application.payments import LocalPayments
from siteaudit.services.application.web import LocalWebSession


class LocalApplication(
    LocalCallerApi, LocalDeviceFlow, LocalPayments, LocalJobs, LocalAdmin, LocalWebSession, LocalPersonKeys
):
    """`siteaudit.ports.application.Application` in this process, over the driven ports given."""

    __slots__ = ()
