"""The embedded default's billing over its SQLite file (and PostgreSQL with the local provider chosen):
the owner buys a test pack and a test subscription through the TEST PURCHASE page; the balance rises once."""

import re
from collections.abc import Callable
from pathlib import Path

import falcon.testing
import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.account import LOCAL_OWNER_EMAIL
from siteaudit.settings import Settings


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "sqlite":
        return Settings(database_url=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}")  # provider: local
    create: Callable[..., str] = request.getfixturevalue("new_postgres_database")
    return Settings(
        database_url=create(migrated=True),
        secret_key="a long passphrase for the test",
        payment_provider="local",
    )


def test_the_local_owner_buys_a_test_pack_and_a_test_plan(settings: Settings) -> None:
    app = bootstrap(settings, queue=MemoryTaskQueue())
    issued = app.application.ensure_local_owner(plan="free", starting_credits=100)
    assert issued is not None
    client = falcon.testing.TestClient(app.rest_api())
    auth = {"Authorization": f"Bearer {issued.raw}"}
    # The test checkout page is for its buyer signed in to the app.
    app.application.set_password(LOCAL_OWNER_EMAIL, "correct horse battery staple")
    signed = app.application.sign_in(LOCAL_OWNER_EMAIL, "correct horse battery staple")
    session = {"Cookie": f"siteaudit_session={signed.token}"}

    def balance() -> float:
        return float(client.simulate_get("/v1/account", headers=auth).json["balance"])

    def buy(path: str, body: dict[str, str]) -> None:
        link = client.simulate_post(f"/v1/billing/{path}", json=body, headers=auth)
        assert link.status_code == 200, link.text
        page_path = link.json["url"].removeprefix("http://127.0.0.1:8080")
        page = client.simulate_get(page_path, headers=session)
        assert page.status_code == 200 and "TEST PURCHASE" in page.text
        token = re.search(r'name="token" value="([0-9a-f]+)"', page.text)
        assert token
        form = {"Content-Type": "application/x-www-form-urlencoded", **session}
        for _ in range(3):  # pressed three times
            done = client.simulate_post(page_path, body=f"token={token.group(1)}", headers=form)
            assert done.status_code == 200, done.text

    assert balance() == 100
    buy("checkout", {"pack": "small"})
    assert balance() == 5_100
    assert client.simulate_post("/v1/billing/portal", headers=auth).status_code == 200
    buy("subscribe", {"plan": "growth", "tier": "1m", "interval": "monthly"})
    (owner,) = app.application.list_users()
    assert owner.user.plan == "growth"
    again = client.simulate_post(
        "/v1/billing/subscribe", json={"plan": "starter", "tier": "10k", "interval": "yearly"}, headers=auth
    )
    assert again.json["error"]["code"] == "subscription_exists"
    # The paid first month of the 1m tier grants its 1,000,000 credits (docs/billing.md), once.
    assert balance() == 1_005_100
