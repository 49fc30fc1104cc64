"""Fix tasks and rechecks (SPEC 4.5, 4.6): thin resources over the application's task and recheck use
cases. Another team's site, task or recheck answers 404 `not_found` (the use cases scope by team)."""

from typing import Any, Final

import falcon

from siteaudit.adapters.rest.params import Fields, json_body, known_query
from siteaudit.adapters.rest.resources import Resource
from siteaudit.adapters.rest.task_views import (
    recheck_answer,
    recheck_started_answer,
    site_tasks_answer,
    task_detail_answer,
    team_tasks_answer,
)
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import RecheckId, SiteId
from siteaudit.domain.site import MAX_URL_LENGTH
from siteaudit.ports.application import RecheckRequest

MAX_PAGE: Final = 100_000
URLS_PER_PAGE: Final = 100


class SiteTasks(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        known_query(req, ("limit",))
        fields = Fields(req.params, query=True)
        limit = fields.integer("limit", low=1, high=100, default=10)
        fields.done()
        assert limit is not None
        resp.media = site_tasks_answer(
            self.application.site_tasks(SiteId(site_id), req.context.caller, limit=limit)
        )


class TeamTasks(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        known_query(req, ("limit",))
        fields = Fields(req.params, query=True)
        limit = fields.integer("limit", low=1, high=20, default=3)
        fields.done()
        assert limit is not None
        resp.media = team_tasks_answer(self.application.team_tasks(req.context.caller, limit=limit))


class SiteTask(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: int, task_key: str) -> None:
        known_query(req, ("page",))
        fields = Fields(req.params, query=True)
        page = fields.integer("page", low=1, high=MAX_PAGE, default=1)
        fields.done()
        assert page is not None
        detail = self.application.task_detail(SiteId(site_id), task_key, req.context.caller, page=page)
        resp.media = task_detail_answer(detail, per_page=URLS_PER_PAGE)


def _urls(value: Any) -> tuple[str, ...]:
    """`urls` as given: a list of strings (the count and the host are the use case's 422 invalid_urls)."""
    if not isinstance(value, list) or not all(isinstance(u, str) and len(u) <= MAX_URL_LENGTH for u in value):
        raise ValidationFailed({"urls": f"must be a list of URLs of at most {MAX_URL_LENGTH:,} characters"})
    return tuple(value)


class SiteRecheck(Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: int) -> None:
        body = json_body(req, allowed=("task_key", "urls"))
        fields = Fields(body)
        key = fields.string("task_key", max_length=64)
        fields.done()
        urls = _urls(body["urls"]) if "urls" in body and body["urls"] is not None else None
        if "urls" in body and body["urls"] is None:
            raise ValidationFailed({"urls": "must be a list of URLs, not null"})
        if (key is None) == (urls is None):
            problem = "give exactly one of task_key and urls"
            raise ValidationFailed({"task_key": problem, "urls": problem})
        accepted = self.application.request_recheck(
            RecheckRequest(site_id=SiteId(site_id), task_key=key, urls=urls), req.context.caller
        )
        resp.status = falcon.HTTP_202
        resp.media = recheck_started_answer(accepted)


class Recheck(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, recheck_id: int) -> None:
        known_query(req, ())
        resp.media = recheck_answer(self.application.get_recheck(RecheckId(recheck_id), req.context.caller))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, recheck_id: int) -> None:
        """Cancel a queued or running recheck (beyond SPEC, like `DELETE /crawls/{id}`); 409 once ended."""
        resp.media = recheck_answer(
            self.application.cancel_recheck(RecheckId(recheck_id), req.context.caller)
        )
