"""`siteaudit scheduler --once` as its own process on PostgreSQL and RabbitMQ: the site registered with
defaults by the local owner and audited once is due, the pass starts its scheduled audit (reserving the
last audit's pages plus headroom) and exits; a worker runs it and it settles to the pages fetched."""

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditStatus, AuditTrigger
from siteaudit.domain.credit import credits
from siteaudit.domain.site import SCHEDULED_HEADROOM_MIN
from siteaudit.entrypoints.worker import start_worker
from siteaudit.ports.application import AuditQuery
from siteaudit.services.audits.usecases import GetAudit
from siteaudit.services.sites.usecases import GetSite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL
from tests.unit.application.test_monitoring_default import PAGES, audited_daily_site, balance, local_owner

pytestmark = [pytest.mark.postgres, pytest.mark.rabbitmq]


def test_scheduler_once_starts_the_due_audit_and_exits(
    new_postgres_database: Callable[..., str], rabbitmq_url: str, queue_prefix: str, httpserver: HTTPServer
) -> None:
    settings = Settings(
        database_url=new_postgres_database(migrated=True),
        broker_url=rabbitmq_url,
        queue_prefix=queue_prefix,
        secret_key=SecretBox.generate_key(),
        allow_networks=("127.0.0.0/8",),
        **UNPACED_LOCAL,  # the site on 127.0.0.1 (tests/local_sites.py)
    )
    # Monitoring switched on a day ago by this process's clock: the site is due now by the real one.
    clock = FixedClock(datetime.now(UTC) - timedelta(days=1))
    setup = bootstrap(settings, clock=clock, queue=MemoryTaskQueue())
    owner = local_owner(setup)
    site = audited_daily_site(setup, owner, httpserver)
    assert site.next_crawl_at is not None and site.next_crawl_at <= datetime.now(UTC)
    starting = Settings().starting_credits

    once = subprocess.run(
        [str(Path(sys.executable).with_name("siteaudit")), "scheduler", "--once"],
        env={
            **os.environ,
            "SITEAUDIT_DATABASE_URL": settings.database_url,
            "SITEAUDIT_BROKER_URL": rabbitmq_url,
            "SITEAUDIT_QUEUE_PREFIX": queue_prefix,
            "SITEAUDIT_SECRET_KEY": settings.secret_key,
            "SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert once.returncode == 0, once.stdout + once.stderr
    assert once.stdout.startswith("scheduler pass: 1 scheduled audits started"), once.stdout + once.stderr
    assert once.stdout.rstrip().endswith("0 skipped")

    app = bootstrap(settings)  # the real clock from here on
    listed = app.application.list_audits(AuditQuery(site_id=site.id), owner).items
    assert [a.trigger for a in listed] == [AuditTrigger.SCHEDULE, AuditTrigger.API]
    scheduled = listed[0]
    assert scheduled.credits_reserved == credits(PAGES + SCHEDULED_HEADROOM_MIN)
    assert balance(app, owner) == credits(starting - PAGES - PAGES - SCHEDULED_HEADROOM_MIN)
    shown = app.application.handle(GetSite(site.id), owner)
    assert shown.last_skip_reason is None and shown.last_dispatched_at is not None

    worker, periodic = start_worker(app, threads=1, webhooks_every_s=3600.0)
    try:
        deadline = time.monotonic() + 60
        while not app.application.handle(GetAudit(scheduled.id), owner).status.ended:
            assert time.monotonic() < deadline, "the scheduled audit did not end"
            time.sleep(0.2)
    finally:
        periodic.stop()
        worker.stop()
    ended = app.application.handle(GetAudit(scheduled.id), owner)
    assert (ended.status, ended.pages_crawled) == (AuditStatus.DONE, PAGES)
    assert balance(app, owner) == credits(starting - 2 * PAGES)
