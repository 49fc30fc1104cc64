"""The application interface (the driving port): every use case a door may call, by noun and verb.

REST resources, CLI commands, Dramatiq actors, periodic jobs, and a Python app embedding siteaudit call
this and nothing else of the services. Each door turns its input into the typed request, makes one
call, and renders the typed result. `siteaudit.services.application.LocalApplication` implements it once
over the driven ports; `siteaudit.bootstrap.bootstrap(settings).application` builds it.

`Application` (`whole.py`) is the union of roles, a module each with the inputs and results it alone
uses: `CallerApi` and `RequestAdmission` (`callers.py`), `Exports` (`exports.py`), `DeviceFlow`
(`devices.py`), `Payments` (`payments.py`), `Jobs` (`jobs.py`), `Admin`, `LocalOwner` and `Operations`
(`admin.py`), `WebSession` (`web.py`), `PersonKeys` (`keys.py`, in both `Admin` and `WebSession`), and the
audits' values several roles and handlers share (`audits.py`). Each door is typed against the roles it
uses (docs/architecture.md "Roles"). This module only re-exports them, so a door imports every role and
value from `siteaudit.ports.application`.

Errors are `siteaudit.domain.error.DomainError`s carrying the error code that the REST interface answers
(docs/rest-api.md "Errors and limits"): NotFound, Conflict, InsufficientCredits, ...; each door maps them
its own way (an HTTP status, an exit code).
"""

from siteaudit.ports.application.admin import (
    Admin,
    ArchivePolicy,
    KeyHolder,
    LocalOwner,
    Operations,
    PersonView,
    TeamView,
)
from siteaudit.ports.application.audits import AuditDetail, AuditProgress, AuditQuery, AuditStarted, Listing
from siteaudit.ports.application.callers import Admission, CallerApi, RequestAdmission, run_declared
from siteaudit.ports.application.devices import DeviceCancel, DeviceFlow, DeviceGranted, DeviceLoginStarted
from siteaudit.ports.application.exports import ExportKind, ExportRow, Exports
from siteaudit.ports.application.jobs import (
    CrawlProgress,
    Jobs,
    ProofRechecks,
    Reaped,
    RecheckReaped,
    RecheckRun,
    ScheduledAudits,
)
from siteaudit.ports.application.keys import IssuedKey, PersonKeys
from siteaudit.ports.application.payments import LocalCheckout, LocalCheckoutDone, Payments
from siteaudit.ports.application.web import (
    AppViewer,
    BillingStatus,
    Invitation,
    MemberView,
    SignedIn,
    WebSession,
)
from siteaudit.ports.application.whole import Application

__all__ = [
    "Admin",
    "Admission",
    "AppViewer",
    "Application",
    "ArchivePolicy",
    "AuditDetail",
    "AuditProgress",
    "AuditQuery",
    "AuditStarted",
    "BillingStatus",
    "CallerApi",
    "CrawlProgress",
    "DeviceCancel",
    "DeviceFlow",
    "DeviceGranted",
    "DeviceLoginStarted",
    "ExportKind",
    "ExportRow",
    "Exports",
    "Invitation",
    "IssuedKey",
    "Jobs",
    "KeyHolder",
    "Listing",
    "LocalCheckout",
    "LocalCheckoutDone",
    "LocalOwner",
    "MemberView",
    "Operations",
    "Payments",
    "PersonKeys",
    "PersonView",
    "ProofRechecks",
    "Reaped",
    "RecheckReaped",
    "RecheckRun",
    "RequestAdmission",
    "ScheduledAudits",
    "SignedIn",
    "TeamView",
    "WebSession",
    "run_declared",
]
