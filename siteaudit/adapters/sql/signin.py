"""The app's sign-in state in SQL: password hashes, sessions and one-time links, each found by a hash."""

from datetime import datetime
from typing import Any, Final

from sqlalchemy import delete, insert, literal, select, update

from siteaudit.adapters.sql.rows import SqlRepository, reader, row_values
from siteaudit.adapters.sql.tables import UtcDateTime, app_links, app_passwords, app_sessions
from siteaudit.domain.ids import UserId
from siteaudit.domain.signin import AppSession, OneTimeLink

_session: Final = reader(AppSession)


_link: Final = reader(OneTimeLink)


class SqlSignInRepository(SqlRepository):
    def password_hash(self, user_id: UserId) -> str | None:
        found = self._c().execute(select(app_passwords.c.hash).where(app_passwords.c.user_id == user_id))
        return found.scalar_one_or_none()

    def set_password_hash(self, user_id: UserId, password_hash: str, *, at: datetime) -> None:
        conn = self._c()
        written = conn.execute(
            update(app_passwords)
            .where(app_passwords.c.user_id == user_id)
            .values(hash=password_hash, changed_at=at)
        )
        if written.rowcount == 0:
            conn.execute(insert(app_passwords).values(user_id=user_id, hash=password_hash, changed_at=at))

    def add_session(self, session: AppSession) -> None:
        self._c().execute(insert(app_sessions).values(**_session_values(session)))

    def session(self, id_hash: str) -> AppSession | None:
        row = self._c().execute(select(app_sessions).where(app_sessions.c.id_hash == id_hash)).first()
        return None if row is None else _session(row)

    def save_session(self, session: AppSession) -> None:
        values = _session_values(session)
        values.pop("id_hash")
        self._c().execute(
            update(app_sessions).where(app_sessions.c.id_hash == session.id_hash).values(values)
        )

    def delete_session(self, id_hash: str) -> None:
        self._c().execute(delete(app_sessions).where(app_sessions.c.id_hash == id_hash))

    def delete_sessions_of(self, user_id: UserId) -> None:
        self._c().execute(delete(app_sessions).where(app_sessions.c.user_id == user_id))

    def add_link(self, link: OneTimeLink) -> None:
        self._c().execute(
            insert(app_links).values(
                token_hash=link.token_hash,
                user_id=link.user_id,
                purpose=link.purpose.value,
                created_at=link.created_at,
                expires_at=link.expires_at,
                used_at=link.used_at,
            )
        )

    def use_link(self, token_hash: str, at: datetime) -> OneTimeLink | None:
        conn = self._c()
        row = conn.execute(select(app_links).where(app_links.c.token_hash == token_hash)).first()
        if row is None:
            return None
        used = conn.execute(
            update(app_links)
            .where(
                app_links.c.token_hash == token_hash,
                app_links.c.used_at.is_(None),
                app_links.c.expires_at > literal(at, UtcDateTime),
            )
            .values(used_at=at)
        )
        return _link(row) if used.rowcount == 1 else None


def _session_values(session: AppSession) -> dict[str, Any]:
    """The row of `session`: its columns are its fields, named and typed alike."""
    return row_values(session)
