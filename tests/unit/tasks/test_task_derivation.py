"""Fix tasks derived from full audits of the scripted shop: one per check per template, ids stable
across audits, fixed by a later audit that no longer finds them, regressed when the problem comes back."""

from siteaudit.bootstrap import App
from siteaudit.domain.account import Caller
from siteaudit.domain.site import Site
from siteaudit.domain.task import FixedBy, TaskStatus
from siteaudit.services.tasks.usecases import ListSiteTasks, ListTeamTasks
from tests.unit.application.test_application_doors import owner
from tests.unit.tasks.shop import Shop, audit, shop_app, verified_site


def tasks_of(app: App, site: Site, caller: Caller) -> dict[tuple[str, str], tuple[str, TaskStatus, int]]:
    listed = app.application.handle(ListSiteTasks(site.id, limit=100), caller)
    return {(t.code, t.template): (t.id, t.status, t.pages) for t in listed.tasks}


# Frozen from a reviewed run of the shop above: what the first full audit leaves to fix.
GOLDEN_FIRST = {
    ("duplicate_content_near", "/products/[slug]"): (TaskStatus.OPEN, 3),
    ("h1_duplicate", "/"): (TaskStatus.OPEN, 1),
    ("h1_duplicate", "/products/[slug]"): (TaskStatus.OPEN, 6),
    ("h1_missing", "/blog/[slug]"): (TaskStatus.OPEN, 5),
    ("llms_txt_missing", ""): (TaskStatus.OPEN, 1),
    ("meta_description_missing", "/products/[slug]"): (TaskStatus.OPEN, 6),
    ("sitemap_missing", ""): (TaskStatus.OPEN, 1),
}


def test_the_shops_first_full_audit_yields_the_golden_tasks_with_stable_ids(shop: Shop) -> None:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    first_audit = audit(app, site, caller)
    first = tasks_of(app, site, caller)
    assert {k: (status, pages) for k, (_, status, pages) in first.items()} == GOLDEN_FIRST
    listed = app.application.handle(ListSiteTasks(site.id, limit=100), caller)
    assert listed.crawl_id == first_audit and not listed.has_traffic_data
    assert all(t.clicks_28d is None and t.impressions_28d is None for t in listed.tasks)
    assert all(len(t.id) == 16 and int(t.id, 16) >= 0 for t in listed.tasks)

    # A second audit of the unchanged shop: the same tasks under the same ids.
    audit(app, site, caller)
    assert tasks_of(app, site, caller) == first

    # The product template is fixed in the site's files: the next full audit marks its task fixed.
    shop.product_description = True
    audit(app, site, caller)
    after_fix = app.application.handle(ListSiteTasks(site.id, limit=100), caller)
    product = next(t for t in after_fix.tasks if t.code == "meta_description_missing")
    assert (product.id, product.status, product.fixed_by) == (
        first[("meta_description_missing", "/products/[slug]")][0],
        TaskStatus.FIXED,
        FixedBy.AUDIT,
    )
    assert after_fix.open_total == sum(1 for t in after_fix.tasks if t.status is not TaskStatus.FIXED)

    # The problem comes back: the same task, regressed.
    shop.product_description = False
    audit(app, site, caller)
    again = tasks_of(app, site, caller)
    key, status, pages = again[("meta_description_missing", "/products/[slug]")]
    assert (key, status, pages) == (
        first[("meta_description_missing", "/products/[slug]")][0],
        TaskStatus.REGRESSED,
        6,
    )
    assert all(again[k][0] == v[0] for k, v in first.items())


def test_a_short_list_leaves_out_fixed_tasks_and_keeps_one_per_check(shop: Shop) -> None:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    shop.product_description = True
    audit(app, site, caller)
    short = app.application.handle(ListSiteTasks(site.id, limit=3), caller).tasks
    assert len(short) <= 3 and all(t.status is not TaskStatus.FIXED for t in short)
    assert len({t.code for t in short}) == len(short)
    top = app.application.handle(ListTeamTasks(limit=20), caller).tasks
    assert top and all(t.status is not TaskStatus.FIXED and t.site_host == site.host for t in top)
    ranks = [(t.severity.rank, -t.pages) for t in top]
    assert ranks == sorted(ranks)  # severity first, then pages
