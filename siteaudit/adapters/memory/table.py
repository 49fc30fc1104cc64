"""A keyed table with a per-transaction overlay: reads see staged writes, commit applies them at once."""

import itertools
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar, cast

from attrs import evolve

from siteaudit.domain.error import NotFound

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_DELETED = object()


class Table(Generic[K, V]):
    """Committed rows live in `rows`; one unit of work at a time stages changes in `overlay`."""

    def __init__(self) -> None:
        self.rows: dict[K, V] = {}
        self.overlay: dict[K, object] = {}
        self._ids = itertools.count(1)
        self._staged_ids: list[int] = []

    def next_id(self) -> int:
        return next(self._ids)

    def add(self, value: V) -> V:
        """Stage `value` (an aggregate) under its id, a new one from `next_id` when it has none (0)."""
        added: Any = value
        if added.id == 0:
            added = evolve(added, id=self.next_id())
        self.put(added.id, added)
        return cast(V, added)

    def get(self, key: K) -> V | None:
        if key in self.overlay:
            value = self.overlay[key]
            return None if value is _DELETED else value  # type: ignore[return-value]
        return self.rows.get(key)

    def found(self, key: K, entity: str, shown: object = None) -> V:
        """The row at `key`, or NotFound naming `entity` and `shown` (the key itself by default)."""
        value = self.get(key)
        if value is None:
            raise NotFound(entity, key if shown is None else shown)
        return value

    def put(self, key: K, value: V) -> None:
        self.overlay[key] = value

    def delete(self, key: K) -> None:
        self.overlay[key] = _DELETED

    def values(self) -> Iterator[V]:
        for key, value in self.rows.items():
            if key not in self.overlay:
                yield value
        for staged in self.overlay.values():
            if staged is not _DELETED:
                yield cast(V, staged)

    def find(self, predicate: Callable[[V], bool]) -> Iterator[V]:
        return (v for v in self.values() if predicate(v))

    def first(self, predicate: Callable[[V], bool]) -> V | None:
        return next(self.find(predicate), None)

    def found_by(self, predicate: Callable[[V], bool], entity: str, shown: object) -> V:
        """The first row `predicate` holds for, or NotFound naming `entity` and `shown`."""
        value = self.first(predicate)
        if value is None:
            raise NotFound(entity, shown)
        return value

    def commit(self) -> None:
        for key, value in self.overlay.items():
            if value is _DELETED:
                self.rows.pop(key, None)
            else:
                self.rows[key] = value  # type: ignore[assignment]
        self.overlay.clear()

    def rollback(self) -> None:
        self.overlay.clear()
