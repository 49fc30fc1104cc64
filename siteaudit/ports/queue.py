"""The work queue: how services hand work to workers."""

from typing import Protocol

from siteaudit.domain.ids import AuditId


class DispatchError(Exception):
    """The queue could not take the message (broker down, channel closed, ...)."""


class TaskQueue(Protocol):
    def crawl_slice(self, audit_id: AuditId) -> None:
        """Queue one crawl slice of the audit. Raises DispatchError when the message was not accepted."""
        ...

    def finalize_audit(self, audit_id: AuditId) -> None:
        """Queue the audit's finalisation. Raises DispatchError when the message was not accepted."""
        ...

    def deliver_webhooks(self) -> None:
        """Nudge the webhook dispatcher to look for due deliveries now. Raises DispatchError."""
        ...
