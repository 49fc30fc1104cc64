"""Sites, fix tasks and rechecks: the same contract on memory, SQLite and PostgreSQL."""

from datetime import timedelta

import pytest
from attrs import evolve
from sql_backend import T0, Backend, people

from siteaudit.domain.error import ConcurrentUpdate, NotFound
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey, TeamId
from siteaudit.domain.issue import Severity
from siteaudit.domain.recheck import (
    Recheck,
    RecheckStatus,
    RecheckTarget,
    RecheckUrl,
    TaskOutcome,
    UrlObservation,
    UrlOutcome,
    UrlResult,
)
from siteaudit.domain.site import Monitoring, Site, SiteExists, VerifyMethod
from siteaudit.domain.task import FixedBy, FixTask, TaskFinding, TaskResult, TaskStatus


def _site(team: TeamId, url: str = "https://retro-clock.example/") -> Site:
    return Site.register(
        site_id=SiteId(0),
        team_id=team,
        url=url,
        verify_token="tok_retro_clock_0123456789",
        crawler_secret_ref="crawler-ref-1",
        plan_page_limit=10_000,
        now=T0,
    )


# --- sites ---------------------------------------------------------------------------------------------


def test_a_site_reads_back_equal_and_is_scoped_to_its_team(backend: Backend) -> None:
    _, _, team = people(backend)
    other = TeamId(team.id + 1)
    with backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        second = uow.sites.add(_site(team.id, "https://shop.retro-clock.example/"))
        theirs = uow.sites.add(_site(other))  # the same origin in another team is another site
        uow.commit()
    with backend.uow() as uow:
        assert uow.sites.get(site.id, team=team.id) == site
        assert list(uow.sites.list(team=team.id)) == [site, second]
        assert uow.sites.count(team=team.id) == 2
        assert uow.sites.count(team=other) == 1
        with pytest.raises(NotFound):
            uow.sites.get(theirs.id, team=team.id)
        with pytest.raises(NotFound):
            uow.sites.delete(theirs.id, team=team.id)


