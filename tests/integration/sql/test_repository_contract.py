"""The repository contract, once, against the memory adapters, a SQLite file and PostgreSQL."""

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta, timezone
from typing import get_type_hints

import pytest
from attrs import evolve
from sql_backend import Backend

from siteaudit.adapters.memory.webhook import MemoryWebhookStore, MemoryWebhookUnitOfWork
from siteaudit.domain.account import Membership, Role, Team, User
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.credit import EntryKind, credits
from siteaudit.domain.error import ConcurrentUpdate, Conflict, InsufficientCredits, NotFound
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.ports.repository import TeamAuditQuery, UnitOfWork
from siteaudit.ports.webhook import WebhookUnitOfWork

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def _people(backend: Backend) -> tuple[User, User, Team]:
    with backend.uow() as uow:
        owner = uow.users.add(User(UserId(0), "owner@retro-clock.example", "growth", T0, name="Ada"))
        member = uow.users.add(User(UserId(0), "member@retro-clock.example", "free", T0))
        team = uow.teams.add(Team(TeamId(0), "Retro Clock", owner.id, T0))
        uow.commit()
    return owner, member, team


def _audit(team: Team, user: User, *, at: datetime = T0, site: int | None = None, url: str = "") -> Audit:
    return Audit(
        id=AuditId(0),
        team_id=team.id,
        user_id=user.id,
        payer_id=user.id,
        url=url or "https://retro-clock.example/",
        origin="https://retro-clock.example",
        created_at=at,
        max_pages=500,
        site_id=None if site is None else SiteId(site),
        credits_reserved=5000,
        webhook_url="https://hooks.retro-clock.example/done",
    )


# --- users and teams -----------------------------------------------------------------------------------


def test_a_user_added_gets_an_id_and_reads_back_equal(backend: Backend) -> None:
    owner, member, _ = _people(backend)
    assert owner.id > 0 and member.id > 0 and owner.id != member.id
    with backend.uow() as uow:
        assert uow.users.get(owner.id) == owner
        assert uow.users.by_email("member@retro-clock.example") == member
        assert uow.users.count() == 2


def test_a_second_user_with_the_same_email_is_a_conflict(backend: Backend) -> None:
    _people(backend)
    with backend.uow() as uow, pytest.raises(Conflict):
        uow.users.add(User(UserId(0), "owner@retro-clock.example", "free", T0))


def test_unknown_users_and_teams_are_not_found(backend: Backend) -> None:
    with backend.uow() as uow:
        for lookup in (
            lambda: uow.users.get(UserId(999_999)),
            lambda: uow.users.by_email("nobody@retro-clock.example"),
            lambda: uow.teams.get(TeamId(999_999)),
            lambda: uow.teams.by_name("Nobody"),
        ):
            with pytest.raises(NotFound):
                lookup()
        with pytest.raises(NotFound):
            uow.users.save(User(UserId(999_999), "x@retro-clock.example", "free", T0))


def test_leaving_without_commit_rolls_everything_back(backend: Backend) -> None:
    with backend.uow() as uow:
        uow.users.add(User(UserId(0), "gone@retro-clock.example", "free", T0))
    with backend.uow() as uow:
        assert uow.users.count() == 0


def test_an_explicit_rollback_forgets_staged_changes_and_the_unit_of_work_goes_on(backend: Backend) -> None:
    with backend.uow() as uow:
        uow.users.add(User(UserId(0), "gone@retro-clock.example", "free", T0))
        uow.rollback()
        kept = uow.users.add(User(UserId(0), "kept@retro-clock.example", "free", T0))
        uow.commit()
    with backend.uow() as uow:
        assert uow.users.count() == 1
        assert uow.users.get(kept.id).email == "kept@retro-clock.example"


# --- the `with` block: repositories work only inside it (docs/architecture.md) ------------------------

OUTSIDE = "use the unit of work inside `with uow:`"


