"""Dramatiq actors (thin: one use case each), the periodic jobs, and the worker process.

Actors are declared against an explicit broker by `declare_actors`, never at import time. The embedded
default (`siteaudit serve`) runs them on the in-process broker in worker threads; production runs
`siteaudit worker` processes against RabbitMQ.
"""

import logging
import threading
from collections.abc import Callable, Collection
from typing import Any

import click
import dramatiq
from dramatiq.middleware import CurrentMessage

from siteaudit.adapters.queue.dramatiq import CRAWL_QUEUE, FINALIZE_QUEUE, QUEUES, WEBHOOK_QUEUE, queue_name
from siteaudit.bootstrap import App
from siteaudit.domain.ids import AuditId, RecheckId
from siteaudit.entrypoints.slice_loop import Again, SliceLoop
from siteaudit.ports.application import Jobs, Reaped

log = logging.getLogger("siteaudit.worker")

SLICE_TIME_LIMIT_MS = 15 * 60 * 1000


def declare_actors(
    broker: dramatiq.Broker, application: Jobs, slices: SliceLoop | None = None
) -> dict[str, dramatiq.Actor]:  # type: ignore[type-arg]
    """The actors on `broker`. With `slices`, a crawl slice runs on that loop and its message is
    acknowledged once it is there (`siteaudit.entrypoints.slice_loop`); without, on the actor's thread."""
    if slices is not None and not any(isinstance(m, CurrentMessage) for m in broker.middleware):
        broker.add_middleware(CurrentMessage())

    # A crawl slice, and a recheck like one: on the crawl queue, retried, cut off at a slice's time limit.
    crawl_work: dict[str, Any] = {
        "broker": broker,
        "queue_name": queue_name(broker, CRAWL_QUEUE),
        "max_retries": 3,
        "min_backoff": 2_000,
        "time_limit": SLICE_TIME_LIMIT_MS,
    }

    @dramatiq.actor(actor_name="crawl_slice", **crawl_work)
    def crawl_slice(audit_id: int, sealed_token: str | None = None) -> None:
        if slices is None:
            application.run_crawl_slice(AuditId(audit_id), sealed_verify_token=sealed_token)
            return
        message = CurrentMessage.get_current_message()
        retries = int(message.options.get("retries", 0)) if message is not None else 0
        slices.submit(
            lambda: application.arun_crawl_slice(AuditId(audit_id), sealed_verify_token=sealed_token),
            again=_sender(broker, message),
            retries=retries,
        )

    @dramatiq.actor(
        broker=broker,
        queue_name=queue_name(broker, FINALIZE_QUEUE),
        actor_name="finalize_audit",
        max_retries=3,
    )
    def finalize_audit(audit_id: int) -> None:
        # Publishes the audit's end to the event bus, which runs its handlers (docs/architecture.md
        # "Events"); a retried or redelivered message publishes it again and the handlers do nothing twice.
        application.finalize_audit(AuditId(audit_id))

    @dramatiq.actor(
        broker=broker,
        queue_name=queue_name(broker, WEBHOOK_QUEUE),
        actor_name="deliver_webhooks",
        max_retries=0,
    )
    def deliver_webhooks() -> None:
        application.deliver_webhooks()

    # --- rechecks (docs/rest-api.md "Fix tasks and rechecks") ---
    # On the crawl queue, like a slice; the reaper takes over stalled runs.
    @dramatiq.actor(actor_name="run_recheck", **crawl_work)
    def run_recheck(recheck_id: int) -> None:
        application.run_recheck(RecheckId(recheck_id))

    return {
        "crawl_slice": crawl_slice,
        "finalize_audit": finalize_audit,
        "deliver_webhooks": deliver_webhooks,
        "run_recheck": run_recheck,
    }


def _sender(broker: dramatiq.Broker, message: "dramatiq.Message[Any] | None") -> Again:
    """Sends `message` again after a delay, counting a retry in its options when it failed."""

    def again(delay_s: float, failed: bool) -> None:
        if message is None:
            return
        retries = int(message.options.get("retries", 0)) + (1 if failed else 0)
        broker.enqueue(message.copy(options={"retries": retries}), delay=int(delay_s * 1000) or None)

    return again


