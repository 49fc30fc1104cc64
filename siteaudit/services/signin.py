"""Signing in to the app (docs/app.md): sign-in, sign-up, sessions, re-authentication, password resets."""

from attrs import evolve, field, frozen

from siteaudit.domain.account import Team, User, normalise_email
from siteaudit.domain.error import DomainError, NotFound, Unauthenticated
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.domain.signin import (
    LINK_BYTES,
    SESSION_BYTES,
    AppSession,
    LinkInvalid,
    LinkPurpose,
    OneTimeLink,
    SignInRefused,
    SignInTerms,
    SignUpClosed,
    check_password,
    token_hash,
)
from siteaudit.ports.application import AppViewer, SignedIn
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.mailer import Mailer
from siteaudit.ports.repository import UnitOfWork
from siteaudit.ports.signin import PasswordHasher
from siteaudit.services.webhook import create_webhook_secret

PASSWORD_PAGE = "/app/password"  # where a one-time link leads: choose a password


def _address(email: str) -> str | None:
    try:
        return normalise_email(email)
    except DomainError:
        return None


def _open_session(user: User, *, uow: UnitOfWork, clock: Clock, secrets: Secrets) -> SignedIn:
    """Inside the caller's transaction: a fresh session (a new id at every sign-in), viewing the
    person's first team."""
    token = secrets.token_hex(SESSION_BYTES)
    now = clock.now()
    teams = uow.teams.of_user(user.id)
    session = AppSession(
        id_hash=token_hash(token),
        user_id=user.id,
        team_id=teams[0].id if teams else None,
        csrf=secrets.token_hex(32),
        created_at=now,
        last_seen_at=now,
        authenticated_at=now,
    )
    uow.signins.add_session(session)
    return SignedIn(token, session)


def sign_in(
    email: str, password: str, *, uow: UnitOfWork, clock: Clock, secrets: Secrets, hasher: PasswordHasher
) -> SignedIn:
    """A new session for the right email and password. Raises SignInRefused for anything else, after
    the same work (one hash verification) whether or not the email is known."""
    address = _address(email)
    with uow:
        user: User | None = None
        if address is not None:
            try:
                user = uow.users.by_email(address)
            except NotFound:
                user = None
        stored = uow.signins.password_hash(user.id) if user is not None else None
        if not hasher.verify(stored, password) or user is None:
            raise SignInRefused()
        signed = _open_session(user, uow=uow, clock=clock, secrets=secrets)
        uow.commit()
    return signed


def sign_up(
    email: str,
    password: str,
    *,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    hasher: PasswordHasher,
    sign_in_terms: SignInTerms,
) -> SignedIn:
    """When sign-up is open: a person on the free plan with their own team (named after their email),
    their webhook secret and a session. Raises SignUpClosed, ValidationFailed or Conflict (email taken)."""
    if not sign_in_terms.open_sign_up:
        raise SignUpClosed()
    address = normalise_email(email)
    hashed = hasher.hash(check_password(password))
    now = clock.now()
    with uow:
        user = uow.users.add(User(UserId(0), address, "free", now))
        create_webhook_secret(user.id, webhook_secrets=uow.webhook_secrets, secrets=secrets)
        uow.teams.add(Team(TeamId(0), address, user.id, now))
        uow.signins.set_password_hash(user.id, hashed, at=now)
        signed = _open_session(user, uow=uow, clock=clock, secrets=secrets)
        uow.commit()
    return signed


def _live_session(token: str, uow: UnitOfWork, clock: Clock, terms: SignInTerms) -> AppSession:
    session = uow.signins.session(token_hash(token)) if token else None
    if session is None:
        raise Unauthenticated()
    if session.ended(clock.now(), terms):
        uow.signins.delete_session(session.id_hash)
        uow.commit()
        raise Unauthenticated()
    return session


def viewer(token: str, *, uow: UnitOfWork, clock: Clock, sign_in_terms: SignInTerms) -> AppViewer:
    """Who the session is, its teams and the team being viewed (the first team when the one viewed is
    no longer theirs). Raises Unauthenticated for an unknown or ended session."""
    with uow:
        session = _live_session(token, uow, clock, sign_in_terms)
        user = uow.users.get(session.user_id)
        teams = list(uow.teams.of_user(user.id))
        team = next((t for t in teams if t.id == session.team_id), teams[0] if teams else None)
        used = session.seen(clock.now())
        if team is not None and team.id != used.team_id:
            used = evolve(used, team_id=team.id)
        if used is not session:
            uow.signins.save_session(used)
            uow.commit()
        session = used
    fresh = session.recently_authenticated(clock.now(), sign_in_terms)
    return AppViewer(session=session, user=user, teams=teams, team=team, fresh=fresh)


