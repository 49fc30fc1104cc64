"""The monitoring scheduler through the application: due scheduled audits start once, with the schedule
trigger and the owner paying, or are skipped saying why; daily proof re-checks with their grace period."""

import json
import logging
from datetime import timedelta

import pytest
from click.testing import CliRunner

from siteaudit.domain.audit import AuditTrigger
from siteaudit.domain.site import Monitoring, MonitoringSkip, VerifyMethod
from siteaudit.entrypoints import cli
from siteaudit.entrypoints.cli import main
from siteaudit.ports.application import AuditQuery
from siteaudit.services.sites.answers import UpdatedSite
from siteaudit.services.sites.usecases import (
    GetSite,
    GetSiteVerification,
    RegisterSite,
    UpdateSite,
    VerifySite,
)
from tests.unit.rest.conftest import World

RECORD = "_siteaudit-challenge.retro-clock.example"


def a_daily_site(world: World, url: str = "https://retro-clock.example/") -> UpdatedSite:
    application = world.app.application
    caller = application.authenticate(world.owner_key)
    site = application.handle(RegisterSite(url, max_pages=100), caller)
    world.proofs.txt[RECORD] = (application.handle(GetSiteVerification(site.id), caller).methods.dns.value,)
    application.handle(VerifySite(site.id, VerifyMethod.DNS), caller)
    return application.handle(UpdateSite(site.id, monitoring=Monitoring.DAILY), caller)


def test_a_due_site_is_audited_once_by_schedule_paid_by_the_owner_without_webhook(world: World) -> None:
    application = world.app.application
    owner = application.authenticate(world.owner_key)
    site = a_daily_site(world)
    due = site.next_crawl_at
    assert due is not None and world.clock.now() < due <= world.clock.now() + timedelta(days=1)

    assert application.dispatch_due_site_audits(due - timedelta(seconds=1)).started == ()
    first = application.dispatch_due_site_audits(due + timedelta(minutes=3))
    assert len(first.started) == 1 and first.skipped == {}
    assert application.dispatch_due_site_audits(due + timedelta(minutes=4)).started == ()

    (audit,) = application.list_audits(AuditQuery(site_id=site.id), owner).items
    assert audit.id == first.started[0]
    assert (audit.trigger, audit.site_id, audit.webhook_url) == (AuditTrigger.SCHEDULE, site.id, None)
    assert audit.payer_id == owner.user_id
    after = application.handle(GetSite(site.id), owner)
    assert after.last_dispatched_at == due + timedelta(minutes=3) and after.last_skip_reason is None
    assert after.next_crawl_at == due + timedelta(days=1)

    # The first audit is still queued a day later: the next one is skipped, and tried again a day on.
    second = application.dispatch_due_site_audits(due + timedelta(days=1))
    assert second.started == () and second.skipped == {site.id: MonitoringSkip.PREVIOUS_RUNNING}
    skipped = application.handle(GetSite(site.id), owner)
    assert skipped.last_skip_reason == "previous_audit_running"
    assert skipped.next_crawl_at == due + timedelta(days=2)
    assert application.list_audits(AuditQuery(site_id=site.id), owner).total == 1


def test_a_scheduled_audit_is_skipped_when_the_plan_no_longer_allows_it_or_credits_run_out(
    world: World,
) -> None:
    application = world.app.application
    owner = application.authenticate(world.owner_key)
    site = a_daily_site(world)
    assert site.next_crawl_at is not None
    application.set_plan("owner@retro-clock.example", "free")
    later = site.next_crawl_at + timedelta(minutes=1)
    assert application.dispatch_due_site_audits(later).skipped == {site.id: MonitoringSkip.PLAN}
    assert application.handle(GetSite(site.id), owner).last_skip_reason == "plan_limit_monitoring"

    application.set_plan("owner@retro-clock.example", "growth")
    with world.app.uow() as uow:  # everything the owner has is held by something else
        uow.credits.reserve(
            owner.user_id, uow.credits.balance(owner.user_id), reference="drain", at=later, team=owner.team_id
        )
        uow.commit()
    result = application.dispatch_due_site_audits(later + timedelta(days=1))
    assert result.started == () and result.skipped == {site.id: MonitoringSkip.INSUFFICIENT_CREDITS}
    assert application.handle(GetSite(site.id), owner).last_skip_reason == "insufficient_credits"
    assert application.list_audits(AuditQuery(site_id=site.id), owner).total == 0


