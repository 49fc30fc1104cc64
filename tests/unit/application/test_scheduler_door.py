"""The scheduler door: the periodic job `serve` runs in-process, and the `siteaudit scheduler` command."""

import time
from datetime import timedelta

from click.testing import CliRunner

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditTrigger
from siteaudit.domain.site import Monitoring, VerifyMethod
from siteaudit.entrypoints.cli import main
from siteaudit.entrypoints.scheduler import scheduler_pass, start_scheduler
from siteaudit.ports.application import AuditQuery
from siteaudit.services.sites.usecases import GetSiteVerification, RegisterSite, UpdateSite, VerifySite
from siteaudit.settings import Settings
from tests.unit.rest.conftest import ScriptedProofs

HOST = "retro-clock.example"


def test_the_in_process_scheduler_starts_a_due_monitoring_audit_once() -> None:
    clock = FixedClock()
    proofs = ScriptedProofs()
    app = bootstrap(
        Settings(database_url="memory://", scheduler_every_s=1.0),
        clock=clock,
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({HOST: ["93.184.215.14"]}),
        proof_reader=proofs,
    )
    application = app.application
    issued = application.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    owner = application.authenticate(issued.raw)
    site = application.handle(RegisterSite(f"https://{HOST}/", max_pages=10), owner)
    dns = application.handle(GetSiteVerification(site.id), owner).methods.dns
    proofs.txt[dns.name] = (dns.value,)
    application.handle(VerifySite(site.id, VerifyMethod.DNS), owner)
    application.handle(UpdateSite(site.id, monitoring=Monitoring.DAILY), owner)
    scheduler_pass(application, clock.now)()  # nothing due yet
    assert application.list_audits(AuditQuery(site_id=site.id), owner).total == 0

    clock.advance(timedelta(days=1).total_seconds())
    periodic = start_scheduler(app)
    try:
        deadline = time.monotonic() + 10
        while application.list_audits(AuditQuery(site_id=site.id), owner).total == 0:
            assert time.monotonic() < deadline, "the scheduler started nothing"
            time.sleep(0.1)
        time.sleep(1.5)  # another pass or two: nothing more is due
    finally:
        periodic.stop()
    listed = application.list_audits(AuditQuery(site_id=site.id), owner)
    assert listed.total == 1 and listed.items[0].trigger is AuditTrigger.SCHEDULE


def test_the_scheduler_command_is_there() -> None:
    result = CliRunner().invoke(main, ["scheduler", "--help"])
    assert result.exit_code == 0 and "SITEAUDIT_SCHEDULER_EVERY_S" in result.output


def test_the_scheduler_command_needs_a_broker_to_hand_the_audits_it_starts_to() -> None:
    refused = CliRunner(env={"SITEAUDIT_BROKER_URL": ""}).invoke(main, ["scheduler", "--once"])
    assert refused.exit_code == 2
    assert "error: set SITEAUDIT_BROKER_URL" in refused.output and "siteaudit serve" in refused.output
