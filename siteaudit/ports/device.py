"""Device logins: stored by the hash of their device code; the user code is unique among live logins."""

from datetime import datetime
from typing import Protocol

from siteaudit.domain.device import DeviceLogin


class DeviceLoginRepository(Protocol):
    def add(self, login: DeviceLogin) -> DeviceLogin:
        """Stage a new login (an id of 0 gets a fresh one). Raises Conflict when its user code belongs to
        another live login (pending and unexpired at `login.created_at`)."""
        ...

    def by_device_code_hash(self, code_hash: str) -> DeviceLogin | None: ...

    def live_by_user_code(self, user_code: str, now: datetime) -> DeviceLogin | None:
        """The pending, unexpired login with this (normalised) user code."""
        ...

    def save(self, login: DeviceLogin) -> None:
        """Stage an update, conditional on the version this unit of work loaded: raises ConcurrentUpdate
        when another poll or decision changed it first (the loser of an exchange race)."""
        ...
