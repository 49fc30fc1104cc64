"""A plan downgrade keeps a site's monitoring set but skips every scheduled audit, and GET /sites and
GET /sites/{id} say why (`last_skip_reason` `plan_limit_monitoring`) from the downgrade on; an upgrade
resumes the schedule with nothing to redo."""

from datetime import timedelta

from siteaudit.domain.site import Monitoring
from siteaudit.services.sites.usecases import UpdateSite
from tests.unit.rest.conftest import World
from tests.unit.rest.test_site_scheduler import a_daily_site
from tests.unit.rest.test_sites import get

OWNER = "owner@retro-clock.example"


def test_a_downgrade_keeps_monitoring_set_says_why_at_once_and_an_upgrade_resumes_it(world: World) -> None:
    application = world.app.application
    site = a_daily_site(world)
    assert site.next_crawl_at is not None
    shown = get(world, f"/sites/{site.id}").json
    assert (shown["monitoring"], shown["last_skip_reason"]) == ("daily", None)

    application.set_plan(OWNER, "free")  # no monitoring on the free plan
    detail = get(world, f"/sites/{site.id}").json
    assert (detail["monitoring"], detail["last_skip_reason"]) == ("daily", "plan_limit_monitoring")
    assert detail["next_crawl_at"] is not None
    listed = get(world, "/sites").json["data"][0]
    assert (listed["monitoring"], listed["last_skip_reason"]) == ("daily", "plan_limit_monitoring")
    skipped = application.dispatch_due_site_audits(site.next_crawl_at + timedelta(minutes=1))
    assert skipped.started == () and {int(k): v.value for k, v in skipped.skipped.items()} == {
        site.id: "plan_limit_monitoring"
    }

    application.set_plan(OWNER, "growth")
    resumed = application.dispatch_due_site_audits(site.next_crawl_at + timedelta(days=1, minutes=1))
    assert len(resumed.started) == 1 and resumed.skipped == {}
    after = get(world, f"/sites/{site.id}").json
    assert (after["monitoring"], after["last_skip_reason"]) == ("daily", None)
    assert after["last_dispatched_at"] is not None


def test_a_site_without_monitoring_says_nothing_after_a_downgrade(world: World) -> None:
    application = world.app.application
    site = a_daily_site(world)
    caller = application.authenticate(world.owner_key)
    application.handle(UpdateSite(site.id, monitoring=Monitoring.OFF), caller)
    application.set_plan(OWNER, "free")
    shown = get(world, f"/sites/{site.id}").json
    assert (shown["monitoring"], shown["last_skip_reason"]) == ("off", None)
