"""A REST client over the embedded application on memory adapters, with two teams and their keys."""

import falcon.testing
import pytest
from attrs import field, frozen

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.credit import credits
from siteaudit.ports.site import ProofPage, TxtLookupFailed
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.settings import Settings

PUBLIC_NAMES = ("retro-clock.example", "elsewhere.example", "other-shop.example", "hooks.retro-clock.example")


class ScriptedProofs:
    """The ProofReader port as a script: `pages` by URL, `txt` by name (a missing URL answers 404);
    `dns_down` makes every TXT lookup fail. Records every URL and name asked for."""

    def __init__(self) -> None:
        self.pages: dict[str, ProofPage] = {}
        self.txt: dict[str, tuple[str, ...]] = {}
        self.dns_down = False
        self.asked: list[str] = []

    def read(self, url: str, *, origin: str) -> ProofPage:
        self.asked.append(url)
        return self.pages.get(url, ProofPage(url, status=404, text="not here"))

    def txt_records(self, name: str) -> tuple[str, ...]:
        self.asked.append(name)
        if self.dns_down:
            raise TxtLookupFailed("Timeout: no nameserver answered")
        return self.txt.get(name, ())


@frozen
class World:
    app: App
    client: falcon.testing.TestClient
    clock: FixedClock
    owner_key: str
    member_key: str
    rival_key: str
    poor_key: str
    proofs: ScriptedProofs = field(factory=ScriptedProofs)

    def auth(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def world() -> World:
    return make_world()


def make_world(settings: Settings | None = None) -> World:
    clock = FixedClock()
    # Public addresses for the test sites' names; nothing ever connects (the queue is never drained).
    resolver = StaticResolver({name: ["93.184.215.14"] for name in PUBLIC_NAMES})
    proofs = ScriptedProofs()
    app = bootstrap(
        settings or Settings(database_url="memory://"),
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=resolver,
        proof_reader=proofs,
    )
    kw = {"uow": app.uow(), "clock": clock}
    accounts.create_user("owner@retro-clock.example", plan="growth", **kw, secrets=SystemSecrets())
    accounts.create_user(
        "member@retro-clock.example", plan="starter", uow=app.uow(), clock=clock, secrets=SystemSecrets()
    )
    accounts.create_user(
        "rival@other-shop.example", plan="growth", uow=app.uow(), clock=clock, secrets=SystemSecrets()
    )
    accounts.create_user(
        "poor@retro-clock.example", plan="free", uow=app.uow(), clock=clock, secrets=SystemSecrets()
    )
    accounts.create_team("Retro Clock", owner_email="owner@retro-clock.example", uow=app.uow(), clock=clock)
    accounts.create_team("Other Shop", owner_email="rival@other-shop.example", uow=app.uow(), clock=clock)
    accounts.add_member("Retro Clock", "member@retro-clock.example", uow=app.uow())
    accounts.add_member("Retro Clock", "poor@retro-clock.example", uow=app.uow())
    for email in ("owner@retro-clock.example", "member@retro-clock.example", "rival@other-shop.example"):
        accounts.grant_credits(email, credits(5_000), key=f"start:{email}", uow=app.uow(), clock=clock)

    def key(email: str, team: str) -> str:
        return keys.create_settings_key(email, team, uow=app.uow(), clock=clock, secrets=app.secrets).raw

    return World(
        app=app,
        client=falcon.testing.TestClient(app.rest_api()),
        clock=clock,
        owner_key=key("owner@retro-clock.example", "Retro Clock"),
        member_key=key("member@retro-clock.example", "Retro Clock"),
        rival_key=key("rival@other-shop.example", "Other Shop"),
        poor_key=key("poor@retro-clock.example", "Retro Clock"),
        proofs=proofs,
    )
