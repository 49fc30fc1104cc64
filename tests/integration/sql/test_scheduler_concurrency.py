"""Four schedulers at once over PostgreSQL: every one of 1,000 due sites is dispatched exactly once
(the site repository claims due rows with `FOR UPDATE SKIP LOCKED` and moves them on in the same
transaction)."""

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql.engine import create_engine
from siteaudit.adapters.sql.tables import audits
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.audit import AuditTrigger
from siteaudit.domain.ids import SiteId
from siteaudit.domain.site import Monitoring, Site, VerifyMethod
from siteaudit.settings import Settings

SITES = 1_000
SCHEDULERS = 4


@pytest.mark.postgres
def test_four_schedulers_dispatch_each_of_a_thousand_due_sites_once(
    new_postgres_database: Callable[..., str],
) -> None:
    url = new_postgres_database(migrated=True)
    hosts = [f"s{n}.retro-clock.example" for n in range(SITES)]
    app = bootstrap(
        Settings(database_url=url, secret_key=SecretBox.generate_key()),
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({host: ["93.184.215.14"] for host in hosts}),
    )
    application = app.application
    application.create_user("owner@retro-clock.example", plan="scale")
    team = application.create_team("Retro Clock", owner_email="owner@retro-clock.example")
    application.grant_credits("owner@retro-clock.example", 10 * 10 * SITES, idempotency_key="start")
    now = app.clock.now()
    with app.uow() as uow:
        for n, host in enumerate(hosts):
            site = Site.register(
                site_id=SiteId(0),
                team_id=team.id,
                url=f"https://{host}/",
                verify_token=f"token-for-site-{n:06d}",
                crawler_secret_ref=f"ref{n}",
                plan_page_limit=100,
                now=now,
                max_pages=5,
            )
            site, _ = site.verify(VerifyMethod.DNS, now=now)
            site = site.set_monitoring(Monitoring.DAILY, plan_allows_monitoring=True, now=now)
            uow.sites.add(site)
        uow.commit()

    later = now + timedelta(days=1, seconds=1)  # every site's first slot has come
    results: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(SCHEDULERS)

    def scheduler() -> None:
        start.wait()
        done = application.dispatch_due_site_audits(later)
        with lock:
            results.append(len(done.started))

    threads = [threading.Thread(target=scheduler) for _ in range(SCHEDULERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(results) == SITES
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            per_site = conn.execute(
                select(audits.c.site_id, func.count(), func.min(audits.c.trigger)).group_by(audits.c.site_id)
            ).all()
    finally:
        engine.dispose()
    assert len(per_site) == SITES
    assert {count for _, count, _ in per_site} == {1}
    assert {trigger for _, _, trigger in per_site} == {AuditTrigger.SCHEDULE.value}
    assert application.dispatch_due_site_audits(later).started == ()
