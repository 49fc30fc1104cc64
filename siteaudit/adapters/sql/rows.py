"""Rows: the one row a key names (or NotFound), and a domain value written as one row."""

import enum
from collections.abc import Collection
from typing import Any

import attrs
from attrs import AttrsInstance
from sqlalchemy import ColumnElement, Connection, Row, Table, select

from siteaudit.domain.error import NotFound


def found(conn: Connection, table: Table, *where: ColumnElement[bool], entity: str, key: object) -> Row[Any]:
    """The row of `table` where every condition holds (they name a key: one row at most), or
    NotFound(entity, key)."""
    row = conn.execute(select(table).where(*where)).first()
    if row is None:
        raise NotFound(entity, key)
    return row


def row_values(value: AttrsInstance, *, leave_out: Collection[str] = (), **columns: Any) -> dict[str, Any]:
    """The row of `value`: each field a column of its own name (an enum as its value), but those left
    out; `columns` (a field converted, or stored under another name) replace or add to them. A column the
    table does not have is refused by SQLAlchemy when the row is written."""
    fields = attrs.asdict(value, recurse=False, filter=lambda field, _: field.name not in leave_out)
    return {name: v.value if isinstance(v, enum.Enum) else v for name, v in fields.items()} | columns
