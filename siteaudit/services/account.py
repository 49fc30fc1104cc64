"""Account use cases: people, teams, plans and credits (what GET /account shows is `services/accounts/`)."""

from collections.abc import Callable, Mapping, Sequence

from attrs import evolve

from siteaudit.domain.account import (
    DEFAULT_PLANS,
    LOCAL_OWNER_EMAIL,
    LOCAL_TEAM,
    Caller,
    Membership,
    Plan,
    Role,
    Team,
    User,
    normalise_email,
)
from siteaudit.domain.error import DomainError, ErrorCode, TeamAccessRevoked
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.ports.application import IssuedKey, PersonView, TeamView
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.webhook import create_webhook_secret

UowFactory = Callable[[], UnitOfWork]


def create_user(
    email: str,
    *,
    plan: str = "free",
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    plans: Mapping[str, Plan] = DEFAULT_PLANS,
) -> User:
    """A person with their webhook signing secret (one per person, made with the account:
    docs/rest-api.md "The audit-ended webhook")."""
    if plan not in plans:
        raise DomainError(
            f"unknown plan {plan!r}; plans: {', '.join(plans)}", code=ErrorCode.VALIDATION_FAILED
        )
    with uow:
        user = uow.users.add(User(UserId(0), normalise_email(email), plan, clock.now()))
        create_webhook_secret(user.id, webhook_secrets=uow.webhook_secrets, secrets=secrets)
        uow.commit()
    return user


def create_team(name: str, *, owner_email: str, uow: UnitOfWork, clock: Clock) -> Team:
    cleaned = name.strip()
    if not 1 <= len(cleaned) <= 100:
        raise DomainError("a team name has 1-100 characters", code=ErrorCode.VALIDATION_FAILED)
    with uow:
        owner = uow.users.by_email(normalise_email(owner_email))
        team = uow.teams.add(Team(TeamId(0), cleaned, owner.id, clock.now()))
        uow.commit()
    return team


def _team_and_person(team_name: str, email: str, uow: UnitOfWork) -> tuple[Team, User]:
    """Inside the caller's transaction: the team by its name and the person by their address."""
    return uow.teams.by_name(team_name), uow.users.by_email(normalise_email(email))


def add_member(team_name: str, email: str, *, uow: UnitOfWork) -> Membership:
    with uow:
        team, user = _team_and_person(team_name, email, uow)
        membership = uow.teams.membership(team.id, user.id) or Membership(team.id, user.id, Role.MEMBER)
        uow.teams.add_member(membership)
        uow.commit()
    return membership


def remove_member(team_name: str, email: str, *, uow: UnitOfWork) -> None:
    with uow:
        team, user = _team_and_person(team_name, email, uow)
        if user.id == team.owner_id:
            raise DomainError("the owner cannot leave their own team", code=ErrorCode.CONFLICT)
        uow.teams.remove_member(team.id, user.id)
        uow.commit()


def set_plan(email: str, plan: str, *, uow: UnitOfWork, plans: Mapping[str, Plan] = DEFAULT_PLANS) -> User:
    if plan not in plans:
        raise DomainError(
            f"unknown plan {plan!r}; plans: {', '.join(plans)}", code=ErrorCode.VALIDATION_FAILED
        )
    with uow:
        user = uow.users.by_email(normalise_email(email))
        user = evolve(user, plan=plan)
        uow.users.save(user)
        uow.commit()
    return user


def grant_credits(email: str, tenths: int, *, key: str, uow: UnitOfWork, clock: Clock) -> int:
    """Add credits to a person's own balance; `key` makes a repeated grant a no-op. Returns the balance."""
    with uow:
        user = uow.users.by_email(normalise_email(email))
        uow.credits.grant(user.id, tenths, key=key, at=clock.now(), reference="grant")
        balance = uow.credits.balance(user.id)
        uow.commit()
    return balance


def check_membership(caller: Caller, *, uow: UnitOfWork) -> None:
    """Raises TeamAccessRevoked when the caller's holder is no longer in the key's team."""
    if caller.team_id and uow.teams.membership(caller.team_id, caller.user_id) is None:
        raise TeamAccessRevoked()


def ensure_local_owner(
    *, plan: str, starting_credits: int, uow: UnitOfWork, clock: Clock, secrets: Secrets
) -> IssuedKey | None:
    """On an empty database: a local owner with a team, a plan, starting credits and a Settings key.

    Returns the new key (shown once) or None when the database already has users.
    """
    from siteaudit.services.key import create_settings_key

    with uow:
        if uow.users.count() > 0:
            return None
    create_user(LOCAL_OWNER_EMAIL, plan=plan, uow=uow, clock=clock, secrets=secrets)
    create_team(LOCAL_TEAM, owner_email=LOCAL_OWNER_EMAIL, uow=uow, clock=clock)
    if starting_credits > 0:
        grant_credits(LOCAL_OWNER_EMAIL, starting_credits * 10, key="local-owner:start", uow=uow, clock=clock)
    return create_settings_key(LOCAL_OWNER_EMAIL, LOCAL_TEAM, uow=uow, clock=clock, secrets=secrets)


def list_users(*, uow: UnitOfWork) -> Sequence[PersonView]:
    with uow:
        return [
            PersonView(user, uow.credits.balance(user.id), [t.name for t in uow.teams.of_user(user.id)])
            for user in uow.users.all()
        ]


def list_teams(*, uow: UnitOfWork) -> Sequence[TeamView]:
    with uow:
        return [
            TeamView(
                team,
                uow.users.get(team.owner_id).email,
                uow.credits.balance(team.owner_id),
                len(uow.teams.members(team.id)),
            )
            for team in uow.teams.all()
        ]
