"""The site endpoints over SQL storage (a SQLite file and PostgreSQL): register, read, change, verify,
monitor, audit, delete; the same answers as on the memory adapters."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from live import PUBLIC_NAME, seed

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.bootstrap import bootstrap
from siteaudit.ports.site import ProofPage
from siteaudit.settings import Settings
from tests.unit.rest.conftest import ScriptedProofs


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"
    create: Callable[..., str] = request.getfixturevalue("new_postgres_database")
    return create(migrated=True)


def test_a_site_from_registration_to_deletion(database_url: str) -> None:
    proofs = ScriptedProofs()
    app = bootstrap(
        Settings(database_url=database_url, secret_key=SecretBox.generate_key()),
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({PUBLIC_NAME: ["93.184.215.14"]}),
        proof_reader=proofs,
    )
    keys = seed(app)
    client = falcon.testing.TestClient(app.rest_api())
    mine = {"Authorization": f"Bearer {keys.owner}"}
    theirs = {"Authorization": f"Bearer {keys.rival}"}

    def call(method: str, path: str, body: Any = None, headers: dict[str, str] = mine) -> Any:
        return client.simulate_request(method, f"/v1{path}", json=body, headers=headers)

    registered = call("POST", "/sites", {"url": f"https://{PUBLIC_NAME}/", "max_rps": 6})
    assert registered.status_code == 201, registered.text
    site = registered.json
    sid = site["id"]
    assert call("POST", "/sites", {"url": f"https://{PUBLIC_NAME}/x"}).json["error"]["code"] == "site_exists"
    assert [s["id"] for s in call("GET", "/sites").json["data"]] == [sid]
    assert call("GET", f"/sites/{sid}", headers=theirs).status_code == 404

    changed = call("PATCH", f"/sites/{sid}", {"max_pages": 700, "alert_email": False})
    assert (changed.json["max_pages"], changed.json["alert_email"]) == (700, False)
    assert call("PATCH", f"/sites/{sid}", {"monitoring": "daily"}).status_code == 409

    failed = call("POST", f"/sites/{sid}/verify")
    assert (failed.status_code, failed.json["error"]["code"]) == (422, "verification_failed")
    proofs.pages[site["verify"]["url"]] = ProofPage(
        site["verify"]["url"], status=200, text=site["verify_token"]
    )
    proved = call("POST", f"/sites/{sid}/verify", {"method": "file"})
    assert (proved.status_code, proved.json["verified_via"]) == (200, "file")
    status = call("GET", f"/sites/{sid}/verification").json
    assert (status["verified"], status["via"]) == (True, "file")

    daily = call("PATCH", f"/sites/{sid}", {"monitoring": "daily", "max_rps": 6, "alert_email": True})
    assert daily.json["monitoring"] == "daily" and daily.json["next_crawl_at"] is not None

    started = call("POST", f"/sites/{sid}/crawls", {"trigger": "ci", "max_rps": 9})
    assert started.status_code == 202
    assert (started.json["estimated_credits"], started.json["max_rps"]) == (700, 6.0)
    detail = call("GET", f"/sites/{sid}").json
    assert detail["latest_crawl"]["crawl_id"] == started.json["crawl_id"] and detail["trend"] == []
    assert [a["crawl_id"] for a in call("GET", f"/crawls?site_id={sid}").json["data"]] == [
        started.json["crawl_id"]
    ]

    assert call("DELETE", f"/sites/{sid}", headers=theirs).status_code == 404
    deleted = call("DELETE", f"/sites/{sid}")
    assert deleted.status_code == 204
    assert call("GET", f"/sites/{sid}").status_code == 404
    assert call("GET", f"/crawls/{started.json['crawl_id']}").json["site_id"] == sid


def test_a_recheck_of_a_site_without_tasks_is_answered_never_a_500(database_url: str) -> None:
    """Nothing audited yet: no task to recheck, no parent audit. The unit of work is used only inside
    `with` (docs/architecture.md), which SQL enforces: this once answered 500."""
    proofs = ScriptedProofs()
    app = bootstrap(
        Settings(database_url=database_url, secret_key=SecretBox.generate_key()),
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({PUBLIC_NAME: ["93.184.215.14"]}),
        proof_reader=proofs,
    )
    client = falcon.testing.TestClient(app.rest_api())
    mine = {"Authorization": f"Bearer {seed(app).owner}"}

    def recheck(sid: int, body: Any) -> Any:
        return client.simulate_post(f"/v1/sites/{sid}/recheck", json=body, headers=mine)

    site = client.simulate_post("/v1/sites", json={"url": f"https://{PUBLIC_NAME}/"}, headers=mine).json
    sid = site["id"]
    unverified = recheck(sid, {"urls": [f"https://{PUBLIC_NAME}/"]})
    assert (unverified.status_code, unverified.json["error"]["code"]) == (409, "site_not_verified")

    proofs.pages[site["verify"]["url"]] = ProofPage(
        site["verify"]["url"], status=200, text=site["verify_token"]
    )
    assert client.simulate_post(f"/v1/sites/{sid}/verify", headers=mine).status_code == 200
    unknown = recheck(sid, {"task_key": "0123456789abcdef"})
    assert (unknown.status_code, unknown.json["error"]["code"]) == (404, "not_found")
    accepted = recheck(sid, {"urls": [f"https://{PUBLIC_NAME}/", f"https://{PUBLIC_NAME}/about"]})
    assert accepted.status_code == 202, accepted.text
    assert (accepted.json["urls_total"], accepted.json["tasks"]) == (2, [])
    read = client.simulate_get(f"/v1/rechecks/{accepted.json['recheck_id']}", headers=mine).json
    assert (read["parent_crawl_id"], read["site_id"]) == (None, sid)
