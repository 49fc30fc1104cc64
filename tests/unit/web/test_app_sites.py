"""The app's site pages over the scripted shop (an audited site on 127.0.0.1): registering a site, its
page (ownership, settings, trend, latest audit, tasks and a recheck followed to its end, fix impact,
console, IndexNow) and team isolation: another team's site is a 404 page."""

import re

import falcon.testing
import pytest
from attrs import frozen
from pytest_httpserver import HTTPServer

from siteaudit.bootstrap import App
from siteaudit.domain.account import LOCAL_OWNER_EMAIL, Caller
from siteaudit.domain.credit import credits
from siteaudit.domain.site import Site
from siteaudit.ports.application import AuditQuery
from siteaudit.services.sites.usecases import CrawlSite, GetSite, RegisterSite
from tests.unit.tasks.shop import PRODUCTS, Shop, audit, drain, shop_app, verified_site
from tests.unit.web.conftest import PASSWORD, Browser

RIVAL = "rival@other-shop.example"


@frozen
class Sites:
    app: App
    shop: Shop
    caller: Caller
    site: Site
    rival_site: Site
    rival: Caller

    def browser(self, email: str = LOCAL_OWNER_EMAIL) -> Browser:
        browser = Browser(falcon.testing.TestClient(self.app.service()))
        signed = browser.sign_in(email)
        assert signed.status_code == 303, signed.text
        return browser


@pytest.fixture
def sites(httpserver: HTTPServer) -> Sites:
    shop = Shop(httpserver)
    app = shop_app()
    application = app.application
    issued = application.ensure_local_owner(plan="scale", starting_credits=1_000)
    assert issued is not None
    caller = application.authenticate(issued.raw)
    application.set_password(LOCAL_OWNER_EMAIL, PASSWORD)
    site = verified_site(app, shop, caller)
    audit(app, site, caller)
    application.create_user(RIVAL, plan="growth")
    rival_team = application.create_team("Other Shop", owner_email=RIVAL)
    application.set_password(RIVAL, PASSWORD)
    application.grant_credits(RIVAL, credits(1_000), idempotency_key="rival")
    rival = Caller(
        application.authenticate(application.create_key(RIVAL, "Other Shop").raw).user_id, rival_team.id
    )
    rival_site = application.handle(RegisterSite(shop.url("/").replace("localhost", "127.0.0.2")), rival)
    return Sites(app, shop, caller, site, rival_site, rival)


def h1s(page: str) -> list[str]:
    return re.findall(r"<h1[^>]*>(.*?)</h1>", page, re.S)


def test_the_site_page_shows_ownership_settings_trend_latest_audit_and_tasks(sites: Sites) -> None:
    browser = sites.browser()
    answer = browser.get(f"/app/sites/{sites.site.id}")
    assert answer.status_code == 200
    page = answer.text
    assert h1s(page) == [sites.site.host]
    assert "Proved on" in page and "checked again every day" in page  # verified by hand in the fixture
    assert 'id="health-trend"' in page and 'role="img"' in page and "<desc" in page
    assert re.search(
        r'<circle class="dot" cx="[0-9.]+" cy="[0-9.]+" r="3"><title>\d{4}-\d\d-\d\d: \d+</title>', page
    )
    (latest,) = sites.app.application.list_audits(AuditQuery(site_id=sites.site.id), sites.caller).items
    assert f'href="/app/audits/{latest.id}" id="latest-audit"' in page
    assert 'id="max-pages"' in page and f'value="{sites.site.max_pages}"' in page
    assert re.search(r'id="run-cost">at most [0-9,]+ credits: 1 a page fetched, 0.2 a page unchanged', page)
    assert 'id="team-balance">' in page
    assert "meta_description_missing" in page and "/products/[slug]" in page
    assert 'aria-label="Recheck meta_description_missing on /products/[slug]"' in page
    assert 'http-equiv="refresh"' not in page  # nothing to follow
    for section in ('id="impact"', 'id="console"', 'id="indexnow"', 'id="ownership"', 'id="settings"'):
        assert section in page


