"""Team members in the app: list them, invite by mail, remove (their keys then answer 403)."""

from collections.abc import Sequence

from siteaudit.domain.account import Caller, Membership, NotTeamOwner, Role, Team, User, normalise_email
from siteaudit.domain.error import Conflict, NotFound
from siteaudit.domain.ids import UserId
from siteaudit.domain.signin import LinkPurpose
from siteaudit.ports.application import Invitation, MemberView
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.mailer import Mailer
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.signin import OneTimeLinks
from siteaudit.services.webhook import create_webhook_secret


def _owned_team(caller: Caller, uow: UnitOfWork) -> Team:
    if uow.teams.membership(caller.team_id, caller.user_id) is None:
        raise NotFound("team", caller.team_id)
    team = uow.teams.get(caller.team_id)
    if team.owner_id != caller.user_id:
        raise NotTeamOwner()
    return team


def team_members(caller: Caller, *, uow: UnitOfWork) -> Sequence[MemberView]:
    """The caller's team's members, owner first. Raises NotFound when the caller is not in it."""
    with uow:
        if uow.teams.membership(caller.team_id, caller.user_id) is None:
            raise NotFound("team", caller.team_id)
        members = [
            (uow.users.get(m.user_id), m.role, uow.signins.password_hash(m.user_id) is None)
            for m in uow.teams.members(caller.team_id)
        ]
    members.sort(key=lambda member: (member[1] is not Role.OWNER, member[0].email))
    return [MemberView(user, role, pending) for user, role, pending in members]


def invite_member(
    caller: Caller,
    email: str,
    *,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    links: OneTimeLinks,
    mailer: Mailer,
    public_url: str,
) -> Invitation:
    """The owner adds a person by email: someone new gets an account (free plan) and a one-time link to
    choose their password; someone known is told they were added. Without a mail server nothing is
    delivered: the link comes back for the owner to hand over. Raises NotTeamOwner."""
    address = normalise_email(email)
    link = ""
    with uow:
        team = _owned_team(caller, uow)
        try:
            user = uow.users.by_email(address)
        except NotFound:
            user = uow.users.add(User(UserId(0), address, "free", clock.now()))
            create_webhook_secret(user.id, webhook_secrets=uow.webhook_secrets, secrets=secrets)
            link = links.issue(user.id, LinkPurpose.INVITE, uow=uow)
        membership = uow.teams.membership(team.id, user.id) or Membership(team.id, user.id, Role.MEMBER)
        uow.teams.add_member(membership)
        inviter = uow.users.get(caller.user_id)
        uow.commit()
    where = f"{public_url.rstrip('/')}/app/"
    text = f"{inviter.email} added you to the team {team.name} on siteaudit.\n\n"
    if link:
        text += f"Choose your password within a week with this link (it works once):\n{link}\n"
    else:
        text += f"Sign in at {where} and pick the team in the team menu.\n"
    mailer.send(to=address, subject=f"You were added to {team.name} on siteaudit", text=text)
    if mailer.delivers:
        return Invitation(membership, mailed=True)
    return Invitation(membership, mailed=False, link=link or None)


def remove_team_member(caller: Caller, user: UserId, *, uow: UnitOfWork) -> None:
    """The owner removes a member: their keys for the team answer TeamAccessRevoked from now on (they
    stay active). Raises NotTeamOwner, Conflict for the owner themselves, NotFound for a non-member."""
    with uow:
        team = _owned_team(caller, uow)
        if user == team.owner_id:
            raise Conflict("the owner cannot leave their own team")
        if uow.teams.membership(team.id, user) is None:
            raise NotFound("team member", user)
        uow.teams.remove_member(team.id, user)
        uow.commit()
