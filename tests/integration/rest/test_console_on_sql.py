"""The console endpoints over SQL storage (a SQLite file and PostgreSQL) with the demo provider: the
first read syncs, the answers agree with each other, inspect spends the stored budget, the scheduler's
daily sync runs once a day, and deleting the site removes its console rows."""

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from live import PUBLIC_NAME, seed

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.ports.site import ProofPage
from siteaudit.services import audit as audits
from siteaudit.services import finalize
from siteaudit.settings import Settings
from tests.unit.rest.conftest import ScriptedProofs
from tests.unit.services.test_archive import a_page

SITE = f"https://{PUBLIC_NAME}"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"
    create: Callable[..., str] = request.getfixturevalue("new_postgres_database")
    return create(migrated=True)


def test_the_console_over_sql(database_url: str) -> None:
    proofs = ScriptedProofs()
    clock = FixedClock()
    app = bootstrap(
        Settings(database_url=database_url, secret_key=SecretBox.generate_key(), console_demo=True),
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({PUBLIC_NAME: ["93.184.215.14"]}),
        proof_reader=proofs,
    )
    keys = seed(app)
    client = falcon.testing.TestClient(app.rest_api())

    def call(method: str, path: str, body: Any = None, key: str = keys.owner) -> Any:
        return client.simulate_request(
            method, f"/v1{path}", json=body, headers={"Authorization": f"Bearer {key}"}
        )

    site = call("POST", "/sites", {"url": SITE + "/"}).json
    sid = site["id"]
    assert call("GET", f"/sites/{sid}/gsc").json["error"]["code"] == "site_not_verified"
    proofs.pages[site["verify"]["url"]] = ProofPage(
        site["verify"]["url"], status=200, text=site["verify_token"]
    )
    assert call("POST", f"/sites/{sid}/verify", {"method": "file"}).status_code == 200
    audit_id = AuditId(call("POST", f"/sites/{sid}/crawls", {"max_pages": 100}).json["crawl_id"])
    pages = [a_page(SITE, f"/clocks/{n}", title=f"Clock {n}") for n in range(30)]
    audits.begin_audit(audit_id, uow=app.uow(), clock=clock)
    app.crawl.write_pages(audit_id, pages)
    audits.record_progress(audit_id, pages_crawled=30, pages_not_modified=0, uow=app.uow(), clock=clock)
    audits.stop_crawling(audit_id, partial=False, uow=app.uow(), clock=clock)
    assert (
        finalize.finalize_audit(audit_id, uow=app.uow(), crawl=app.crawl, clock=clock).status
        is AuditStatus.DONE
    )

    summary = call("GET", f"/sites/{sid}/sengine").json
    assert summary["demo"] is True and summary["sync"]["status"] == "ok"
    assert summary["funnel"]["found"] == 30 and summary["funnel"]["inspected"] == 30
    assert call("GET", f"/sites/{sid}/gsc").json == summary
    assert call("GET", f"/sites/{sid}/gsc", key=keys.rival).status_code == 404
    groups = call("GET", f"/sites/{sid}/gsc/not-indexed").json["groups"]
    assert sum(g["pages"] for g in groups) == summary["headline"]["not_indexed"]
    one = call("GET", f"/sites/{sid}/gsc/url?url={SITE}/clocks/3").json
    assert one["gsc"] == one["sengine"] and one["crawl"]["status_code"] == 200
    assert call("GET", f"/sites/{sid}/gsc/opportunities").status_code == 200
    triage = call("GET", f"/sites/{sid}/index-triage").json
    assert triage["summary"]["not_indexed"] == summary["headline"]["not_indexed"]
    inspected = call("POST", f"/sites/{sid}/gsc/inspect", {"urls": [f"{SITE}/clocks/1", f"{SITE}/clocks/2"]})
    assert inspected.json["budget"]["used"] == 32  # the sync's 30 and these 2

    start, end = clock.now().date() - timedelta(days=28), clock.now().date() - timedelta(days=1)
    caller = app.application.authenticate(keys.owner)
    totals = app.application.console_page_totals(SiteId(sid), caller, None, start, end)
    assert sum(t.impressions for t in totals.values()) == summary["headline"]["impressions_28d"]

    assert app.application.sync_search_consoles(clock.now()) == 0  # synced at the first read
    assert app.application.sync_search_consoles(clock.now() + timedelta(days=1, seconds=1)) == 1
    assert call("DELETE", f"/sites/{sid}").status_code == 204
    with app.uow() as uow:
        assert uow.console.days(SiteId(sid), start=start, end=end) == []
        assert uow.console.inspections(SiteId(sid)) == []
        assert uow.console.sync(SiteId(sid)) is None
