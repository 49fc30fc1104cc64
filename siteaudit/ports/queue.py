"""The work queue: how services hand work to workers."""

from typing import Protocol

from siteaudit.domain.ids import AuditId, RecheckId


class DispatchError(Exception):
    """The queue could not take the message (broker down, channel closed, ...)."""


class TaskQueue(Protocol):
    def crawl_slice(self, audit_id: AuditId, *, verify_token: str | None = None) -> None:
        """Queue one crawl slice of the audit. Raises DispatchError when the message was not accepted.

        `verify_token` (the caller's firewall allow-list token) travels with the message only, sealed by
        the adapter where messages leave the process: it is never stored in the database or logged.
        """
        ...

    def finalize_audit(self, audit_id: AuditId) -> None:
        """Queue the audit's finalisation. Raises DispatchError when the message was not accepted."""
        ...

    def deliver_webhooks(self) -> None:
        """Nudge the webhook dispatcher to look for due deliveries now. Raises DispatchError."""
        ...

    # --- rechecks ---

    def recheck(self, recheck_id: RecheckId) -> None:
        """Queue the run of a recheck (on the crawl queue). Raises DispatchError when not accepted."""
        ...
