"""The SQL adapter: SQLAlchemy Core over PostgreSQL (psycopg 3) or a SQLite file, with Alembic migrations."""

from siteaudit.adapters.sql.crawl import SqlCrawlStore, sql_crawl_store
from siteaudit.adapters.sql.engine import dispose_engines, engine_for
from siteaudit.adapters.sql.migration import Migrated, migrate
from siteaudit.adapters.sql.unit_of_work import SqlUnitOfWork, sql_unit_of_work_factory

__all__ = [
    "Migrated",
    "SqlCrawlStore",
    "SqlUnitOfWork",
    "dispose_engines",
    "engine_for",
    "migrate",
    "sql_crawl_store",
    "sql_unit_of_work_factory",
]
