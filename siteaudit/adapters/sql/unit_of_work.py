"""The SQL unit of work: one connection and one transaction per use case, committed or rolled back whole."""

import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Final, Self

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql.access import SqlSiteAccessRepository
from siteaudit.adapters.sql.account import SqlTeamRepository, SqlUserRepository
from siteaudit.adapters.sql.apikey import SqlApiKeyRepository
from siteaudit.adapters.sql.audit import SqlAuditRepository
from siteaudit.adapters.sql.billing import SqlBillingRepository
from siteaudit.adapters.sql.console import SqlConsoleStore
from siteaudit.adapters.sql.credit import SqlCreditLedger
from siteaudit.adapters.sql.device import SqlDeviceLoginRepository
from siteaudit.adapters.sql.engine import LAZY_BEGIN, engine_for, is_sqlite
from siteaudit.adapters.sql.impact import SqlFixImpactRepository
from siteaudit.adapters.sql.indexnow import SqlIndexNowRepository
from siteaudit.adapters.sql.lease import SqlLeaseRepository
from siteaudit.adapters.sql.recheck import SqlRecheckRepository
from siteaudit.adapters.sql.signin import SqlSignInRepository
from siteaudit.adapters.sql.site import SqlSiteRepository
from siteaudit.adapters.sql.task import SqlFixTaskRepository
from siteaudit.adapters.sql.webhook import SqlWebhookRepository, SqlWebhookSecrets
from siteaudit.ports.access import SiteAccessRepository
from siteaudit.ports.device import DeviceLoginRepository
from siteaudit.ports.impact import FixImpactRepository
from siteaudit.ports.indexnow import IndexNowRepository
from siteaudit.ports.keys import ApiKeyRepository
from siteaudit.ports.lease import LeaseRepository
from siteaudit.ports.payment import BillingRepository
from siteaudit.ports.repository import (
    AuditRepository,
    CreditLedger,
    TeamRepository,
    UnitOfWork,
    UserRepository,
)
from siteaudit.ports.searchconsole import ConsoleStore
from siteaudit.ports.signin import SignInRepository
from siteaudit.ports.site import FixTaskRepository, RecheckRepository, SiteRepository
from siteaudit.ports.webhook import WebhookRepository, WebhookSecrets

KEY_FILE_SUFFIX: Final = ".key"  # beside the SQLite file: `siteaudit.sqlite3.key`, as bootstrap reads it


class MissingSecretKey(ValueError):
    """PostgreSQL without SITEAUDIT_SECRET_KEY: processes on several machines could not share a key file."""

    def __init__(self) -> None:
        super().__init__(
            "SITEAUDIT_SECRET_KEY is empty: with PostgreSQL every process must use the same key to encrypt "
            "and read webhook signing secrets. Set it to the output of "
            "`python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'` "
            "(or any long passphrase) in every process's environment."
        )


def secret_box(engine: Engine, secret_key: str = "") -> SecretBox:
    """The box for `secret_key`; when it is empty on SQLite, the key kept in a file beside the database
    (made once, mode 0600). Raises MissingSecretKey for an empty key on PostgreSQL."""
    if secret_key.strip():
        return SecretBox(secret_key)
    if not is_sqlite(engine):
        raise MissingSecretKey()
    database = engine.url.database
    assert database is not None  # normalise_url refuses SQLite without a file
    path = Path(database).expanduser().with_name(Path(database).name + KEY_FILE_SUFFIX)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass  # made by an earlier start, or by another process starting at the same moment
    else:
        with os.fdopen(fd, "w") as handle:
            handle.write(SecretBox.generate_key())
    key = path.read_text().strip()
    if not key:
        raise MissingSecretKey()  # a file being written this very moment by another process
    return SecretBox(key)


_boxes: "weakref.WeakKeyDictionary[Engine, SecretBox]" = weakref.WeakKeyDictionary()
_boxes_lock = threading.Lock()


def _default_box(engine: Engine) -> SecretBox:
    """For a unit of work made without a box: the SQLite key file's box, made once per engine."""
    with _boxes_lock:
        box = _boxes.get(engine)
        if box is None:
            box = _boxes[engine] = secret_box(engine)
        return box