def reaper(application: Jobs) -> Callable[[], Reaped]:
    """The periodic reaper job of this process (every worker process runs one; they do not collide)."""

    def reap_stalled_audits() -> Reaped:
        reaped = application.reap_stalled_audits()
        if reaped.total:
            log.info("reaper: %s", reaped)
        rechecks = application.reap_stalled_rechecks()
        if rechecks.total:
            log.info("reaper (rechecks): %s", rechecks)
        return reaped

    return reap_stalled_audits


class Periodic:
    """Runs jobs every few seconds on a daemon thread: webhook deliveries that came due, the reaper."""

    def __init__(self, jobs: list[tuple[float, Callable[[], Any]]]) -> None:
        self._jobs = jobs
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="siteaudit-periodic", daemon=True)

    def _run(self) -> None:
        due = [0.0] * len(self._jobs)
        elapsed = 0.0
        tick = 1.0
        while not self._stop.wait(tick):
            elapsed += tick
            for index, (every, job) in enumerate(self._jobs):
                if elapsed >= due[index]:
                    due[index] = elapsed + every
                    try:
                        job()
                    except Exception:
                        log.exception("periodic job %s failed", getattr(job, "__name__", job))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def serve_worker_metrics(app: App, port: int) -> Callable[[], None]:
    """`siteaudit worker --metrics-port N`: this process's metrics (what its crawl slices fetched, the
    credits its settlements charged, its webhook attempts, the audits by status and the queue depths)
    answered at http://0.0.0.0:N/metrics. Returns the function that stops serving.

    Workers on the API's machine can instead share its PROMETHEUS_MULTIPROC_DIR
    (docs/operations.md "Metrics"): then the API's /metrics adds them up and this port is not needed.
    """
    if app.metrics is None:
        raise click.UsageError("--metrics-port needs metrics on (SITEAUDIT_METRICS)")
    stop = app.metrics.serve(port)
    log.info("worker metrics at http://0.0.0.0:%s/metrics", app.metrics.served_port)
    return stop


class Running:
    """A started worker: Dramatiq's consumer threads and the slice loop they hand crawl slices to (none in
    a worker that does not take the crawl queue)."""

    def __init__(self, worker: dramatiq.Worker, slices: SliceLoop | None) -> None:
        self.worker = worker
        self.slices = slices

    def stop(self) -> None:
        """Stop taking messages, then stop the running slices (each sent again for another process)."""
        self.worker.stop()
        if self.slices is not None:
            self.slices.stop()


def start_worker(
    app: App, *, threads: int, webhooks_every_s: float = 10.0, queues: Collection[str] = QUEUES
) -> tuple[Running, Periodic]:
    """Declare the actors on the app's broker and start consuming `queues` (names of QUEUES, without the
    prefix) in this process, with the slice loop (SITEAUDIT_WORKER_SLICES slices at once) when it takes
    the crawl queue, the periodic webhook dispatcher, the reaper (every SITEAUDIT_REAP_EVERY_S) and
    archival. The periodic jobs run whatever the queues, as none needs a queue's consumer: the reaper
    publishes stalled work again for whichever worker takes its queue, and webhook deliveries are claimed
    in the database (docs/operations.md "Workers for finalisation")."""
    application = app.application
    slices = None
    if CRAWL_QUEUE in queues:
        slices = SliceLoop(
            capacity=app.settings.worker_slices,
            time_limit_s=SLICE_TIME_LIMIT_MS / 1000,
            database_threads=1 if app.settings.database_url.startswith("sqlite") else 8,
        )
        slices.start()
    declare_actors(app.broker, application, slices)
    worker = dramatiq.Worker(
        app.broker, worker_threads=threads, queues={queue_name(app.broker, base) for base in queues}
    )
    worker.start()
    periodic = Periodic(
        [
            (webhooks_every_s, application.deliver_webhooks),
            (app.settings.reaping.every_s, reaper(application)),
            (3600.0, application.archive_audits),
        ]
    )
    periodic.start()
    return Running(worker, slices), periodic
