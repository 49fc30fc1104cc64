"""The callers' API (`CallerApi`: what a key holder does, the declared use cases run through `handle`) and
the REST and MCP doors' own admission of a request (`RequestAdmission`)."""

from collections.abc import Sequence
from typing import Any, Protocol

from attrs import frozen

from siteaudit.domain.account import Caller
from siteaudit.domain.ids import AuditId
from siteaudit.ports.application.audits import AuditDetail
from siteaudit.ports.ratelimit import Limit, RateDecision
from siteaudit.ports.usecases import Declared, Result, UseCase


@frozen
class Admission:
    """A request's key let in: who it acts for, and the decision of the rate limit it was counted
    against (not allowed: the door answers 429 with the decision's Retry-After); and the audit asked for,
    when it was read with the key (PostgreSQL's key gate, for a request let in and counted, of the
    caller's team), else None: the handler reads it itself."""

    caller: Caller
    decision: RateDecision
    audit: AuditDetail | None = None


class CallerApi(Protocol):
    """The callers' API: what a key holder does, through REST, the tools (MCP over HTTP and stdio, the
    remote CLI), the typed HTTP client (`adapters/client`, which implements exactly this) and a Python
    program embedding siteaudit. Every call but `authenticate` acts for a caller and is scoped to its
    team; the declared use cases run through `handle`."""

    def authenticate(self, raw_key: str) -> Caller:
        """Who a bearer key acts for. Raises Unauthenticated (unknown, malformed, revoked or replaced
        key) or TeamAccessRevoked (its holder left the key's team)."""
        ...

    def handle(self, use_case: UseCase[Result], caller: Caller) -> Result:
        """Run a declared use case for the caller (`siteaudit.ports.usecases`): its handler's result, or
        the DomainError it raises. Every call is scoped to the caller's team (NotFound otherwise)."""
        ...

    def use_cases(self) -> Sequence[Declared]:
        """The declared use cases `handle` runs, in the order the doors list them."""
        ...


def run_declared(application: CallerApi, name: str, caller: Caller, **inputs: Any) -> Any:
    """The answer of the declared use case named `name` run with `inputs` for `caller`: how a door reaches
    a declaration at run time, never importing the services' modules (docs/architecture.md)."""
    declared = next(d for d in application.use_cases() if d.__name__ == name)
    return application.handle(declared(**inputs), caller)


class RequestAdmission(Protocol):
    """The REST and MCP doors themselves: a key let in and its request counted."""

    def authenticate_and_hit(
        self, raw_key: str, *, bucket: str, limit: Limit, audit: AuditId | None = None
    ) -> Admission:
        """`authenticate`, and one request of the key counted against the rate-limit `bucket` (shared by
        every process) only when the key is let in; on PostgreSQL both in one round trip, with the
        `audit` asked for (`Admission.audit`). Raises as `authenticate` does; a request over the limit is
        not counted and answers `decision.allowed` False."""
        ...

    def handle_admitted(self, use_case: UseCase[Result], admission: Admission) -> Result:
        """`CallerApi.handle` for the admission's caller, its handler given what the admission read with
        the key (`Admission.audit`) when it takes it (`admitted`, docs/architecture.md)."""
        ...