def test_a_second_site_for_the_same_origin_in_a_team_is_refused(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        uow.sites.add(_site(team.id))
        with pytest.raises(SiteExists):
            uow.sites.add(_site(team.id, "https://retro-clock.example/blog"))
        uow.commit()
    with backend.uow() as uow:
        assert uow.sites.count(team=team.id) == 1


def test_a_deleted_site_is_gone(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        uow.commit()
    with backend.uow() as uow:
        uow.sites.delete(site.id, team=team.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.sites.list(team=team.id) == []
        with pytest.raises(NotFound):
            uow.sites.delete(site.id, team=team.id)


def test_only_a_verified_site_answers_for_its_origin(backend: Backend) -> None:
    _, _, team = people(backend)
    origin = "https://retro-clock.example"
    with backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        uow.commit()
    with backend.uow() as uow:
        assert uow.sites.verified_for_origin(team=team.id, origin=origin) is None
        verified, _ = uow.sites.get(site.id, team=team.id).verify(VerifyMethod.DNS, now=T0)
        uow.sites.save(verified)
        uow.commit()
    with backend.uow() as uow:
        assert uow.sites.verified_for_origin(team=team.id, origin=origin) == verified
        assert uow.sites.verified_for_origin(team=TeamId(team.id + 1), origin=origin) is None
        assert uow.sites.verified_for_origin(team=team.id, origin="https://other.example") is None


def test_due_sites_are_every_teams_earliest_first_up_to_the_limit(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        made = []
        for n, hours in enumerate((5, 1, 3, None)):
            site = uow.sites.add(_site(TeamId(team.id + n), f"https://shop-{n}.retro-clock.example/"))
            if hours is not None:
                site = evolve(site, monitoring=Monitoring.DAILY, next_crawl_at=T0 + timedelta(hours=hours))
                uow.sites.save(site)
            made.append(site)
        uow.commit()
    with backend.uow() as uow:
        now = T0 + timedelta(hours=4)
        assert list(uow.sites.due(now, limit=10)) == [made[1], made[2]]
        assert list(uow.sites.due(now + timedelta(hours=1), limit=2)) == [made[1], made[2]]
        assert list(uow.sites.due(T0, limit=10)) == []


def test_verified_sites_due_a_recheck_the_oldest_check_first_and_any_site_by_id(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        made = []
        for n, checked in enumerate((T0 + timedelta(hours=2), T0, None)):
            site = uow.sites.add(_site(team.id, f"https://shop-{n}.retro-clock.example/"))
            site = evolve(site.verify(VerifyMethod.DNS, now=T0)[0], checked_at=checked)
            uow.sites.save(site)
            made.append(site)
        unverified = uow.sites.add(_site(team.id, "https://shop-9.retro-clock.example/"))
        uow.commit()
    with backend.uow() as uow:
        assert [s.id for s in uow.sites.verified(limit=10, checked_before=T0 + timedelta(hours=1))] == [
            made[2].id,
            made[1].id,
        ]
        assert len(uow.sites.verified(limit=1, checked_before=T0 + timedelta(hours=3))) == 1
        assert uow.sites.get_any(unverified.id) == unverified
        with pytest.raises(NotFound):
            uow.sites.get_any(SiteId(unverified.id + 100))


def test_an_alert_mark_is_claimed_once_per_audit(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        assert uow.sites.claim_alert(AuditId(7), site_id=site.id, at=T0)
        uow.commit()
    with backend.uow() as uow:
        assert not uow.sites.claim_alert(AuditId(7), site_id=site.id, at=T0)
        assert uow.sites.claim_alert(AuditId(8), site_id=site.id, at=T0)
        uow.rollback()
    with backend.uow() as uow:
        assert uow.sites.claim_alert(AuditId(8), site_id=site.id, at=T0)


def test_saving_a_site_changed_by_someone_else_is_a_concurrent_update(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        uow.commit()
    first, second = backend.uow(), backend.uow()
    with first:
        mine = first.sites.get(site.id, team=team.id)
    with second:
        theirs, _ = second.sites.get(site.id, team=team.id).verify(VerifyMethod.META, now=T0)
        second.sites.save(theirs)
        second.commit()
    with first:
        with pytest.raises(ConcurrentUpdate):
            first.sites.save(mine.verify(VerifyMethod.FILE, now=T0)[0])
        with pytest.raises(NotFound):
            first.sites.save(evolve(mine, id=SiteId(site.id + 100)))
    with backend.uow() as uow:
        stored = uow.sites.get(site.id, team=team.id)
        assert (stored.verified_via, stored.version) == (VerifyMethod.META, 1)


# --- fix tasks -----------------------------------------------------------------------------------------


def _task(site: SiteId, code: str, template: str = "/products/[slug]") -> FixTask:
    finding = TaskFinding(code, template, Severity.WARNING, 12, ("https://retro-clock.example/products/a",))
    return FixTask.open(site, finding, audit_id=AuditId(3), now=T0)


def test_tasks_are_saved_new_and_read_back_in_key_order(backend: Backend) -> None:
    site = SiteId(7)
    tasks = [_task(site, code) for code in ("title_too_long", "missing_alt", "thin_content")]
    with backend.uow() as uow:
        for task in tasks:
            uow.tasks.save(task)
        uow.tasks.save(_task(SiteId(8), "missing_alt"))
        uow.commit()
    with backend.uow() as uow:
        assert list(uow.tasks.of_site(site)) == sorted(tasks, key=lambda t: t.key)
        assert uow.tasks.get(site, tasks[1].key) == tasks[1]
        with pytest.raises(NotFound):
            uow.tasks.get(SiteId(8), tasks[0].key)
        with pytest.raises(NotFound):
            uow.tasks.get(site, TaskKey("0" * 16))


def test_a_task_changed_meanwhile_cannot_be_saved_from_a_stale_copy(backend: Backend) -> None:
    site = SiteId(7)
    task = _task(site, "title_too_long")
    with backend.uow() as uow:
        uow.tasks.save(task)
        uow.commit()
    first, second = backend.uow(), backend.uow()
    with first:
        mine = first.tasks.get(site, task.key)
    with second:
        theirs, _ = second.tasks.get(site, task.key).start_verifying(RecheckId(4), now=T0)
        second.tasks.save(theirs)
        second.commit()
    with first:
        with pytest.raises(ConcurrentUpdate):
            first.tasks.save(mine.start_verifying(RecheckId(5), now=T0)[0])
        with pytest.raises(ConcurrentUpdate):  # a "new" task that someone else has stored meanwhile
            first.tasks.save(_task(site, "title_too_long"))
    with backend.uow() as uow:
        stored = uow.tasks.get(site, task.key)
        assert (stored.status, stored.recheck_id, stored.status_before_verifying) == (
            TaskStatus.VERIFYING,
            RecheckId(4),
            TaskStatus.OPEN,
        )
        assert stored == theirs


# --- rechecks ------------------------------------------------------------------------------------------


def _recheck(team: TeamId) -> Recheck:
    task = _task(SiteId(7), "title_too_long")
    urls = (
        RecheckUrl("https://retro-clock.example/products/a", frozenset({"title_too_long", "missing_alt"})),
        RecheckUrl("https://retro-clock.example/products/b", frozenset(), frozenset({"orphan_page"})),
    )
    target = RecheckTarget(
        task_key=task.key,
        code="title_too_long",
        template="/products/[slug]",
        pages=12,
        urls=tuple(u.url for u in urls),
        sampled=True,
        covers_task=False,
        recheckable=True,
        claimed=True,
        status_before=TaskStatus.OPEN,
    )
    return Recheck(
        id=RecheckId(0),
        site_id=SiteId(7),
        team_id=team,
        parent_audit_id=AuditId(3),
        created_at=T0,
        urls=urls,
        targets=(target,),
        task_key=task.key,
        codes=frozenset({"title_too_long", "missing_alt"}),
        sampled=True,
    )


def test_a_recheck_with_every_nested_value_reads_back_equal(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        recheck = uow.rechecks.add(_recheck(team.id))
        uow.commit()
    with backend.uow() as uow:
        assert uow.rechecks.get(recheck.id, team=team.id) == recheck
        running, _ = uow.rechecks.get_any(recheck.id).start(now=T0)
        running = running.record(
            UrlObservation(recheck.urls[0].url, 200, issues=frozenset({"missing_alt", "thin_content"}))
        )
        running = running.record(UrlObservation(recheck.urls[1].url, None, fetch_error="timeout"))
        uow.rechecks.save(running)
        uow.commit()
    with backend.uow() as uow:
        ended = evolve(
            uow.rechecks.get(recheck.id, team=team.id),
            status=RecheckStatus.DONE,
            finished_at=T0 + timedelta(minutes=2),
            url_results=(
                UrlOutcome(recheck.urls[0].url, 200, UrlResult.FIXED, new_issues=("thin_content",)),
                UrlOutcome(recheck.urls[1].url, None, UrlResult.NOT_CHECKED, reason="fetch_error: timeout"),
            ),
            task_results=(
                TaskOutcome(
                    recheck.targets[0].task_key,
                    "title_too_long",
                    "/products/[slug]",
                    2,
                    12,
                    True,
                    False,
                    TaskResult.FIXED,
                    0,
                    1,
                    TaskStatus.FIXED,
                ),
            ),
            version=running.version + 1,
        )
        uow.rechecks.save(ended)
        uow.commit()
    with backend.uow() as uow:
        assert uow.rechecks.get_any(recheck.id) == ended


def test_another_teams_recheck_does_not_exist_and_stale_saves_are_refused(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        recheck = uow.rechecks.add(_recheck(team.id))
        uow.commit()
    first, second = backend.uow(), backend.uow()
    with first:
        mine = first.rechecks.get(recheck.id, team=team.id)
        with pytest.raises(NotFound):
            first.rechecks.get(recheck.id, team=TeamId(team.id + 1))
        with pytest.raises(NotFound):
            first.rechecks.get_any(RecheckId(recheck.id + 1))
    with second:
        second.rechecks.save(second.rechecks.get_any(recheck.id).start(now=T0)[0])
        second.commit()
    with first:
        with pytest.raises(ConcurrentUpdate):
            first.rechecks.save(mine.cancel(now=T0)[0])
    with backend.uow() as uow:
        assert uow.rechecks.get_any(recheck.id).status is RecheckStatus.RUNNING


# --- what the fix-task loop added: fixed_by, the recheck lease, unfinished rechecks ------------------


def test_a_task_fixed_by_a_recheck_or_an_audit_reads_back_saying_which(backend: Backend) -> None:
    site = SiteId(7)
    by_recheck, _ = _task(site, "title_too_long").start_verifying(RecheckId(4), now=T0)
    by_recheck, _ = by_recheck.finish_verifying(TaskResult.FIXED, RecheckId(4), now=T0)
    by_audit, _ = _task(site, "thin_content").not_found(audit_id=AuditId(5), now=T0)
    with backend.uow() as uow:
        uow.tasks.save(by_recheck)
        uow.tasks.save(by_audit)
        uow.commit()
    with backend.uow() as uow:
        assert uow.tasks.get(site, by_recheck.key) == by_recheck
        assert uow.tasks.get(site, by_audit.key) == by_audit
        assert (by_recheck.fixed_by, by_audit.fixed_by) == (FixedBy.RECHECK, FixedBy.AUDIT)


def test_a_task_moved_to_another_template_reads_back_and_a_merged_one_is_deleted(backend: Backend) -> None:
    site = SiteId(7)
    task = _task(site, "thin_content", "/products/a")
    moved, _ = task.found_again(
        TaskFinding("thin_content", "/products/[slug]", Severity.WARNING, 3), audit_id=AuditId(5), now=T0
    )
    merged = _task(site, "thin_content", "/products/b")
    with backend.uow() as uow:
        uow.tasks.save(task)
        uow.tasks.save(merged)
        uow.commit()
    with backend.uow() as uow:
        uow.tasks.of_site(site)  # read as a refresh does, before changing
        uow.tasks.save(moved)
        uow.tasks.delete(site, merged.key)
        uow.tasks.delete(site, TaskKey("0" * 16))  # unknown: no error
        uow.commit()
    with backend.uow() as uow:
        stored = uow.tasks.get(site, task.key)
        assert stored == moved
        assert (stored.template, stored.previous_template) == ("/products/[slug]", "/products/a")
        assert [t.key for t in uow.tasks.of_site(site)] == [task.key]


def test_a_rechecks_lease_reads_back_and_only_unfinished_rechecks_are_listed(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        running = uow.rechecks.add(_recheck(team.id))
        ended = uow.rechecks.add(_recheck(team.id))
        queued = uow.rechecks.add(_recheck(team.id))
        uow.commit()
    with backend.uow() as uow:
        claimed = uow.rechecks.get_any(running.id).claim("worker-1", now=T0, until=T0 + timedelta(minutes=3))
        assert claimed is not None
        uow.rechecks.save(claimed.start(now=T0)[0])
        uow.rechecks.save(uow.rechecks.get_any(ended.id).cancel(now=T0)[0])
        uow.commit()
    with backend.uow() as uow:
        stored = uow.rechecks.get_any(running.id)
        assert (stored.lease_holder, stored.lease_until, stored.attempts) == (
            "worker-1",
            T0 + timedelta(minutes=3),
            1,
        )
        assert [r.id for r in uow.rechecks.unfinished(limit=10)] == [running.id, queued.id]
        assert [r.id for r in uow.rechecks.unfinished(limit=1)] == [running.id]


def test_a_sites_render_setting_reads_back(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        site = uow.sites.add(evolve(_site(team.id), render=True))
        uow.commit()
    with backend.uow() as uow:
        assert uow.sites.get(site.id, team=team.id).render is True
