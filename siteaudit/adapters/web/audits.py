"""The app's reports (docs/app.md, "Reports"): the team's audits, one audit's report as a page, and its
rows as files to download. A running audit's page refreshes itself (a meta refresh: no script); the fix
prompt's copy button is the one script of the app, a static file the report page alone allows."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlencode

import falcon

from siteaudit.adapters import export
from siteaudit.adapters.text import pairs
from siteaudit.adapters.web.pages import Page, WebParts, form_id
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import MAX_ID, AuditId, SiteId
from siteaudit.domain.issue import Severity
from siteaudit.ports.application import AuditProgress, AuditQuery, run_declared

ID: Final = f"int(min=1, max={MAX_ID})"
PER_PAGE: Final = 20
ROWS_PER_PAGE: Final = 25
REFRESH_SECONDS: Final = 5
# The status filter of the list: what people ask for, as the statuses it covers.
STATUS_FILTERS: Final[Mapping[str, tuple[AuditStatus, ...]]] = {
    "running": (AuditStatus.QUEUED, AuditStatus.RUNNING, AuditStatus.FINALIZING),
    "done": (AuditStatus.DONE,),
    "failed": (AuditStatus.FAILED,),
    "cancelled": (AuditStatus.CANCELLED,),
}
SEVERITIES: Final = tuple(s.value for s in Severity)
# The report page runs one script of ours (the copy button): that page's policy allows our own scripts,
# and only those; every other page keeps `default-src 'none'` without any script.
REPORT_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def _number(req: falcon.Request, name: str, *, default: int = 1, high: int = 100_000) -> int:
    """A page number (or other small positive number) from the query; a bad one is 400."""
    value = req.get_param(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise falcon.HTTPBadRequest(title=f"{name} must be a number.") from None
    if not 1 <= number <= high:
        raise falcon.HTTPBadRequest(title=f"{name} must be between 1 and {high:,}.")
    return number


def plural(count: int, word: str) -> str:
    """`1 page`, `2 pages`, `1,200 pages`."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _pages(total: int, per_page: int) -> int:
    return max(1, -(-total // per_page))


def _rate(progress: AuditProgress, now: datetime) -> float | None:
    """Pages a minute since the audit started, None before it did."""
    audit = progress.detail.audit
    duration = audit.duration_until(now)
    if duration is None or duration <= 0:
        return None
    return round(audit.pages_crawled / (duration / 60), 1)


class AuditsPage(Page):
    """`/app/audits`: the team's audits, newest first, by site and status, 20 a page; running ones with
    their live progress."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        viewer = self.viewer(req)
        site_param = req.get_param("site") or ""
        status_param = req.get_param("status") or ""
        if status_param and status_param not in STATUS_FILTERS:
            raise falcon.HTTPBadRequest(title="Unknown status filter.")
        try:
            site_id = SiteId(form_id(site_param)) if site_param else None
        except ValueError:
            raise falcon.HTTPBadRequest(title="Unknown site.") from None
        page = _number(req, "page")
        if viewer.team is None:
            self.render(req, resp, "audits.html", **_empty_list())
            return
        caller = viewer.caller
        sites = run_declared(self.application, "ListSites", caller).data
        audits = self.application.list_audits(
            AuditQuery(
                site_id=site_id,
                offset=(page - 1) * PER_PAGE,
                limit=PER_PAGE,
                statuses=STATUS_FILTERS.get(status_param, ()),
            ),
            caller,
        )
        now = self.app.clock.now()
        progress = {
            audit.id: self.application.audit_progress(audit.id, caller)
            for audit in audits.items
            if not audit.status.ended
        }
        filters = {"site": site_param, "status": status_param}

        def page_link(number: int) -> str:
            query = {k: v for k, v in {**filters, "page": str(number)}.items() if v and v != "1"}
            return "/app/audits" + (f"?{urlencode(query)}" if query else "")

        self.render(
            req, resp, "audits.html", audits=audits.items, total=audits.total, page=page,
            last_page=_pages(audits.total, PER_PAGE), page_link=page_link, sites=sites,
            site_urls={s.id: s.url for s in sites}, site_param=site_param, status_param=status_param,
            status_filters=list(STATUS_FILTERS), progress=progress, rates={a: _rate(p, now) for a, p in progress.items()},
            refresh=REFRESH_SECONDS if progress else None, plural=plural,
        )  # fmt: skip


def _empty_list() -> dict[str, Any]:
    return {
        "audits": [], "total": 0, "page": 1, "last_page": 1, "page_link": lambda n: "/app/audits",
        "sites": [], "site_urls": {}, "site_param": "", "status_param": "",
        "status_filters": list(STATUS_FILTERS), "progress": {}, "rates": {}, "refresh": None, "plural": plural,
    }  # fmt: skip


class AuditPage(Page):
    """`/app/audits/{id}`: one audit. Running: its live progress. Done: the report as a page, its issue
    rows by check, template and severity, its pages by status (each paged), and the downloads."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, audit_id: int) -> None:
        caller = self.viewer(req).caller
        progress = self.application.audit_progress(AuditId(audit_id), caller)  # another team's: 404
        audit = progress.detail.audit
        context: dict[str, Any] = {
            "audit": audit, "progress": progress, "rate": _rate(progress, self.app.clock.now()),
            "report": None, "refresh": None, "archived": False, "plural": plural,
        }  # fmt: skip
        if not audit.status.ended:
            context["refresh"] = REFRESH_SECONDS
            self.render(req, resp, "audit.html", **context)
            return
        if audit.status is AuditStatus.DONE:
            try:
                context["report"] = run_declared(
                    self.application, "GetReport", caller, crawl_id=AuditId(audit_id)
                )
            except DomainError as error:
                if error.code is not ErrorCode.REPORT_NOT_READY:
                    raise
                context["refresh"] = REFRESH_SECONDS
        if context["report"] is not None:
            context.update(self.rows(req, AuditId(audit_id)))
        resp.set_header("Content-Security-Policy", REPORT_POLICY)
        self.render(req, resp, "audit.html", **context)

    def rows(self, req: falcon.Request, audit_id: AuditId) -> dict[str, Any]:
        """The drill-down (issue rows) and the page list, each with its own filters and pager."""
        caller = self.viewer(req).caller
        chosen = {
            "check": (req.get_param("check") or "")[:100],
            "template": (req.get_param("template") or "")[:2048],
            "severity": req.get_param("severity") or "",
            "status_code": req.get_param("status_code") or "",
            "ip": str(_number(req, "ip")),
            "pp": str(_number(req, "pp")),
        }
        if chosen["severity"] and chosen["severity"] not in SEVERITIES:
            raise falcon.HTTPBadRequest(title="Unknown severity.")
        status_code = None
        if chosen["status_code"]:
            status_code = _number(req, "status_code", high=999)
        issue_page, page_page = int(chosen["ip"]), int(chosen["pp"])

        def here(anchor: str, **changes: str) -> str:
            query = {
                k: v for k, v in {**chosen, **changes}.items() if v and not (k in ("ip", "pp") and v == "1")
            }
            return f"/app/audits/{audit_id}" + (f"?{urlencode(query)}" if query else "") + f"#{anchor}"

        try:
            issues = run_declared(
                self.application,
                "ListIssues",
                caller,
                crawl_id=audit_id,
                check=chosen["check"] or None,
                severity=Severity(chosen["severity"]) if chosen["severity"] else None,
                template=chosen["template"] or None,
                page=issue_page,
                per_page=ROWS_PER_PAGE,
            )
            pages = run_declared(
                self.application,
                "ListPages",
                caller,
                crawl_id=audit_id,
                status_code=status_code,
                page=page_page,
                per_page=ROWS_PER_PAGE,
            )
        except DomainError as error:
            if error.code is not ErrorCode.CRAWL_ARCHIVED:
                raise
            return {"archived": True, "chosen": chosen, "here": here}
        return {
            "chosen": chosen, "here": here, "issues": issues.data, "issue_total": issues.meta.total,
            "issue_page": issue_page, "issue_last": issues.meta.last_page,
            "page_rows": pages.data, "page_total": pages.meta.total, "page_page": page_page,
            "page_last": pages.meta.last_page, "severities": SEVERITIES,
            "downloads": [(kind, fmt) for kind in export.KINDS for fmt in export.FORMATS], "pairs": pairs,
        }  # fmt: skip


class AuditExport(Page):
    """`/app/audits/{id}/export?kind=...&format=...`: the same file as `GET /v1/crawls/{id}/export`, for
    a signed-in member of the audit's team (another team's audit: the 404 page)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, audit_id: int) -> None:
        kind, format = export.chosen(req.params)
        rows = self.application.export_rows(AuditId(audit_id), kind, self.viewer(req).caller)
        resp.content_type = export.FORMATS[format][0]
        name = export.file_name(audit_id, kind, format)
        resp.set_header("Content-Disposition", f'attachment; filename="{name}"')
        resp.stream = export.pieces(kind, format, rows)


class ServiceRoot:
    """`/`: a person who opens the service's address lands in the app (signed in: their account; else
    the sign-in page); clients of `/v1` never ask for `/`, and its document is `/v1/openapi.json`."""

    anonymous = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        raise falcon.HTTPFound("/app")

    on_head = on_get


def routes(parts: WebParts) -> list[tuple[str, object]]:
    """The reports' routes under `/app`."""
    return [
        ("/audits", AuditsPage(parts)),
        (f"/audits/{{audit_id:{ID}}}", AuditPage(parts)),
        (f"/audits/{{audit_id:{ID}}}/export", AuditExport(parts)),
    ]
