"""The service's Prometheus metrics: the `Metrics` port over `prometheus_client`, request latency, and the
text a scrape answers.

Counters and the latency histogram live in this process. When `PROMETHEUS_MULTIPROC_DIR` is set (it must
be set before the process starts: `prometheus_client` reads it when imported), every process writes its
values to files there and a scrape adds up the files of all processes (`MultiProcessCollector`): that is
how gunicorn's workers, and `siteaudit worker` processes on the same machine, answer as one.

Two families are read at scrape time, never stored: the audits by status (a count in the database, the
same whichever process answers) and the queue depths the broker tells (RabbitMQ's passive queue
declarations, the in-process broker's queue sizes).
"""

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.facts import FetchError
from siteaudit.ports.metrics import PAGE_OUTCOMES, WEBHOOK_RESULTS

log = logging.getLogger("siteaudit.metrics")

MULTIPROCESS_DIR: Final = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
UNMATCHED_ROUTE: Final = "unmatched"  # requests no route took (404s): one label, not one per path
# Request latency buckets (seconds): most answers are a few database reads, reports and exports take longer.
LATENCY_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class PrometheusMetrics:
    """`siteaudit.ports.metrics.Metrics` as Prometheus counters, plus the REST door's request latency.

    Each instance has its own registry (several applications in one process, as in tests, do not
    collide). `scraped` is what a scrape collects: this process's values, or in multiprocess mode the
    files of every process in `multiprocess_dir` (default: PROMETHEUS_MULTIPROC_DIR), then the families
    added with `read_at_scrape`; `exposition` is its text.
    """

    def __init__(self, *, multiprocess_dir: str | None = None) -> None:
        self.multiprocess_dir = multiprocess_dir or os.environ.get(MULTIPROCESS_DIR) or None
        if self.multiprocess_dir and not os.path.isdir(self.multiprocess_dir):
            raise ValueError(
                f"{MULTIPROCESS_DIR}={self.multiprocess_dir} is not a directory: create it (empty) before"
                " the service starts, or unset it for one process"
            )
        self.registry = CollectorRegistry()
        self.scraped = CollectorRegistry()
        self.served_port: int | None = None
        if self.multiprocess_dir:
            MultiProcessCollector(self.scraped, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]
        else:
            self.scraped.register(_Collected(self.registry))
        self._pages = self._counter(
            "siteaudit_pages_fetched",
            "Frontier URLs visited and recorded, by outcome (the report's buckets, not_modified, disallowed).",
            "outcome",
            PAGE_OUTCOMES,
        )
        self._fetch_errors = self._counter(
            "siteaudit_fetch_errors",
            "Visited URLs that produced no usable HTTP answer, by reason.",
            "kind",
            [kind.value for kind in FetchError],
        )
        self._credits = Counter(
            "siteaudit_credits_charged_tenths",
            "Credits charged when audits settled, in tenths of a credit (the ledger's unit).",
            registry=self.registry,
        )
        self._webhooks = self._counter(
            "siteaudit_webhook_deliveries",
            "Webhook attempts recorded, by result (delivered, redirected, failed_attempt, given_up).",
            "result",
            WEBHOOK_RESULTS,
        )
        self._latency = Histogram(
            "siteaudit_http_request_duration_seconds",
            "REST request latency, by route template, method and status class.",
            ["route", "method", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def _counter(self, name: str, documentation: str, label: str, values: Iterable[str]) -> Counter:
        """A counter by one label, every series of `values` present from the start, at 0."""
        counter = Counter(name, documentation, [label], registry=self.registry)
        for value in values:
            counter.labels(value)
        return counter

    # --- the Metrics port ----------------------------------------------------------------------------

    def page_fetched(self, outcome: str) -> None:
        self._pages.labels(outcome).inc()

    def fetch_failed(self, kind: FetchError) -> None:
        self._fetch_errors.labels(kind.value).inc()

    def credits_charged(self, tenths: int) -> None:
        self._credits.inc(tenths)

    def webhook_delivery(self, result: str) -> None:
        self._webhooks.labels(result).inc()

    # --- the REST door ---------------------------------------------------------------------------------

    def request_served(self, *, route: str, method: str, status: int, seconds: float) -> None:
        """One REST answer: `route` is the route template (`/v1/crawls/{crawl_id}`), never the raw path."""
        self._latency.labels(route, method, f"{status // 100}xx").observe(seconds)

    # --- scrapes ---------------------------------------------------------------------------------------

    def read_at_scrape(self, collector: Collector) -> None:
        """Add a family read when scraped (the audits by status, the queue depths)."""
        self.scraped.register(collector)

    def exposition(self) -> bytes:
        """The text format of every metric, read now."""
        return generate_latest(self.scraped)

    def serve(self, port: int, host: str = "0.0.0.0") -> Callable[[], None]:  # noqa: S104 - scraped from elsewhere
        """Answer scrapes (any path) on `host:port` from a daemon thread, for processes without the REST
        door (`siteaudit worker --metrics-port`); the port actually bound is `served_port`. Returns the
        function that stops it."""
        server, thread = start_http_server(port, host, registry=self.scraped)
        self.served_port = int(server.server_port)

        def stop() -> None:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

        return stop


class _Collected(Collector):
    """Another registry's metrics, collected again (one process: this process's own values)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        return self._registry.collect()


class AuditsByStatus(Collector):
    """`siteaudit_audits{status}`: the audits in each status now, counted in the database at scrape time."""

    def __init__(self, count: Callable[[], Mapping[AuditStatus, int]]) -> None:
        self._count = count

    def collect(self) -> Iterator[Metric]:
        try:
            counts = self._count()
        except Exception:  # a scrape still answers the counters while the database is away
            log.warning("metrics: the audits could not be counted", exc_info=True)
            return
        family = GaugeMetricFamily("siteaudit_audits", "Audits of every team, by status.", labels=["status"])
        for status, count in counts.items():
            family.add_metric([status.value], count)
        yield family


class QueueDepth(Collector):
    """`siteaudit_queue_messages{queue}`: messages waiting in each work queue, as the broker tells it at
    scrape time (main, delayed `.DQ` and dead-lettered `.XQ` queues)."""

    def __init__(self, depths: Callable[[], Mapping[str, int]]) -> None:
        self._depths = depths

    def collect(self) -> Iterator[Metric]:
        try:
            depths = self._depths()
        except Exception:
            log.warning("metrics: the broker did not tell its queue depths", exc_info=True)
            return
        if not depths:
            return
        family = GaugeMetricFamily(
            "siteaudit_queue_messages", "Messages waiting in each work queue.", labels=["queue"]
        )
        for queue, count in sorted(depths.items()):
            family.add_metric([queue], count)
        yield family


def queue_depths(broker: Any) -> Mapping[str, int]:
    """How many messages wait in each work queue (and its delay and dead-letter queues), where the broker
    tells it: RabbitMQ (passive declarations: nothing is created) and the in-process broker. Any other
    broker (or none) tells nothing."""
    from dramatiq.brokers.stub import StubBroker
    from dramatiq.common import dq_name, xq_name

    from siteaudit.adapters.queue.dramatiq import QUEUES, queue_name

    if broker is None:
        return {}
    queue_names = [queue_name(broker, base) for base in QUEUES]

    message_counts = getattr(broker, "message_counts", None)
    if message_counts is not None:  # siteaudit.adapters.queue.rabbitmq.PublishingRabbitmqBroker
        names = [name for queue in queue_names for name in (queue, dq_name(queue), xq_name(queue))]
        counted: Mapping[str, int] = message_counts(names)
        return counted
    if isinstance(broker, StubBroker):  # queues exist once an actor or a message declared them
        depths: dict[str, int] = {}
        for queue in queue_names:
            if queue in broker.queues:
                depths[queue] = broker.queues[queue].qsize()
                depths[dq_name(queue)] = broker.queues[dq_name(queue)].qsize()
                depths[xq_name(queue)] = len(broker.dead_letters_by_queue.get(queue, ()))
        return depths
    return {}
