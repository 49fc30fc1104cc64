"""The app's site pages (docs/app.md, "Sites"): the team's sites with a form to register one, and one
site's page: ownership, settings and monitoring, the health trend, the latest audit, the tasks board,
fix impact, the search console summary and IndexNow. Each form is one call of the application interface;
another team's site is a 404 page (the application answers NotFound for it)."""

from collections.abc import Sequence
from typing import Any, Final

import falcon
from attrs import frozen
from markupsafe import Markup

from siteaudit.adapters.web.pages import Page, WebApplication, _redirect, _say
from siteaudit.adapters.web.plots import Bar, Point, bar_plot, line_plot
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.credit import NOT_MODIFIED_PAGE_COST, as_number, page_cost
from siteaudit.domain.error import DomainError, NotFound, ValidationFailed
from siteaudit.domain.ids import MAX_ID, RecheckId, SiteId, TaskKey
from siteaudit.domain.site import Monitoring, ProofCheck, VerificationFailed, VerifyMethod
from siteaudit.ports.application import AuditQuery, CallerApi, run_declared

# Audits the trend plot shows, newest last.
TREND_AUDITS: Final = 24
# Fix-impact events plotted on the page, newest first.
IMPACT_PLOTS: Final = 3
# While a recheck asked from the page runs, the page reloads itself this often (a meta refresh: no script).
RECHECK_REFRESH_S: Final = 3
# A recheck's statuses once it ended (its answer's `status`).
ENDED: Final = ("done", "failed", "cancelled")

SITE_NOTICES: Final = {
    "registered": "Site registered. Prove you own it to start audits of it: publish one of the proofs below.",
    "saved": "Settings saved.",
    "recheck": "Recheck started: this page shows its result when it ends.",
}


def _id(text: str | None) -> int | None:
    """A row id from a path or field, None when it is not one."""
    if not text or not text.isascii() or not text.isdigit() or len(text) > 19:
        return None
    number = int(text)
    return number if 1 <= number <= MAX_ID else None


# --- the health trend ------------------------------------------------------------------------------------


def _no_score_reason(application: CallerApi, audit: Audit, caller: Caller) -> str:
    if audit.status is AuditStatus.FAILED:
        return f"The audit failed: {audit.failure_reason or 'no reason recorded'}."
    if audit.status is AuditStatus.CANCELLED:
        return "The audit was cancelled."
    try:
        warning = run_declared(application, "GetReport", caller, crawl_id=audit.id).coverage_warning
    except DomainError:
        warning = None
    return warning.message if warning is not None else "The audit has no score."


def trend_points(application: WebApplication, site_id: SiteId, caller: Caller) -> list[Point]:
    """The site's ended audits, oldest first: their health score, or a gap saying why there is none (a
    failed audit's reason: the app's list of the domain's audits)."""
    audits = application.list_audits(AuditQuery(site_id=site_id, limit=TREND_AUDITS), caller).items
    points = []
    for audit in reversed(audits):
        if not audit.status.ended:
            continue
        label = (audit.finished_at or audit.created_at).strftime("%Y-%m-%d")
        if audit.status is AuditStatus.DONE and audit.health_score is not None:
            points.append(Point(label, audit.health_score))
        else:
            points.append(Point(label, None, _no_score_reason(application, audit, caller)))
    return points


# --- fix impact --------------------------------------------------------------------------------------------


def impact_plot(event: Any, ident: str) -> Markup:
    """Clicks over the 7, 14 and 28 days after the fix, each against the baseline's clicks scaled to the
    same number of days (the baseline covers the 28 days before). `event` is a fix-impact event of the
    declared `GetSiteFixImpact`'s answer."""
    baseline = event.baseline_clicks_28d
    bars = [
        Bar(
            f"d{days}",
            value,
            None if baseline is None else round(baseline * days / 28, 1),
            "" if value is not None else "not measured yet",
        )
        for days, value in ((7, event.d7), (14, event.d14), (28, event.d28))
    ]
    return bar_plot(
        bars,
        ident=ident,
        title=f"Clicks after fixing {event.code} on {event.template}",
        reference_name="baseline",
        empty="No figures yet: measuring starts after the fix.",
    )


# --- the tasks board ---------------------------------------------------------------------------------------
# One small fragment over the declared use cases of fix tasks and rechecks (docs/architecture.md): the
# app finds them by name among `application.use_cases()` (a door reaches declarations at run time, never
# the services' modules) and renders their answers, the values `/v1` shows (`_tasks.html`, `_recheck.html`).


