"""The Falcon application of `/v1`: routes, middleware and error handling wired together."""

import json
from collections.abc import Sequence
from typing import Any, Protocol

import falcon
import falcon.media
import orjson

from siteaudit.adapters.metrics import PrometheusMetrics
from siteaudit.adapters.rest import errors
from siteaudit.adapters.rest.billing import (
    STRIPE_WEBHOOK_PATH,
    TEST_CHECKOUT_PATH,
    StripeWebhook,
    TestCheckoutPage,
)
from siteaudit.adapters.rest.derived import routes
from siteaudit.adapters.rest.export import CrawlExport
from siteaudit.adapters.rest.metrics import METRICS_PATH, RequestLatency, Scrape
from siteaudit.adapters.rest.middleware import Authentication, RequestContext, Unrouted
from siteaudit.adapters.rest.openapi import OpenApi, document
from siteaudit.adapters.rest.resources import ID, Health, Ping
from siteaudit.ports.application import (
    CallerApi,
    DeviceCancel,
    DeviceFlow,
    Exports,
    Payments,
    RequestAdmission,
    WebSession,
)
from siteaudit.ports.clock import Clock
from siteaudit.ports.ratelimit import RateLimiter


def dumps(media: Any) -> bytes:
    """Response bodies through orjson (several times faster than the standard library on issue pages);
    what orjson refuses (integers beyond 64 bits, a lone surrogate stored before docs/security.md's "Strict
    JSON bodies") goes through the standard library, escaped to ASCII so that any string can be written."""
    try:
        return orjson.dumps(media, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(media).encode()


class RestApplication(CallerApi, RequestAdmission, Exports, DeviceFlow, Payments, WebSession, Protocol):
    """What `/v1` and the pages it serves beside it use (docs/architecture.md "Roles"): the callers' API,
    the key let in and counted, the export, the device flow, the payment provider's webhook and the local
    test checkout page, which reads the app's session."""


def create_api(
    application: RestApplication,
    *,
    clock: Clock,
    limiter: RateLimiter,
    trusted_proxies: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    metrics: PrometheusMetrics | None = None,
    app_session_cookie: str = "siteaudit_session",
    devices: DeviceCancel | None = None,
) -> "falcon.App[Any, Any]":
    """The WSGI application serving `/v1`. CORS is off unless origins are given. With `metrics`, every
    request is timed and `GET /metrics` answers the Prometheus scrape (without it, 404 like any path)."""
    authentication = Authentication(
        application.authenticate,
        limiter,
        clock,
        trusted_proxies,
        admit=application.authenticate_and_hit,
    )
    middleware: list[Any] = [] if metrics is None else [RequestLatency(metrics)]
    middleware += [RequestContext(), authentication]
    api: falcon.App[Any, Any] = falcon.App(
        middleware=middleware,
        cors_enable=False,
    )
    if cors_origins:
        api.add_middleware(falcon.CORSMiddleware(allow_origins=list(cors_origins)))
    api.req_options.strip_url_path_trailing_slash = True
    api.resp_options.xml_error_serialization = False
    # Only answers change serializer: request bodies keep the standard library's parser (json_body).
    api.resp_options.media_handlers[falcon.MEDIA_JSON] = falcon.media.JSONHandler(dumps=dumps)
    errors.install(api)

    if metrics is not None:
        api.add_route(METRICS_PATH, Scrape(metrics))
    api.add_route("/v1/health", Health())
    api.add_route("/v1/openapi.json", OpenApi(document(application.use_cases())))
    api.add_route("/v1/ping", Ping(application, clock))
    api.add_route(f"/v1/crawls/{{crawl_id:{ID}}}/export", CrawlExport(application))
    api.add_sink(Unrouted(authentication), prefix="/v1/")
    # Billing (docs/rest-api.md "Billing"): Stripe's webhook and the local provider's test checkout page,
    # outside /v1 (the links are declared, below).
    api.add_route(STRIPE_WEBHOOK_PATH, StripeWebhook(application))
    api.add_route(TEST_CHECKOUT_PATH, TestCheckoutPage(application, session_cookie=app_session_cookie))
    # Device login (docs/app.md "The app at"): no key, limited per client address.
    from siteaudit.adapters.rest.device import DeviceCancelResource, DeviceStart, DeviceToken

    api.add_route("/v1/device/start", DeviceStart(application, clock, limiter))
    api.add_route("/v1/device/token", DeviceToken(application, clock, limiter))
    if devices is not None:  # the device's own cancel (bootstrap gives the application, which does it)
        api.add_route("/v1/device/cancel", DeviceCancelResource(devices, clock, limiter))
    # The declared use cases (docs/rest-api.md "Endpoints", "Registered sites", "Fix tasks and rechecks",
    # "Fix impact", "Search console", "IndexNow", "Billing", "Staging access"): their routes derived,
    # aliases too.
    for path, declaring in routes(application, clock):
        api.add_route(path, declaring)
    return api
