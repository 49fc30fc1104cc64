"""`render` (docs/rendering.md) on `POST /v1/crawls`, on a site's audits and on a site's settings: the audit
keeps it and shows it, and `estimated_credits` reserves five credits a page instead of one."""

from typing import Any

from siteaudit.domain.audit import Audit
from siteaudit.domain.ids import AuditId
from tests.unit.rest.conftest import World
from tests.unit.rest.test_sites import error, get, patch, post, register

SITE = "https://retro-clock.example/"


def stored(world: World, crawl_id: int) -> Audit:
    with world.app.uow() as uow:
        return uow.audits.get_any(AuditId(crawl_id))


def start(world: World, **body: Any) -> Any:
    return post(world, "/crawls", {"url": SITE, "max_pages": 40, **body})


def test_a_rendered_audit_reserves_five_credits_a_page_and_keeps_its_setting(world: World) -> None:
    raw = start(world)
    rendered = start(world, render=True)
    assert (raw.status_code, rendered.status_code) == (202, 202)
    assert raw.json["estimated_credits"] == 40
    assert rendered.json["estimated_credits"] == 200
    assert not stored(world, raw.json["crawl_id"]).render
    assert stored(world, rendered.json["crawl_id"]).render


def test_render_must_be_a_boolean(world: World) -> None:
    result = start(world, render="yes")
    assert error(result) == (422, "validation_failed")
    assert result.json["error"]["fields"] == {"render": "must be true or false"}


def test_a_sites_render_setting_is_saved_and_its_audits_render(world: World) -> None:
    site = register(world)
    assert site["render"] is False
    changed = patch(world, f"/sites/{site['id']}", {"render": True})
    assert (changed.status_code, changed.json["render"]) == (200, True)
    started = post(world, f"/sites/{site['id']}/crawls", {"max_pages": 40})
    assert started.status_code == 202, started.text
    assert started.json["estimated_credits"] == 200
    assert stored(world, started.json["crawl_id"]).render
    # An audit of the site's URL may still ask for a raw crawl.
    raw = start(world, site_id=site["id"], render=False)
    assert raw.status_code == 202, raw.text
    assert not stored(world, raw.json["crawl_id"]).render


def test_the_audit_shows_whether_it_renders(world: World) -> None:
    raw = start(world)
    rendered = start(world, render=True)
    assert get(world, f"/crawls/{raw.json['crawl_id']}").json["render"] is False
    assert get(world, f"/crawls/{rendered.json['crawl_id']}").json["render"] is True


def test_a_site_audit_may_say_otherwise_than_the_sites_setting(world: World) -> None:
    site = register(world)
    rendered = post(world, f"/sites/{site['id']}/crawls", {"max_pages": 40, "render": True})
    assert rendered.status_code == 202, rendered.text
    assert rendered.json["estimated_credits"] == 200
    assert get(world, f"/crawls/{rendered.json['crawl_id']}").json["render"] is True
    patch(world, f"/sites/{site['id']}", {"render": True})
    raw = post(world, f"/sites/{site['id']}/crawls", {"max_pages": 40, "render": False})
    assert raw.status_code == 202, raw.text
    assert raw.json["estimated_credits"] == 40
    assert not stored(world, raw.json["crawl_id"]).render
    refused = post(world, f"/sites/{site['id']}/crawls", {"render": 1})
    assert refused.json["error"]["fields"] == {"render": "must be true or false"}
