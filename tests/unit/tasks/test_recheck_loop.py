"""Rechecks through the application on memory adapters against the scripted shop: the loop from a task to
its proof, per-URL verdicts, credits charged once, the rate limit and team scope."""

import pytest

from siteaudit.bootstrap import App
from siteaudit.domain.account import Caller
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import RecheckId, UserId
from siteaudit.domain.recheck import RecheckStatus, UrlResult
from siteaudit.domain.site import Site
from siteaudit.domain.task import FixedBy, TaskResult, TaskStatus
from siteaudit.services.sites.usecases import RegisterSite
from siteaudit.services.tasks.answers import FixTask
from siteaudit.services.tasks.usecases import CancelRecheck, GetRecheck, ListSiteTasks, RequestRecheck
from tests.unit.application.test_application_doors import owner
from tests.unit.tasks.shop import POSTS, PRODUCTS, Shop, audit, drain, shop_app, verified_site


def task(app: App, site: Site, caller: Caller, code: str) -> FixTask:
    return next(
        t for t in app.application.handle(ListSiteTasks(site.id, limit=100), caller).tasks if t.code == code
    )


def balance(app: App, caller: Caller) -> int:
    with app.uow() as uow:
        return uow.credits.balance(UserId(caller.user_id))


@pytest.fixture
def audited(shop: Shop) -> tuple[App, Caller, Site]:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    return app, caller, site


def test_a_fixed_template_rechecked_by_its_task_becomes_fixed_and_costs_a_credit_per_url(
    shop: Shop, audited: tuple[App, Caller, Site]
) -> None:
    app, caller, site = audited
    before = balance(app, caller)
    product = task(app, site, caller, "meta_description_missing")
    assert product.status is TaskStatus.OPEN and product.pages == len(PRODUCTS)
    shop.product_description = True  # the newcomer fixes the template in the site's files

    accepted = app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    assert accepted.urls_total == len(PRODUCTS) and not accepted.sampled
    assert [t.status for t in accepted.tasks] == [TaskStatus.VERIFYING]
    assert task(app, site, caller, "meta_description_missing").status is TaskStatus.VERIFYING
    assert balance(app, caller) == before - 10 * len(PRODUCTS)  # reserved, in tenths

    assert drain(app) == ["run_recheck"]
    done = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
    assert done.status is RecheckStatus.DONE and done.pages_crawled == len(PRODUCTS)
    assert {u.result for u in done.urls} == {UrlResult.FIXED}
    (verdict,) = done.tasks
    assert (verdict.result, verdict.status, verdict.covers_task, verdict.urls_passing) == (
        TaskResult.FIXED,
        TaskStatus.FIXED,
        True,
        len(PRODUCTS),
    )
    fixed = task(app, site, caller, "meta_description_missing")
    assert (fixed.status, fixed.fixed_by) == (TaskStatus.FIXED, FixedBy.RECHECK)
    assert balance(app, caller) == before - 10 * len(PRODUCTS)  # charged exactly what was fetched

    # A redelivered message changes nothing: the recheck ended, credits settled once.
    app.queue.recheck(RecheckId(accepted.recheck_id))  # type: ignore[attr-defined]
    drain(app)
    assert balance(app, caller) == before - 10 * len(PRODUCTS)

    # A later full audit that agrees keeps it fixed; the problem coming back regresses it.
    audit(app, site, caller)
    assert task(app, site, caller, "meta_description_missing").status is TaskStatus.FIXED
    shop.product_description = False
    audit(app, site, caller)
    assert task(app, site, caller, "meta_description_missing").status is TaskStatus.REGRESSED


def test_urls_rechecked_give_fixed_still_failing_new_issue_redirected_and_cannot_verify(
    shop: Shop, audited: tuple[App, Caller, Site]
) -> None:
    app, caller, site = audited
    fixed, failing, broken, moved, challenged = (
        f"/products/{PRODUCTS[0]}",
        f"/blog/{POSTS[0]}",
        f"/products/{PRODUCTS[1]}",
        f"/products/{PRODUCTS[2]}",
        f"/products/{PRODUCTS[3]}",
    )
    shop.product_description = True
    shop.no_title.add(broken)  # fixed the description, broke the title
    shop.moved[moved] = shop.url(f"/products/{PRODUCTS[4]}")
    shop.challenge.add(challenged)
    urls = tuple(shop.url(p) for p in (fixed, failing, broken, moved, challenged))
    before = balance(app, caller)
    accepted = app.application.handle(RequestRecheck(site.id, urls=urls), caller)
    # The list covers the blog task's URL only in part: it is judged but keeps its status.
    assert all(t.status is not TaskStatus.VERIFYING for t in accepted.tasks if t.code == "h1_missing")
    drain(app)
    done = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
    by_url = {u.url: u for u in done.urls}
    assert by_url[urls[0]].result is UrlResult.FIXED
    assert (by_url[urls[1]].result, by_url[urls[1]].issues) == (UrlResult.STILL_FAILING, ("h1_missing",))
    assert by_url[urls[2]].result is UrlResult.NEW_ISSUE and "title_missing" in by_url[urls[2]].new_issues
    assert (by_url[urls[3]].result, by_url[urls[3]].redirected, by_url[urls[3]].redirect_to) == (
        UrlResult.FIXED,
        True,
        shop.url(f"/products/{PRODUCTS[4]}"),
    )
    assert by_url[urls[4]].result is UrlResult.CANNOT_VERIFY and "blocked_by" in (
        by_url[urls[4]].reason or ""
    )
    assert balance(app, caller) == before - 10 * len(urls)
    assert task(app, site, caller, "h1_missing").status is TaskStatus.OPEN


