"""The callers' API in this process (`CallerApi`): the declared use cases run by the registry's handlers,
and the REST and MCP doors' own parts, a request's admission and an audit's export."""

from collections.abc import Iterator, Sequence

from siteaudit.domain.account import Caller
from siteaudit.domain.ids import AuditId
from siteaudit.ports.application import Admission, ExportKind, ExportRow
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.usecases import Declared, Result, UseCase
from siteaudit.services import key as key_services
from siteaudit.services import report as report_services
from siteaudit.services.application.base import LocalPorts
from siteaudit.services.registry import USE_CASES


class LocalCallerApi(LocalPorts):
    """The callers' API, `RequestAdmission` and `Exports`, over the application's ports."""

    __slots__ = ()

    def handle(self, use_case: UseCase[Result], caller: Caller) -> Result:
        return self.handlers.handle(use_case, caller)

    def use_cases(self) -> Sequence[Declared]:
        return USE_CASES

    def authenticate(self, raw_key: str) -> Caller:
        return self._call(key_services.authenticate, raw_key)

    def authenticate_and_hit(
        self, raw_key: str, *, bucket: str, limit: Limit, audit: AuditId | None = None
    ) -> Admission:
        return self._call(
            key_services.authenticate_and_hit,
            raw_key,
            bucket=bucket,
            limit=limit,
            gate=self.key_gate,
            audit=audit,
        )

    def handle_admitted(self, use_case: UseCase[Result], admission: Admission) -> Result:
        return self.handlers.handle(use_case, admission.caller, admitted=admission.audit)

    def export_rows(self, audit_id: AuditId, kind: ExportKind, caller: Caller) -> Iterator[ExportRow]:
        return self._call(report_services.export_rows, audit_id, kind, caller)
