"""Records built from other records: the fields two attrs classes name alike, copied once."""

import operator
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

Built = TypeVar("Built")


def copy_named(target: type[Built], source: Any, **instead: Any) -> Built:
    """`target` (an attrs class) built from the fields of `source` (an attrs instance: a declaration, a
    domain record) it names alike, and `instead` besides them or in their place; a field of `target` that
    `source` lacks takes its default. A handler passing its declaration on to a service, an answer shown
    from a domain record, or a record made of another (a recheck's task outcome of its target), so names
    no field twice."""
    names, read = _shared(target, type(source))
    values = dict(zip(names, read(source), strict=True))
    for name in instead:
        values.pop(name, None)
    return target(**values, **instead)


Reader = Callable[[Any], tuple[Any, ...]]
_SHARED: dict[tuple[type, type], tuple[tuple[str, ...], Reader]] = {}


def _shared(target: type, source: type) -> tuple[tuple[str, ...], Reader]:
    """The fields `target` and `source` name alike, and their values' reader, found once per pair: an
    answer built per row (an issue page's fifty) would otherwise walk both classes' fields each time."""
    found = _SHARED.get((target, source))
    if found is None:
        wanted = attrs.fields_dict(typing.cast(Any, target))
        names = tuple(f.name for f in attrs.fields(source) if f.name in wanted)
        if len(names) == 1:
            one = operator.attrgetter(names[0])
            read: Reader = lambda instance: (one(instance),)  # noqa: E731
        else:
            read = operator.attrgetter(*names) if names else (lambda instance: ())
        found = _SHARED[(target, source)] = (names, read)
    return found
