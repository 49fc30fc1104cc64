"""The search-console endpoints (docs/rest-api.md "Search console"): thin resources over the application's
console use cases.

Each is routed under the canonical `/sites/{id}/gsc/...` and its alias `/sites/{id}/sengine/...`
(docs/rest-api.md "Renamed identifiers")."""

from typing import Final

import falcon

from siteaudit.adapters.rest.params import Fields, json_body, known_query
from siteaudit.adapters.rest.resources import Resource
from siteaudit.adapters.rest.views import console_answer, console_url_answer
from siteaudit.domain.console import FILTER_MAX, INSPECT_MAX_URLS, URL_MAX
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import SiteId
from siteaudit.ports.application import NotIndexedQuery
from siteaudit.ports.ratelimit import Limit

# 10 requests a minute per key on inspect, on top of the shared 60.
INSPECT_LIMIT: Final = Limit(10, 60.0)
MAX_PAGE: Final = 100_000
# The canonical path segment and its alias (docs/rest-api.md "Renamed identifiers").
CONSOLE_SEGMENTS: Final = ("gsc", "sengine")


class ConsoleSummaryResource(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ())
        resp.media = console_answer(self.application.console_summary(SiteId(site_id), req.context.caller))


class ConsoleNotIndexed(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ("reason", "template", "page"))
        fields = Fields(req.params, query=True)
        reason = fields.string("reason", max_length=FILTER_MAX, min_length=1)
        template = fields.string("template", max_length=FILTER_MAX)
        page = fields.integer("page", low=1, high=MAX_PAGE, default=1)
        fields.done()
        assert page is not None
        query = NotIndexedQuery(reason=reason, template=template, page=page)
        resp.media = console_answer(
            self.application.console_not_indexed(SiteId(site_id), query, req.context.caller)
        )


class ConsoleUrl(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ("url",))
        fields = Fields(req.params, query=True)
        url = fields.string("url", max_length=URL_MAX, min_length=1)
        if url is None and "url" not in fields.bad:
            fields.bad["url"] = "required"
        fields.done()
        assert url is not None
        resp.media = console_url_answer(
            self.application.console_url(SiteId(site_id), url, req.context.caller)
        )


class ConsoleOpportunities(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ())
        resp.media = console_answer(
            self.application.console_opportunities(SiteId(site_id), req.context.caller)
        )


class ConsoleInspect(Resource):
    extra_limits: Final = {"POST": ("inspect", INSPECT_LIMIT)}

    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        body = json_body(req, allowed=("urls",))
        urls = body.get("urls")
        if not isinstance(urls, list) or not 1 <= len(urls) <= INSPECT_MAX_URLS:
            raise ValidationFailed({"urls": f"must be an array of 1 to {INSPECT_MAX_URLS} URLs"})
        bad = [n for n, u in enumerate(urls) if not isinstance(u, str) or not 1 <= len(u) <= URL_MAX]
        if bad:
            raise ValidationFailed({"urls": f"item {bad[0]} must be a string of 1 to {URL_MAX:,} characters"})
        resp.media = console_answer(self.application.inspect_urls(SiteId(site_id), urls, req.context.caller))


class IndexTriageResource(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ())
        resp.media = console_answer(self.application.index_triage(SiteId(site_id), req.context.caller))


def console_routes(prefix: str) -> list[tuple[str, type[Resource]]]:
    """(path, resource) of every console endpoint under `prefix` (`/v1/sites/{site_id:int}`)."""
    routes: list[tuple[str, type[Resource]]] = [(f"{prefix}/index-triage", IndexTriageResource)]
    for segment in CONSOLE_SEGMENTS:
        routes += [
            (f"{prefix}/{segment}", ConsoleSummaryResource),
            (f"{prefix}/{segment}/not-indexed", ConsoleNotIndexed),
            (f"{prefix}/{segment}/url", ConsoleUrl),
            (f"{prefix}/{segment}/opportunities", ConsoleOpportunities),
            (f"{prefix}/{segment}/inspect", ConsoleInspect),
        ]
    return routes
