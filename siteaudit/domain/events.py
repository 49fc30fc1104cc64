"""The events an audit's end raises, beside `siteaudit.domain.audit.AuditEnded`: frozen values that
`services/events.py` hands to their handlers (docs/architecture.md "Events")."""

from collections.abc import Container, Mapping

from attrs import frozen

from siteaudit.domain.audit import Audit, AuditEnded
from siteaudit.domain.ids import AuditId
from siteaudit.domain.task import TaskIssues, Traffic


@frozen(eq=False)
class FindingsPublished:
    """Event: finalisation published a done audit's report, and these are its findings for the site's fix
    tasks (what the tasks need of its issues, gathered as they streamed by), the URLs it crawled, and the
    search-console figures of those URLs read before the ending transaction (None: the site has none).
    Raised with the audit's `AuditEnded`, inside the same transaction, by that finalisation only: the
    findings are not kept anywhere else."""

    audit: Audit  # as it ended
    findings: TaskIssues
    crawled: Container[str]
    traffic: Mapping[str, Traffic] | None = None


@frozen
class CreditsCharged:
    """Event: an ended audit's reservation was settled now, charging `tenths` (the rest refunded)."""

    audit_id: AuditId
    tenths: int


Event = AuditEnded | FindingsPublished | CreditsCharged
