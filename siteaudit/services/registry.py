"""The one registry of declared use cases: each declaration (`siteaudit.ports.usecases.UseCase`) of every
feature package mapped to its handler, and the handlers' dependencies injected once by name.

A handler is a plain function `handler(use_case, caller, *, <ports by name>) -> result`. `bind` reads its
keyword parameters once and ties each to the provider of that name (`uow` a fresh unit of work per call,
`clock`, `crawl`, `queue`, ...); `Handlers.handle` then runs the handler of a use case's class.
"""

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from attrs import frozen

from siteaudit.domain.account import Caller
from siteaudit.ports.usecases import Declared, UseCase
from siteaudit.services.tasks import recheck, task
from siteaudit.services.tasks import usecases as tasks

R = TypeVar("R")

Handler = Callable[..., Any]

HANDLERS: Final[Mapping[Declared, Handler]] = {
    tasks.ListSiteTasks: task.list_site_tasks,
    tasks.ListTeamTasks: task.list_team_tasks,
    tasks.GetTask: task.get_task,
    tasks.RequestRecheck: recheck.request_recheck,
    tasks.GetRecheck: recheck.get_recheck,
    tasks.CancelRecheck: recheck.cancel_recheck,
}
# Every declared use case, in the order the doors list them.
USE_CASES: Final[tuple[Declared, ...]] = tasks.USE_CASES


@frozen
class Bound:
    handler: Handler
    providers: Mapping[str, Callable[[], Any]]

    def __call__(self, use_case: UseCase[Any], caller: Caller) -> Any:
        return self.handler(use_case, caller, **{name: make() for name, make in self.providers.items()})


def bind(handler: Handler, providers: Mapping[str, Callable[[], Any]]) -> Bound:
    """The handler with its keyword parameters tied to the providers of the same name; one without a
    provider keeps its default, and a required one without a provider is refused here, once."""
    wanted: dict[str, Callable[[], Any]] = {}
    for name, parameter in inspect.signature(handler).parameters.items():
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        if name in providers:
            wanted[name] = providers[name]
        elif parameter.default is inspect.Parameter.empty:
            raise TypeError(f"{handler.__qualname__} needs {name!r}, which no provider gives")
    return Bound(handler, wanted)


@frozen
class Handlers:
    """Every registered handler bound to one application's providers."""

    bound: Mapping[Declared, Bound]

    @classmethod
    def of(cls, providers: Mapping[str, Callable[[], Any]]) -> "Handlers":
        return cls({declared: bind(handler, providers) for declared, handler in HANDLERS.items()})

    def handle(self, use_case: UseCase[R], caller: Caller) -> R:
        found = self.bound.get(type(use_case))
        if found is None:
            raise LookupError(f"no handler for {type(use_case).__name__}")
        result: R = found(use_case, caller)
        return result