def test_a_recheck_is_refused_before_anything_is_reserved(
    shop: Shop, audited: tuple[App, Caller, Site]
) -> None:
    app, caller, site = audited
    before = balance(app, caller)
    graph = task(app, site, caller, "h1_duplicate")
    with pytest.raises(DomainError) as refused:
        app.application.handle(RequestRecheck(site.id, task_key=graph.id), caller)
    assert refused.value.code is ErrorCode.CANNOT_VERIFY
    with pytest.raises(DomainError) as unknown:
        app.application.handle(RequestRecheck(site.id, task_key="0" * 16), caller)
    assert unknown.value.code is ErrorCode.NOT_FOUND
    with pytest.raises(DomainError) as foreign:
        app.application.handle(RequestRecheck(site.id, urls=("https://elsewhere.example/",)), caller)
    assert foreign.value.code is ErrorCode.INVALID_URLS
    with pytest.raises(DomainError) as both:
        app.application.handle(RequestRecheck(site.id, task_key=graph.id, urls=(shop.url("/"),)), caller)
    assert both.value.code is ErrorCode.VALIDATION_FAILED
    assert balance(app, caller) == before and app.queue.pending() == []  # type: ignore[attr-defined]


def test_thirty_rechecks_an_hour_per_team_and_a_402_uses_no_slot(
    shop: Shop, audited: tuple[App, Caller, Site]
) -> None:
    app, caller, site = audited
    one = (shop.url("/"),)
    with app.uow() as uow:  # empty the owner's account: the first try is refused with 402
        spend = uow.credits.balance(UserId(caller.user_id))
        uow.credits.reserve(UserId(caller.user_id), spend, reference="test:drain", at=app.clock.now())
        uow.commit()
    with pytest.raises(DomainError) as poor:
        app.application.handle(RequestRecheck(site.id, urls=one), caller)
    assert poor.value.code is ErrorCode.INSUFFICIENT_CREDITS
    with app.uow() as uow:
        uow.credits.settle("test:drain", cost=0, at=app.clock.now())
        uow.commit()
    for _ in range(30):
        app.application.handle(RequestRecheck(site.id, urls=one), caller)
    with pytest.raises(DomainError) as limited:
        app.application.handle(RequestRecheck(site.id, urls=one), caller)
    assert limited.value.code is ErrorCode.RECHECK_RATE_LIMITED
    assert getattr(limited.value, "retry_after", 0) >= 1


def test_a_cancelled_recheck_is_charged_what_it_fetched_and_puts_its_task_back(
    shop: Shop, audited: tuple[App, Caller, Site]
) -> None:
    app, caller, site = audited
    before = balance(app, caller)
    product = task(app, site, caller, "meta_description_missing")
    accepted = app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    cancelled = app.application.handle(CancelRecheck(RecheckId(accepted.recheck_id)), caller)
    assert cancelled.status is RecheckStatus.CANCELLED
    assert {u.result for u in cancelled.urls} == {UrlResult.NOT_CHECKED}
    assert task(app, site, caller, "meta_description_missing").status is TaskStatus.OPEN
    assert balance(app, caller) == before
    drain(app)  # the message still queued finds the recheck ended
    assert app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller).pages_crawled == 0
    with pytest.raises(DomainError) as again:
        app.application.handle(CancelRecheck(RecheckId(accepted.recheck_id)), caller)
    assert again.value.code is ErrorCode.CONFLICT


