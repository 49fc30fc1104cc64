"""Signing in to the app (docs/app.md): passwords, sessions and one-time links, as values and rules.

Decisions made here, so every adapter and door answers alike:

- A password has 12 to 1,024 characters (at least 12, docs/app.md; the ceiling keeps a hash from
  being a denial of service). Nothing else is demanded of it.
- A session is 256 random bits held by the browser; only their SHA-256 is stored. It ends when idle for
  `SignInTerms.idle` or `SignInTerms.lifetime` after sign-in, whichever comes first, at sign-out, and
  for every session of a person when their password changes.
- Revealing or rotating the webhook secret and creating or rotating a key need a password given within
  `SignInTerms.reauth` (the sign-in itself counts).
- One-time links (password reset, invitation) are 256 random bits, stored hashed, used once, and expire:
  a reset after an hour, an invitation after a week.
"""

import enum
import hashlib
from datetime import datetime, timedelta
from typing import Final, Self

from attrs import evolve, frozen

from siteaudit.domain.error import DomainError, ErrorCode, ValidationFailed
from siteaudit.domain.ids import TeamId, UserId

MIN_PASSWORD_LENGTH: Final = 12
MAX_PASSWORD_LENGTH: Final = 1024
SESSION_BYTES: Final = 32  # 256 bits
LINK_BYTES: Final = 32
# A page view records the session's use at most once a minute, so reading pages does not mean writing.
SEEN_EVERY: Final = timedelta(minutes=1)


class SignInRefused(DomainError):
    """A wrong email or password: one message for both, so nobody learns which addresses exist."""

    code = ErrorCode.UNAUTHENTICATED
    default_message = "the email or the password is wrong"


class SignUpClosed(DomainError):
    code = ErrorCode.ACCESS_DENIED
    default_message = "sign-up is by invitation only: ask a team owner to invite you"


class LinkInvalid(DomainError):
    code = ErrorCode.INVALID_GRANT
    default_message = "this link is unknown, used or expired: ask for a new one"


def check_password(password: str) -> str:
    """The password when it may be used. Raises ValidationFailed (field `password`) otherwise."""
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise ValidationFailed({"password": f"use {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters"})
    return password


def token_hash(token: str) -> str:
    """The stored form of a session id or one-time link token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@frozen
class SignInTerms:
    """How long sessions and links live, and whether anyone may sign up (SITEAUDIT_APP_* settings)."""

    open_sign_up: bool = False
    idle: timedelta = timedelta(hours=2)
    lifetime: timedelta = timedelta(days=7)
    reauth: timedelta = timedelta(minutes=5)
    reset_lifetime: timedelta = timedelta(hours=1)
    invite_lifetime: timedelta = timedelta(days=7)


@frozen(kw_only=True)
class AppSession:
    """One signed-in browser. `team_id` is the team being viewed (docs/app.md: it decides the team of new
    Settings keys only); `csrf` is the token every form of this session carries."""

    id_hash: str
    user_id: UserId
    team_id: TeamId | None
    csrf: str
    created_at: datetime
    last_seen_at: datetime
    authenticated_at: datetime

    def ended(self, now: datetime, terms: SignInTerms) -> bool:
        return now - self.last_seen_at >= terms.idle or now - self.created_at >= terms.lifetime

    def seen(self, now: datetime) -> Self:
        """The session used at `now`: the same object when its last use was recorded within SEEN_EVERY."""
        if now - self.last_seen_at < SEEN_EVERY:
            return self
        return evolve(self, last_seen_at=now)

    def recently_authenticated(self, now: datetime, terms: SignInTerms) -> bool:
        """Whether a secret may be shown or a key made now without asking for the password again."""
        return now - self.authenticated_at < terms.reauth

    def reauthenticated(self, now: datetime) -> Self:
        return evolve(self, authenticated_at=now, last_seen_at=max(now, self.last_seen_at))


class LinkPurpose(enum.StrEnum):
    RESET = "reset"  # forgot the password
    INVITE = "invite"  # a team owner invited a new person: they choose their first password


@frozen(kw_only=True)
class OneTimeLink:
    token_hash: str
    user_id: UserId
    purpose: LinkPurpose
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None

    def usable(self, now: datetime) -> bool:
        return self.used_at is None and now < self.expires_at

    @classmethod
    def issue(
        cls, *, token: str, user: UserId, purpose: LinkPurpose, now: datetime, terms: SignInTerms
    ) -> Self:
        lifetime = terms.invite_lifetime if purpose is LinkPurpose.INVITE else terms.reset_lifetime
        return cls(
            token_hash=token_hash(token),
            user_id=user,
            purpose=purpose,
            created_at=now,
            expires_at=now + lifetime,
        )
