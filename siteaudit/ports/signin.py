"""What signing in to the app needs from the outside world: a password hasher and the stored sign-in state."""

from datetime import datetime
from typing import Protocol

from siteaudit.domain.ids import UserId
from siteaudit.domain.signin import AppSession, OneTimeLink


class PasswordHasher(Protocol):
    def hash(self, password: str) -> str:
        """A salted, slow hash of the password (argon2id), self-describing its parameters."""
        ...

    def verify(self, stored: str | None, password: str) -> bool:
        """Whether `password` matches `stored`. With `stored` None (no such person, or no password set)
        it still spends the time of one verification and answers False, so a wrong email and a wrong
        password take the same time."""
        ...


class SignInRepository(Protocol):
    """Passwords (as hashes), sessions (by the hash of their id) and one-time links (by their hash)."""

    def password_hash(self, user_id: UserId) -> str | None: ...

    def set_password_hash(self, user_id: UserId, password_hash: str, *, at: datetime) -> None:
        """Stage the person's new password hash (replacing any earlier one)."""
        ...

    def add_session(self, session: AppSession) -> None: ...

    def session(self, id_hash: str) -> AppSession | None: ...

    def save_session(self, session: AppSession) -> None:
        """Stage an update of a stored session (last seen, re-authentication, team being viewed)."""
        ...

    def delete_session(self, id_hash: str) -> None: ...

    def delete_sessions_of(self, user_id: UserId) -> None:
        """Every session of the person ends (password changed)."""
        ...

    def add_link(self, link: OneTimeLink) -> None: ...

    def use_link(self, token_hash: str, at: datetime) -> OneTimeLink | None:
        """Mark the link used, once, if it is still usable at `at`: one conditional step, so two racing
        uses cannot both succeed. The link as it was, or None when unknown, used or expired."""
        ...