def test_a_missing_proof_keeps_the_site_verified_through_the_grace_period_then_pauses_monitoring(
    world: World,
) -> None:
    application = world.app.application
    owner = application.authenticate(world.owner_key)
    site = a_daily_site(world)
    now = world.clock.now()
    assert application.recheck_site_proofs(now + timedelta(hours=1)).confirmed == 0  # checked today

    checked = application.recheck_site_proofs(now + timedelta(days=1))
    assert (checked.confirmed, checked.missing, checked.lost) == (1, 0, 0)

    del world.proofs.txt[RECORD]
    gone = application.recheck_site_proofs(now + timedelta(days=2))
    assert (gone.confirmed, gone.missing, gone.lost) == (0, 1, 0)
    missing = application.handle(GetSiteVerification(site.id), owner)
    assert missing.verified and missing.lost_at == now + timedelta(days=2)

    still = application.recheck_site_proofs(now + timedelta(days=8))
    assert (still.missing, still.lost) == (1, 0)
    assert application.handle(GetSiteVerification(site.id), owner).lost_at == now + timedelta(days=2)

    lost = application.recheck_site_proofs(now + timedelta(days=9))
    assert (lost.missing, lost.lost) == (1, 1)
    paused = application.handle(GetSite(site.id), owner)
    assert not paused.verified and paused.last_skip_reason == "site_not_verified"
    assert application.handle(GetSiteVerification(site.id), owner).lost_at is not None  # lost
    assert application.recheck_site_proofs(now + timedelta(days=11)).missing == 0  # not re-checked
    due = application.dispatch_due_site_audits(now + timedelta(days=12))
    assert due.skipped == {site.id: MonitoringSkip.NOT_VERIFIED} and due.started == ()


def test_a_proof_back_within_the_grace_period_clears_lost_at(world: World) -> None:
    application = world.app.application
    owner = application.authenticate(world.owner_key)
    site = a_daily_site(world)
    now = world.clock.now()
    record = world.proofs.txt.pop(RECORD)
    application.recheck_site_proofs(now + timedelta(days=1))
    assert application.handle(GetSiteVerification(site.id), owner).lost_at == now + timedelta(days=1)
    world.proofs.txt[RECORD] = record
    back = application.recheck_site_proofs(now + timedelta(days=3))
    assert back.confirmed == 1
    regained = application.handle(GetSiteVerification(site.id), owner)
    assert regained.verified and regained.lost_at is None and regained.checked_at == now + timedelta(days=3)


def test_support_lists_a_teams_sites_and_verifies_one_by_hand_which_the_recheck_keeps(
    world: World, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    application = world.app.application
    owner = application.authenticate(world.owner_key)
    site = application.handle(RegisterSite("https://retro-clock.example/"), owner)
    assert [s.id for s in application.list_team_sites("Retro Clock")] == [site.id]
    with caplog.at_level(logging.INFO, logger="siteaudit.admin"):
        verified = application.verify_site_by_hand(site.id, "ticket 42: DNS host cannot add TXT records")
    assert verified.verified and verified.verified_via is None
    assert "verified by hand: ticket 42" in caplog.text
    later = world.clock.now() + timedelta(days=30)
    assert application.recheck_site_proofs(later).confirmed == 1
    assert application.handle(GetSite(site.id), owner).verified
    runner = CliRunner()
    monkeypatch.setattr(cli, "_application", lambda: application)

    listed = runner.invoke(main, ["admin", "list-sites", "Retro Clock", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [s["id"] for s in json.loads(listed.output)["sites"]] == [site.id]
    again = runner.invoke(main, ["admin", "verify-site", str(site.id), "--by-hand", "--reason", "again"])
    assert again.exit_code == 0 and "is verified" in again.output
    missing = runner.invoke(main, ["admin", "verify-site", "999", "--by-hand", "--reason", "x"])
    assert missing.exit_code == 2 and "not_found" in missing.output
