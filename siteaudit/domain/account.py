"""People and teams: users, teams, memberships and plans (docs/rest-api.md "Plans")."""

import enum
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Final

from attrs import frozen

from siteaudit.domain.error import DomainError, ErrorCode, NotFound
from siteaudit.domain.ids import TeamId, UserId


class Role(enum.StrEnum):
    OWNER = "owner"
    MEMBER = "member"


@frozen
class Plan:
    """What an account may do. Plans are data: operators add their own."""

    name: str
    max_pages_per_audit: int
    max_sites: int
    monitoring: bool


DEFAULT_PLANS: Final[Mapping[str, Plan]] = MappingProxyType(
    {
        "free": Plan("free", max_pages_per_audit=500, max_sites=1, monitoring=False),
        "starter": Plan("starter", max_pages_per_audit=10_000, max_sites=5, monitoring=True),
        "growth": Plan("growth", max_pages_per_audit=100_000, max_sites=25, monitoring=True),
        "scale": Plan("scale", max_pages_per_audit=500_000, max_sites=200, monitoring=True),
    }
)


# The owner and team the first `siteaudit serve` creates on an empty database.
LOCAL_OWNER_EMAIL: Final = "owner@localhost.localdomain"
LOCAL_TEAM: Final = "Local"


def plan_named(name: str, plans: Mapping[str, Plan] = DEFAULT_PLANS) -> Plan:
    try:
        return plans[name]
    except KeyError:
        raise NotFound("plan", name) from None


@frozen
class User:
    id: UserId
    email: str
    plan: str
    created_at: datetime
    name: str = ""


@frozen
class Team:
    id: TeamId
    name: str
    owner_id: UserId
    created_at: datetime


@frozen
class Membership:
    team_id: TeamId
    user_id: UserId
    role: Role


class NotTeamOwner(DomainError):
    code = ErrorCode.NOT_TEAM_OWNER
    default_message = "only the team owner may do this"


def normalise_email(email: str) -> str:
    """Emails compare case-insensitively; refuses what is plainly not an address."""
    cleaned = email.strip().lower()
    local, _, domain = cleaned.partition("@")
    if not local or "." not in domain or " " in cleaned or len(cleaned) > 254:
        raise DomainError(f"{email!r} is not an email address", code=ErrorCode.VALIDATION_FAILED)
    return cleaned


@frozen
class Caller:
    """Who is calling: the key's holder, the one team the key acts for, and the key's prefix."""

    user_id: UserId
    team_id: TeamId
    key_prefix: str = ""
