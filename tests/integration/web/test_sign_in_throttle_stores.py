"""Sign-in throttling with remembered browsers (docs/security.md) on the SQLite and PostgreSQL
deployments: the buckets live where the service's rate limits live, and an attack on the account still
never keeps out the owner's browser that signed in before."""

from pathlib import Path

import pytest

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.settings import Settings
from tests.unit.web.conftest import MEMBER, OWNER, PASSWORD, SentMail, Site, attack, quick_hasher


def deployment(database_url: str) -> Site:
    clock = FixedClock()
    mail = SentMail()
    settings = Settings(database_url=database_url, secret_key="a passphrase for the throttle tests")
    app = bootstrap(
        settings,
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({}),
        mailer=mail,
        hasher=quick_hasher(),
    )
    app.application.create_user(OWNER, plan="growth")
    app.application.create_user(MEMBER, plan="starter")
    app.application.create_team("Retro Clock", owner_email=OWNER)
    app.application.set_password(OWNER, PASSWORD)
    return Site(app, clock, mail)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_an_attack_on_the_account_never_keeps_out_the_owners_browser(
    store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if store == "sqlite":
        site = deployment(f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}")
    else:
        site = deployment(
            request.getfixturevalue("new_postgres_database")(migrated=True)
        )  # a database of its own
    owner = site.browser(address="203.0.113.9")
    assert owner.sign_in().status_code == 303
    statuses = attack(site, minutes=20)
    assert statuses[:10] == [401] * 10 and 429 in statuses[10:]
    assert owner.sign_in().status_code == 303
    stranger = site.browser(address="203.0.113.9")
    refused = stranger.sign_in()
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    typos = [owner.sign_in(password=f"typo {n}").status_code for n in range(6)]
    assert typos == [401] * 5 + [429]  # its own failures, counted where every process sees them
