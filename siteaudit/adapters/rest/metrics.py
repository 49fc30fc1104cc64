"""`GET /metrics` (the Prometheus scrape, outside `/v1`: no key, no rate limit) and the request latency
it reports, labelled by route template and status class."""

import re
import time
from typing import Any, Final

import falcon

from siteaudit.adapters.metrics import CONTENT_TYPE, UNMATCHED_ROUTE, PrometheusMetrics

METRICS_PATH: Final = "/metrics"
_CONVERTER = re.compile(r"\{(\w+):[^}]*\}")


def route_label(template: str | None) -> str:
    """The route a request took, as a label: `/v1/crawls/{crawl_id}` (converters dropped), or
    `unmatched` when no route took it (a label per unknown path would grow without end)."""
    return UNMATCHED_ROUTE if template is None else _CONVERTER.sub(r"{\1}", template)


class RequestLatency:
    """Times every request, first in and last out, into `siteaudit_http_request_duration_seconds`."""

    def __init__(self, metrics: PrometheusMetrics) -> None:
        self._metrics = metrics

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.latency_started = time.perf_counter()

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any, ok: bool) -> None:
        started = getattr(req.context, "latency_started", None)
        if started is None:
            return
        self._metrics.request_served(
            route=route_label(req.uri_template),
            method=req.method,
            status=resp.status_code,
            seconds=time.perf_counter() - started,
        )


class Scrape:
    """The Prometheus text of every metric (see docs/operations.md "Metrics")."""

    public = True  # no key, hence no rate limit: the scraper is the operator's, on the operator's network

    def __init__(self, metrics: PrometheusMetrics) -> None:
        self._metrics = metrics

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = CONTENT_TYPE
        resp.data = self._metrics.exposition()
