"""Finalisation over stored crawl rows: site-wide checks, templates, report, diff, done and settled."""

from siteaudit.adapters.memory import MemoryStore, MemoryUnitOfWork
from siteaudit.adapters.memory.crawl import MemoryCrawlStore
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.report_json import report_json
from siteaudit.adapters.system import FixedClock, SystemSecrets
from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditRequest, AuditStatus
from siteaudit.domain.checks import PageContext, check_page
from siteaudit.domain.credit import credits
from siteaudit.domain.facts import HtmlFacts, Link, PageFacts
from siteaudit.domain.ids import AuditId
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.crawl import IssueQuery
from siteaudit.services import account as accounts
from siteaudit.services import audit as audits
from siteaudit.services import finalize
from siteaudit.services.sites import site as sites
from siteaudit.services.sites.usecases import RegisterSite

SITE = "https://retro-clock.example"


def a_page(
    path: str, *, title: str, links: tuple[str, ...] = (), depth: int = 1, status: int = 200
) -> PageFacts:
    words = 200 if status == 200 else 0
    html = HtmlFacts(
        titles=(title,),
        meta_descriptions=("A shop selling restored mechanical clocks, barometers and parts since 1979.",),
        h1s=(title,),
        heading_levels=(1,),
        lang="en",
        viewport="width=device-width, initial-scale=1",
        meta_charset="utf-8",
        canonicals=(SITE + path,),
        links=tuple(Link(target=SITE + target) for target in links),
        word_count=words,
        text_chars=words * 6,
        fingerprint=path,
        open_graph=frozenset({"og:title", "og:description", "og:image"}),
    )
    return PageFacts(
        url=SITE + path,
        depth=depth,
        status_code=status,
        final_url=SITE + path,
        content_type="text/html",
        headers=(("strict-transport-security", "max-age=63072000"),),
        html=html if status == 200 else None,
    )


def run_audit(
    store: MemoryStore, crawl: MemoryCrawlStore, clock: FixedClock, pages: list[PageFacts]
) -> AuditId:
    caller = Caller(1, 1)  # type: ignore[arg-type]
    started = audits.start_audit(
        AuditRequest(url=SITE + "/", max_pages=100),
        caller,
        uow=MemoryUnitOfWork(store),
        clock=clock,
        queue=MemoryTaskQueue(),
    )
    audit_id = started.audit.id
    audits.begin_audit(audit_id, uow=MemoryUnitOfWork(store), clock=clock)
    crawl.write_pages(audit_id, pages)
    crawl.write_links(audit_id, [(p.url, link) for p in pages if p.html for link in p.html.links])
    context = PageContext(start_url=SITE + "/")
    crawl.write_issues(
        audit_id, [i for p in pages for i in check_page(p, thresholds=Thresholds(), context=context)]
    )
    audits.record_progress(
        audit_id, pages_crawled=len(pages), pages_not_modified=0, uow=MemoryUnitOfWork(store), clock=clock
    )
    audits.stop_crawling(audit_id, partial=False, uow=MemoryUnitOfWork(store), clock=clock)
    clock.advance(30)
    finalize.finalize_audit(audit_id, uow=MemoryUnitOfWork(store), crawl=crawl, clock=clock)
    return audit_id


def test_finalising_stores_the_report_ends_the_audit_and_charges_the_pages() -> None:
    store, crawl, clock = MemoryStore(), MemoryCrawlStore(), FixedClock()
    accounts.create_user(
        "owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    accounts.create_team(
        "Retro Clock", owner_email="owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock
    )
    accounts.grant_credits(
        "owner@retro-clock.example", credits(1_000), key="g", uow=MemoryUnitOfWork(store), clock=clock
    )
    products = [f"/products/{n}" for n in range(1, 7)]
    pages = [
        a_page("/", title="Retro Clock - restored clocks", links=(*products, "/gone"), depth=0),
        *(a_page(p, title="Clock", links=("/",)) for p in products),  # duplicate titles on a template
        a_page("/gone", title="", status=404),
    ]
    audit_id = run_audit(store, crawl, clock, pages)
    with MemoryUnitOfWork(store) as uow:
        audit = uow.audits.get_any(audit_id)
        assert audit.status is AuditStatus.DONE
        assert uow.credits.balance(1) == credits(1_000 - 8)  # type: ignore[arg-type]
    stored = crawl.report(audit_id)
    assert stored is not None
    report = report_json(stored)
    assert report["totals"] == {
        "pages": 8,
        "ok": 7,
        "redirects": 0,
        "broken": 1,
        "fetch_errors": 0,
        "blocked": 0,
    }
    assert report["health_score"] == audit.health_score
    codes = {row["check_code"] for row in report["issues"]}
    assert {"title_duplicate", "broken_internal_link", "http_4xx"} <= codes
    templates = {group["template"]: group for group in report["templates"]}
    assert templates["/products/[id]"]["pages"] == 6
    duplicate = next(i for i in templates["/products/[id]"]["issues"] if i["check_code"] == "title_duplicate")
    assert duplicate["template_wide"] is True
    assert report["diff"] is None
    assert 0 < len(report["fix_prompt"]) <= 6000
    rows, total = crawl.list_issues(audit_id, IssueQuery(template="/products/[id]"))
    assert total >= 6
    assert all(row.template == "/products/[id]" for row in rows)


