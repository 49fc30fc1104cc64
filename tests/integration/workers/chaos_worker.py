"""A `siteaudit worker` process for the integration tests, with test-only knobs and fault injection.

Run as a script. It wires the application exactly as `siteaudit worker` does (bootstrap, the actors of
`siteaudit.entrypoints.worker`, the periodic webhook dispatcher and reaper), reading the same SITEAUDIT_*
variables, plus what production has no setting for and the tests need:

- WORKER_TEST_QUEUE_PREFIX: queue names of this test run only;
- WORKER_TEST_CA_FILE: the certificate authority the local HTTPS webhook receiver's certificate comes from;
- WORKER_TEST_LEASE_S / _HANDOVER_S / _GRACE_S / _REAP_EVERY_S / _MAX_ATTEMPTS / _QUEUED_S: short
  deadlines, so a killed worker's audits are reaped within seconds instead of minutes (the reaper's
  become the SITEAUDIT_REAP_* settings, the lease deadlines go into the crawl settings);
- WORKER_TEST_DUPLICATE_RATE: the share of messages this process publishes twice (chaos);
- WORKER_TEST_PUBLISH_LOG: a file where every publish is counted ("once" or "twice"), for the figures;
- WORKER_TEST_UNGUARDED=1: the negative control. Settlement is no longer once-only: a finalisation
  message that arrives for an audit already done settles it again, through a ledger without idempotency
  keys, as a finalize actor without its status check and ledger key would.

Nothing here changes product code: the faults live in wrappers that only this process installs.
"""

import logging
import os
import random
import signal
import ssl
import sys
import threading
from datetime import datetime
from typing import Any

import attrs
from attrs import evolve

from siteaudit.adapters.http.resolver import SystemResolver
from siteaudit.adapters.http.webhook import HttpxWebhookSender
from siteaudit.adapters.queue.dramatiq import DramatiqTaskQueue, build_broker
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql import migrate, sql_crawl_store, sql_unit_of_work_factory
from siteaudit.adapters.sql.credit import SqlCreditLedger
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.credit import EntryKind, LedgerEntry, audit_cost
from siteaudit.domain.ids import AuditId
from siteaudit.domain.network import AddressPolicy
from siteaudit.entrypoints.worker import start_worker
from siteaudit.services.application import LocalApplication
from siteaudit.services.audit import audit_reference
from siteaudit.settings import Settings


def _env(name: str, default: str = "") -> str:
    return os.environ.get(f"WORKER_TEST_{name}", default)