def test_a_stalled_recheck_is_dispatched_again_then_failed_and_settled(
    shop: Shop, audited: tuple[App, Caller, Site]
) -> None:
    app, caller, site = audited
    before = balance(app, caller)
    product = task(app, site, caller, "meta_description_missing")
    accepted = app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    drain(app, skip=lambda actor: actor == "run_recheck")  # the message is lost
    clock = app.clock
    for _ in range(3):
        clock.advance(3 * 3600)  # type: ignore[attr-defined]
        reaped = app.application.reap_stalled_rechecks()
        assert reaped.redispatched == 1
        drain(app, skip=lambda actor: actor == "run_recheck")
    clock.advance(3 * 3600)  # type: ignore[attr-defined]
    assert app.application.reap_stalled_rechecks().failed == 1
    ended = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
    assert ended.status is RecheckStatus.FAILED and (ended.failure_reason or "").startswith("reaped")
    assert task(app, site, caller, "meta_description_missing").status is TaskStatus.OPEN
    assert balance(app, caller) == before


def test_a_recheck_past_its_time_cap_ends_time_capped_with_the_rest_refunded(shop: Shop) -> None:
    app = shop_app(recheck_time_cap_s=0.0)  # the cap is reached before the first batch
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    before = balance(app, caller)
    product = task(app, site, caller, "meta_description_missing")
    accepted = app.application.handle(RequestRecheck(site.id, task_key=product.id), caller)
    drain(app)
    done = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
    assert (done.status, done.time_capped, done.pages_crawled) == (RecheckStatus.DONE, True, 0)
    assert {u.reason for u in done.urls} == {"not fetched: the recheck reached its time cap"}
    assert (done.tasks)[0].result is TaskResult.NOT_CHECKED
    assert task(app, site, caller, "meta_description_missing").status is TaskStatus.OPEN
    assert balance(app, caller) == before


def test_a_broken_link_task_is_rechecked_by_fetching_the_pages_link_targets(shop: Shop) -> None:
    app = shop_app()
    caller = owner(app)
    shop.extra_links["/"] = ("/products/gone-clock",)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    broken = task(app, site, caller, "broken_internal_link")
    assert broken.pages == 1
    still = app.application.handle(RequestRecheck(site.id, task_key=broken.id), caller)
    drain(app)
    assert (app.application.handle(GetRecheck(RecheckId(still.recheck_id)), caller).tasks)[0].result is (
        TaskResult.STILL_FAILING
    )
    shop.extra_links["/"] = ()
    fixed = app.application.handle(RequestRecheck(site.id, task_key=broken.id), caller)
    drain(app)
    assert (app.application.handle(GetRecheck(RecheckId(fixed.recheck_id)), caller).tasks)[
        0
    ].result is TaskResult.FIXED
    assert task(app, site, caller, "broken_internal_link").status is TaskStatus.FIXED
    assert any("/products/" in path for path in (r.path for r, _ in shop.server.log))


def test_a_members_recheck_is_charged_to_the_team_owner_and_an_unverified_site_is_refused(
    shop: Shop, audited: tuple[App, Caller, Site]
) -> None:
    app, owner_caller, site = audited
    application = app.application
    application.create_user("member@retro-clock.example", plan="free")
    team = next(t for t in application.list_teams() if t.team.id == owner_caller.team_id).team
    application.add_member(team.name, "member@retro-clock.example")
    member = application.authenticate(application.create_key("member@retro-clock.example", team.name).raw)
    owner_before, member_before = balance(app, owner_caller), balance(app, member)
    accepted = application.handle(RequestRecheck(site.id, urls=(shop.url("/"),)), member)
    drain(app)
    assert (
        application.handle(GetRecheck(RecheckId(accepted.recheck_id)), owner_caller).status
        is RecheckStatus.DONE
    )
    assert (balance(app, owner_caller), balance(app, member)) == (owner_before - 10, member_before)

    other = application.handle(RegisterSite(shop.url("/").replace("localhost", "127.0.0.1")), owner_caller)
    with pytest.raises(DomainError) as unverified:
        application.handle(RequestRecheck(other.id, urls=(shop.url("/"),)), owner_caller)
    assert unverified.value.code is ErrorCode.SITE_NOT_VERIFIED


def test_a_slow_recheck_keeps_renewing_its_lease_while_it_fetches(shop: Shop) -> None:
    app = shop_app(lease_s=0.3)  # renewed every 0.1 s
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)

    def writes(slow: float) -> int:
        shop.slow = {"/": slow}
        accepted = app.application.handle(RequestRecheck(site.id, urls=(shop.url("/"),)), caller)
        drain(app)
        done = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
        assert done.status is RecheckStatus.DONE
        with app.uow() as uow:
            return uow.rechecks.get_any(RecheckId(accepted.recheck_id)).version

    assert writes(1.0) >= writes(0.0) + 5  # the heartbeat wrote while the slow page was fetched
