"""The same scenarios against the in-process application and against the HTTP client talking to a running
service: the same results, the same error codes. And what the client reads back renders as REST wrote it."""

import inspect
from functools import partial
from urllib.parse import urlsplit

import pytest
from attrs import frozen

from siteaudit.adapters.answers import converter
from siteaudit.adapters.client import HttpApplication
from siteaudit.adapters.mcp.tools import NOT_TOOLS
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.billing import Interval, Pack, PlanName, Tier
from siteaudit.domain.catalogue import CATALOGUE
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.extraction import ExtractionRule
from siteaudit.domain.ids import AuditId, RecheckId, SiteId
from siteaudit.domain.impact import ImpactStatus
from siteaudit.domain.indexnow import KeyCheckResult, SubmitStatus
from siteaudit.domain.issue import Severity
from siteaudit.domain.recheck import RecheckStatus
from siteaudit.domain.site import Monitoring, VerifyMethod
from siteaudit.domain.task import TaskStatus
from siteaudit.ports.application import (
    Application,
    CallerApi,
)
from siteaudit.ports.usecases import UseCase
from siteaudit.services.accounts.usecases import GetAccount
from siteaudit.services.audits.usecases import (
    CancelAudit,
    GetAudit,
    GetReport,
    ListAudits,
    ListIssues,
    ListPages,
    StartAudit,
)
from siteaudit.services.billing.usecases import GetBillingPortalLink, GetCreditPackLink, GetSubscriptionLink
from siteaudit.services.console.usecases import (
    GetConsoleOpportunities,
    GetConsoleSummary,
    GetConsoleUrl,
    GetIndexTriage,
    InspectUrls,
    ListNotIndexed,
)
from siteaudit.services.impact.usecases import GetSiteFixImpact, GetTeamFixImpact
from siteaudit.services.indexnow.usecases import (
    CheckIndexNowKey,
    DetectIndexNowKey,
    GetIndexNowStatus,
    SetIndexNowAuto,
    SetIndexNowKey,
    SubmitToIndexNow,
)
from siteaudit.services.sites.usecases import (
    CrawlSite,
    DeleteSite,
    GetSite,
    GetSiteVerification,
    ListSites,
    RegisterSite,
    UpdateSite,
    VerifySite,
)
from siteaudit.services.tasks.answers import RecheckStarted, SiteTaskList
from siteaudit.services.tasks.usecases import (
    CancelRecheck,
    GetRecheck,
    GetTask,
    ListSiteTasks,
    ListTeamTasks,
    RequestRecheck,
)
from tests.unit.remote.conftest import Service


@frozen
class Door:
    application: Application
    owner: Caller
    member: Caller
    rival: Caller


@pytest.fixture(params=["local", "remote"])
def door(request: pytest.FixtureRequest, service: Service) -> Door:
    if request.param == "local":
        application: Application = service.app.application
    else:
        application = HttpApplication(service.base_url)
    return Door(
        application=application,
        owner=application.authenticate(service.keys.owner),
        member=application.authenticate(service.keys.member),
        rival=application.authenticate(service.keys.rival),
    )


def code_of(call: object) -> ErrorCode:
    assert callable(call)
    with pytest.raises(DomainError) as raised:
        call()
    return raised.value.code


def test_who_a_key_acts_for_is_the_same_through_both(service: Service, door: Door) -> None:
    account = door.application.handle(GetAccount(), door.owner)
    assert account.api_key_prefix == service.keys.owner[:12]
    assert account.team_id == door.owner.team_id == door.member.team_id != door.rival.team_id
    assert account.balance == 50_000
    assert code_of(lambda: door.application.authenticate("sk_" + "x" * 40)) is ErrorCode.UNAUTHENTICATED


