"""The real clock and the operating system's CSPRNG, plus a settable clock for tests and simulations."""

import secrets
import threading
from datetime import UTC, datetime, timedelta


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that moves only when told to: deterministic tests of lifecycles, retries and expiries."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float = 0.0, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds, **delta)
            return self._now

    def set(self, moment: datetime) -> None:
        with self._lock:
            self._now = moment


class SystemSecrets:
    def token(self, length: int, alphabet: str) -> str:
        return "".join(secrets.choice(alphabet) for _ in range(length))

    def token_hex(self, nbytes: int) -> str:
        return secrets.token_hex(nbytes)