@frozen
class TaskBoard:
    tasks: Any  # `ListSiteTasks`'s answer (a `SiteTaskList`), None when refused
    reason: str  # why there is no board ("" when there is one)
    recheck: Any  # `GetRecheck`'s answer for the recheck the page follows (`?recheck=`), None for none


def task_board(application: CallerApi, site_id: SiteId, caller: Caller, recheck_id: int | None) -> TaskBoard:
    try:
        tasks = run_declared(application, "ListSiteTasks", caller, site_id=site_id, limit=10)
        reason = ""
    except DomainError as refused:
        tasks, reason = None, _say(refused)
    recheck = None
    if recheck_id is not None:
        try:
            recheck = run_declared(application, "GetRecheck", caller, recheck_id=RecheckId(recheck_id))
        except NotFound:
            recheck = None
        if recheck is not None and recheck.site_id != site_id:
            recheck = None
    return TaskBoard(tasks, reason, recheck)


def start_recheck(application: CallerApi, site_id: SiteId, task_key: str, caller: Caller) -> RecheckId:
    accepted = run_declared(
        application, "RequestRecheck", caller, site_id=site_id, task_key=TaskKey(task_key)
    )
    return RecheckId(accepted.recheck_id)


# --- pages -------------------------------------------------------------------------------------------------


