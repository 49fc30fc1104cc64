"""Remembered browsers (docs/security.md, "Sign-in throttling and remembered browsers"): OWASP's device
cookies. A browser that signed in to an account gets a cookie naming that sign-in; when it signs in to the
same account again it is judged by its own failures only, so failures from elsewhere never lock it out."""

import hmac
from datetime import timedelta
from typing import Final

from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.sealing import Sealing

REMEMBERED_FOR: Final = timedelta(days=180)
# A remembered browser's own failures: as many as one address gets, then one a minute.
SIGN_IN_PER_BROWSER: Final = Limit(5, 300.0)


def _account(email: str) -> str:
    return email.strip().lower()[:254]


class RememberedBrowsers:
    """The cookie is `NONCE.EXPIRES.MAC`: 128 random bits, the Unix time it ends, and the HMAC-SHA256
    under the service's secret key (`Sealing.derive`) of the account's email with both. Nothing is
    stored: a cookie of another account, expired or altered proves nothing. Its failures count in the
    bucket named by its nonce."""

    def __init__(self, sealing: Sealing, secrets: Secrets, clock: Clock) -> None:
        self.sealing = sealing
        self.secrets = secrets
        self.clock = clock

    def _mac(self, email: str, nonce: str, expires: str) -> str:
        return self.sealing.derive(f"app-remembered-browser:{_account(email)}:{nonce}:{expires}")

    def issue(self, email: str) -> tuple[str, int]:
        """A new cookie value for a browser that just signed in to `email`, and its max-age in seconds."""
        nonce = self.secrets.token_hex(16)
        expires = str(int((self.clock.now() + REMEMBERED_FOR).timestamp()))
        return f"{nonce}.{expires}.{self._mac(email, nonce, expires)}", int(REMEMBERED_FOR.total_seconds())

    def bucket(self, value: str, email: str) -> str | None:
        """The failure bucket of this browser when `value` is a live cookie issued for `email`, else None."""
        parts = value.split(".")
        if len(value) > 200 or not value.isascii() or len(parts) != 3 or not parts[1].isdigit():
            return None
        nonce, expires, mac = parts
        if int(expires) <= self.clock.now().timestamp():
            return None
        if not hmac.compare_digest(mac.encode(), self._mac(email, nonce, expires).encode()):
            return None
        return f"app-sign-in:browser:{nonce}"