def test_an_audit_from_start_to_cancel(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    started = app.handle(StartAudit(url=service.site_url, max_pages=5), owner)
    audit_id = AuditId(started.crawl_id)
    assert started.estimated_credits == 5  # credits, as every door shows them
    queued = app.handle(GetAudit(audit_id), owner)
    assert queued.status is AuditStatus.QUEUED
    assert queued.site_url == service.site_url
    listed = app.handle(ListAudits(per_page=10), owner)
    assert listed.meta.total == 1 and listed.data[0].crawl_id == audit_id
    assert app.handle(GetAudit(audit_id), door.member).max_pages == 5
    assert code_of(lambda: app.handle(GetAudit(audit_id), door.rival)) is ErrorCode.NOT_FOUND
    assert code_of(lambda: app.handle(GetReport(audit_id), owner)) is ErrorCode.REPORT_NOT_READY
    assert app.handle(CancelAudit(audit_id), owner).status == "cancelled"
    assert app.handle(GetAudit(audit_id), owner).status is AuditStatus.CANCELLED
    assert code_of(lambda: app.handle(CancelAudit(audit_id), owner)) is ErrorCode.CONFLICT
    assert code_of(lambda: app.handle(CancelAudit(AuditId(999_999)), owner)) is ErrorCode.NOT_FOUND


def test_a_finished_audit_reads_the_same(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    audit_id = AuditId(app.handle(StartAudit(url=service.site_url, max_pages=10), owner).crawl_id)
    service.crawl()
    detail = app.handle(GetAudit(audit_id), owner)
    assert detail.status is AuditStatus.DONE
    report = app.handle(GetReport(audit_id), owner)
    assert 0 <= report.health_score <= 100
    assert report.totals.pages == detail.pages_crawled >= 5
    issues = app.handle(ListIssues(audit_id, per_page=2), owner)
    assert issues.meta.total >= 3 and len(issues.data) == 2
    warnings = app.handle(ListIssues(audit_id, severity=Severity.WARNING, per_page=200), owner)
    assert warnings.data and all(i.severity is Severity.WARNING for i in warnings.data)
    pages = app.handle(ListPages(audit_id, status_code=404, per_page=50), owner)
    assert sorted(p.url for p in pages.data) == [service.site_url + "gone", service.site_url + "shop.png"]
    assert code_of(lambda: app.handle(ListIssues(audit_id), door.rival)) is ErrorCode.NOT_FOUND


def test_refusals_carry_the_same_codes(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    assert code_of(lambda: app.handle(StartAudit(url="ftp://retro-clock.example/"), owner)) is (
        ErrorCode.INVALID_URL
    )
    over_plan = StartAudit(url=service.site_url, max_pages=20_000)  # the member's plan allows 10,000
    assert code_of(lambda: app.handle(over_plan, door.member)) is ErrorCode.PLAN_LIMIT_MAX_PAGES
    unverified = StartAudit(url=service.site_url, max_pages=501)
    assert code_of(lambda: app.handle(unverified, owner)) is ErrorCode.SITE_NOT_VERIFIED
    fast = StartAudit(url=service.site_url, max_rps=5)
    assert code_of(lambda: app.handle(fast, owner)) is ErrorCode.MAX_RPS_REQUIRES_VERIFIED_SITE
    both = StartAudit(url=service.site_url, urls=(service.site_url,))
    assert code_of(lambda: app.handle(both, owner)) is ErrorCode.VALIDATION_FAILED


def test_a_site_from_registration_to_deletion(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    site = app.handle(RegisterSite(url=service.site_url, max_pages=50), owner)
    assert not site.verified and site.max_pages == 50 and len(site.verify_token) >= 16
    assert code_of(lambda: app.handle(RegisterSite(url=service.site_url), owner)) is (ErrorCode.SITE_EXISTS)
    assert [s.id for s in app.handle(ListSites(), door.member).data] == [site.id]
    assert app.handle(ListSites(), door.rival).data == ()
    detail = app.handle(GetSite(site.id), owner)
    assert detail.verify_token == site.verify_token and detail.latest_crawl is None
    assert app.handle(UpdateSite(site.id, max_pages=40, alert_email=False), owner).max_pages == 40
    monitoring = UpdateSite(site.id, monitoring=Monitoring.DAILY)
    assert code_of(lambda: app.handle(monitoring, owner)) is ErrorCode.SITE_NOT_VERIFIED
    ownership = app.handle(GetSiteVerification(site.id), owner)
    assert ownership.methods.file.body.strip() == site.verify_token
    assert (
        code_of(lambda: app.handle(VerifySite(site.id, VerifyMethod.FILE), owner))
        is ErrorCode.VERIFICATION_FAILED
    )
    started = app.handle(CrawlSite(site_id=site.id, max_pages=5), owner)
    assert started.estimated_credits == 5  # credits, as every door shows them
    assert app.handle(GetAudit(AuditId(started.crawl_id)), owner).site_id == site.id
    assert app.handle(GetSite(site.id), owner).latest_crawl is not None
    assert code_of(lambda: app.handle(GetSite(site.id), door.rival)) is ErrorCode.NOT_FOUND
    app.handle(DeleteSite(site.id), owner)
    assert code_of(lambda: app.handle(GetSite(site.id), owner)) is ErrorCode.NOT_FOUND
    assert code_of(lambda: app.handle(DeleteSite(SiteId(site.id)), owner)) is ErrorCode.NOT_FOUND


def test_what_the_client_reads_back_renders_as_the_service_wrote_it(service: Service) -> None:
    local = service.app.application
    remote = HttpApplication(service.base_url)
    mine, theirs = local.authenticate(service.keys.owner), remote.authenticate(service.keys.owner)
    site = local.handle(RegisterSite(url=service.site_url), mine)
    audit_id = AuditId(local.handle(CrawlSite(site_id=site.id, max_pages=10), mine).crawl_id)
    service.crawl()

    def same(render: object, read: object) -> None:
        assert callable(render) and callable(read)
        assert render(read(local, mine)) == render(read(remote, theirs))

    same(converter.unstructure, lambda a, c: a.handle(GetAccount(), c))
    same(converter.unstructure, lambda a, c: a.handle(GetAudit(audit_id), c))
    same(converter.unstructure, lambda a, c: a.handle(ListAudits(), c))
    same(converter.unstructure, lambda a, c: a.handle(GetReport(audit_id), c))
    same(converter.unstructure, lambda a, c: a.handle(ListIssues(audit_id), c))
    same(converter.unstructure, lambda a, c: a.handle(ListPages(audit_id), c))
    for asked in (ListSites(), GetSite(SiteId(site.id)), GetSiteVerification(SiteId(site.id))):
        assert local.handle(asked, mine) == remote.handle(asked, theirs)


def test_extraction_rules_go_out_and_their_values_come_back_through_the_client(service: Service) -> None:
    """The client sends an audit's rules and the pages filter (docs/extraction.md) and reads each row's
    values back as the service answers them in process."""
    local = service.app.application
    remote = HttpApplication(service.base_url)
    mine, theirs = local.authenticate(service.keys.owner), remote.authenticate(service.keys.owner)
    rules = (ExtractionRule("title", "title"),)
    request = StartAudit(url=service.site_url, max_pages=10, extract=rules)
    audit_id = AuditId(remote.handle(request, theirs).crawl_id)
    service.crawl()
    asked = ListPages(audit_id, extract_rule="title")
    read = remote.handle(asked, theirs)
    assert converter.unstructure(read) == converter.unstructure(local.handle(asked, mine))
    assert read.data and read.meta.total == len(read.data)
    assert all(page.extract is not None and page.extract["title"] for page in read.data)
    nothing = remote.handle(ListPages(audit_id, extract_rule="title", extract_value="no such title"), theirs)
    assert (nothing.data, nothing.meta.total) == ((), 0)


def public_functions(cls: type) -> set[str]:
    return {name for name, f in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def test_the_client_implements_exactly_the_callers_api() -> None:
    """HttpApplication derives from CallerApi (mypy checks the signatures); here: it defines every method
    of it itself, and nothing more (but `close`)."""
    own = {name for name, f in vars(HttpApplication).items() if inspect.isfunction(f) and name[0] != "_"}
    assert own - {"close"} == public_functions(CallerApi)  # type: ignore[type-abstract]
    for name in public_functions(CallerApi):  # type: ignore[type-abstract]
        promised = inspect.signature(getattr(CallerApi, name))
        given = inspect.signature(getattr(HttpApplication, name))
        assert list(promised.parameters) == list(given.parameters), name


def test_what_acts_for_a_caller_beyond_the_callers_api_is_the_apps_own() -> None:
    """A use case with a caller that is not in the callers' API is kept to the app (SPEC), each with its
    reason on the tools' exclusion list; `/v1` and the client do not serve it."""
    beyond = {
        name
        for name in public_functions(Application) - public_functions(CallerApi)  # type: ignore[type-abstract]
        if "caller" in inspect.signature(getattr(Application, name)).parameters
    }
    assert beyond and beyond <= set(NOT_TOOLS)


# --- search console, index triage, IndexNow, billing links (SPEC 4.8-4.10) -------------------------------


def test_the_search_console_and_index_triage_read_the_same(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    site_id = service.audited_site()
    summary = app.handle(GetConsoleSummary(site_id), owner)
    assert summary.demo and summary.connected and summary.funnel.found >= 3
    assert len(summary.trend) == 28
    groups = app.handle(ListNotIndexed(site_id), owner)
    assert groups.urls is None and groups.total == len(groups.groups)
    if groups.groups:
        first = groups.groups[0]
        urls = app.handle(ListNotIndexed(site_id, reason=first.reason, template=first.template), owner)
        assert urls.urls is not None and len(urls.urls) == first.pages
    one = app.handle(GetConsoleUrl(site_id, service.site_url), door.member)
    assert one.url == service.site_url and one.crawl is not None and one.demo
    assert code_of(lambda: app.handle(GetConsoleUrl(site_id, "https://elsewhere.example/"), owner)) is (
        ErrorCode.URL_NOT_IN_SITE
    )
    assert app.handle(GetConsoleOpportunities(site_id), owner).demo
    inspected = app.handle(InspectUrls(site_id, (service.site_url,)), owner)
    assert [r.url for r in inspected.results] == [service.site_url] and inspected.budget.used >= 1
    triage = app.handle(GetIndexTriage(site_id), owner)
    assert triage.demo and triage.total_groups == len(triage.groups)
    for asked in (
        GetConsoleSummary(site_id),
        ListNotIndexed(site_id),
        GetConsoleUrl(site_id, service.site_url),
        GetConsoleOpportunities(site_id),
        InspectUrls(site_id, (service.site_url,)),
        GetIndexTriage(site_id),
    ):
        assert code_of(partial(app.handle, asked, door.rival)) is ErrorCode.NOT_FOUND
    elsewhere = service.site_url.replace("127.0.0.1", "localhost")  # another host, the same server
    unverified = app.handle(RegisterSite(url=elsewhere), owner)
    assert code_of(lambda: app.handle(GetConsoleSummary(unverified.id), owner)) is ErrorCode.SITE_NOT_VERIFIED


def test_indexnow_from_key_to_submission_through_both(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    site_id = service.audited_site()
    status = app.handle(GetIndexNowStatus(site_id), owner)
    assert not status.key_verified and status.today.limit == 10_000
    failed = app.handle(CheckIndexNowKey(site_id), owner)
    assert failed.result is KeyCheckResult.FAILED and failed.reason is not None
    submit = SubmitToIndexNow(site_id, (service.site_url,))
    assert code_of(lambda: app.handle(submit, owner)) is ErrorCode.INDEXNOW_KEY_UNVERIFIED
    service.publish(urlsplit(status.key_file_url).path, status.key)
    checked = app.handle(CheckIndexNowKey(site_id), owner)
    assert checked.result is KeyCheckResult.VERIFIED and checked.key_verified
    submitted = app.handle(
        SubmitToIndexNow(site_id, (service.site_url + "about", "https://elsewhere.example/")), owner
    )
    assert (submitted.submitted, submitted.skipped, submitted.status) == (1, 1, SubmitStatus.OK)
    assert submitted.today.used == 1 and service.indexnow.received
    assert app.handle(SetIndexNowAuto(site_id, True), door.member).auto is True
    assert app.handle(GetIndexNowStatus(site_id), owner).recent[0].submitted == 1
    detected = app.handle(DetectIndexNowKey(site_id), owner)
    assert detected.detection is not None
    assert (
        code_of(lambda: app.handle(SetIndexNowKey(site_id, "no!"), owner)) is ErrorCode.INVALID_INDEXNOW_KEY
    )
    other = app.handle(SetIndexNowKey(site_id, "retro-clock-key-1"), owner)
    assert other.key == "retro-clock-key-1" and other.result is KeyCheckResult.FAILED
    for asked in (
        GetIndexNowStatus(site_id),
        CheckIndexNowKey(site_id),
        DetectIndexNowKey(site_id),
        SetIndexNowAuto(site_id, False),
        SetIndexNowKey(site_id, "retro-clock-key-2"),
        submit,
    ):
        assert code_of(partial(app.handle, asked, door.rival)) is ErrorCode.NOT_FOUND


def test_billing_links_are_for_the_team_owner_through_both(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    assert app.handle(GetCreditPackLink(Pack.SMALL), owner).url.startswith("http")
    subscribe = GetSubscriptionLink(PlanName.STARTER, Tier.T10K, Interval.MONTHLY)
    assert app.handle(subscribe, owner).url.startswith("http")
    assert code_of(lambda: app.handle(GetBillingPortalLink(), owner)) is ErrorCode.NO_BILLING_ACCOUNT
    for asked in (GetCreditPackLink(Pack.LARGE), subscribe, GetBillingPortalLink()):
        assert code_of(partial(app.handle, asked, door.member)) is ErrorCode.NOT_TEAM_OWNER


def test_console_and_indexnow_answers_read_back_are_the_values_the_service_answered(service: Service) -> None:
    local = service.app.application
    remote = HttpApplication(service.base_url)
    mine, theirs = local.authenticate(service.keys.owner), remote.authenticate(service.keys.owner)
    site_id = service.audited_site()

    for asked in (
        GetConsoleSummary(site_id),
        ListNotIndexed(site_id),
        GetConsoleUrl(site_id, service.site_url),
        GetConsoleOpportunities(site_id),
        GetIndexTriage(site_id),
    ):
        assert local.handle(asked, mine) == remote.handle(asked, theirs), type(asked).__name__
    assert local.handle(GetIndexNowStatus(site_id), mine) == remote.handle(GetIndexNowStatus(site_id), theirs)
    detected = remote.handle(DetectIndexNowKey(site_id), theirs)
    assert detected.detection is not None  # a detection is stamped with its time: read it back once
    assert local.handle(GetIndexNowStatus(site_id), mine) == detected
    answers = [a.handle(CheckIndexNowKey(site_id), c) for a, c in ((local, mine), (remote, theirs))]
    assert answers[0] == answers[1]
    inspect = InspectUrls(site_id, (service.site_url,))
    inspected = [a.handle(inspect, c) for a, c in ((local, mine), (remote, theirs))]
    assert inspected[1].results == inspected[0].results
    assert inspected[1].budget.used == inspected[0].budget.used + 1


# --- fix tasks and rechecks (SPEC 2.7, 2.8, 4.5, 4.6) -----------------------------------------------------


def _recheckable(tasks: SiteTaskList) -> str:
    return next(t.id for t in tasks.tasks if CATALOGUE[t.code].recheckable)


def test_fix_tasks_and_a_recheck_through_both(service: Service, door: Door) -> None:
    app, owner = door.application, door.owner
    site_id = service.audited_site()
    found = app.handle(ListSiteTasks(site_id, limit=100), owner)
    assert found.crawl_id is not None and found.tasks and found.open_total == found.total == len(found.tasks)
    key = _recheckable(found)
    task = next(t for t in found.tasks if t.id == key)
    team = app.handle(ListTeamTasks(limit=20), door.member).tasks
    assert {t.id for t in team} <= {t.id for t in found.tasks} and team
    assert all(t.site_host == "127.0.0.1" or t.site_host.startswith("127.0.0.1") for t in team)
    detail = app.handle(GetTask(site_id, key), door.member)
    assert detail.task.id == key and detail.urls.page == 1
    assert detail.urls.total == len(detail.urls.data) >= 1
    assert {r.url for r in detail.urls.data} >= set(task.sample_urls)
    assert code_of(lambda: app.handle(GetTask(site_id, "0" * 16), owner)) is ErrorCode.NOT_FOUND
    assert code_of(lambda: app.handle(GetTask(site_id, "no!"), owner)) is ErrorCode.VALIDATION_FAILED

    accepted = app.handle(RequestRecheck(site_id, task_key=key), owner)
    recheck_id = RecheckId(accepted.recheck_id)
    assert accepted.status is RecheckStatus.QUEUED
    assert accepted.estimated_credits == accepted.urls_total == detail.urls.total
    assert [(t.task_key, t.status) for t in accepted.tasks] == [(key, TaskStatus.VERIFYING)]
    again = RequestRecheck(site_id, task_key=key)
    assert code_of(lambda: app.handle(again, owner)) is ErrorCode.CONFLICT
    assert app.handle(GetRecheck(recheck_id), door.member).status is RecheckStatus.QUEUED
    service.crawl()
    done = app.handle(GetRecheck(recheck_id), owner)
    assert done.status is RecheckStatus.DONE and done.pages_crawled == done.urls_total
    assert [t.task_key for t in done.tasks] == [key] and len(done.urls) == done.urls_total
    assert code_of(lambda: app.handle(CancelRecheck(recheck_id), owner)) is ErrorCode.CONFLICT

    by_url = app.handle(RequestRecheck(site_id, urls=(service.site_url,)), owner)
    assert by_url.urls_total == 1 and by_url.estimated_credits == 1
    cancelled = app.handle(CancelRecheck(RecheckId(by_url.recheck_id)), door.member)
    assert cancelled.status is RecheckStatus.CANCELLED and cancelled.finished_at is not None
    elsewhere = RequestRecheck(site_id, urls=("https://elsewhere.example/",))
    assert code_of(lambda: app.handle(elsewhere, owner)) is ErrorCode.INVALID_URLS
    assert code_of(lambda: app.handle(GetRecheck(RecheckId(999_999)), owner)) is ErrorCode.NOT_FOUND

    assert app.handle(ListTeamTasks(), door.rival).tasks == ()
    for call in (
        lambda: app.handle(ListSiteTasks(site_id), door.rival),
        lambda: app.handle(GetTask(site_id, key), door.rival),
        lambda: app.handle(RequestRecheck(site_id, urls=(service.site_url,)), door.rival),
        lambda: app.handle(GetRecheck(recheck_id), door.rival),
        lambda: app.handle(CancelRecheck(RecheckId(by_url.recheck_id)), door.rival),
    ):
        assert code_of(call) is ErrorCode.NOT_FOUND


def test_tasks_and_rechecks_read_back_are_the_values_the_service_answered(service: Service) -> None:
    """The client has no reader of its own for a declared use case: the converter structures the JSON
    back into the result class, and the value equals the one the application returned in process."""
    local = service.app.application
    remote = HttpApplication(service.base_url)
    mine, theirs = local.authenticate(service.keys.owner), remote.authenticate(service.keys.owner)
    site_id = service.audited_site()

    def same(use_case: UseCase[object]) -> None:
        assert local.handle(use_case, mine) == remote.handle(use_case, theirs)

    key = _recheckable(local.handle(ListSiteTasks(site_id, limit=100), mine))
    same(ListSiteTasks(site_id, limit=100))
    same(ListSiteTasks(site_id, limit=3))
    same(ListTeamTasks(limit=20))
    same(GetTask(site_id, key))
    accepted = remote.handle(RequestRecheck(site_id, task_key=key), theirs)
    assert isinstance(accepted, RecheckStarted)
    assert [(t.task_key, t.status) for t in accepted.tasks] == [(key, TaskStatus.VERIFYING)]
    assert accepted.status is RecheckStatus.QUEUED and accepted.urls_total == accepted.estimated_credits
    recheck_id = RecheckId(accepted.recheck_id)
    same(GetRecheck(recheck_id))
    service.crawl()
    same(GetRecheck(recheck_id))
    same(ListSiteTasks(site_id, limit=100))


def test_fix_impact_through_both(service: Service, door: Door) -> None:
    app = door.application
    site_id = service.audited_site()
    found = app.handle(GetSiteFixImpact(site_id, limit=200), door.owner)
    assert found.site_id == site_id
    assert found.measured_events == sum(e.status is ImpactStatus.MEASURED for e in found.events)
    team = app.handle(GetTeamFixImpact(limit=50), door.member)
    assert {e.site_id for e in team.events} <= {site_id}
    assert app.handle(GetTeamFixImpact(), door.rival).events == ()
    assert code_of(lambda: app.handle(GetSiteFixImpact(site_id), door.rival)) is ErrorCode.NOT_FOUND


def test_fix_impact_read_back_is_the_value_the_service_answered(service: Service) -> None:
    local = service.app.application
    remote = HttpApplication(service.base_url)
    mine, theirs = local.authenticate(service.keys.owner), remote.authenticate(service.keys.owner)
    site_id = service.audited_site()
    assert local.handle(GetSiteFixImpact(site_id), mine) == remote.handle(GetSiteFixImpact(site_id), theirs)
    assert local.handle(GetTeamFixImpact(), mine) == remote.handle(GetTeamFixImpact(), theirs)
