"""The app's pages over the embedded application on memory adapters: a browser-like client that keeps
cookies and reads each form's CSRF token from the page."""

import re
from typing import Any

import falcon.testing
import pytest
from argon2 import PasswordHasher
from attrs import define, field

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.password import Argon2Hasher
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.credit import credits
from siteaudit.settings import Settings

PASSWORD = "correct horse battery staple"
OWNER = "owner@retro-clock.example"
MEMBER = "member@retro-clock.example"
_CSRF = re.compile(r'name="csrf" value="([0-9a-f]*)"')


class SentMail:
    """The Mailer port, keeping what it was asked to send (the SMTP adapter has its own tests)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, str]] = []
        self.delivers = True  # False: as the log-only mailer (no SMTP server)

    def send(self, *, to: str, subject: str, text: str) -> None:
        self.sent.append({"to": to, "subject": subject, "text": text})


@define
class Browser:
    client: falcon.testing.TestClient
    cookies: dict[str, str] = field(factory=dict)
    page: str = ""
    address: str = "198.51.100.7"

    def _keep(self, result: Any) -> Any:
        for name, cookie in result.cookies.items():
            if cookie.value == "" or cookie.max_age == 0:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = cookie.value
        if result.headers.get("content-type", "").startswith("text/html"):
            self.page = result.text
        return result

    def _headers(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}

    def get(self, path: str, **params: str) -> Any:
        result = self.client.simulate_get(
            path, params=params or None, headers=self._headers(), remote_addr=self.address
        )
        return self._keep(result)

    def csrf(self) -> str:
        found = _CSRF.findall(self.page)
        return found[-1] if found else ""

    def post(self, path: str, form: dict[str, str], *, csrf: str | None = None, **headers: str) -> Any:
        body = {"csrf": self.csrf() if csrf is None else csrf, **form}
        result = self.client.simulate_post(
            path,
            body="&".join(f"{k}={falcon.uri.encode_value(v)}" for k, v in body.items()),
            headers={
                **self._headers(),
                "Content-Type": "application/x-www-form-urlencoded",
                **headers,
            },
            remote_addr=self.address,
        )
        return self._keep(result)

    def sign_in(self, email: str = OWNER, password: str = PASSWORD) -> Any:
        self.get("/app/sign-in")
        return self.post("/app/sign-in", {"email": email, "password": password, "next": "/app/account"})


@define
class Site:
    app: App
    clock: FixedClock
    mail: SentMail

    def browser(self, address: str = "198.51.100.7") -> Browser:
        return Browser(falcon.testing.TestClient(self.app.service()), address=address)


def quick_hasher() -> Argon2Hasher:
    """The production Argon2 hasher at its smallest cost. These tests check what the pages and the sign-in
    throttle do with passwords, never what a hash costs; at the default cost (docs/security.md) each
    sign-in took a tenth of a second of CPU, half a second on busy cores. The app tests that bootstrap their
    own service use it too (and the hostile-body guard's /app forms); the CLI, payment and browser tests keep
    bootstrap's own hasher with the default cost."""
    return Argon2Hasher(PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))


@pytest.fixture
def site() -> Site:
    clock = FixedClock()
    mail = SentMail()
    app = bootstrap(
        Settings(database_url="memory://"),
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({}),
        mailer=mail,
        hasher=quick_hasher(),
    )
    application = app.application
    application.create_user(OWNER, plan="growth")
    application.create_user(MEMBER, plan="starter")
    application.create_team("Retro Clock", owner_email=OWNER)
    application.add_member("Retro Clock", MEMBER)
    application.grant_credits(OWNER, credits(5_000), idempotency_key="start")
    application.set_password(OWNER, PASSWORD)
    application.set_password(MEMBER, PASSWORD)
    return Site(app, clock, mail)


def attack(site: Site, minutes: int) -> list[int]:
    """Three addresses guess the owner's password 4 times each (none trips its own limit, together they
    fill the account's), then keep guessing once a minute from one of them."""
    statuses = []
    for n, address in enumerate(("192.0.2.1", "192.0.2.2", "192.0.2.3")):
        guesser = site.browser(address=address)
        statuses += [guesser.sign_in(password=f"guess {n}.{i}").status_code for i in range(4)]
    for minute in range(minutes):
        site.clock.advance(60)
        guesser = site.browser(address=f"192.0.2.{1 + minute % 3}")
        statuses.append(guesser.sign_in(password=f"guess {minute}").status_code)
    return statuses