def test_a_second_audit_of_the_same_origin_is_diffed_against_the_first() -> None:
    store, crawl, clock = MemoryStore(), MemoryCrawlStore(), FixedClock()
    accounts.create_user(
        "owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    accounts.create_team(
        "Retro Clock", owner_email="owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock
    )
    accounts.grant_credits(
        "owner@retro-clock.example", credits(1_000), key="g", uow=MemoryUnitOfWork(store), clock=clock
    )
    first = run_audit(
        store,
        crawl,
        clock,
        [a_page("/", title="Home", depth=0, links=("/gone",)), a_page("/gone", title="", status=404)],
    )
    second = run_audit(store, crawl, clock, [a_page("/", title="Retro Clock - restored clocks", depth=0)])
    stored = crawl.report(second)
    assert stored is not None
    diff = report_json(stored)["diff"]
    assert diff["previous_crawl_id"] == first
    assert diff["fixed"] >= 2
    assert diff["fixed_errors"] >= 1


def test_finalising_twice_changes_nothing_the_second_time() -> None:
    store, crawl, clock = MemoryStore(), MemoryCrawlStore(), FixedClock()
    accounts.create_user(
        "owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock, secrets=SystemSecrets()
    )
    accounts.create_team(
        "Retro Clock", owner_email="owner@retro-clock.example", uow=MemoryUnitOfWork(store), clock=clock
    )
    accounts.grant_credits(
        "owner@retro-clock.example", credits(1_000), key="g", uow=MemoryUnitOfWork(store), clock=clock
    )
    audit_id = run_audit(store, crawl, clock, [a_page("/", title="Home page of the shop", depth=0)])
    again = finalize.finalize_audit(audit_id, uow=MemoryUnitOfWork(store), crawl=crawl, clock=clock)
    assert again.status is AuditStatus.DONE
    with MemoryUnitOfWork(store) as uow:
        assert [e.kind.value for e in uow.credits.entries(1)].count("charge") == 1  # type: ignore[arg-type]


def test_finalising_a_site_audit_opens_one_fix_task_per_check_and_template_from_the_same_issues() -> None:
    store, crawl, clock = MemoryStore(), MemoryCrawlStore(), FixedClock()

    def uow() -> MemoryUnitOfWork:
        return MemoryUnitOfWork(store)

    accounts.create_user("owner@retro-clock.example", uow=uow(), clock=clock, secrets=SystemSecrets())
    accounts.create_team("Retro Clock", owner_email="owner@retro-clock.example", uow=uow(), clock=clock)
    accounts.grant_credits("owner@retro-clock.example", credits(1_000), key="g", uow=uow(), clock=clock)
    caller = Caller(1, 1)  # type: ignore[arg-type]
    site = sites.register_site(
        RegisterSite(SITE + "/"), caller, uow=uow(), clock=clock, secrets=SystemSecrets()
    )
    audit_id = audits.start_audit(
        AuditRequest(site_id=site.id, max_pages=50), caller, uow=uow(), clock=clock, queue=MemoryTaskQueue()
    ).audit.id
    audits.begin_audit(audit_id, uow=uow(), clock=clock)
    products = [f"/products/{n}" for n in range(1, 5)]
    pages = [
        a_page("/", title="Retro Clock - restored clocks", links=tuple(products), depth=0),
        *(a_page(p, title="Clock", links=("/",)) for p in products),
    ]
    crawl.write_pages(audit_id, pages)
    crawl.write_links(audit_id, [(p.url, link) for p in pages if p.html for link in p.html.links])
    audits.record_progress(audit_id, pages_crawled=len(pages), pages_not_modified=0, uow=uow(), clock=clock)
    audits.stop_crawling(audit_id, partial=False, uow=uow(), clock=clock)
    finalize.finalize_audit(audit_id, uow=uow(), crawl=crawl, clock=clock)
    stored = crawl.report(audit_id)
    assert stored is not None
    report = report_json(stored)
    with uow() as work:
        tasks = {(t.code, t.template): t for t in work.tasks.of_site(site.id)}
    group = next(g for g in report["templates"] if g["template"] == "/products/[id]")
    duplicate = next(i for i in group["issues"] if i["check_code"] == "title_duplicate")
    task = tasks[("title_duplicate", "/products/[id]")]
    assert task.pages == duplicate["pages"] == 4
    assert task.audit_id == audit_id
    stored, _ = crawl.list_issues(audit_id, IssueQuery(limit=1_000))
    assert set(tasks) == {(i.check_code, i.template) for i in stored}
