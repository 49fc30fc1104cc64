"""Reading the one row a key names, or NotFound."""

from typing import Any

from sqlalchemy import ColumnElement, Connection, Row, Table, select

from siteaudit.domain.error import NotFound


def found(conn: Connection, table: Table, *where: ColumnElement[bool], entity: str, key: object) -> Row[Any]:
    """The row of `table` where every condition holds (they name a key: one row at most), or
    NotFound(entity, key)."""
    row = conn.execute(select(table).where(*where)).first()
    if row is None:
        raise NotFound(entity, key)
    return row
