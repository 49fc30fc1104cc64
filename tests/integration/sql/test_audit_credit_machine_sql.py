"""The audit-and-credits state machine of tests/unit/services on SQLite and PostgreSQL.

Same rules and invariants as on the memory adapters, over the SQL unit of work. Each example starts on
the test's migrated database emptied (DELETE, far quicker than a new schema), with fewer examples than
the memory run: a step costs a few transactions here.
"""

from collections.abc import Callable

from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from sql_backend import Backend

from siteaudit.adapters.sql.tables import metadata
from siteaudit.ports.repository import UnitOfWork
from tests.unit.services.test_audit_credit_machine import AuditCreditMachine

SQL_EXAMPLES = 30


def emptied(backend: Backend) -> Callable[[], UnitOfWork]:
    """The backend's units of work, once every row of its database is deleted."""
    assert backend.engine is not None
    with backend.engine.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())
    return backend.uow


def test_audits_and_credits_add_up_on_sql(sql_backend: Backend) -> None:
    class OnSql(AuditCreditMachine):
        def empty_storage(self) -> Callable[[], UnitOfWork]:
            return emptied(sql_backend)

    run_state_machine_as_test(
        OnSql, settings=settings(max_examples=min(SQL_EXAMPLES, settings().max_examples))
    )
