"""Rechecks in SQL: the queryable fields as columns, the nested values as JSON through one row converter."""

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

from attrs import evolve
from cattrs.preconf.json import make_converter
from sqlalchemy import select

from siteaudit.adapters.sql.rows import column, inserted_id, reader, row_values
from siteaudit.adapters.sql.tables import rechecks
from siteaudit.adapters.sql.version import Versioned
from siteaudit.domain.error import NotFound
from siteaudit.domain.ids import RecheckId, TeamId
from siteaudit.domain.recheck import (
    Recheck,
    RecheckStatus,
    RecheckTarget,
    RecheckUrl,
    TaskOutcome,
    UrlObservation,
    UrlOutcome,
)

# The row converter (one per boundary): sets become sorted lists, so a row reads the same every time.
recheck_converter: Final = make_converter()
recheck_converter.register_unstructure_hook(frozenset, lambda values: sorted(values))

_URLS: Final = tuple[RecheckUrl, ...]
_TARGETS: Final = tuple[RecheckTarget, ...]
_OBSERVATIONS: Final = tuple[UrlObservation, ...]
_URL_RESULTS: Final = tuple[UrlOutcome, ...]
_TASK_RESULTS: Final = tuple[TaskOutcome, ...]


def _to_json(value: Any, kind: Any) -> Any:
    return None if value is None else recheck_converter.unstructure(value, kind)


def _from_json(value: Any, kind: Any) -> Any:
    return None if value is None else recheck_converter.structure(value, kind)


recheck_from_row: Final = reader(
    Recheck,
    parent_audit_id=column("parent_crawl_id"),
    urls=column(read=partial(_from_json, kind=_URLS)),
    targets=column(read=partial(_from_json, kind=_TARGETS)),
    observations=column(read=partial(_from_json, kind=_OBSERVATIONS)),
    url_results=column(read=partial(_from_json, kind=_URL_RESULTS)),
    task_results=column(read=partial(_from_json, kind=_TASK_RESULTS)),
)


def recheck_values(recheck: Recheck) -> dict[str, Any]:
    return row_values(
        recheck,
        leave_out=("id", "parent_audit_id"),
        parent_crawl_id=recheck.parent_audit_id,
        codes=None if recheck.codes is None else sorted(recheck.codes),
        urls=_to_json(recheck.urls, _URLS),
        targets=_to_json(recheck.targets, _TARGETS),
        observations=_to_json(recheck.observations, _OBSERVATIONS),
        url_results=_to_json(recheck.url_results, _URL_RESULTS),
        task_results=_to_json(recheck.task_results, _TASK_RESULTS),
    )


class SqlRecheckRepository(Versioned):
    kind = "recheck"

    def _loaded(self, row: Any, recheck_id: RecheckId) -> Recheck:
        if row is None:
            raise NotFound("recheck", recheck_id)
        return self._seen_as(recheck_from_row(row))

    def add(self, recheck: Recheck) -> Recheck:
        new_id = inserted_id(self._c(), rechecks, recheck_values(recheck), id=recheck.id)
        return self._seen_as(evolve(recheck, id=RecheckId(new_id)))

    def get(self, recheck_id: RecheckId, *, team: TeamId) -> Recheck:
        query = select(rechecks).where(rechecks.c.id == recheck_id, rechecks.c.team_id == team)
        return self._loaded(self._c().execute(query).first(), recheck_id)

    def get_any(self, recheck_id: RecheckId) -> Recheck:
        query = select(rechecks).where(rechecks.c.id == recheck_id)
        return self._loaded(self._c().execute(query).first(), recheck_id)

    def unfinished(self, *, limit: int) -> Sequence[Recheck]:
        query = (
            select(rechecks)
            .where(rechecks.c.status.in_([RecheckStatus.QUEUED.value, RecheckStatus.RUNNING.value]))
            .order_by(rechecks.c.id)
            .limit(limit)
        )
        return [self._loaded(row, RecheckId(row.id)) for row in self._c().execute(query)]

    def save(self, recheck: Recheck) -> None:
        self._update(rechecks, [rechecks.c.id == recheck.id], recheck.id, recheck_values(recheck))
