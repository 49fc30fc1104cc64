"""Lifecycles as transition tables: one lookup decides every move, and the table is the documentation."""

import enum
from collections.abc import Iterable, Mapping
from typing import TypeVar

from siteaudit.domain.error import InvalidTransition

S = TypeVar("S", bound=enum.Enum)
M = TypeVar("M", bound=enum.Enum)


def next_state(moves: Mapping[tuple[S, M], S], state: S, move: M, *, entity: str) -> S:
    """The state `move` leads to from `state`. Raises InvalidTransition (409 conflict) when none."""
    try:
        return moves[(state, move)]
    except KeyError:
        raise InvalidTransition(entity, str(state.value), str(move.value)) from None


def ended_states(moves: Mapping[tuple[S, M], S], states: Iterable[S]) -> frozenset[S]:
    """States with no way out."""
    sources = {source for source, _ in moves}
    return frozenset(s for s in states if s not in sources)


def reachable(moves: Mapping[tuple[S, M], S], start: S) -> frozenset[S]:
    """Every state reachable from `start` through the table."""
    seen = {start}
    frontier = [start]
    while frontier:
        state = frontier.pop()
        for (source, _), target in moves.items():
            if source == state and target not in seen:
                seen.add(target)
                frontier.append(target)
    return frozenset(seen)
