"""Fix tasks in SQL, keyed by (site, task key): saved new or changed, with optimistic version checks."""

from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError

from siteaudit.adapters.sql.rows import column, found, reader, row_values
from siteaudit.adapters.sql.tables import fix_tasks
from siteaudit.adapters.sql.version import Versioned
from siteaudit.domain.error import ConcurrentUpdate
from siteaudit.domain.ids import SiteId, TaskKey
from siteaudit.domain.task import FixTask

task_from_row: Final = reader(FixTask, audit_id=column("crawl_id"))


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
