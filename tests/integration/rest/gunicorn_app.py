"""A test-side gunicorn app factory: the production app on PostgreSQL with the shared SQL rate limiter.

`gunicorn 'gunicorn_app:create_app()'` with SITEAUDIT_DATABASE_URL and SITEAUDIT_SECRET_KEY set, and this
directory on PYTHONPATH. Bootstrap does not yet choose the SQL limiter for PostgreSQL; this factory does
what it should. SITEAUDIT_TEST_FROZEN_AT (ISO time) freezes the clock in every worker, so a test can count
exactly how many requests a bucket admits however long the load takes to send; each answer names the
worker process that served it (X-Worker-Pid) so a test can prove several processes shared the work.
"""

import os
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.sql import engine_for
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.settings import Settings

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def _with_worker_pid(app: WsgiApp) -> WsgiApp:
    pid = str(os.getpid())

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            return start_response(status, [*headers, ("X-Worker-Pid", pid)], *exc)

        return app(environ, start)

    return wrapped


def sql_overrides(settings: Settings) -> dict[str, Any]:
    """What bootstrap should choose for a PostgreSQL database: units of work sealing secrets with the
    shared SITEAUDIT_SECRET_KEY, the SQL crawl store and the SQL rate limiter, all on one engine. The
    schema is not migrated here (`siteaudit migrate` does that once, not every worker at start)."""
    from siteaudit.adapters.sql import sql_crawl_store, sql_unit_of_work_factory
    from siteaudit.adapters.sql.ratelimit import SqlRateLimiter

    engine = engine_for(settings.database_url)
    return {
        "uow": sql_unit_of_work_factory(engine, secret_key=settings.secret_key, migrate=False),
        "crawl": sql_crawl_store(engine, migrate=False),
        "limiter": SqlRateLimiter(engine),
        # Nothing served here starts a crawl: no broker needed.
        "queue": MemoryTaskQueue(),
    }


def create_app() -> WsgiApp:
    settings = Settings.from_env()
    overrides = sql_overrides(settings)
    frozen_at = os.environ.get("SITEAUDIT_TEST_FROZEN_AT")
    if frozen_at:
        overrides["clock"] = FixedClock(datetime.fromisoformat(frozen_at))
    app: WsgiApp = bootstrap(settings, **overrides).rest_api()
    return _with_worker_pid(app)