class SitesList(Page):
    """`/app/sites`: the team's sites with their latest score and trend, and a form to register one."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp)

    def show(self, req: falcon.Request, resp: falcon.Response, **context: Any) -> None:
        viewer = self.viewer(req)
        details = []
        if viewer.team is not None:
            caller = viewer.caller
            details = [
                run_declared(self.application, "GetSite", caller, site_id=site.id)
                for site in run_declared(self.application, "ListSites", caller).data
            ]
        self.render(
            req, resp, "sites.html", details=details, spark=sparkline, url=context.pop("url", ""), **context
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        viewer = self.viewer(req)
        url = req.context.form.get("url", "").strip()[:2048]
        if viewer.team is None:
            raise falcon.HTTPBadRequest()
        try:
            site = run_declared(self.application, "RegisterSite", viewer.caller, url=url)
        except DomainError as refused:
            resp.status = falcon.HTTP_422 if isinstance(refused, ValidationFailed) else refused.status
            self.show(req, resp, url=url, error=_say(refused))
            return
        raise _redirect(f"/app/sites/{site.id}?done=registered")


def sparkline(scores: Sequence[int], width: int = 120, height: int = 28) -> str:
    """SVG polyline points of health scores, oldest on the left, scaled to their own range (at least
    10 points tall) so that a change of a few points shows."""
    if not scores:
        return ""
    if len(scores) == 1:
        scores = [scores[0], scores[0]]
    low, high = min(scores), max(scores)
    middle, span = (low + high) / 2, max(10, high - low)
    step = width / (len(scores) - 1)
    return " ".join(
        f"{i * step:.1f},{height / 2 - (s - middle) * (height - 6) / span:.1f}" for i, s in enumerate(scores)
    )


class SitePage(Page):
    """`/app/sites/{site_id}`: GET shows the site; POST `action` verify, settings or recheck."""

    def site_id(self, raw: str) -> SiteId:
        number = _id(raw)
        if number is None:
            raise falcon.HTTPNotFound(title="There is no such site in this team.")
        return SiteId(number)

    def on_get(self, req: falcon.Request, resp: falcon.Response, site_id: str) -> None:
        self.show(req, resp, self.site_id(site_id))

    def show(self, req: falcon.Request, resp: falcon.Response, site_id: SiteId, **context: Any) -> None:
        viewer = self.viewer(req)
        if viewer.team is None:
            raise falcon.HTTPNotFound(title="There is no such site in this team.")
        caller = viewer.caller
        application = self.application
        # The answers `/v1` shows: the site with its latest audit, and its ownership and proofs. NotFound
        # for another team's site: a 404 page.
        site = run_declared(application, "GetSite", caller, site_id=site_id)
        verification = run_declared(application, "GetSiteVerification", caller, site_id=site_id)
        account = run_declared(application, "GetAccount", caller)
        impact = run_declared(application, "GetSiteFixImpact", caller, site_id=site_id, limit=10)
        try:
            console = run_declared(application, "GetConsoleSummary", caller, site_id=site_id)
            console_reason = ""
        except DomainError as refused:
            console, console_reason = None, _say(refused)
        try:
            indexnow = run_declared(application, "GetIndexNowStatus", caller, site_id=site_id)
            indexnow_reason = ""
        except DomainError as refused:
            indexnow, indexnow_reason = None, _say(refused)
        board = task_board(application, site_id, caller, _id(req.get_param("recheck")))
        owner = viewer.team.owner_id == viewer.user.id
        max_cost = site.max_pages * page_cost(render=site.render)
        self.render(
            req,
            resp,
            "site.html",
            site=site,
            verification=verification,
            proofs=verification.methods,
            account=account,
            owner=owner,
            owner_email=self.owner_email(viewer, owner),
            max_cost=max_cost,
            short_of_credits=account.team_credits < as_number(max_cost),
            page_cost=page_cost(render=site.render),
            render_cost=page_cost(render=True),
            unchanged_cost=NOT_MODIFIED_PAGE_COST,
            trend=line_plot(
                trend_points(application, site_id, caller),
                ident="health-trend",
                title=f"Health score of {site.host}",
                empty="No audit of this site has ended yet.",
            ),
            impact=impact,
            impact_plots=[impact_plot(event, f"impact-{event.id}") for event in impact.events[:IMPACT_PLOTS]],
            console=console,
            console_reason=console_reason,
            indexnow=indexnow,
            indexnow_reason=indexnow_reason,
            board=board,
            refresh=RECHECK_REFRESH_S
            if board.recheck is not None and board.recheck.status.value not in ENDED
            else 0,
            monitorings=list(Monitoring),
            methods=[VerifyMethod.DNS, VerifyMethod.META, VerifyMethod.FILE, VerifyMethod.SC],
            checks=context.pop("checks", ()),
            notice=context.pop("notice", SITE_NOTICES.get(req.get_param("done") or "", "")),
            **context,
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, site_id: str) -> None:
        site = self.site_id(site_id)
        form = req.context.form
        action = form.get("action", "")
        caller = self.viewer(req).caller
        if action == "verify":
            self.verify(req, resp, site, form.get("method", ""), caller)
        elif action == "settings":
            self.save(req, resp, site, form, caller)
        elif action == "recheck":
            try:
                recheck = start_recheck(self.application, site, form.get("task_key", "")[:200], caller)
            except DomainError as refused:
                resp.status = refused.status
                self.show(req, resp, site, error=_say(refused))
                return
            raise _redirect(f"/app/sites/{site}?done=recheck&recheck={recheck}")
        else:
            raise falcon.HTTPBadRequest()

    def verify(
        self, req: falcon.Request, resp: falcon.Response, site: SiteId, method: str, caller: Caller
    ) -> None:
        try:
            chosen = VerifyMethod(method) if method else None
        except ValueError:
            raise falcon.HTTPBadRequest() from None
        checks: Sequence[ProofCheck]
        try:
            proved = run_declared(self.application, "VerifySite", caller, site_id=site, method=chosen)
        except VerificationFailed as failed:
            resp.status = falcon.HTTP_422
            self.show(
                req, resp, site, checks=failed.checked,
                error="No proof was found yet: each method's reason is below.",
            )  # fmt: skip
            return
        checks = [ProofCheck(c.method, c.result, c.detail) for c in proved.checked]
        via = proved.verified_via.value if proved.verified_via else "a proof"
        self.show(req, resp, site, checks=checks, notice=f"Ownership proved through {via}.")

    def save(
        self, req: falcon.Request, resp: falcon.Response, site: SiteId, form: dict[str, str], caller: Caller
    ) -> None:
        try:
            changes = {
                "monitoring": Monitoring(form.get("monitoring", "")),
                "max_pages": int(form.get("max_pages", "")),
                "max_rps": float(form.get("max_rps", "")),
                "alert_email": form.get("alert_email") == "on",
                "render": form.get("render") == "on",
            }
        except ValueError:
            resp.status = falcon.HTTP_422
            self.show(req, resp, site, error="Pages and requests a second must be numbers.")
            return
        try:
            updated = run_declared(self.application, "UpdateSite", caller, site_id=site, **changes)
        except DomainError as refused:
            resp.status = falcon.HTTP_422 if isinstance(refused, ValidationFailed) else refused.status
            self.show(req, resp, site, error=_say(refused))
            return
        if updated.warnings:
            self.show(req, resp, site, notice=" ".join(n.message for n in updated.warnings))
            return
        raise _redirect(f"/app/sites/{site}?done=saved")
