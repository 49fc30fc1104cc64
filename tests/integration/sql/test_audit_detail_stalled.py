"""GET /crawls/{id} answers `last_progress_at` and `stalled` the same on memory, SQLite and PostgreSQL:
null and false while queued, the slice's start while its lease is live, stalled once the lease expired
with nobody taking it over, and never stalled once the audit ended."""

from datetime import timedelta

import falcon.testing
from sql_backend import Backend

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.crawl import LEASE_S
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import AuditId
from siteaudit.services import account as accounts
from siteaudit.services import key as keys
from siteaudit.services.audit import begin_audit
from siteaudit.settings import Settings

EMAIL = "owner@retro-clock.example"


def test_the_audit_detail_shows_progress_and_a_stall_on_every_backend(backend: Backend) -> None:
    clock = FixedClock()
    app = bootstrap(
        Settings(database_url="memory://"),
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({"retro-clock.example": ["93.184.215.14"]}),
        uow=backend.uow,
        crawl=backend.crawl,
    )
    accounts.create_user(EMAIL, plan="growth", uow=app.uow(), clock=clock, secrets=SystemSecrets())
    accounts.create_team("Retro Clock", owner_email=EMAIL, uow=app.uow(), clock=clock)
    accounts.grant_credits(EMAIL, credits(1_000), key="start", uow=app.uow(), clock=clock)
    raw = keys.create_settings_key(EMAIL, "Retro Clock", uow=app.uow(), clock=clock, secrets=app.secrets).raw
    client = falcon.testing.TestClient(app.rest_api())
    auth = {"Authorization": f"Bearer {raw}"}
    started = client.simulate_post("/v1/crawls", json={"url": "https://retro-clock.example/"}, headers=auth)
    audit_id = AuditId(started.json["crawl_id"])

    def detail() -> dict[str, object]:
        answer = client.simulate_get(f"/v1/crawls/{audit_id}", headers=auth)
        assert answer.status_code == 200
        document: dict[str, object] = answer.json
        return document

    assert (detail()["last_progress_at"], detail()["stalled"]) == (None, False)
    clock.advance(60)
    with app.uow() as uow:  # a slice claims the audit's lease and starts it
        now = clock.now()
        assert uow.leases.claim(audit_id, "worker:1:0", now=now, until=now + timedelta(seconds=LEASE_S))
        uow.commit()
    begin_audit(audit_id, uow=app.uow(), clock=clock)
    seen = detail()
    assert seen["status"] == "running"
    assert (seen["last_progress_at"], seen["stalled"]) == ("2026-11-22T09:01:00Z", False)
    clock.advance(LEASE_S)  # the worker died: nobody renewed the lease
    assert (detail()["last_progress_at"], detail()["stalled"]) == ("2026-11-22T09:01:00Z", True)
    clock.advance(5)
    assert client.simulate_delete(f"/v1/crawls/{audit_id}", headers=auth).status_code == 200
    ended = detail()
    assert (ended["status"], ended["stalled"]) == ("cancelled", False)
    assert ended["last_progress_at"] == ended["finished_at"] == "2026-11-22T09:04:05Z"
