"""The composition root: the one place that chooses adapters, from settings, and binds them to services."""

from collections.abc import Callable
from typing import Any

from attrs import define, field

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditRequest
from siteaudit.domain.ids import AuditId
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services import account as account_services
from siteaudit.services import audit as audit_services
from siteaudit.settings import Settings


@define
class Services:
    """The use cases with their ports bound: what entrypoints call."""

    app: "App"

    def start_audit(self, request: AuditRequest, caller: Caller) -> audit_services.AuditStarted:
        a = self.app
        return audit_services.start_audit(request, caller, uow=a.uow(), clock=a.clock, queue=a.queue)

    def cancel_audit(self, audit_id: AuditId, caller: Caller) -> Audit:
        return audit_services.cancel_audit(audit_id, caller, uow=self.app.uow(), clock=self.app.clock)

    def get_audit(self, audit_id: AuditId, caller: Caller) -> Audit:
        return audit_services.get_audit(audit_id, caller, uow=self.app.uow())

    def account(self, caller: Caller) -> account_services.AccountView:
        return account_services.account_view(caller, uow=self.app.uow(), clock=self.app.clock)


@define
class App:
    settings: Settings
    clock: Clock
    secrets: Secrets
    uow: Callable[[], UnitOfWork]
    queue: TaskQueue
    services: Services = field(init=False)

    def __attrs_post_init__(self) -> None:
        self.services = Services(self)


def _unit_of_work_factory(settings: Settings) -> Callable[[], UnitOfWork]:
    if settings.database_url.startswith("memory:"):
        from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork

        store = MemoryStore()
        return lambda: MemoryUnitOfWork(store)
    raise ValueError(f"unsupported SITEAUDIT_DATABASE_URL {settings.database_url!r}")


def bootstrap(settings: Settings | None = None, **overrides: Any) -> App:
    """Build the application. `overrides` replace any part by name: clock, secrets, uow, queue."""
    settings = settings or Settings.from_env()
    if "clock" not in overrides:
        from siteaudit.adapters.system import SystemClock

        overrides["clock"] = SystemClock()
    if "secrets" not in overrides:
        from siteaudit.adapters.system import SystemSecrets

        overrides["secrets"] = SystemSecrets()
    if "uow" not in overrides:
        overrides["uow"] = _unit_of_work_factory(settings)
    if "queue" not in overrides:
        from siteaudit.adapters.memory.queue import MemoryTaskQueue

        overrides["queue"] = MemoryTaskQueue()
    return App(settings=settings, **overrides)
