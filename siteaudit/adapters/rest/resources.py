"""Thin resources: parse and check the request, call one use case of the application, convert, answer."""

from typing import Final

import falcon

from siteaudit.adapters.rest.extraction import rules_of
from siteaudit.adapters.rest.params import Fields, json_body
from siteaudit.adapters.rest.scope import LIST_BODY_BYTES, SCOPE_FIELDS, scope_of
from siteaudit.adapters.rest.views import (
    started_answer,
)
from siteaudit.domain.audit import AuditRequest, AuditTrigger
from siteaudit.domain.ids import MAX_ID, SiteId
from siteaudit.domain.site import MAX_PAGES_CEILING
from siteaudit.ports.application import CallerApi
from siteaudit.ports.clock import Clock

ID: Final = f"int(min=1, max={MAX_ID})"


class Resource:
    def __init__(self, application: CallerApi, clock: Clock) -> None:
        self.application = application
        self.clock = clock


class Health:
    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"ok": True}


class Ping(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"user_id": req.context.caller.user_id}


CRAWL_FIELDS: Final = (
    "url",
    "site_id",
    "max_pages",
    "concurrency",
    "max_rps",
    "webhook_url",
    "verify_token",
    "render",
    "extract",
    *SCOPE_FIELDS,
)


class Crawls(Resource):
    # `GET /v1/crawls` is the declared `list_audits` (derived.py), served on the same route (app.py).

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_body(req, allowed=CRAWL_FIELDS, max_bytes=LIST_BODY_BYTES)
        fields = Fields(body)
        url = fields.string("url", max_length=2048, min_length=1)
        site_id = fields.integer("site_id", low=1, high=2**62)
        request = AuditRequest(
            url=url,
            site_id=SiteId(site_id) if site_id is not None else None,
            max_pages=fields.integer("max_pages", low=1, high=MAX_PAGES_CEILING),
            concurrency=fields.integer("concurrency", low=1, high=20),
            max_rps=fields.number("max_rps", low=0.5, high=10),
            webhook_url=fields.string("webhook_url", max_length=2048, min_length=1),
            verify_token=fields.string("verify_token", max_length=128, min_length=16),
            trigger=AuditTrigger.API,
            render=fields.boolean("render"),
            extract=rules_of(body, fields.bad),
            **scope_of(fields, body),
        )
        if url is None and site_id is None and "urls" not in body and "url" not in fields.bad:
            fields.bad["url"] = "url is required unless site_id or urls is given"
        fields.done()
        started = self.application.start_audit(request, req.context.caller)
        resp.status = falcon.HTTP_202
        resp.media = started_answer(started)
