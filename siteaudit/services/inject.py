"""Dependencies injected once, by name (docs/architecture.md "Feature packages and declared use cases"):
the one way a declared use case's handler (`services/registry.py`), a use case not declared yet
(`LocalPorts._call`) and an event handler (`services/events.py`) get their ports.

A service states what it needs once, as keyword-only parameters; `bind` ties each to the provider of the
same name in one table, and the bound service calls the providers at each call (`uow` a fresh unit of work
each time). A `uow` annotated as the factory of units of work (`Callable[[], UnitOfWork]`) gets the
provider `uows`, the factory itself. A parameter no provider gives keeps its default; a required one is
refused when bound, once, unless the caller says it gives it at each call (`given`).

What the type checker gives up: the providers are `Callable[[], Any]`, so mypy checks neither that a
service's parameter and the provider of its name agree in type nor that one exists; the tests
`tests/unit/application/test_local_ports.py` (every provider's value against every annotation of its
name) and `test_use_cases.py` (every handler bound to the application's table) check both.
"""

import inspect
from collections.abc import Callable, Collection, Mapping
from functools import cache
from typing import Any, Final, Generic, TypeVar

from attrs import frozen

T = TypeVar("T")

Providers = Mapping[str, Callable[[], Any]]

FACTORY: Final[Mapping[str, str]] = {
    "uow": "uows"
}  # a parameter annotated as a factory: the provider it gets


class Unprovided(TypeError):
    """A service needs what no provider gives and the caller does not give either."""

    def __init__(self, service: Callable[..., object], names: tuple[str, ...]) -> None:
        super().__init__(
            f"{service.__qualname__} needs {', '.join(map(repr, names))}, which no provider gives"
        )
        self.names = names


def provided(ports: Mapping[str, object]) -> Providers:
    """Ports already made, each as the provider that gives it."""
    return {name: _giving(port) for name, port in ports.items()}


def _giving(port: object) -> Callable[[], object]:
    return lambda: port


@cache
def keywords(service: Callable[..., object]) -> tuple[tuple[str, str, bool], ...]:
    """Each keyword-only parameter of `service`: its name, the provider's name, and whether it is required."""
    found = []
    for name, parameter in inspect.signature(service).parameters.items():
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        factory = name in FACTORY and "Callable" in str(parameter.annotation)
        found.append((name, FACTORY[name] if factory else name, parameter.default is parameter.empty))
    return tuple(found)


@frozen
class Bound(Generic[T]):
    """A service with its keyword-only parameters tied to providers; what the call gives wins."""

    service: Callable[..., T]
    providers: Mapping[str, Callable[[], Any]]  # each parameter a provider gives, to that provider
    given: frozenset[str]  # the names of `bind`'s `given` the service takes: the caller gives them

    def __call__(self, *args: Any, **given: Any) -> T:
        made = {name: make() for name, make in self.providers.items() if name not in given}
        return self.service(*args, **made, **given)


def bind(service: Callable[..., T], providers: Providers, *, given: Collection[str] = ()) -> Bound[T]:
    """`service` with each keyword-only parameter tied to the provider of its name. Raises Unprovided
    naming the required parameters that neither a provider nor the caller (`given`) gives."""
    wanted: dict[str, Callable[[], Any]] = {}
    missing: list[str] = []
    for name, provider, required in keywords(service):
        if provider in providers:
            wanted[name] = providers[provider]
        elif required and name not in given:
            missing.append(name)
    if missing:
        raise Unprovided(service, tuple(missing))
    return Bound(service, wanted, frozenset(n for n, _, _ in keywords(service) if n in given))


def call(service: Callable[..., T], providers: Providers, /, *args: Any, **given: Any) -> T:
    """`service(*args, **given)`, each keyword-only parameter `given` lacks filled from `providers`."""
    return bind(service, providers, given=given)(*args, **given)
