"""A recheck request loads once, decides once in the domain and writes once: two transactions (one to
read the site, its tasks and the parent audit, one to store the recheck, reserve and move its tasks) and
one plan, whether it names a task or a list of URLs; a task that moved in between is refused."""

from collections.abc import Callable
from types import TracebackType
from typing import Any

import pytest
from attrs import evolve

from siteaudit.bootstrap import App
from siteaudit.domain.account import Caller
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import TaskKey, UserId
from siteaudit.domain.site import Site
from siteaudit.domain.task import TaskStatus
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.application import LocalApplication
from siteaudit.services.tasks import recheck as recheck_module
from siteaudit.services.tasks.usecases import ListSiteTasks, RequestRecheck
from tests.unit.application.test_application_doors import owner
from tests.unit.tasks.shop import PRODUCTS, Shop, audit, shop_app, verified_site


class CountedUnitOfWork:
    """The real unit of work, with each transaction it opens counted."""

    def __init__(self, inner: UnitOfWork, opened: list[str]) -> None:
        self.inner = inner
        self.opened = opened

    def __enter__(self) -> "CountedUnitOfWork":
        self.opened.append("transaction")
        self.inner.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.inner.__exit__(kind, error, tb)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def counted(
    shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> tuple[LocalApplication, App, Site, Caller, list[str]]:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    assert isinstance(app.application, LocalApplication)
    opened: list[str] = []
    real = app.application.uow

    def unit_of_work() -> UnitOfWork:
        return CountedUnitOfWork(real(), opened)  # type: ignore[return-value]  # the real one, counted

    planned = recheck_module.plan_recheck

    def plan(**arguments: Any) -> Any:
        opened.append("plan")
        return planned(**arguments)

    monkeypatch.setattr(recheck_module, "plan_recheck", plan)
    return evolve(app.application, uow=unit_of_work), app, site, caller, opened


def product_task(application: LocalApplication, site: Site, caller: Caller) -> str:
    listed = application.handle(ListSiteTasks(site.id, limit=100), caller)
    return next(t.id for t in listed.tasks if t.code == "meta_description_missing")


def test_a_task_recheck_reads_once_plans_once_and_writes_once(
    shop: Shop, counted: tuple[LocalApplication, App, Site, Caller, list[str]]
) -> None:
    application, _, site, caller, opened = counted
    key = product_task(application, site, caller)
    opened.clear()
    started = application.handle(RequestRecheck(site.id, task_key=key), caller)
    assert started.urls_total == len(PRODUCTS)
    assert opened == ["transaction", "plan", "transaction"]


def test_a_url_list_recheck_reads_once_plans_once_and_writes_once(
    shop: Shop, counted: tuple[LocalApplication, App, Site, Caller, list[str]]
) -> None:
    application, _, site, caller, opened = counted
    opened.clear()
    urls = tuple(shop.url(f"/products/{p}") for p in PRODUCTS[:2])
    started = application.handle(RequestRecheck(site.id, urls=urls), caller)
    assert started.urls_total == 2
    assert opened == ["transaction", "plan", "transaction"]


def test_a_task_that_moved_after_the_request_read_it_is_refused_and_nothing_is_reserved(
    shop: Shop,
    counted: tuple[LocalApplication, App, Site, Caller, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    application, app, site, caller, _ = counted
    key = product_task(application, site, caller)
    planned: Callable[..., Any] = recheck_module.plan_recheck

    def plan_then_someone_moves_the_task(**arguments: Any) -> Any:
        decided = planned(**arguments)
        with app.uow() as uow:  # another request, between the read and the write
            task = uow.tasks.get(site.id, TaskKey(key))
            uow.tasks.save(evolve(task, version=task.version + 1, pages=task.pages + 1))
            uow.commit()
        return decided

    monkeypatch.setattr(recheck_module, "plan_recheck", plan_then_someone_moves_the_task)
    with app.uow() as uow:
        balance = uow.credits.balance(UserId(caller.user_id))
    with pytest.raises(DomainError) as refused:
        application.handle(RequestRecheck(site.id, task_key=key), caller)
    assert refused.value.code is ErrorCode.CONFLICT
    with app.uow() as uow:
        assert uow.credits.balance(UserId(caller.user_id)) == balance
        assert uow.tasks.get(site.id, TaskKey(key)).status is TaskStatus.OPEN
        assert uow.rechecks.unfinished(limit=10) == []
