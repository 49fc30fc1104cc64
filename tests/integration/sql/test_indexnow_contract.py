"""IndexNow storage: the same contract on memory, SQLite and PostgreSQL (state round trip with its
optimistic version, the per-day URL ledger, submissions once per audit, newest first)."""

from datetime import date, timedelta

import pytest
from sql_backend import T0, Backend

from siteaudit.domain.error import ConcurrentUpdate
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.indexnow import (
    Detection,
    DetectionSource,
    DetectionStatus,
    IndexNowSite,
    Submission,
    SubmitTrigger,
    judge_key_file,
)

SITE = SiteId(7)
DAY = date(2026, 11, 25)


def _state() -> IndexNowSite:
    return IndexNowSite.generated(SITE, TeamId(3), "0123456789abcdef0123456789abcdef")


def test_the_state_reads_back_equal_with_its_check_and_detection(backend: Backend) -> None:
    with backend.uow() as uow:
        assert uow.indexnow.get(SITE) is None
        uow.indexnow.add(_state())
        uow.commit()
    with backend.uow() as uow:
        state = uow.indexnow.get(SITE)
        assert state == _state()
        url = "https://retro-clock.example/0123456789abcdef0123456789abcdef.txt"
        check = judge_key_file(state.key, url, status=200, body=state.key, error=None, at=T0)
        changed = state.with_key("retro-clock-key-1", "https://retro-clock.example/k.txt").checked(check)
        changed = changed.with_auto(True, T0).detected(
            Detection(DetectionStatus.FOUND, "retro-clock-key-1", url, DetectionSource.TEAM, None, T0, 3)
        )
        changed, granted = changed.reserve(12, day=DAY)
        changed = changed.submitted(T0 + timedelta(minutes=1))
        assert granted == 12
        uow.indexnow.save(changed)
        uow.commit()
    with backend.uow() as uow:
        assert uow.indexnow.get(SITE) == changed


def test_a_second_first_state_and_a_stale_save_are_concurrent_updates(backend: Backend) -> None:
    with backend.uow() as uow:
        uow.indexnow.add(_state())
        uow.commit()
    with backend.uow() as uow:
        with pytest.raises(ConcurrentUpdate):
            uow.indexnow.add(_state())
    with backend.uow() as uow:
        loaded = uow.indexnow.get(SITE)
        assert loaded is not None
    with backend.uow() as uow:
        other = uow.indexnow.get(SITE)
        assert other is not None
        uow.indexnow.save(other.with_auto(True, T0))
        uow.commit()
    with backend.uow() as uow:
        with pytest.raises(ConcurrentUpdate):  # never loaded by this unit of work
            uow.indexnow.save(loaded.with_auto(True, T0))
    with backend.uow() as uow:
        assert uow.indexnow.get(SITE) == other.with_auto(True, T0)


def test_the_ledger_counts_a_url_once_a_day_and_forgets_earlier_days(backend: Backend) -> None:
    hashes = [f"{n:064x}" for n in range(1_200)]  # more than one IN list
    with backend.uow() as uow:
        uow.indexnow.count_urls(SITE, DAY, hashes)
        uow.indexnow.count_urls(SITE, DAY, hashes[:10])  # again: nothing new
        uow.indexnow.mark_accepted(SITE, DAY, hashes[:600])
        uow.commit()
    with backend.uow() as uow:
        known = uow.indexnow.ledger(SITE, DAY, [*hashes, "f" * 64])
        assert len(known) == 1_200
        assert sum(known.values()) == 600 and known[hashes[0]] and not known[hashes[-1]]
        assert uow.indexnow.ledger(SiteId(8), DAY, hashes) == {}
        uow.indexnow.count_urls(SITE, DAY + timedelta(days=1), hashes[:1])
        uow.commit()
    with backend.uow() as uow:
        assert uow.indexnow.ledger(SITE, DAY, hashes) == {}
        assert uow.indexnow.ledger(SITE, DAY + timedelta(days=1), hashes) == {hashes[0]: False}


def test_submissions_are_kept_once_per_audit_newest_first(backend: Backend) -> None:
    def submission(minutes: int, audit: int | None) -> Submission:
        return Submission(
            site_id=SITE,
            at=T0 + timedelta(minutes=minutes),
            trigger=SubmitTrigger.API if audit is None else SubmitTrigger.AUTO,
            urls=3,
            submitted=2,
            requests=1,
            status="partial" if audit is None else "key_unverified",
            status_code=None if audit else 200,
            audit_id=None if audit is None else AuditId(audit),
        )

    with backend.uow() as uow:
        assert uow.indexnow.add_submission(submission(1, None))
        assert uow.indexnow.add_submission(submission(2, None))  # API submissions are never duplicates
        assert uow.indexnow.add_submission(submission(3, 41))
        assert not uow.indexnow.add_submission(submission(4, 41))
        uow.commit()
    with backend.uow() as uow:
        recent = uow.indexnow.recent(SITE, limit=2)
        assert recent == [submission(3, 41), submission(2, None)]
        assert uow.indexnow.has_audit_submission(SITE, 41) and not uow.indexnow.has_audit_submission(SITE, 42)
        assert uow.indexnow.recent(SiteId(8), limit=10) == []
