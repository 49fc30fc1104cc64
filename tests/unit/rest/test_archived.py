"""An archived audit through REST: its issue and page lists answer 410, its report and parts stay (SPEC 4.3)."""

import pytest

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.ids import AuditId
from siteaudit.services import archive, finalize
from siteaudit.services import audit as audits
from tests.unit.rest.conftest import World
from tests.unit.services.test_archive import a_site

SITE = "https://retro-clock.example"


def a_done_audit(world: World) -> int:
    started = world.client.simulate_post(
        "/v1/crawls", json={"url": SITE + "/", "max_pages": 50}, headers=world.auth(world.owner_key)
    )
    assert started.status_code == 202, started.json
    audit_id = AuditId(started.json["crawl_id"])
    app = world.app
    audits.begin_audit(audit_id, uow=app.uow(), clock=world.clock)
    pages = a_site()
    app.crawl.write_pages(audit_id, pages)
    app.crawl.write_links(audit_id, [(p.url, link) for p in pages if p.html for link in p.html.links])
    audits.record_progress(
        audit_id, pages_crawled=len(pages), pages_not_modified=0, uow=app.uow(), clock=world.clock
    )
    audits.stop_crawling(audit_id, partial=False, uow=app.uow(), clock=world.clock)
    done = finalize.finalize_audit(audit_id, uow=app.uow(), crawl=app.crawl, clock=world.clock)
    assert done.status is AuditStatus.DONE
    return audit_id


@pytest.fixture
def archived(world: World) -> int:
    audit_id = a_done_audit(world)
    archived = archive.archive_audits(
        uow=world.app.uow(), crawl=world.app.crawl, clock=world.clock, older_than_days=0, keep_last=None
    )
    assert archived == [audit_id]
    return audit_id


@pytest.mark.parametrize("part", ["issues", "pages"])
def test_the_lists_of_an_archived_audit_answer_410_crawl_archived(
    world: World, archived: int, part: str
) -> None:
    result = world.client.simulate_get(f"/v1/crawls/{archived}/{part}", headers=world.auth(world.owner_key))
    assert (result.status_code, result.json["error"]["code"]) == (410, "crawl_archived")


def test_the_lists_answered_before_the_audit_was_archived(world: World) -> None:
    audit_id = a_done_audit(world)
    for part in ("issues", "pages"):
        result = world.client.simulate_get(
            f"/v1/crawls/{audit_id}/{part}", headers=world.auth(world.owner_key)
        )
        assert result.status_code == 200
        assert result.json["meta"]["total"] > 0


@pytest.mark.parametrize(
    ("part", "field"), [("templates", "templates"), ("diff", "diff"), ("fix-prompt", "prompt")]
)
def test_the_report_parts_of_an_archived_audit_stay_available(
    world: World, archived: int, part: str, field: str
) -> None:
    result = world.client.simulate_get(f"/v1/crawls/{archived}/{part}", headers=world.auth(world.owner_key))
    assert result.status_code == 200
    assert field in result.json


def test_the_report_of_an_archived_audit_keeps_the_spec_shape(world: World, archived: int) -> None:
    result = world.client.simulate_get(f"/v1/crawls/{archived}/report", headers=world.auth(world.owner_key))
    assert result.status_code == 200
    assert set(result.json) == {
        "crawl_id",
        "health_score",
        "partial",
        "totals",
        "issues",
        "issue_counts",
        "blocked",
        "coverage_warning",
        "stats",
        "templates",
        "diff",
        "fix_prompt",
    }
    assert result.json["totals"]["pages"] == len(a_site())
    audit = world.client.simulate_get(f"/v1/crawls/{archived}", headers=world.auth(world.owner_key))
    assert audit.json["archived_at"] is not None


def test_another_teams_archived_audit_is_not_found_rather_than_gone(world: World, archived: int) -> None:
    result = world.client.simulate_get(f"/v1/crawls/{archived}/issues", headers=world.auth(world.rival_key))
    assert result.status_code == 404