def _one_call_each(uow: UnitOfWork) -> dict[str, Callable[[], object]]:
    """One read of every repository of the unit of work, by attribute name."""
    return {
        "users": lambda: uow.users.count(),
        "teams": lambda: uow.teams.all(),
        "credits": lambda: uow.credits.balance(UserId(1)),
        "audits": lambda: uow.audits.count_by_status(),
        "keys": lambda: uow.keys.by_hash("0" * 64),
        "sites": lambda: uow.sites.due(T0, limit=1),
        "tasks": lambda: uow.tasks.of_site(SiteId(1)),
        "rechecks": lambda: uow.rechecks.unfinished(limit=1),
        "devices": lambda: uow.devices.by_device_code_hash("0" * 64),
        "webhooks": lambda: uow.webhooks.of_audit(AuditId(1)),
        "webhook_secrets": lambda: uow.webhook_secrets.get(UserId(1)),
        "leases": lambda: uow.leases.get(AuditId(1)),
        "billing": lambda: uow.billing.get(UserId(1)),
        "indexnow": lambda: uow.indexnow.get(SiteId(1)),
        "console": lambda: uow.console.latest_day(SiteId(1)),
        "signins": lambda: uow.signins.password_hash(UserId(1)),
        "fix_impacts": lambda: uow.fix_impacts.summary([SiteId(1)]),
        "site_access": lambda: uow.site_access.get(SiteId(1)),
    }


def _refusing(calls: Mapping[str, Callable[[], object]]) -> list[str]:
    """The names whose call raised the unit of work's RuntimeError."""
    refused = []
    for name, call in calls.items():
        try:
            call()
        except RuntimeError as error:
            if str(error) == OUTSIDE:
                refused.append(name)
        except NotFound:
            pass
    return refused


def keeps_the_with_rules(uow: WebhookUnitOfWork, calls: Mapping[str, Callable[[], object]]) -> None:
    """Every call, `commit` and `rollback` refused before `with` and after it; all work inside it; a unit of
    work in use is not entered again, and is used again once left."""
    assert _refusing(calls) == list(calls)
    with pytest.raises(RuntimeError, match=OUTSIDE):
        uow.commit()
    with uow:
        assert _refusing(calls) == []
        with pytest.raises(RuntimeError, match="this unit of work is already in use"), uow:
            pass
        assert _refusing(calls) == []  # the block goes on
        uow.commit()
    assert _refusing(calls) == list(calls)
    with pytest.raises(RuntimeError, match=OUTSIDE):
        uow.commit()
    with pytest.raises(ZeroDivisionError), uow:
        _ = 1 / 0
    assert _refusing(calls) == list(calls)
    with uow:
        assert _refusing(calls) == []


def test_a_repository_used_outside_with_raises(backend: Backend) -> None:
    uow = backend.uow()
    calls = _one_call_each(uow)
    assert calls.keys() == get_type_hints(UnitOfWork).keys()
    keeps_the_with_rules(uow, calls)
    with pytest.raises(RuntimeError, match=OUTSIDE):
        uow.rollback()


def test_the_webhook_unit_of_work_alone_keeps_the_same_rules() -> None:
    uow = MemoryWebhookUnitOfWork(MemoryWebhookStore())
    calls: dict[str, Callable[[], object]] = {
        "webhooks": lambda: uow.webhooks.of_audit(AuditId(1)),
        "webhook_secrets": lambda: uow.webhook_secrets.get(UserId(1)),
    }
    keeps_the_with_rules(uow, calls)


def test_saving_a_user_changes_their_plan(backend: Backend) -> None:
    owner, _, _ = _people(backend)
    with backend.uow() as uow:
        uow.users.save(evolve(owner, plan="scale"))
        uow.commit()
    with backend.uow() as uow:
        assert uow.users.get(owner.id).plan == "scale"


