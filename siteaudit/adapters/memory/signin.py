"""The app's sign-in state in memory: passwords, sessions and one-time links over the store's tables."""

from datetime import datetime

from attrs import evolve

from siteaudit.adapters.memory.table import Table
from siteaudit.domain.ids import UserId
from siteaudit.domain.signin import AppSession, OneTimeLink


class MemorySignInRepository:
    def __init__(
        self,
        passwords: Table[UserId, str],
        sessions: Table[str, AppSession],
        links: Table[str, OneTimeLink],
    ) -> None:
        self._passwords = passwords
        self._sessions = sessions
        self._links = links

    def password_hash(self, user_id: UserId) -> str | None:
        return self._passwords.get(user_id)

    def set_password_hash(self, user_id: UserId, password_hash: str, *, at: datetime) -> None:
        self._passwords.put(user_id, password_hash)

    def add_session(self, session: AppSession) -> None:
        self._sessions.put(session.id_hash, session)

    def session(self, id_hash: str) -> AppSession | None:
        return self._sessions.get(id_hash)

    def save_session(self, session: AppSession) -> None:
        if self._sessions.get(session.id_hash) is not None:
            self._sessions.put(session.id_hash, session)

    def delete_session(self, id_hash: str) -> None:
        self._sessions.delete(id_hash)

    def delete_sessions_of(self, user_id: UserId) -> None:
        for session in list(self._sessions.find(lambda s: s.user_id == user_id)):
            self._sessions.delete(session.id_hash)

    def add_link(self, link: OneTimeLink) -> None:
        self._links.put(link.token_hash, link)

    def use_link(self, token_hash: str, at: datetime) -> OneTimeLink | None:
        link = self._links.get(token_hash)
        if link is None or not link.usable(at):
            return None
        self._links.put(token_hash, evolve(link, used_at=at))
        return link
