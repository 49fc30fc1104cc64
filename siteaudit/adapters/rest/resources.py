"""Thin resources: parse and check the request, call one use case of the application, convert, answer."""

from typing import Final

import falcon

from siteaudit.adapters.rest.extraction import filter_of, is_filter, rules_of
from siteaudit.adapters.rest.params import Fields, json_body, known_query, page_params, paginated
from siteaudit.adapters.rest.views import (
    ReportPartView,
    account_answer,
    audit_detail,
    audit_row,
    issue_row,
    page_row,
    report_answer,
    started_answer,
)
from siteaudit.domain.audit import AuditRequest, AuditTrigger
from siteaudit.domain.ids import MAX_ID, AuditId, SiteId
from siteaudit.domain.issue import Severity
from siteaudit.domain.site import MAX_PAGES_CEILING
from siteaudit.ports.application import Application, AuditQuery, IssueQuery, PageQuery
from siteaudit.ports.clock import Clock

ID: Final = f"int(min=1, max={MAX_ID})"


class Resource:
    def __init__(self, application: Application, clock: Clock) -> None:
        self.application = application
        self.clock = clock


class Health:
    public = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"ok": True}


class Ping(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"user_id": req.context.caller.user_id}


class Account(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = account_answer(self.application.account(req.context.caller))


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
)


class Crawls(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        known_query(req, ("site_id", "page", "per_page"))
        fields = Fields(req.params, query=True)
        site_id = fields.integer("site_id", low=1, high=2**62)
        fields.done()
        page, per_page = page_params(req, default=20, maximum=100)
        query = AuditQuery(
            site_id=SiteId(site_id) if site_id is not None else None,
            offset=(page - 1) * per_page,
            limit=per_page,
        )
        audits = self.application.list_audits(query, req.context.caller)
        resp.media = paginated(
            [audit_row(a) for a in audits.items], page=page, per_page=per_page, total=audits.total
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_body(req, allowed=CRAWL_FIELDS)
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
        )
        if url is None and site_id is None and "url" not in fields.bad:
            fields.bad["url"] = "url is required unless site_id is given"
        fields.done()
        started = self.application.start_audit(request, req.context.caller)
        resp.status = falcon.HTTP_202
        resp.media = started_answer(started)


class Crawl(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        known_query(req, ())
        detail = self.application.get_audit(AuditId(crawl_id), req.context.caller)
        resp.media = audit_detail(detail, now=self.clock.now())

    def on_delete(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        self.application.cancel_audit(AuditId(crawl_id), req.context.caller)
        resp.media = {"status": "cancelled"}


class Report(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        resp.media = report_answer(self.application.report(AuditId(crawl_id), req.context.caller))


class ReportPart(Resource):
    """`/templates`, `/diff` and `/fix-prompt`: one part of the stored report, as `view` shows it."""

    def __init__(self, application: Application, clock: Clock, *, view: ReportPartView) -> None:
        super().__init__(application, clock)
        self.view = view

    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        resp.media = self.view(crawl_id, self.application.report(AuditId(crawl_id), req.context.caller))


class Issues(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        known_query(req, ("check", "check_code", "severity", "template", "page", "per_page"))
        fields = Fields(req.params, query=True)
        check = fields.string("check", max_length=100, min_length=1)
        check_code = fields.string("check_code", max_length=100, min_length=1)
        severity = fields.string("severity", max_length=10, choices=("error", "warning", "notice"))
        template = fields.string("template", max_length=2048, min_length=1)
        fields.done()
        page, per_page = page_params(req, default=50, maximum=200)
        query = IssueQuery(
            check=check or check_code,
            severity=Severity(severity) if severity else None,
            template=template,
            offset=(page - 1) * per_page,
            limit=per_page,
        )
        issues = self.application.issues(AuditId(crawl_id), query, req.context.caller)
        rows, total = issues.items, issues.total
        if check and check_code and check != check_code:
            # Both filter the same field and filters combine: two different codes match no issue.
            rows, total = [], 0
        resp.media = paginated([issue_row(r) for r in rows], page=page, per_page=per_page, total=total)


class Pages(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, crawl_id: int) -> None:
        filters = [name for name in req.params if is_filter(name)]  # docs/extraction.md
        known_query(req, ("status_code", "page", "per_page", *filters))
        fields = Fields(req.params, query=True)
        status_code = fields.integer("status_code", low=0, high=999)
        fields.done()
        page, per_page = page_params(req, default=50, maximum=200)
        query = PageQuery(
            status_code=status_code,
            offset=(page - 1) * per_page,
            limit=per_page,
            extract=filter_of(req.params),
        )
        pages = self.application.pages(AuditId(crawl_id), query, req.context.caller)
        resp.media = paginated(
            [page_row(r) for r in pages.items], page=page, per_page=per_page, total=pages.total
        )
