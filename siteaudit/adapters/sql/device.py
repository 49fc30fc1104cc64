"""Device logins in SQL: found by the device code's hash, or by a live login's user code; saves conditional
on the loaded version, so the loser of an exchange race updates nothing and gets ConcurrentUpdate."""

from datetime import datetime, timedelta
from typing import Any, Final

from attrs import evolve
from sqlalchemy import literal, select

from siteaudit.adapters.sql.rows import column, inserted_id, reader, row_values
from siteaudit.adapters.sql.tables import UtcDateTime, device_logins
from siteaudit.adapters.sql.version import Versioned
from siteaudit.domain.device import DeviceLogin, DeviceLoginStatus
from siteaudit.domain.error import Conflict
from siteaudit.domain.ids import DeviceLoginId

login_from_row: Final = reader(
    DeviceLogin, interval=column("interval_s", read=lambda seconds: timedelta(seconds=seconds))
)


def login_values(login: DeviceLogin) -> dict[str, Any]:
    return row_values(login, leave_out=("id", "interval"), interval_s=login.interval.total_seconds())


class SqlDeviceLoginRepository(Versioned):
    kind = "device login"

    def _loaded(self, row: Any) -> DeviceLogin | None:
        if row is None:
            return None
        return self._seen_as(login_from_row(row))

    def add(self, login: DeviceLogin) -> DeviceLogin:
        if self._live(login.user_code, login.created_at) is not None:
            raise Conflict("this user code belongs to a live login")
        taken = Conflict("a device login with this device code exists")
        new_id = inserted_id(self._c(), device_logins, login_values(login), id=login.id, taken=taken)
        return self._seen_as(evolve(login, id=DeviceLoginId(new_id)))

    def by_device_code_hash(self, code_hash: str) -> DeviceLogin | None:
        query = select(device_logins).where(device_logins.c.device_code_hash == code_hash)
        return self._loaded(self._c().execute(query).first())

    def _live(self, user_code: str, now: datetime) -> Any:
        # Expiry is exclusive: at exactly `expires_at` the login is no longer live (DeviceLogin.is_live).
        return (
            self._c()
            .execute(
                select(device_logins)
                .where(
                    device_logins.c.user_code == user_code,
                    device_logins.c.status == DeviceLoginStatus.PENDING.value,
                    device_logins.c.expires_at > literal(now, UtcDateTime),
                )
                .order_by(device_logins.c.id)
                .limit(1)
            )
            .first()
        )

    def live_by_user_code(self, user_code: str, now: datetime) -> DeviceLogin | None:
        return self._loaded(self._live(user_code, now))

    def save(self, login: DeviceLogin) -> None:
        self._update(device_logins, [device_logins.c.id == login.id], login.id, login_values(login))