def test_a_recheck_started_from_the_page_is_followed_until_its_result(sites: Sites) -> None:
    browser = sites.browser()
    page = browser.get(f"/app/sites/{sites.site.id}").text
    key = re.search(
        r'name="task_key" value="([0-9a-f]+)">\s*<button[^>]*aria-label="Recheck meta_description_missing',
        page,
    )
    assert key, page
    sites.shop.product_description = True  # the fix is deployed
    started = browser.post(f"/app/sites/{sites.site.id}", {"action": "recheck", "task_key": key.group(1)})
    assert started.status_code == 303
    location = started.headers["Location"]
    found = re.fullmatch(rf"/app/sites/{sites.site.id}\?done=recheck&recheck=(\d+)", location)
    assert found, location
    waiting = browser.get(location.split("#")[0]).text
    assert 'id="recheck-status"' in waiting and "<strong>queued</strong>" in waiting
    refresh = (
        f'<meta http-equiv="refresh" content="3; url=/app/sites/{sites.site.id}?recheck={found.group(1)}">'
    )
    assert refresh in waiting  # no fragment: Chrome would only scroll to it
    drain(sites.app)
    done = browser.get(location.split("#")[0]).text
    assert "<strong>done</strong>" in done and 'http-equiv="refresh"' not in done
    assert "meta_description_missing on /products/[slug]: <strong>fixed</strong>" in done
    assert f"({len(PRODUCTS)} pages rechecked)" in done
    # The fixed task opened a fix-impact event: its plot is drawn, nothing measured yet.
    assert re.search(r'<figure class="plot" id="impact-\d+">', done)
    assert "not measured yet" in done


def test_another_teams_site_is_a_404_page_for_every_request(sites: Sites) -> None:
    browser = sites.browser()
    for path in (
        f"/app/sites/{sites.rival_site.id}",
        "/app/sites/999999",
        "/app/sites/nothing",
        "/app/sites/0",
    ):
        answer = browser.get(path)
        assert answer.status_code == 404, path
        assert "text/html" in answer.headers["content-type"] and sites.rival_site.host not in answer.text
    for form in (
        {"action": "settings", "monitoring": "daily", "max_pages": "10", "max_rps": "1"},
        {"action": "verify", "method": ""},
        {"action": "recheck", "task_key": "0" * 16},
    ):
        browser.get("/app/sites")  # a page with the session's form token
        refused = browser.post(f"/app/sites/{sites.rival_site.id}", form)
        assert refused.status_code == 404, form
    rival_view = sites.app.application.handle(GetSite(sites.rival_site.id), sites.rival)
    assert rival_view.monitoring.value == "off" and rival_view.max_pages != 10
    for recheck in ("\u00b2", "1" * 40, "-1", sites.rival_site.id):  # not a recheck of this page: none shown
        shown = browser.get(f"/app/sites/{sites.site.id}", recheck=str(recheck))
        assert shown.status_code == 200 and 'id="recheck-status"' not in shown.text
    rival = sites.browser(RIVAL)
    assert rival.get(f"/app/sites/{sites.site.id}").status_code == 404
    assert rival.get(f"/app/sites/{sites.rival_site.id}").status_code == 200


def test_a_site_is_registered_from_the_list_and_verify_shows_each_methods_reason(sites: Sites) -> None:
    browser = sites.browser()
    listed = browser.get("/app/sites").text
    assert f'href="/app/sites/{sites.site.id}"' in listed and 'id="register-site"' in listed
    assert sites.rival_site.host not in listed
    url = sites.shop.url("/").replace("localhost", "127.0.0.1")
    registered = browser.post("/app/sites", {"url": url})
    assert registered.status_code == 303
    location = registered.headers["Location"]
    assert re.fullmatch(r"/app/sites/\d+\?done=registered", location)
    page = browser.get(location).text
    assert "Site registered." in page and "Publish <strong>one</strong> of these" in page
    assert "_siteaudit-challenge.127.0.0.1" in page and "siteaudit-site-verification" in page
    failed = browser.post(location.split("?")[0], {"action": "verify", "method": ""})
    assert failed.status_code == 422
    reasons = dict(
        re.findall(
            r"<li><span><strong>(\w+)</strong></span><span><span class=\"pill\">(\w+)</span>", failed.text
        )
    )
    assert reasons["meta"] == "not_found" and reasons["file"] == "not_found" and "dns" in reasons
    again = browser.post("/app/sites", {"url": url})
    assert again.status_code == 409 and "already" in again.text.lower()
    bad = browser.post("/app/sites", {"url": "not a url"})
    assert bad.status_code == 422 and 'value="not a url"' in bad.text