def test_a_team_starts_with_its_owner_and_members_come_and_go(backend: Backend) -> None:
    owner, member, team = _people(backend)
    with backend.uow() as uow:
        assert uow.teams.get(team.id) == team
        assert uow.teams.by_name("Retro Clock") == team
        assert uow.teams.membership(team.id, owner.id) == Membership(team.id, owner.id, Role.OWNER)
        assert uow.teams.membership(team.id, member.id) is None
        uow.teams.add_member(Membership(team.id, member.id, Role.MEMBER))
        uow.teams.add_member(Membership(team.id, member.id, Role.OWNER))  # again: changes nothing
        uow.commit()
    with backend.uow() as uow:
        assert [m.user_id for m in uow.teams.members(team.id)] == sorted([owner.id, member.id])
        assert uow.teams.membership(team.id, member.id) == Membership(team.id, member.id, Role.MEMBER)
        assert uow.teams.of_user(member.id) == [team]
        uow.teams.remove_member(team.id, member.id)
        uow.teams.remove_member(team.id, member.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.teams.membership(team.id, member.id) is None
        assert uow.teams.of_user(member.id) == []


def test_a_second_team_with_the_same_name_is_a_conflict(backend: Backend) -> None:
    owner, _, _ = _people(backend)
    with backend.uow() as uow, pytest.raises(Conflict):
        uow.teams.add(Team(TeamId(0), "Retro Clock", owner.id, T0))


def test_teams_of_a_user_are_oldest_first(backend: Backend) -> None:
    owner, _, first = _people(backend)
    with backend.uow() as uow:
        second = uow.teams.add(Team(TeamId(0), "Second Hand", owner.id, T0))
        uow.commit()
    with backend.uow() as uow:
        assert uow.teams.of_user(owner.id) == [first, second]


def test_every_user_and_every_team_oldest_first(backend: Backend) -> None:
    with backend.uow() as uow:
        assert (uow.users.all(), uow.teams.all()) == ([], [])
    owner, member, first = _people(backend)
    with backend.uow() as uow:
        second = uow.teams.add(Team(TeamId(0), "Second Hand", member.id, T0))
        uow.commit()
    with backend.uow() as uow:
        assert list(uow.users.all()) == [owner, member]
        assert list(uow.teams.all()) == [first, second]


# --- credits -------------------------------------------------------------------------------------------


def test_a_grant_replayed_with_its_key_changes_nothing(backend: Backend) -> None:
    owner, _, _ = _people(backend)
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == 0
        assert uow.credits.grant(owner.id, credits(100), key="grant:1", at=T0) is True
        assert uow.credits.grant(owner.id, credits(100), key="grant:1", at=T0) is False
        uow.commit()
    with backend.uow() as uow:
        assert uow.credits.grant(owner.id, credits(100), key="grant:1", at=T0) is False
        assert uow.credits.balance(owner.id) == credits(100)
        [entry] = uow.credits.entries(owner.id)
        assert (entry.kind, entry.amount, entry.key, entry.at) == (EntryKind.GRANT, 1000, "grant:1", T0)


def test_a_refused_reservation_leaves_no_trace_even_when_the_caller_commits(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        uow.credits.grant(owner.id, 50, key="g", at=T0)
        with pytest.raises(InsufficientCredits):
            uow.credits.reserve(owner.id, 60, reference="audit:1", at=T0, team=team.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == 50
        assert uow.credits.reserved("audit:1") is None
        assert [e.kind for e in uow.credits.entries(owner.id)] == [EntryKind.GRANT]


def test_a_reservation_holds_once_and_settling_charges_the_cost_once(backend: Backend) -> None:
    owner, _, team = _people(backend)
    later = T0 + timedelta(hours=1)
    with backend.uow() as uow:
        uow.credits.grant(owner.id, 1000, key="g", at=T0)
        assert uow.credits.reserve(owner.id, 400, reference="audit:1", at=T0, team=team.id) is True
        assert uow.credits.reserve(owner.id, 400, reference="audit:1", at=T0, team=team.id) is False
        uow.commit()
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == 600
        assert uow.credits.reserved("audit:1") == 400
        assert uow.credits.is_settled("audit:1") is False
        assert uow.credits.settle("audit:1", cost=150, at=later) is True
        assert uow.credits.settle("audit:1", cost=150, at=later) is False
        uow.commit()
    with backend.uow() as uow:
        assert uow.credits.settle("audit:1", cost=400, at=later) is False
        assert uow.credits.balance(owner.id) == 850
        assert uow.credits.is_settled("audit:1") is True
        entries = uow.credits.entries(owner.id)
        assert sum(e.amount for e in entries) == 850
        assert {e.kind: e.amount for e in entries} == {
            EntryKind.GRANT: 1000,
            EntryKind.RESERVE: -400,
            EntryKind.RELEASE: 400,
            EntryKind.CHARGE: -150,
        }
        assert all(e.team_id == team.id for e in entries if e.kind is not EntryKind.GRANT)
        assert uow.credits.spent_since(owner.id, T0) == 150
        assert uow.credits.spent_since(owner.id, later + timedelta(seconds=1)) == 0
        assert uow.credits.spent_since(owner.id, T0, team=team.id) == 150
        assert uow.credits.spent_since(owner.id, T0, team=TeamId(team.id + 1)) == 0


def test_settling_charges_at_most_the_hold_and_an_unknown_hold_is_not_found(backend: Backend) -> None:
    owner, _, _ = _people(backend)
    with backend.uow() as uow:
        uow.credits.grant(owner.id, 1000, key="g", at=T0)
        uow.credits.reserve(owner.id, 300, reference="audit:2", at=T0)
        uow.credits.settle("audit:2", cost=999, at=T0)
        with pytest.raises(NotFound):
            uow.credits.settle("audit:999_999", cost=1, at=T0)
        uow.commit()
    with backend.uow() as uow:
        assert uow.credits.balance(owner.id) == 700
        assert uow.credits.spent_since(owner.id, T0) == 300


def test_a_zero_reservation_on_an_empty_account_is_allowed(backend: Backend) -> None:
    owner, _, _ = _people(backend)
    with backend.uow() as uow:
        assert uow.credits.reserve(owner.id, 0, reference="recheck:1", at=T0) is True
        assert uow.credits.settle("recheck:1", cost=0, at=T0) is True
        assert uow.credits.balance(owner.id) == 0


def test_ledger_entries_are_oldest_first(backend: Backend) -> None:
    owner, _, _ = _people(backend)
    with backend.uow() as uow:
        uow.credits.grant(owner.id, 10, key="b-later", at=T0 + timedelta(minutes=1))
        uow.credits.grant(owner.id, 10, key="c-first", at=T0)
        uow.credits.grant(owner.id, 10, key="a-first", at=T0)
        uow.commit()
    with backend.uow() as uow:
        assert [e.key for e in uow.credits.entries(owner.id)] == ["a-first", "c-first", "b-later"]


# --- audits --------------------------------------------------------------------------------------------


def test_an_audit_reads_back_equal_with_aware_utc_datetimes(backend: Backend) -> None:
    owner, _, team = _people(backend)
    paris = timezone(timedelta(hours=1))
    with backend.uow() as uow:
        audit = uow.audits.add(_audit(team, owner, at=datetime(2026, 11, 22, 10, 30, tzinfo=paris)))
        uow.commit()
    with backend.uow() as uow:
        stored = uow.audits.get(audit.id, team=team.id)
    assert stored == audit
    assert stored.created_at == datetime(2026, 11, 22, 9, 30, tzinfo=UTC)
    if backend.name != "memory":  # the memory store keeps the very objects it was given
        assert stored.created_at.tzinfo is UTC


def test_an_audit_that_renders_reads_back_rendering(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        audit = uow.audits.add(
            evolve(_audit(team, owner, at=datetime(2026, 11, 22, tzinfo=UTC)), render=True)
        )
        uow.commit()
    with backend.uow() as uow:
        assert uow.audits.get(audit.id, team=team.id).render is True


def test_another_teams_audit_does_not_exist(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        audit = uow.audits.add(_audit(team, owner))
        uow.commit()
    with backend.uow() as uow:
        with pytest.raises(NotFound):
            uow.audits.get(audit.id, team=TeamId(team.id + 1))
        with pytest.raises(NotFound):
            uow.audits.get_any(AuditId(audit.id + 1))
        assert uow.audits.get_any(audit.id) == audit


def test_saving_an_audit_moved_by_someone_else_is_a_concurrent_update(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        audit = uow.audits.add(_audit(team, owner))
        uow.commit()
    first, second = backend.uow(), backend.uow()
    with first:
        mine = first.audits.get(audit.id, team=team.id)
    with second:
        theirs = second.audits.get(audit.id, team=team.id)
        second.audits.save(theirs.start(now=T0))
        second.commit()
    with first:
        # a fresh unit of work that never loaded it cannot save it either
        with pytest.raises(ConcurrentUpdate):
            first.audits.save(mine.start(now=T0))
    with backend.uow() as uow:
        stored = uow.audits.get_any(audit.id)
        assert (stored.status, stored.version) == (AuditStatus.RUNNING, 1)


def test_an_overtaken_unit_of_work_cannot_save_its_stale_audit(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        audit = uow.audits.add(_audit(team, owner)).start(now=T0)
        uow.audits.save(audit)
        uow.commit()
    with backend.uow() as uow:  # on SQLite too: a unit of work that has only read holds no write lock
        stale = uow.audits.get(audit.id, team=team.id)
        with backend.uow() as other:
            other.audits.save(
                other.audits.get_any(audit.id).record_progress(pages_crawled=3, pages_not_modified=0, now=T0)
            )
            other.commit()
        with pytest.raises(ConcurrentUpdate):
            uow.audits.save(stale.record_progress(pages_crawled=1, pages_not_modified=0, now=T0))
    with backend.uow() as uow:
        stored = uow.audits.get_any(audit.id)
        assert (stored.pages_crawled, stored.version) == (3, 2)


def test_several_saves_in_one_unit_of_work_follow_its_own_versions(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        audit = uow.audits.add(_audit(team, owner))
        audit = audit.start(now=T0)
        uow.audits.save(audit)
        audit = audit.record_progress(pages_crawled=2, pages_not_modified=1, now=T0)
        uow.audits.save(audit)
        uow.commit()
    with backend.uow() as uow:
        assert uow.audits.get_any(audit.id) == audit
        with pytest.raises(NotFound):
            uow.audits.save(evolve(audit, id=AuditId(audit.id + 100)))


def test_noted_progress_moves_forward_only_leaves_the_version_and_never_touches_an_ended_audit(
    backend: Backend,
) -> None:
    owner, _, team = _people(backend)
    later = T0 + timedelta(seconds=30)
    with backend.uow() as uow:
        running = uow.audits.add(_audit(team, owner)).start(now=T0)
        uow.audits.save(running)
        ended, _ = uow.audits.add(_audit(team, owner)).cancel(now=T0)
        uow.audits.save(ended)
        uow.commit()
    with backend.uow() as uow:
        uow.audits.note_progress(running.id, at=later)
        uow.audits.note_progress(running.id, at=T0 + timedelta(seconds=10))  # older: kept out
        uow.audits.note_progress(ended.id, at=later)
        uow.commit()
    with backend.uow() as uow:
        noted = uow.audits.get_any(running.id)
        assert (noted.last_progress_at, noted.version) == (later, running.version)
        assert uow.audits.get_any(ended.id).last_progress_at == T0
        uow.audits.save(noted.record_progress(pages_crawled=1, pages_not_modified=0, now=later))
        uow.commit()


def test_audits_list_newest_first_with_personal_ones_and_a_total(backend: Backend) -> None:
    owner, member, team = _people(backend)
    with backend.uow() as uow:
        made = [
            uow.audits.add(_audit(team, owner, at=T0 + timedelta(minutes=i), site=i % 2)) for i in range(5)
        ]
        personal = uow.audits.add(evolve(_audit(team, member, at=T0 - timedelta(days=1)), team_id=TeamId(0)))
        uow.commit()
    with backend.uow() as uow:
        rows, total = uow.audits.list(TeamAuditQuery(team=team.id, offset=1, limit=2))
        assert (list(rows), total) == ([made[3], made[2]], 5)
        rows, total = uow.audits.list(TeamAuditQuery(team=team.id, user=member.id, limit=10))
        assert total == 6 and rows[-1] == personal
        rows, total = uow.audits.list(TeamAuditQuery(team=team.id, site=SiteId(1)))
        assert (list(rows), total) == ([made[3], made[1]], 2)
        assert uow.audits.count_started_by(owner.id) == 5
        assert uow.audits.count_started_by(member.id) == 1


def test_audits_list_filters_by_status(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        made = [uow.audits.add(_audit(team, owner, at=T0 + timedelta(minutes=i))) for i in range(4)]
        uow.audits.save(made[1].start(now=T0))
        uow.audits.save(made[2].cancel(now=T0)[0])
        uow.commit()
    with backend.uow() as uow:
        rows, total = uow.audits.list(TeamAuditQuery(team=team.id, statuses=(AuditStatus.QUEUED,)))
        assert ([a.id for a in rows], total) == ([made[3].id, made[0].id], 2)
        rows, total = uow.audits.list(
            TeamAuditQuery(team=team.id, statuses=(AuditStatus.RUNNING, AuditStatus.CANCELLED), limit=1)
        )
        assert ([a.id for a in rows], total) == ([made[2].id], 2)
        assert uow.audits.list(TeamAuditQuery(team=team.id, statuses=(AuditStatus.DONE,))) == ([], 0)
        assert uow.audits.list(TeamAuditQuery(team=team.id))[1] == 4


def test_the_latest_done_audit_is_of_the_same_site_or_origin_and_older(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        ids = []
        for site in (None, None, 7, None):
            audit = uow.audits.add(_audit(team, owner, site=site))
            audit = audit.start(now=T0).stop_crawling(partial=False, now=T0)
            audit, _ = audit.publish_report(health_score=90, now=T0)
            uow.audits.save(audit)
            ids.append(audit.id)
        uow.commit()
    with backend.uow() as uow:
        origin = "https://retro-clock.example"
        found = uow.audits.latest_done(team=team.id, origin=origin, site=None, before=ids[3])
        assert found is not None and found.id == ids[1]
        assert uow.audits.latest_done(team=team.id, origin=origin, site=None, before=ids[0]) is None
        in_site = uow.audits.latest_done(team=team.id, origin=origin, site=SiteId(7), before=ids[3])
        assert in_site is not None and in_site.id == ids[2]
        assert (
            uow.audits.latest_done(team=TeamId(team.id + 1), origin=origin, site=None, before=ids[3]) is None
        )


def test_the_latest_scored_audit_skips_audits_without_a_score(backend: Backend) -> None:
    owner, _, team = _people(backend)
    with backend.uow() as uow:
        ids = []
        for score in (80, None, None):
            audit = uow.audits.add(_audit(team, owner))
            audit = audit.start(now=T0).stop_crawling(partial=False, now=T0)
            audit, _ = audit.publish_report(health_score=score, now=T0)
            uow.audits.save(audit)
            ids.append(audit.id)
        uow.commit()
    with backend.uow() as uow:
        origin = "https://retro-clock.example"
        latest = uow.audits.latest_done(team=team.id, origin=origin, site=None, before=ids[2])
        assert latest is not None and latest.id == ids[1]
        scored = uow.audits.latest_done(team=team.id, origin=origin, site=None, before=ids[2], scored=True)
        assert scored is not None and scored.id == ids[0]
        assert (
            uow.audits.latest_done(team=team.id, origin=origin, site=None, before=ids[0], scored=True) is None
        )


def test_audits_are_counted_by_status_across_teams(backend: Backend) -> None:
    owner, member, team = _people(backend)
    with backend.uow() as uow:
        other = uow.teams.add(Team(TeamId(0), "Other Shop", member.id, T0))
        uow.audits.add(_audit(team, owner))
        running = uow.audits.add(_audit(other, member))
        uow.audits.save(running.start(now=T0))
        for _ in range(2):
            done = uow.audits.add(_audit(team, owner)).start(now=T0).stop_crawling(partial=False, now=T0)
            uow.audits.save(done.publish_report(health_score=90, now=T0)[0])
        uow.commit()
    with backend.uow() as uow:
        assert dict(uow.audits.count_by_status()) == {
            AuditStatus.QUEUED: 1,
            AuditStatus.RUNNING: 1,
            AuditStatus.DONE: 2,
        }
