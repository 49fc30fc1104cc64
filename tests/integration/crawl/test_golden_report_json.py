"""The golden audit's report as REST serves it, pinned byte for byte (keys, values, order).

Three audits of the scripted Retro Clock site in one store: the first (no diff), the second (diffed against
the first's issue rows), then the second is archived and a third is diffed against what the archive kept.
Each one's `/report`, `/templates`, `/diff` and `/fix-prompt` answers are compared with
`golden_report.json`, after the things that differ between runs are made fixed: the scripted site's
port (in its URLs) and the measured durations in `stats.timings`.

After a deliberate change of the report, rewrite the file with `SITEAUDIT_REGOLD=1` and review its diff.
"""

import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from crawl_doubles import Crawl, SiteServer
from test_crawl_site import retro_clock_site

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.ids import UserId
from siteaudit.services import account as accounts
from siteaudit.services import archive
from siteaudit.services import key as keys
from siteaudit.services.finalize import finalize_audit
from siteaudit.settings import Settings

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
GOLDEN = Path(__file__).with_name("golden_report.json")
PARTS = ("report", "templates", "diff", "fix-prompt")


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    retro_clock_site(server)
    yield server
    server.close()


def _audit(site: SiteServer, first: Crawl | None) -> Crawl:
    crawl = (
        Crawl(site.url("/"))
        if first is None
        else Crawl(site.url("/"), store=first.store, crawl=first.crawl, clock=first.clock)
    )
    with crawl.uow() as uow:
        uow.credits.grant(UserId(1), 100_000, key=f"golden:{crawl.audit_id}", at=NOW)
        uow.credits.reserve(UserId(1), crawl.max_pages * 10, reference=f"audit:{crawl.audit_id}", at=NOW)
        uow.commit()
    crawl.run()
    finalize_audit(crawl.audit_id, uow=crawl.uow(), crawl=crawl.crawl, clock=crawl.clock)
    return crawl


def _normalised(text: str, origin: str) -> Any:
    value = json.loads(text.replace(origin, "http://retro-clock.example:PORT"))
    stats = value.get("stats") if isinstance(value, dict) else None
    if isinstance(stats, dict) and isinstance(stats.get("timings"), dict):
        stats["timings"] = {
            key: (measured if key == "pages_crawled" else "measured")
            for key, measured in stats["timings"].items()
        }
    return value


def served_reports(site: SiteServer) -> dict[str, Any]:
    first = _audit(site, None)
    second = _audit(site, first)
    archived = archive.archive_audit(
        second.audit_id, uow=second.uow(), crawl=second.crawl, clock=second.clock
    )
    assert archived
    third = _audit(site, first)
    app = bootstrap(
        Settings(database_url="memory://"),
        uow=first.uow,
        crawl=first.crawl,
        clock=first.clock,
        queue=MemoryTaskQueue(),
    )
    user = accounts.create_user(
        "owner@retro-clock.example", uow=app.uow(), clock=app.clock, secrets=app.secrets
    )
    assert user.id == 1
    team = accounts.create_team("Retro Clock", owner_email=user.email, uow=app.uow(), clock=app.clock)
    assert team.id == 1
    key = keys.create_settings_key(user.email, team.name, uow=app.uow(), clock=app.clock, secrets=app.secrets)
    client = falcon.testing.TestClient(app.rest_api())
    origin = site.url("/").rstrip("/")
    served: dict[str, Any] = {}
    for audit in (first, second, third):
        for part in PARTS:
            answer = client.simulate_get(
                f"/v1/crawls/{audit.audit_id}/{part}", headers={"Authorization": f"Bearer {key.raw}"}
            )
            assert answer.status_code == 200, answer.text
            served[f"{audit.audit_id}/{part}"] = _normalised(answer.text, origin)
    return served


def test_the_golden_reports_are_served_exactly_as_pinned(site: SiteServer) -> None:
    served = served_reports(site)
    text = json.dumps(served, indent=1, ensure_ascii=False) + "\n"
    if os.environ.get("SITEAUDIT_REGOLD") == "1":
        GOLDEN.write_text(text)
    pinned = GOLDEN.read_text()
    # Compared as text, so the order of keys is pinned too (json.loads keeps it, dumps writes it).
    assert text == pinned
    assert re.search(r"127\.0\.0\.1|localhost", text) is None
    assert "archived_identities" not in json.dumps(served["2/report"]["stats"])  # kept beside, never served
