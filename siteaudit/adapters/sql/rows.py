"""Rows: the base of the SQL repositories, the one row a key names (or NotFound), a new row and its id, and
a domain value written as one row and read back from one."""

import enum
from collections.abc import Callable, Collection, Mapping
from datetime import date, datetime
from typing import Any, Final, TypeVar

import attrs
from attrs import AttrsInstance
from cattrs import Converter
from cattrs.gen import make_dict_structure_fn, override
from cattrs.gen._consts import AttributeOverride
from sqlalchemy import ColumnElement, Connection, Row, Table, insert, select
from sqlalchemy.exc import IntegrityError

from siteaudit.domain.error import NotFound


class SqlRepository:
    """A repository whose statements run on its unit of work's connection (`_c()`: opened when first used)."""

    def __init__(self, connection: Callable[[], Connection]) -> None:
        self._c = connection


def found(conn: Connection, table: Table, *where: ColumnElement[bool], entity: str, key: object) -> Row[Any]:
    """The row of `table` where every condition holds (they name a key: one row at most), or
    NotFound(entity, key)."""
    row = conn.execute(select(table).where(*where)).first()
    if row is None:
        raise NotFound(entity, key)
    return row


def inserted_id(
    conn: Connection, table: Table, values: dict[str, Any], *, id: int, taken: Exception | None = None
) -> Any:
    """Insert the row `values` under `id` (0: the database numbers it) and return its id. With `taken`, in
    a savepoint: a unique key already taken undoes the insert alone and raises `taken`."""
    if id != 0:
        values = {**values, "id": id}
    statement = insert(table).values(values).returning(table.c.id)
    if taken is None:
        return conn.execute(statement).scalar_one()
    try:
        with conn.begin_nested():
            return conn.execute(statement).scalar_one()
    except IntegrityError:
        raise taken from None


def row_values(value: AttrsInstance, *, leave_out: Collection[str] = (), **columns: Any) -> dict[str, Any]:
    """The row of `value`: each field a column of its own name (an enum as its value), but those left
    out; `columns` (a field converted, or stored under another name) replace or add to them. A column the
    table does not have is refused by SQLAlchemy when the row is written."""
    fields = attrs.asdict(value, recurse=False, filter=lambda field, _: field.name not in leave_out)
    return {name: v.value if isinstance(v, enum.Enum) else v for name, v in fields.items()} | columns


# The row converter (one per boundary): the column types already give the values their Python types, so
# it converts only what the column cannot say: enums, optional values and collections, by the field's type
# (an id's NewType is its base type).
_row_converter: Final = Converter(detailed_validation=False)
_AS_READ: Final = frozenset((str, int, float, bool, datetime, date))  # exactly these: not a StrEnum
_row_converter.register_structure_hook_func(lambda kind: kind in _AS_READ, lambda value, _: value)


def column(name: str | None = None, *, read: Callable[[Any], Any] | None = None) -> AttributeOverride:
    """How `reader` fills one field: from the column `name` (default: the field's name), by `read` of its
    value (default: by the field's type)."""
    return override(rename=name, struct_hook=None if read is None else lambda value, _: read(value))


T = TypeVar("T", bound=AttrsInstance)


def reader(cls: type[T], **fields: AttributeOverride) -> Callable[[Row[Any] | Mapping[Any, Any]], T]:
    """The reader of `cls` from a row (or a mapping, such as a JSON column's document): each field from the
    column (key) of its name by its type, but those `fields` say otherwise (`column`). Columns the class
    lacks are passed over; a field with a default may lack its column."""
    overrides: dict[str, Any] = fields  # (the function's own options share its keywords)
    structure = make_dict_structure_fn(cls, _row_converter, **overrides)

    def read(row: Row[Any] | Mapping[Any, Any]) -> T:
        mapping: Any = row._mapping if isinstance(row, Row) else row
        return structure(mapping, cls)

    return read
