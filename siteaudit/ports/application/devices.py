"""The device's side of a device login (`DeviceFlow`, `DeviceCancel`; docs/security.md "Device login")."""

from typing import Protocol

from attrs import field, frozen

from siteaudit.domain.device import DeviceLogin
from siteaudit.domain.ids import TeamId
from siteaudit.ports.application.keys import IssuedKey


@frozen
class DeviceLoginStarted:
    """`POST /device/start`: the device code (shown this once; only its hash is kept), the user code as
    people see it (`XXXX-XXXX`) and where they enter it."""

    device_code: str = field(repr=False)
    user_code: str
    verification_uri: str
    verification_uri_complete: str
    interval: int
    expires_in: int


@frozen
class DeviceGranted:
    """An approved device login's exchange: the CLI key (returned exactly once) and its team."""

    key: IssuedKey
    team_id: TeamId
    team_name: str


class DeviceCancel(Protocol):
    """The device's own cancel of its login, by the device code only it holds (`POST /v1/device/cancel`,
    what Ctrl-C in `siteaudit connect` sends). A door of the device flow like start and poll, but not a use
    case of a key's holder, so not one of Application's (each of which is an agent tool or says why not).
    """

    def cancel_device_login(self, device_code: str) -> DeviceLogin:
        """A pending or approved login becomes denied (it can no longer be approved, its next poll
        answers AccessDenied), a denied or expired one stays. Raises InvalidGrant for an unknown or
        exchanged code."""
        ...


class DeviceFlow(DeviceCancel, Protocol):
    """The device's side of a device login (docs/security.md "Device login"): start, poll and cancel, by the
    REST door's `/v1/device/*` without a key; the app's approval page decides (`WebSession`)."""

    def start_device_login(self, client_name: str, requested_ip: str) -> DeviceLoginStarted:
        """A pending login. `client_name` (at most 64 characters, ValidationFailed beyond) names the
        machine and agents as `siteaudit.domain.device.CONNECT_FORM` says."""
        ...

    def poll_device_login(self, device_code: str) -> DeviceGranted:
        """One poll. Raises AuthorizationPending, SlowDown, AccessDenied, ExpiredToken or InvalidGrant;
        after approval returns the CLI key once (it replaces the key of the same machine, agents and
        team)."""
        ...
