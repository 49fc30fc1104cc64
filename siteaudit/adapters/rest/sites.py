"""Registered sites (docs/rest-api.md "Registered sites"): thin resources over the application's site use
cases."""

from typing import Final

import falcon

from siteaudit.adapters.rest.extraction import rules_of
from siteaudit.adapters.rest.params import Fields, json_body, known_query
from siteaudit.adapters.rest.resources import Resource
from siteaudit.adapters.rest.views import (
    registered_site_answer,
    site_detail_answer,
    site_list_answer,
    started_answer,
    updated_site_answer,
    verification_answer,
    verified_site_answer,
)
from siteaudit.domain.audit import AuditRequest, AuditTrigger
from siteaudit.domain.ids import SiteId
from siteaudit.domain.site import (
    MAX_PAGES_CEILING,
    MAX_RPS,
    MAX_URL_LENGTH,
    MIN_RPS,
    VERIFY_METHOD_NAMES,
    Monitoring,
    VerifyMethod,
)
from siteaudit.ports.application import SiteChanges, SiteRegistration
from siteaudit.ports.ratelimit import Limit

# 10 requests a minute per key on verify, on top of the shared 60.
VERIFY_LIMIT: Final = Limit(10, 60.0)
SITE_FIELDS: Final = ("url", "max_pages", "max_rps", "alert_email")
CHANGE_FIELDS: Final = ("monitoring", "max_pages", "max_rps", "alert_email", "render")
SITE_AUDIT_FIELDS: Final = ("max_pages", "max_rps", "trigger", "render", "extract")
SITE_AUDIT_TRIGGERS: Final = (AuditTrigger.API.value, AuditTrigger.CI.value)


class Sites(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        known_query(req, ())
        resp.media = site_list_answer(self.application.list_sites(req.context.caller))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        fields = Fields(json_body(req, allowed=SITE_FIELDS))
        url = fields.string("url", max_length=MAX_URL_LENGTH, min_length=1)
        if url is None and "url" not in fields.bad:
            fields.bad["url"] = "required"
        max_pages = fields.integer("max_pages", low=1, high=MAX_PAGES_CEILING)
        max_rps = fields.number("max_rps", low=MIN_RPS, high=MAX_RPS)
        alert_email = fields.boolean("alert_email")
        fields.done()
        assert url is not None
        registration = SiteRegistration(
            url=url,
            max_pages=max_pages,
            max_rps=max_rps,
            alert_email=True if alert_email is None else alert_email,
        )
        site = self.application.register_site(registration, req.context.caller)
        resp.status = falcon.HTTP_201
        resp.media = registered_site_answer(site)


class Site(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ())
        resp.media = site_detail_answer(self.application.get_site(SiteId(site_id), req.context.caller))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        fields = Fields(json_body(req, allowed=CHANGE_FIELDS, required=False))
        monitoring = fields.string("monitoring", max_length=10, choices=tuple(m.value for m in Monitoring))
        changes = SiteChanges(
            monitoring=None if monitoring is None else Monitoring(monitoring),
            max_pages=fields.integer("max_pages", low=1, high=MAX_PAGES_CEILING),
            max_rps=fields.number("max_rps", low=MIN_RPS, high=MAX_RPS),
            alert_email=fields.boolean("alert_email"),
            render=fields.boolean("render"),
        )
        fields.done()
        updated = self.application.update_site(SiteId(site_id), changes, req.context.caller)
        resp.media = updated_site_answer(updated)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        self.application.delete_site(SiteId(site_id), req.context.caller)
        resp.status = falcon.HTTP_204


class SiteVerification(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ())
        resp.media = verification_answer(self.application.site_ownership(SiteId(site_id), req.context.caller))


class SiteVerify(Resource):
    extra_limits: Final = {"POST": ("verify", VERIFY_LIMIT)}

    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        fields = Fields(json_body(req, allowed=("method",), required=False))
        name = fields.string("method", max_length=20, choices=VERIFY_METHOD_NAMES)
        fields.done()
        method = None if name is None else VerifyMethod(name)
        proved = self.application.verify_site(SiteId(site_id), method, req.context.caller)
        resp.media = verified_site_answer(proved)


class SiteCrawls(Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        body = json_body(req, allowed=SITE_AUDIT_FIELDS, required=False)
        fields = Fields(body)
        trigger = fields.string("trigger", max_length=10, choices=SITE_AUDIT_TRIGGERS)
        request = AuditRequest(
            site_id=SiteId(site_id),
            max_pages=fields.integer("max_pages", low=1, high=MAX_PAGES_CEILING),
            max_rps=fields.number("max_rps", low=MIN_RPS, high=MAX_RPS),
            trigger=AuditTrigger(trigger or AuditTrigger.API.value),
            render=fields.boolean("render"),
            extract=rules_of(body, fields.bad),
        )
        fields.done()
        started = self.application.start_site_audit(request, req.context.caller)
        resp.status = falcon.HTTP_202
        resp.media = started_answer(started)
