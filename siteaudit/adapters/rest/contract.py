"""What the REST adapter needs from the application: the use cases, bound to their ports by bootstrap."""

from collections.abc import Sequence
from typing import Protocol

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditRequest
from siteaudit.domain.issue import Issue
from siteaudit.domain.report import Report
from siteaudit.ports.crawl import PageSummary


class AuditStartedView(Protocol):
    @property
    def audit(self) -> Audit: ...

    @property
    def estimated_credits(self) -> int: ...


class AccountJson(Protocol):
    def as_json(self) -> dict[str, object]: ...


class RestServices(Protocol):
    def authenticate(self, raw_key: str) -> Caller: ...

    def account(self, caller: Caller) -> AccountJson: ...

    def start_audit(self, request: AuditRequest, caller: Caller) -> AuditStartedView: ...

    def list_audits(
        self, caller: Caller, *, site_id: int | None, offset: int, limit: int
    ) -> tuple[Sequence[Audit], int]: ...

    def get_audit(self, audit_id: int, caller: Caller) -> Audit: ...

    def cancel_audit(self, audit_id: int, caller: Caller) -> Audit: ...

    def report(self, audit_id: int, caller: Caller) -> Report: ...

    def issues(
        self,
        audit_id: int,
        caller: Caller,
        *,
        check: str | None,
        severity: str | None,
        template: str | None,
        offset: int,
        limit: int,
    ) -> tuple[Sequence[Issue], int]: ...

    def pages(
        self, audit_id: int, caller: Caller, *, status_code: int | None, offset: int, limit: int
    ) -> tuple[Sequence[PageSummary], int]: ...