def test_settings_are_saved_and_refused_with_the_reason(sites: Sites) -> None:
    browser = sites.browser()
    path = f"/app/sites/{sites.site.id}"
    browser.get(path)
    saved = browser.post(
        path, {"action": "settings", "monitoring": "weekly", "max_pages": "200", "max_rps": "3"}
    )
    assert saved.headers["Location"] == f"{path}?done=saved"
    page = browser.get(path, done="saved").text
    assert "Settings saved." in page and '<option value="weekly" selected>' in page
    assert 'id="max-pages" min="1" step="1" value="200"' in page and 'id="alert-email" >' in page
    assert 'id="run-cost">at most 200 credits' in page
    for form, status in (
        ({"max_pages": "lots", "max_rps": "1"}, 422),
        ({"max_pages": "0", "max_rps": "1"}, 422),
        ({"max_pages": "10", "max_rps": "nan"}, 422),
    ):
        refused = browser.post(path, {"action": "settings", "monitoring": "off", **form})
        assert refused.status_code == status, (form, refused.text[-800:])
        assert 'role="alert"' in refused.text


def test_render_javascript_is_saved_with_the_settings_and_counted_in_the_run_cost(sites: Sites) -> None:
    browser = sites.browser()
    path = f"/app/sites/{sites.site.id}"
    page = browser.get(path).text
    assert 'id="render" > Render JavaScript (5 credits a page)' in page
    settings = {"action": "settings", "monitoring": "off", "max_pages": "200", "max_rps": "2"}
    saved = browser.post(path, {**settings, "render": "on"})
    assert saved.headers["Location"] == f"{path}?done=saved"
    assert sites.app.application.handle(GetSite(sites.site.id), sites.caller).render
    page = browser.get(path, done="saved").text
    assert 'id="render" checked> Render JavaScript' in page
    assert 'id="run-cost">at most 1,000 credits: 5 a page fetched and rendered, 0.2 a page unchanged' in page
    browser.post(path, settings)  # an unticked box is not sent: rendering off
    assert not sites.app.application.handle(GetSite(sites.site.id), sites.caller).render
    assert 'id="run-cost">at most 200 credits: 1 a page fetched, 0.2' in browser.get(path).text


def test_a_scoreless_audit_is_a_gap_with_its_reason(sites: Sites) -> None:
    shop = sites.shop
    shop.challenge = {"/", *(f"/products/{p}" for p in PRODUCTS), "/robots.txt"}
    sites.app.application.handle(CrawlSite(site_id=sites.site.id, max_pages=50), sites.caller)
    drain(sites.app)
    page = sites.browser().get(f"/app/sites/{sites.site.id}").text
    gap = re.search(r'<g class="gap"><title>([^<]*)</title>', page)
    assert gap, page
    assert "no value." in gap.group(1) and len(gap.group(1)) > 30
    assert "1 without a value (gaps)" in page


def test_the_page_is_only_for_people_signed_in(sites: Sites) -> None:
    anonymous = Browser(falcon.testing.TestClient(sites.app.service()))
    answer = anonymous.get(f"/app/sites/{sites.site.id}")
    assert answer.status_code == 303 and answer.headers["Location"].startswith("/app/sign-in?next=")


def test_the_console_summary_is_marked_demo_when_its_figures_are(sites: Sites) -> None:
    sites.app.application.sync_search_consoles(sites.app.clock.now())  # the embedded default's demo data
    page = sites.browser().get(f"/app/sites/{sites.site.id}").text
    console = re.search(r'<section class="card" id="console">.*?</section>', page, re.S)
    assert console, page
    assert '<span class="pill demo">demo data</span>' in console.group(0)
    assert "not from a real search console" in console.group(0)
    assert re.search(r"<dt>Clicks, 28 days</dt><dd class=\"num\">[0-9,]+</dd>", console.group(0))
