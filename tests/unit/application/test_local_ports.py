"""`LocalPorts._call`: a use case not declared yet gets its ports by name, as the registry binds a declared
one's handler; and every such call in `services/application/` names what no provider gives (mypy cannot
check the arguments `_call` fills in, so this does)."""

import ast
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from siteaudit.domain.account import Caller
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.ports.clock import Clock
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.application import LocalApplication
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
