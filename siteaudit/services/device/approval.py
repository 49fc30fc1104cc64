"""The app's side of a device login (docs/security.md "Device login"): the approval page shows the login a
person typed the user code of, then approves it for one of their teams or denies it (the `WebSession`
role). Only a browser session decides: a key never approves a login that would make another key."""

from siteaudit.domain.device import DeviceLogin, normalise_user_code
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.ports.clock import Clock
from siteaudit.ports.repository import UnitOfWork


def _live(uow: UnitOfWork, user_code: str, clock: Clock) -> DeviceLogin:
    login = uow.devices.live_by_user_code(normalise_user_code(user_code), clock.now())
    if login is None:
        raise NotFound("device login", user_code)
    return login


def login_to_decide(user_code: str, *, uow: UnitOfWork, clock: Clock) -> DeviceLogin:
    """The live login a person typed the user code of (the approval page shows it before any decision).
    Raises ValidationFailed for a code of the wrong shape, NotFound for no live login with it."""
    with uow:
        return _live(uow, user_code, clock)


def approve_device_login(
    user_code: str, user: UserId, team: TeamId, *, uow: UnitOfWork, clock: Clock
) -> DeviceLogin:
    """The person approves on the approval page, for a team they belong to."""
    with uow:
        if uow.teams.membership(team, user) is None:
            raise NotFound("team", team)
        login, _ = _live(uow, user_code, clock).approve(user=user, team=team, now=clock.now())
        uow.devices.save(login)
        uow.commit()
    return login


def deny_device_login(user_code: str, *, uow: UnitOfWork, clock: Clock) -> DeviceLogin:
    with uow:
        login, _ = _live(uow, user_code, clock).deny(now=clock.now())
        uow.devices.save(login)
        uow.commit()
    return login
