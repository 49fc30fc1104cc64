"""Fix tasks in SQL, keyed by (site, task key): saved new or changed, with optimistic version checks."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from siteaudit.adapters.sql.rows import found, row_values
from siteaudit.adapters.sql.tables import fix_tasks
from siteaudit.adapters.sql.version import Versioned
from siteaudit.domain.error import ConcurrentUpdate
from siteaudit.domain.ids import AuditId, RecheckId, SiteId, TaskKey
from siteaudit.domain.issue import Severity
from siteaudit.domain.task import FixedBy, FixTask, TaskStatus


def task_from_row(row: Any) -> FixTask:
    return FixTask(
        key=TaskKey(row.key),
        site_id=SiteId(row.site_id),
        code=row.code,
        template=row.template,
        severity=Severity(row.severity),
        pages=row.pages,
        audit_id=AuditId(row.crawl_id),
        created_at=row.created_at,
        updated_at=row.updated_at,
        sample_urls=tuple(row.sample_urls),
        clicks_28d=row.clicks_28d,
        impressions_28d=row.impressions_28d,
        status=TaskStatus(row.status),
        status_before_verifying=None
        if row.status_before_verifying is None
        else TaskStatus(row.status_before_verifying),
        recheck_id=None if row.recheck_id is None else RecheckId(row.recheck_id),
        fixed_at=row.fixed_at,
        fixed_by=None if row.fixed_by is None else FixedBy(row.fixed_by),
        version=row.version,
        previous_template=row.previous_template,
    )


def task_values(task: FixTask) -> dict[str, Any]:
    return row_values(
        task, leave_out=("audit_id",), crawl_id=task.audit_id, sample_urls=list(task.sample_urls)
    )


class SqlFixTaskRepository(Versioned):
    kind = "task"

    def _loaded(self, row: Any) -> FixTask:
        task = task_from_row(row)
        self._saw((task.site_id, task.key), task.version)
        return task

    def of_site(self, site_id: SiteId) -> Sequence[FixTask]:
        rows = self._c().execute(
            select(fix_tasks).where(fix_tasks.c.site_id == site_id).order_by(fix_tasks.c.key)
        )
        return [self._loaded(r) for r in rows]

    def get(self, site_id: SiteId, key: TaskKey) -> FixTask:
        where = (fix_tasks.c.site_id == site_id, fix_tasks.c.key == key)
        row = found(self._c(), fix_tasks, *where, entity="task", key=key)
        return self._loaded(row)

    def save(self, task: FixTask) -> None:
        where = [fix_tasks.c.site_id == task.site_id, fix_tasks.c.key == task.key]
        ident = (task.site_id, task.key)
        values = task_values(task)
        if (self.kind, ident) in self._seen or self._exists(fix_tasks, where):
            self._update(fix_tasks, where, ident, values)
            return
        conn = self._c()
        try:
            with conn.begin_nested():
                conn.execute(insert(fix_tasks).values(values))
        except IntegrityError:
            # Another unit of work created the same task first: this one never saw that version.
            raise ConcurrentUpdate(self.kind, ident) from None
        self._saw(ident, task.version)

    def delete(self, site_id: SiteId, key: TaskKey) -> None:
        self._c().execute(delete(fix_tasks).where(fix_tasks.c.site_id == site_id, fix_tasks.c.key == key))