class SqlUnitOfWork:
    """`with uow: ...; uow.commit()`. Not shareable between threads; make one per use case.

    The transaction begins at the first statement that may write (on SQLite with BEGIN IMMEDIATE: the
    single writer) and ends at `commit`, `rollback` or the end of the `with` block, which rolls back
    whatever was not committed. Statements after a `commit` run in a new transaction. The reads before the
    first write run outside it (LAZY_BEGIN, engine.py): on PostgreSQL in autocommit, the same under READ
    COMMITTED, and a use case that only reads costs no BEGIN and ROLLBACK; on SQLite in a read transaction
    of their own, so a use case that only reads neither waits for the writer nor holds it up. A read that
    must be in the writing transaction is a `with_for_update()` SELECT (it begins it on both databases).

    `box` encrypts webhook secrets; without one, the SQLite key file beside the database is used the first
    time a secret is read or written (on PostgreSQL that raises MissingSecretKey: pass the box).
    """

    def __init__(self, engine: Engine, box: SecretBox | None = None) -> None:
        self.engine = engine
        self._box = box
        self._connection: Connection | None = None
        self._seen: dict[object, int] = {}
        # Typed as the ports: the protocol's attributes are mutable, so they must match exactly.
        self.users: UserRepository = SqlUserRepository(self._current)
        self.teams: TeamRepository = SqlTeamRepository(self._current)
        self.credits: CreditLedger = SqlCreditLedger(self._current)
        self.audits: AuditRepository = SqlAuditRepository(self._current, self._seen)
        self.keys: ApiKeyRepository = SqlApiKeyRepository(self._current, self._seen)
        self.sites: SiteRepository = SqlSiteRepository(self._current, self._seen)
        self.tasks: FixTaskRepository = SqlFixTaskRepository(self._current, self._seen)
        self.rechecks: RecheckRepository = SqlRecheckRepository(self._current, self._seen)
        self.devices: DeviceLoginRepository = SqlDeviceLoginRepository(self._current, self._seen)
        self.webhooks: WebhookRepository = SqlWebhookRepository(self._current)
        self.webhook_secrets: WebhookSecrets = SqlWebhookSecrets(self._current, self._secret_box)
        self.leases: LeaseRepository = SqlLeaseRepository(self._current)
        self.billing: BillingRepository = SqlBillingRepository(self._current)
        # IndexNow
        self.indexnow: IndexNowRepository = SqlIndexNowRepository(self._current, self._seen)
        self.console: ConsoleStore = SqlConsoleStore(self._current)
        self.signins: SignInRepository = SqlSignInRepository(self._current)
        self.fix_impacts: FixImpactRepository = SqlFixImpactRepository(self._current)
        self.site_access: SiteAccessRepository = SqlSiteAccessRepository(self._current)

    def _current(self) -> Connection:
        if self._connection is None:
            raise RuntimeError("use the unit of work inside `with uow:`")
        return self._connection

    def _secret_box(self) -> SecretBox:
        if self._box is None:
            self._box = _default_box(self.engine)
        return self._box

    def __enter__(self) -> Self:
        if self._connection is not None:
            raise RuntimeError("this unit of work is already in use")
        self._seen.clear()
        self._connection = self.engine.connect().execution_options(**{LAZY_BEGIN: True})
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            connection.rollback()
        except DBAPIError:
            # The connection died mid-use-case: the database has already rolled the transaction back.
            # Re-raise only when nothing else is on its way out.
            if exc is None:
                raise
        finally:
            connection.close()

    def commit(self) -> None:
        self._current().commit()

    def rollback(self) -> None:
        self._current().rollback()


def sql_unit_of_work_factory(
    database_url: str | Engine, *, secret_key: str = "", migrate: bool | None = None
) -> Callable[[], UnitOfWork]:
    """Units of work over one shared engine. `secret_key` is SITEAUDIT_SECRET_KEY: empty on SQLite, a key
    file beside the database is made once and reused; empty on PostgreSQL, MissingSecretKey is raised
    here, at start. `migrate` None: bring a SQLite file to the latest schema first (the embedded
    default), leave PostgreSQL to `siteaudit migrate`."""
    engine = engine_for(database_url) if isinstance(database_url, str) else database_url
    box = secret_box(engine, secret_key)
    if migrate if migrate is not None else is_sqlite(engine):
        from siteaudit.adapters.sql.migration import migrate as run_migrations

        run_migrations(engine)
    return lambda: SqlUnitOfWork(engine, box)