class PublishLog:
    """Appends one line per publish to a file shared by all processes (O_APPEND lines stay whole)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()

    def write(self, line: str) -> None:
        if not self._path:
            return
        with self._lock, open(self._path, "a") as handle:
            handle.write(line + "\n")


class DuplicatingQueue:
    """The TaskQueue port publishing a share of crawl and finalisation messages twice (at-least-once)."""

    def __init__(self, inner: Any, rate: float, log: PublishLog, *, seed: int | None = None) -> None:
        self._inner = inner
        self._rate = rate
        self._log = log
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def _twice(self) -> bool:
        with self._lock:
            return self._random.random() < self._rate

    def crawl_slice(self, audit_id: AuditId, *, verify_token: str | None = None) -> None:
        self._inner.crawl_slice(audit_id, verify_token=verify_token)
        twice = self._twice()
        if twice:
            self._inner.crawl_slice(audit_id, verify_token=verify_token)
        self._log.write(f"crawl_slice {audit_id} {'twice' if twice else 'once'}")

    def finalize_audit(self, audit_id: AuditId) -> None:
        self._inner.finalize_audit(audit_id)
        twice = self._twice()
        if twice:
            # The copy comes a moment later, as a redelivery does: sent at once, two idle threads would
            # take both copies side by side and the negative control's second settlement would not
            # find the audit done yet.
            with self._lock:
                delay = self._random.uniform(0.5, 1.5)
            threading.Timer(delay, self._inner.finalize_audit, (audit_id,)).start()
        self._log.write(f"finalize_audit {audit_id} {'twice' if twice else 'once'}")

    def deliver_webhooks(self) -> None:
        self._inner.deliver_webhooks()

    def recheck(self, recheck_id: Any) -> None:
        self._inner.recheck(recheck_id)
        twice = self._twice()
        if twice:
            self._inner.recheck(recheck_id)
        self._log.write(f"run_recheck {recheck_id} {'twice' if twice else 'once'}")


class UnguardedLedger(SqlCreditLedger):
    """Settlement without its once-only key: every call appends a release and a charge."""

    def settle(self, reference: str, *, cost: int, at: datetime) -> bool:
        reserved = self.reserved(reference)
        assert reserved is not None
        hold = next(e for e in self._all(reference) if e.kind is EntryKind.RESERVE)
        serial = os.urandom(6).hex()
        cost = min(cost, reserved)
        for kind, amount in ((EntryKind.RELEASE, reserved), (EntryKind.CHARGE, -cost)):
            self._append(
                LedgerEntry(
                    hold.account, kind, amount, f"{reference}:{kind}:{serial}", at, reference, hold.team_id
                )
            )
        self._add_to_balance(hold.account, reserved - cost)
        return True

    def _all(self, reference: str) -> list[LedgerEntry]:
        from sqlalchemy import select

        from siteaudit.adapters.sql.credit import entry_from_row
        from siteaudit.adapters.sql.tables import credit_entries

        rows = self._c().execute(select(credit_entries).where(credit_entries.c.reference == reference))
        return [entry_from_row(r) for r in rows]


class UnguardedApplication(LocalApplication):
    """`finalize_audit` that settles again when the audit is already done (the guard removed)."""

    def finalize_audit(self, audit_id: AuditId) -> Audit:
        with self.uow() as uow:
            before = uow.audits.get_any(AuditId(audit_id))
        audit = super().finalize_audit(audit_id)
        if before.status is AuditStatus.DONE:
            uow = self.uow()
            with uow:
                ledger = UnguardedLedger(uow._current)  # type: ignore[attr-defined]
                cost = audit_cost(
                    pages_fetched=audit.pages_fetched_in_full,
                    pages_not_modified=audit.pages_not_modified,
                    reserved=audit.credits_reserved,
                )
                ledger.settle(audit_reference(audit.id), cost=cost, at=self.clock.now())
                uow.commit()
        return audit


def with_test_terms(application: LocalApplication) -> LocalApplication:
    """The application with the test's lease deadlines (production has no setting for them yet), and
    without the once-only settlement when WORKER_TEST_UNGUARDED=1."""
    crawl_settings = evolve(
        application.crawl_limits,
        lease_s=float(_env("LEASE_S", "180")),
        handover_s=float(_env("HANDOVER_S", "1800")),
        unlimited_rate=_env("UNLIMITED_RATE") == "1",
    )
    kind = UnguardedApplication if _env("UNGUARDED") == "1" else LocalApplication
    fields = {f.name: getattr(application, f.name) for f in attrs.fields(LocalApplication) if f.init}
    return kind(**{**fields, "crawl_limits": crawl_settings})


def build_app(settings: Settings, *, prefix: str, ca_file: str, duplicate_rate: float, log_path: str) -> App:
    """The application as the tests run it, in workers and in the test process (the REST side)."""
    migrate(settings.database_url)
    broker = build_broker(settings.broker_url, queue_prefix=prefix)
    queue: Any = DramatiqTaskQueue(broker, seal=SecretBox(settings.secret_key).encrypt)
    if duplicate_rate > 0:
        queue = DuplicatingQueue(queue, duplicate_rate, PublishLog(log_path))
    policy = AddressPolicy.from_setting(",".join(settings.allow_networks))
    verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=ca_file) if ca_file else True
    settings = evolve(
        settings,
        reap_every_s=float(_env("REAP_EVERY_S", "30")),
        reap_grace_s=float(_env("GRACE_S", "60")),
        reap_max_attempts=int(_env("MAX_ATTEMPTS", "3")),
        reap_queued_s=float(_env("QUEUED_S", "1800")),
    )
    app = bootstrap(
        settings,
        uow=sql_unit_of_work_factory(settings.database_url, secret_key=settings.secret_key),
        crawl=sql_crawl_store(settings.database_url),
        broker=broker,
        queue=queue,
        webhook_sender=HttpxWebhookSender(SystemResolver(), policy, verify=verify),
    )
    assert isinstance(app.application, LocalApplication)
    return evolve(app, application=with_test_terms(app.application))


def main() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(process)d %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("dramatiq").setLevel(logging.WARNING)
    logging.getLogger("pika").setLevel(logging.WARNING)
    settings = Settings.from_env()
    app = build_app(
        settings,
        prefix=_env("QUEUE_PREFIX"),
        ca_file=_env("CA_FILE"),
        duplicate_rate=float(_env("DUPLICATE_RATE", "0")),
        log_path=_env("PUBLISH_LOG"),
    )
    worker, periodic = start_worker(
        app,
        threads=settings.worker_threads,
        webhooks_every_s=float(_env("WEBHOOKS_EVERY_S", "10")),
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print("worker ready", flush=True)
    stop.wait()
    periodic.stop()
    worker.stop()


if __name__ == "__main__":
    main()
