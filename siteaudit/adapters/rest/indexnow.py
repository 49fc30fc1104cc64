"""IndexNow (SPEC 4.9): thin resources over the application's IndexNow use cases. The four calls that
reach out (check-key, detect-key, PUT key, submit) share one extra limit of 10 requests a minute per key,
on top of the shared 60 (SPEC 8)."""

from typing import Any, Final

import falcon

from siteaudit.adapters.rest.params import MAX_BODY_BYTES, Fields, json_body, known_query
from siteaudit.adapters.rest.resources import Resource
from siteaudit.adapters.rest.views import (
    indexnow_key_check_answer,
    indexnow_status_answer,
    indexnow_submit_answer,
)
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import SiteId
from siteaudit.domain.indexnow import MAX_SUBMIT_URLS
from siteaudit.domain.site import MAX_URL_LENGTH
from siteaudit.ports.ratelimit import Limit

INDEXNOW_LIMIT: Final = ("indexnow", Limit(10, 60.0))
# 10,000 URLs of up to 2,048 characters each, quoted and separated, fit.
SUBMIT_MAX_BYTES: Final = MAX_SUBMIT_URLS * (MAX_URL_LENGTH + 8) + MAX_BODY_BYTES
KEY_MAX_LENGTH: Final = 128


def _urls(body: dict[str, Any]) -> list[str]:
    urls = body.get("urls")
    if "urls" not in body:
        raise ValidationFailed({"urls": "required"})
    if not isinstance(urls, list) or not 1 <= len(urls) <= MAX_SUBMIT_URLS:
        raise ValidationFailed({"urls": f"must be an array of 1 to {MAX_SUBMIT_URLS:,} URLs"})
    if not all(isinstance(u, str) and 1 <= len(u) <= MAX_URL_LENGTH for u in urls):
        raise ValidationFailed({"urls": f"every URL must be a string of 1 to {MAX_URL_LENGTH:,} characters"})
    return urls


class IndexNow(Resource):
    extra_limits: Final = {"POST": INDEXNOW_LIMIT}

    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ())
        resp.media = indexnow_status_answer(
            self.application.indexnow_status(SiteId(site_id), req.context.caller)
        )

    def on_patch(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        fields = Fields(json_body(req, allowed=("auto",)))
        auto = fields.boolean("auto")
        if auto is None and "auto" not in fields.bad:
            fields.bad["auto"] = "required"
        fields.done()
        assert auto is not None
        status = self.application.set_indexnow_auto(SiteId(site_id), auto, req.context.caller)
        resp.media = indexnow_status_answer(status)

    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        urls = _urls(json_body(req, allowed=("urls",), max_bytes=SUBMIT_MAX_BYTES))
        submitted = self.application.submit_to_indexnow(SiteId(site_id), urls, req.context.caller)
        resp.media = indexnow_submit_answer(submitted)


class IndexNowCheckKey(Resource):
    extra_limits: Final = {"POST": INDEXNOW_LIMIT}

    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        json_body(req, allowed=(), required=False)
        checked = self.application.check_indexnow_key(SiteId(site_id), req.context.caller)
        resp.media = indexnow_key_check_answer(checked)


class IndexNowDetectKey(Resource):
    extra_limits: Final = {"POST": INDEXNOW_LIMIT}

    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        json_body(req, allowed=(), required=False)
        status = self.application.detect_indexnow_key(SiteId(site_id), req.context.caller)
        resp.media = indexnow_status_answer(status)


class IndexNowKey(Resource):
    extra_limits: Final = {"PUT": INDEXNOW_LIMIT}

    def on_put(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        fields = Fields(json_body(req, allowed=("key", "key_location")))
        # Any string reaches the key rules, which answer 422 invalid_indexnow_key for a malformed one.
        key = fields.string("key", max_length=MAX_BODY_BYTES, min_length=0)
        if key is None and "key" not in fields.bad:
            fields.bad["key"] = "required"
        location = fields.string("key_location", max_length=MAX_BODY_BYTES, min_length=0)
        fields.done()
        assert key is not None
        checked = self.application.set_indexnow_key(SiteId(site_id), key, location, req.context.caller)
        resp.media = indexnow_key_check_answer(checked)
