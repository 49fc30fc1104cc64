"""The Falcon application of `/v1`: routes, middleware and error handling wired together."""

from collections.abc import Sequence

import falcon

from siteaudit.adapters.rest import errors
from siteaudit.adapters.rest.contract import RestServices
from siteaudit.adapters.rest.middleware import Authentication, RequestContext
from siteaudit.adapters.rest.openapi import OpenApi
from siteaudit.adapters.rest.resources import (
    ID,
    Account,
    Crawl,
    Crawls,
    Health,
    Issues,
    Pages,
    Ping,
    Report,
    ReportPart,
)
from siteaudit.ports.clock import Clock
from siteaudit.ports.ratelimit import RateLimiter


def create_api(
    services: RestServices,
    *,
    clock: Clock,
    limiter: RateLimiter,
    trusted_proxies: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
) -> falcon.App:
    """The WSGI application serving `/v1`. CORS is off unless origins are given."""
    api = falcon.App(
        middleware=[
            RequestContext(),
            Authentication(services.authenticate, limiter, clock, trusted_proxies),
        ],
        cors_enable=False,
    )
    if cors_origins:
        api.add_middleware(falcon.CORSMiddleware(allow_origins=list(cors_origins)))
    api.req_options.strip_url_path_trailing_slash = True
    api.resp_options.xml_error_serialization = False
    errors.install(api)

    api.add_route("/v1/health", Health())
    api.add_route("/v1/openapi.json", OpenApi())
    api.add_route("/v1/ping", Ping(services, clock))
    api.add_route("/v1/account", Account(services, clock))
    api.add_route("/v1/crawls", Crawls(services, clock))
    api.add_route(f"/v1/crawls/{{crawl_id:{ID}}}", Crawl(services, clock))
    api.add_route(f"/v1/crawls/{{crawl_id:{ID}}}/report", Report(services, clock))
    api.add_route(f"/v1/crawls/{{crawl_id:{ID}}}/issues", Issues(services, clock))
    api.add_route(f"/v1/crawls/{{crawl_id:{ID}}}/pages", Pages(services, clock))
    api.add_route(
        f"/v1/crawls/{{crawl_id:{ID}}}/templates",
        ReportPart(services, clock, field="templates", name="templates"),
    )
    api.add_route(
        f"/v1/crawls/{{crawl_id:{ID}}}/diff", ReportPart(services, clock, field="diff", name="diff")
    )
    api.add_route(
        f"/v1/crawls/{{crawl_id:{ID}}}/fix-prompt",
        ReportPart(services, clock, field="fix_prompt", name="prompt"),
    )
    return api