def sign_out(token: str, *, uow: UnitOfWork) -> None:
    with uow:
        uow.signins.delete_session(token_hash(token))
        uow.commit()


def confirm_password(
    token: str,
    password: str,
    *,
    uow: UnitOfWork,
    clock: Clock,
    hasher: PasswordHasher,
    sign_in_terms: SignInTerms,
) -> AppSession:
    """The password given again: the session may reveal secrets and make keys for `sign_in_terms.reauth`.
    Raises SignInRefused for a wrong password, Unauthenticated for an ended session."""
    with uow:
        session = _live_session(token, uow, clock, sign_in_terms)
        if not hasher.verify(uow.signins.password_hash(session.user_id), password):
            raise SignInRefused()
        session = session.reauthenticated(clock.now())
        uow.signins.save_session(session)
        uow.commit()
    return session


def switch_team(
    token: str, team: TeamId, *, uow: UnitOfWork, clock: Clock, sign_in_terms: SignInTerms
) -> AppSession:
    """View another of the person's teams (it decides the team of new Settings keys only; docs/app.md)."""
    with uow:
        session = _live_session(token, uow, clock, sign_in_terms)
        if uow.teams.membership(team, session.user_id) is None:
            raise NotFound("team", team)
        session = evolve(session, team_id=team)
        uow.signins.save_session(session)
        uow.commit()
    return session


@frozen
class OneTimeLinks:
    """What issuing a one-time link needs besides the open transaction, given once by name (`links`)."""

    clock: Clock
    secrets: Secrets = field(repr=False)
    terms: SignInTerms
    public_url: str

    def issue(self, user: UserId, purpose: LinkPurpose, *, uow: UnitOfWork) -> str:
        """Inside the caller's transaction: a one-time link to choose a password; the URL, shown once."""
        token = self.secrets.token_hex(LINK_BYTES)
        uow.signins.add_link(
            OneTimeLink.issue(token=token, user=user, purpose=purpose, now=self.clock.now(), terms=self.terms)
        )
        return f"{self.public_url.rstrip('/')}{PASSWORD_PAGE}?token={token}"


def password_link(email: str, *, uow: UnitOfWork, links: OneTimeLinks) -> str:
    """A one-time link to set the person's password (`siteaudit admin password-link`, first start)."""
    with uow:
        user = uow.users.by_email(normalise_email(email))
        link = links.issue(user.id, LinkPurpose.RESET, uow=uow)
        uow.commit()
    return link


def request_password_reset(email: str, *, uow: UnitOfWork, links: OneTimeLinks, mailer: Mailer) -> None:
    """Mail a one-time link to the address when a person has it; say nothing either way."""
    address = _address(email)
    if address is None:
        return
    try:
        link = password_link(address, uow=uow, links=links)
    except NotFound:
        return
    mailer.send(
        to=address,
        subject="Choose a new siteaudit password",
        text=(
            "Someone (we hope you) asked to choose a new password for siteaudit.\n\n"
            f"Open this link within an hour to choose it (it works once):\n{link}\n\n"
            "If it was not you, ignore this mail: your password stays as it is.\n"
        ),
    )


def reset_password(
    link_token: str, password: str, *, uow: UnitOfWork, clock: Clock, hasher: PasswordHasher
) -> User:
    """Set the password through a one-time link; every session of the person ends. Raises LinkInvalid,
    ValidationFailed."""
    hashed = hasher.hash(check_password(password))
    with uow:
        link = uow.signins.use_link(token_hash(link_token), clock.now())
        if link is None:
            raise LinkInvalid()
        uow.signins.set_password_hash(link.user_id, hashed, at=clock.now())
        uow.signins.delete_sessions_of(link.user_id)
        user = uow.users.get(link.user_id)
        uow.commit()
    return user


def set_password(email: str, password: str, *, uow: UnitOfWork, clock: Clock, hasher: PasswordHasher) -> User:
    """`siteaudit admin set-password`: set a person's password; every session of theirs ends."""
    hashed = hasher.hash(check_password(password))
    with uow:
        user = uow.users.by_email(normalise_email(email))
        uow.signins.set_password_hash(user.id, hashed, at=clock.now())
        uow.signins.delete_sessions_of(user.id)
        uow.commit()
    return user
