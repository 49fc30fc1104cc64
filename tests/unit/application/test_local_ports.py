"""`LocalPorts._call`: a use case not declared yet gets its ports by name, as the registry binds a declared
one's handler; and every such call in `services/application/` names what no provider gives (mypy cannot
check the arguments `_call` fills in, so this does)."""

import ast
import collections.abc
import importlib
import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path

import pytest

from siteaudit.adapters.system import SystemClock
from siteaudit.domain.account import Caller
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.ports.clock import Clock
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.application import LocalApplication
from siteaudit.services.events import HANDLERS as EVENT_HANDLERS
from siteaudit.services.inject import keywords
from siteaudit.services.registry import HANDLERS
from tests.unit.tasks.shop import shop_app

APPLICATION = Path(__file__).resolve().parents[3] / "siteaudit" / "services" / "application"


@pytest.fixture(scope="module")
def application() -> LocalApplication:
    built = shop_app().application
    assert isinstance(built, LocalApplication)
    return built


def one_unit(asked: str, *, uow: UnitOfWork, clock: Clock) -> tuple[str, UnitOfWork, Clock]:
    return asked, uow, clock


def their_factory(*, uow: Callable[[], UnitOfWork]) -> Callable[[], UnitOfWork]:
    return uow


def a_term(*, clock: Clock, terms: int) -> int:
    return terms


def an_optional(*, hasher: str = "kept", notice: str = "default") -> tuple[str, str]:
    return hasher, notice


def test_the_ports_come_by_name_a_fresh_unit_of_work_or_its_factory_as_annotated(
    application: LocalApplication,
) -> None:
    asked, uow, clock = application._call(one_unit, "asked")
    assert (asked, clock) == ("asked", application.clock)
    assert type(uow) is type(application.uow()) and uow is not application.uow  # one unit, not the factory
    assert application._call(their_factory) is application.uow


def test_what_the_call_gives_wins_and_a_required_name_no_provider_gives_is_refused(
    application: LocalApplication,
) -> None:
    assert application._call(a_term, terms=7) == 7
    assert application._call(an_optional, hasher="given") == ("given", "default")
    with pytest.raises(TypeError, match="a_term needs 'terms', which no provider gives"):
        application._call(a_term)


def calls_in(path: Path) -> list[tuple[str, Callable[..., object], set[str]]]:
    """Each `self._call(module.function, ..., name=...)` of a module: where, the function, the names given."""
    tree = ast.parse(path.read_text())
    modules = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("siteaudit.services"):
            for alias in node.names:
                found = importlib.import_module(node.module)
                modules[alias.asname or alias.name] = getattr(
                    found, alias.name, None
                ) or importlib.import_module(f"{node.module}.{alias.name}")
    found_calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "self._call":
            target = node.args[0]
            assert isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            function = getattr(modules[target.value.id], target.attr)
            found_calls.append(
                (f"{path.name}:{node.lineno}", function, {k.arg for k in node.keywords if k.arg})
            )
    return found_calls


def test_every_call_gives_what_no_provider_gives(application: LocalApplication) -> None:
    calls = [call for path in sorted(APPLICATION.glob("*.py")) for call in calls_in(path)]
    assert len(calls) > 50  # the scan sees the role modules' calls
    missing = []
    for where, function, given in calls:
        for name, parameter in inspect.signature(function).parameters.items():
            if (
                parameter.kind is not inspect.Parameter.KEYWORD_ONLY
                or parameter.default is not parameter.empty
            ):
                continue
            if name not in given and name not in application.providers:
                missing.append(f"{where} {function.__qualname__} {name}")
    assert missing == []


def test_a_caller_is_not_a_port(application: LocalApplication) -> None:
    # The caller is an input: `_call` never fills a positional parameter.
    def scoped(caller: Caller, *, clock: Clock) -> Caller:
        return caller

    caller = Caller(UserId(1), TeamId(2))
    assert application._call(scoped, caller) is caller


# --- what mypy cannot check: the providers are `Callable[[], Any]` (services/inject.py) -------------------


def conforms(value: object, hint: object) -> bool:
    """Whether `value` is of the annotation `hint`, as far as a value can say: a union any of its members,
    a callable type any callable, a generic its origin, a protocol every member it declares."""
    origin = typing.get_origin(hint)
    if hint is typing.Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, member) for member in typing.get_args(hint))
    if origin is collections.abc.Callable:
        return callable(value)
    if origin is not None:
        return isinstance(value, origin)
    assert isinstance(hint, type), hint
    if getattr(hint, "_is_protocol", False):
        declared = set(getattr(hint, "__annotations__", {})) | {
            name for name, member in vars(hint).items() if callable(member) and not name.startswith("_")
        }
        return all(hasattr(value, name) for name in declared)
    return isinstance(value, hint)


def injected() -> list[tuple[Callable[..., object], set[str]]]:
    """Every service whose keyword-only parameters the provider table fills, with the names its caller
    gives instead: the declared use cases' handlers, the event handlers and the functions `_call` is given."""
    calls = [
        (function, given)
        for path in sorted(APPLICATION.glob("*.py"))
        for _, function, given in calls_in(path)
    ]
    events = [(subscription.handler, {"uow"}) for table in EVENT_HANDLERS.values() for subscription in table]
    return [*((handler, set()) for handler in HANDLERS.values()), *events, *calls]


def test_each_provider_gives_what_every_parameter_of_its_name_is_annotated_as(
    application: LocalApplication,
) -> None:
    wrong = []
    for service, given_by_caller in injected():
        hints = typing.get_type_hints(service, localns={"UnitOfWork": UnitOfWork})  # imported for typing only
        for name, provider, _ in keywords(service):
            if provider in application.providers and name not in given_by_caller:
                given = application.providers[provider]()
                if not conforms(given, hints[name]):
                    wrong.append(f"{service.__qualname__} {name}: {type(given).__name__}, not {hints[name]}")
    assert wrong == []


def test_a_provider_of_the_wrong_kind_is_seen() -> None:
    def wants_a_clock(*, clock: Clock, uow: Callable[[], UnitOfWork], batch: int | None) -> None: ...

    hints = typing.get_type_hints(wants_a_clock)
    assert conforms(SystemClock(), hints["clock"]) and conforms(None, hints["batch"])
    assert not conforms("a string", hints["clock"])
    assert not conforms(3.5, hints["batch"]) and not conforms(object(), hints["uow"])
