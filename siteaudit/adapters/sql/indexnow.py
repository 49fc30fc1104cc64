"""IndexNow state in SQL: one versioned row per site, the per-day URL ledger, and the submissions."""

from collections.abc import Collection, Mapping, Sequence
from datetime import date, datetime
from typing import Any, Final

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from siteaudit.adapters.sql.dialect import insert_ignoring_conflicts
from siteaudit.adapters.sql.rows import column, reader, row_values
from siteaudit.adapters.sql.tables import indexnow_sites, indexnow_submissions, indexnow_urls
from siteaudit.adapters.sql.version import Versioned
from siteaudit.domain.error import ConcurrentUpdate
from siteaudit.domain.ids import SiteId
from siteaudit.domain.indexnow import (
    Detection,
    IndexNowSite,
    KeyCheck,
    Submission,
)

_CHUNK = 500  # hashes per IN (...) list


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _check_json(check: KeyCheck | None) -> dict[str, Any] | None:
    if check is None:
        return None
    return {
        "result": check.result.value,
        "reason": None if check.reason is None else check.reason.value,
        "detail": check.detail,
        "url": check.url,
        "at": check.at.isoformat(),
    }


_key_check: Final = reader(KeyCheck, at=column(read=_time))


def _check_of(value: dict[str, Any] | None) -> KeyCheck | None:
    return None if value is None else _key_check(value)


def _detection_json(detection: Detection | None) -> dict[str, Any] | None:
    if detection is None:
        return None
    return {
        "status": detection.status.value,
        "key": detection.key,
        "key_file_url": detection.key_file_url,
        "source": None if detection.source is None else detection.source.value,
        "platform": detection.platform,
        "checked_at": detection.checked_at.isoformat(),
        "requests": detection.requests,
    }


_detection: Final = reader(Detection, checked_at=column(read=_time))


def _detection_of(value: dict[str, Any] | None) -> Detection | None:
    return None if value is None else _detection(value)


def _values(state: IndexNowSite) -> dict[str, Any]:
    return row_values(
        state,
        leave_out=("site_id",),
        last_check=_check_json(state.last_check),
        detection=_detection_json(state.detection),
    )


_submission: Final = reader(Submission)


_state_of: Final = reader(
    IndexNowSite, last_check=column(read=_check_of), detection=column(read=_detection_of)
)


def _chunks(values: Collection[str]) -> list[list[str]]:
    items = list(values)
    return [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]


class SqlIndexNowRepository(Versioned):
    kind = "indexnow"

    def get(self, site_id: SiteId, *, lock: bool = False) -> IndexNowSite | None:
        query = select(indexnow_sites).where(indexnow_sites.c.site_id == site_id)
        row = self._c().execute(query.with_for_update() if lock else query).first()
        if row is None:
            return None
        state = _state_of(row)
        self._saw(state.site_id, state.version)
        return state

    def add(self, state: IndexNowSite) -> None:
        conn = self._c()
        try:
            with conn.begin_nested():
                conn.execute(insert(indexnow_sites).values(site_id=state.site_id, **_values(state)))
        except IntegrityError:
            raise ConcurrentUpdate(self.kind, state.site_id) from None
        self._saw(state.site_id, state.version)

    def save(self, state: IndexNowSite) -> None:
        self._update(
            indexnow_sites, [indexnow_sites.c.site_id == state.site_id], state.site_id, _values(state)
        )

    def ledger(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> Mapping[str, bool]:
        found: dict[str, bool] = {}
        for chunk in _chunks(url_hashes):
            rows = self._c().execute(
                select(indexnow_urls.c.url_hash, indexnow_urls.c.accepted).where(
                    indexnow_urls.c.site_id == site_id,
                    indexnow_urls.c.day == day,
                    indexnow_urls.c.url_hash.in_(chunk),
                )
            )
            found.update({row.url_hash: row.accepted for row in rows})
        return found

    def count_urls(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> None:
        conn = self._c()
        conn.execute(
            delete(indexnow_urls).where(indexnow_urls.c.site_id == site_id, indexnow_urls.c.day < day)
        )
        rows = [{"site_id": site_id, "day": day, "url_hash": h, "accepted": False} for h in url_hashes]
        for start in range(0, len(rows), _CHUNK):
            conn.execute(insert_ignoring_conflicts(conn, indexnow_urls), rows[start : start + _CHUNK])

    def mark_accepted(self, site_id: SiteId, day: date, url_hashes: Collection[str]) -> None:
        for chunk in _chunks(url_hashes):
            self._c().execute(
                update(indexnow_urls)
                .where(
                    indexnow_urls.c.site_id == site_id,
                    indexnow_urls.c.day == day,
                    indexnow_urls.c.url_hash.in_(chunk),
                )
                .values(accepted=True)
            )

    def add_submission(self, submission: Submission) -> bool:
        values = {
            "site_id": submission.site_id,
            "at": submission.at,
            "trigger": submission.trigger.value,
            "urls": submission.urls,
            "submitted": submission.submitted,
            "requests": submission.requests,
            "status": submission.status,
            "status_code": submission.status_code,
            "audit_id": submission.audit_id,
        }
        statement = (
            insert_ignoring_conflicts(self._c(), indexnow_submissions)
            .values(values)
            .returning(indexnow_submissions.c.id)
        )
        return self._c().execute(statement).first() is not None

    def has_audit_submission(self, site_id: SiteId, audit_id: int) -> bool:
        query = select(indexnow_submissions.c.id).where(
            indexnow_submissions.c.site_id == site_id, indexnow_submissions.c.audit_id == audit_id
        )
        return self._c().execute(query).first() is not None

    def recent(self, site_id: SiteId, *, limit: int) -> Sequence[Submission]:
        rows = self._c().execute(
            select(indexnow_submissions)
            .where(indexnow_submissions.c.site_id == site_id)
            .order_by(indexnow_submissions.c.at.desc(), indexnow_submissions.c.id.desc())
            .limit(limit)
        )
        return [_submission(row) for row in rows]
