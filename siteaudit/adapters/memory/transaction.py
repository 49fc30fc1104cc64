"""What both memory units of work share with the SQL one (docs/architecture.md, "Adding a use case"):
repositories, `commit` and `rollback` work only inside `with uow:`, and one instance is not entered twice.

Outside the block they raise the SQL unit of work's RuntimeError, so a use case that reads after its
block closed fails on the memory adapters too, not only on SQLite and PostgreSQL.
"""

import functools
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar, cast

from siteaudit.adapters.memory.table import Table

R = TypeVar("R")

OUTSIDE = "use the unit of work inside `with uow:`"  # the words of SqlUnitOfWork
IN_USE = "this unit of work is already in use"


class _Guarded:
    """A repository whose every method first checks that its unit of work is inside `with`."""

    __slots__ = ("_inner", "_require")

    def __init__(self, inner: object, require: Callable[[], None]) -> None:
        self._inner = inner
        self._require = require

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value):
            self._require()
            return value
        require = self._require

        @functools.wraps(value)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            require()
            return value(*args, **kwargs)

        return guarded


class MemoryTransaction(ABC):
    """`with uow: ...; uow.commit()` over in-memory tables: holds `lock` from enter to exit (one writer),
    stages changes in the tables' overlays, and rolls back what was not committed at exit."""

    def __init__(self, lock: "threading.RLock") -> None:
        self._lock = lock
        self._in_use = False

    @abstractmethod
    def _tables(self) -> Sequence[Table]:  # type: ignore[type-arg]
        """The tables this unit of work stages changes in."""

    def _guard(self, repository: R) -> R:
        """`repository`, refusing use outside `with` as the SQL repositories do."""
        return cast(R, _Guarded(repository, self._require))

    def _require(self) -> None:
        if not self._in_use:
            raise RuntimeError(OUTSIDE)

    def __enter__(self) -> Self:
        if self._in_use:
            raise RuntimeError(IN_USE)
        self._lock.acquire()
        self._in_use = True
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self._in_use:
            return
        try:
            self.rollback()
        finally:
            self._in_use = False
            self._lock.release()

    def commit(self) -> None:
        self._require()
        for table in self._tables():
            table.commit()

    def rollback(self) -> None:
        self._require()
        for table in self._tables():
            table.rollback()
