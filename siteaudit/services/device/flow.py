"""The device's side of a device login (docs/security.md "Device login"): start, poll (the key returned
exactly once) and cancel, which the REST door's `/v1/device/*` calls without a key (the `DeviceFlow` role)."""

from attrs import frozen

from siteaudit.domain.device import (
    USER_CODE_ALPHABET,
    USER_CODE_LENGTH,
    DeviceLogin,
    InvalidGrant,
    device_code_hash,
    new_user_code,
)
from siteaudit.domain.error import ConcurrentUpdate, Conflict
from siteaudit.domain.ids import DeviceLoginId
from siteaudit.ports.application import DeviceGranted, DeviceLoginStarted
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.key import CliKeys


@frozen
class DeviceStarted:
    login: DeviceLogin
    device_code: str  # shown once to the polling client; only its hash is stored

    def answer(self, public_url: str) -> DeviceLoginStarted:
        """What the device is told: its code, the user code as people see it, and the app's approval page
        (at `public_url`) to enter it at."""
        login = self.login
        page = f"{public_url.rstrip('/')}/app/device"
        return DeviceLoginStarted(
            device_code=self.device_code,
            user_code=login.display_user_code,
            verification_uri=page,
            verification_uri_complete=f"{page}?code={login.display_user_code}",
            interval=int(login.interval.total_seconds()),
            expires_in=login.seconds_left(login.created_at),
        )


def start_device_login(
    client_name: str, requested_ip: str, *, uow: UnitOfWork, clock: Clock, secrets: Secrets
) -> DeviceStarted:
    """A pending login with a 192-bit device code and an 8-letter user code unique among live logins."""
    device_code = secrets.token_hex(24)
    now = clock.now()
    for _ in range(8):  # a clash among live user codes is rare (20^8 codes); draw again
        user_code = new_user_code(secrets.token(USER_CODE_LENGTH, USER_CODE_ALPHABET))
        login = DeviceLogin.start(
            login_id=DeviceLoginId(0),
            device_code=device_code,
            user_code=user_code,
            client_name=client_name,
            requested_ip=requested_ip,
            now=now,
        )
        with uow:
            try:
                login = uow.devices.add(login)
            except Conflict:
                continue
            uow.commit()
        return DeviceStarted(login, device_code)
    raise Conflict("could not find a free user code; try again")


def poll_device_login(device_code: str, *, uow: UnitOfWork, clock: Clock, cli_keys: CliKeys) -> DeviceGranted:
    """Answer one poll. Raises the RFC 8628 refusals (authorization_pending, slow_down, access_denied,
    expired_token, invalid_grant); on approval returns a new CLI key, exactly once: the exchange and the
    key are one transaction, and a racing poll loses on the login's version and answers invalid_grant."""
    with uow:
        login = uow.devices.by_device_code_hash(device_code_hash(device_code))
        if login is None:
            raise InvalidGrant()
        in_team = True
        if login.approved_by is not None and login.team_id is not None:
            in_team = uow.teams.membership(login.team_id, login.approved_by) is not None
        updated, outcome = login.poll(clock.now(), approver_in_team=in_team)
        if updated is not login:
            try:
                uow.devices.save(updated)
            except ConcurrentUpdate:
                raise InvalidGrant() from None
        if outcome.grant is None:
            uow.commit()
            raise outcome.refusal()
        grant = outcome.grant
        key = cli_keys.issue(grant, uow=uow)
        team = uow.teams.get(grant.team_id)
        uow.commit()
    return DeviceGranted(key, team.id, team.name)


def cancel_device_login(device_code: str, *, uow: UnitOfWork, clock: Clock) -> DeviceLogin:
    """The device gives its login up (Ctrl-C in `siteaudit connect`): the code can no longer be approved
    nor exchanged. Raises InvalidGrant for an unknown code, one already exchanged, or one that lost a race
    with the exchange (its key exists: it is revoked in the app)."""
    with uow:
        login = uow.devices.by_device_code_hash(device_code_hash(device_code))
        if login is None:
            raise InvalidGrant()
        cancelled = login.cancel(clock.now())
        if cancelled is not login:
            try:
                uow.devices.save(cancelled)
            except ConcurrentUpdate:
                raise InvalidGrant() from None
        uow.commit()
    return cancelled
