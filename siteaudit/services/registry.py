"""The one registry of declared use cases: each declaration (`siteaudit.ports.usecases.UseCase`) of every
feature package mapped to its handler, and the handlers' dependencies injected once by name.

A handler is a plain function `handler(use_case, caller, *, <ports by name>) -> result` in one of a
feature package's handler modules (`HANDLER_MODULES`); the type of its first parameter says which use
case it handles, so a new use case needs no line here. `Handlers.of` binds each handler's keyword parameters once to the providers
of their names (`services/inject.py`: `uow` a fresh unit of work per call, `clock`, `crawl`, `queue`,
`console`, ...); `Handlers.handle` then runs the handler of a use case's class.
"""

import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any, Final, TypeVar

from attrs import frozen

from siteaudit.domain.account import Caller
from siteaudit.ports.usecases import Declared, UseCase
from siteaudit.services.access import access
from siteaudit.services.access import usecases as site_access
from siteaudit.services.accounts import account
from siteaudit.services.accounts import usecases as accounts
from siteaudit.services.audits import audit
from siteaudit.services.audits import usecases as audits
from siteaudit.services.billing import billing
from siteaudit.services.billing import usecases as billing_links
from siteaudit.services.console import read as console_read
from siteaudit.services.console import usecases as console
from siteaudit.services.impact import impact
from siteaudit.services.impact import usecases as fix_impact
from siteaudit.services.indexnow import indexnow
from siteaudit.services.indexnow import usecases as index_now
from siteaudit.services.inject import Bound, Providers, bind
from siteaudit.services.sites import site
from siteaudit.services.sites import usecases as sites
from siteaudit.services.tasks import recheck, task
from siteaudit.services.tasks import usecases as tasks

R = TypeVar("R")

Handler = Callable[..., Any]

# The modules holding handlers, per feature package; and every declared use case, in the order the doors
# list them.
HANDLER_MODULES: Final[tuple[ModuleType, ...]] = (
    account,
    audit,
    site,
    task,
    recheck,
    impact,
    console_read,
    indexnow,
    billing,
    access,
)
USE_CASES: Final[tuple[Declared, ...]] = (
    *accounts.USE_CASES,
    *audits.USE_CASES,
    *sites.USE_CASES,
    *tasks.USE_CASES,
    *fix_impact.USE_CASES,
    *console.USE_CASES,
    *index_now.USE_CASES,
    *billing_links.USE_CASES,
    *site_access.USE_CASES,
)


def handlers_in(modules: Iterable[ModuleType]) -> dict[Declared, Handler]:
    """Each use case mapped to the public function of `modules` whose first parameter is of its type
    (private helpers taking it are not handlers). Raises TypeError for a use case with two handlers."""
    found: dict[Declared, Handler] = {}
    for module in modules:
        for function in vars(module).values():
            if not inspect.isfunction(function) or function.__module__ != module.__name__:
                continue
            if function.__name__.startswith("_"):
                continue
            parameters = list(inspect.signature(function).parameters)
            if not parameters:
                continue
            handled = typing.get_type_hints(function).get(parameters[0])
            if not (isinstance(handled, type) and issubclass(handled, UseCase)):
                continue
            if handled in found:
                twice = f"{found[handled].__qualname__} and {function.__qualname__}"
                raise TypeError(f"{handled.__name__} has two handlers: {twice}")
            found[handled] = function
    return found


HANDLERS: Final[Mapping[Declared, Handler]] = handlers_in(HANDLER_MODULES)
# What a door gives a handler taking it: `admitted`, the audit its admission read with the key (`GetAudit`'s,
# whose `Http` says `audit_with_key`), else the handler reads it itself.
GIVEN: Final = ("admitted",)


@frozen
class Handlers:
    """Every registered handler bound to one application's providers."""

    bound: Mapping[Declared, Bound[Any]]

    @classmethod
    def of(cls, providers: Providers) -> "Handlers":
        bound = {declared: bind(handler, providers, given=GIVEN) for declared, handler in HANDLERS.items()}
        return cls(bound)

    def handle(self, use_case: UseCase[R], caller: Caller, *, admitted: object = None) -> R:
        """The result of the use case's handler; `admitted` (what the door's admission read with the key)
        given to a handler taking it, when there is one."""
        found = self.bound.get(type(use_case))
        if found is None:
            raise LookupError(f"no handler for {type(use_case).__name__}")
        if admitted is not None and found.given:
            result: R = found(use_case, caller, admitted=admitted)
        else:
            result = found(use_case, caller)
        return result
