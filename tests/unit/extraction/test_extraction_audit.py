"""Custom extraction end to end through the application (docs/extraction.md): an audit of a local shop
with a CSS price rule and an XPath rule, its pages filtered by what they read, on memory and SQLite."""

from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.extraction import Extracted, ExtractionRule, RuleKind
from siteaudit.domain.ids import AuditId
from siteaudit.ports.application import Application, AuditQuery, ExportKind
from siteaudit.ports.crawl import PageRow
from siteaudit.services.audits.answers import Page
from siteaudit.services.audits.usecases import ListPages, StartAudit
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL

HTML = "text/html; charset=utf-8"


def product(name: str, price: str, sku: str) -> str:
    return (
        f"<!doctype html><html lang=en><head><title>{name}</title></head><body><h1>{name}</h1>"
        f"<p class=price>{price}</p><span itemprop=sku>{sku}</span><a href='/'>Home</a></body></html>"
    )


@pytest.fixture
def shop(httpserver: HTTPServer) -> HTTPServer:
    home = (
        "<!doctype html><html lang=en><head><title>Retro Clock shop</title></head><body><h1>Clocks</h1>"
        "<a href='/mantel'>Mantel</a> <a href='/cuckoo'>Cuckoo</a> <a href='/wall'>Wall</a>"
        " <a href='/about.txt'>About</a></body></html>"
    )
    httpserver.expect_request("/").respond_with_data(home, content_type=HTML)
    httpserver.expect_request("/mantel").respond_with_data(
        product("Mantel", "€49.00", "RC-1"), headers={"Content-Type": HTML, "ETag": '"mantel-1"'}
    )
    httpserver.expect_request("/cuckoo").respond_with_data(
        product("Cuckoo", " €129.00 ", "RC-2"), content_type=HTML
    )
    httpserver.expect_request("/wall").respond_with_data(product("Wall", "€49.00", "RC-3"), content_type=HTML)
    httpserver.expect_request("/about.txt").respond_with_data("plain", content_type="text/plain")
    httpserver.no_handler_status_code = 404
    return httpserver


@pytest.fixture(params=["memory", "sqlite"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Application, Caller]:
    database = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"
    # the shop's audits unpaced (tests/local_sites.py): these tests are about the values extracted
    settings = Settings(database_url=database, allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL)
    application = bootstrap(settings, queue=MemoryTaskQueue()).application
    key = application.ensure_local_owner(plan="scale", starting_credits=1_000)
    return application, application.authenticate(key.raw)


RULES = (
    ExtractionRule("price", ".price"),
    ExtractionRule("sku", "//span[@itemprop='sku']/text()", kind=RuleKind.XPATH),
)


def audited(app: tuple[Application, Caller], shop: HTTPServer, rules: tuple[ExtractionRule, ...]) -> int:
    application, me = app
    started = application.handle(StartAudit(url=shop.url_for("/"), max_pages=20, extract=rules), me)
    audit_id = AuditId(started.crawl_id)
    while application.run_crawl_slice(audit_id).next == "slice":
        pass
    application.finalize_audit(audit_id)
    return audit_id


def values(rows: list[PageRow] | tuple[Page, ...]) -> dict[str, tuple[Extracted, ...]]:
    """Each row's values by the last part of its URL: a listed page's `extract` or an exported row's."""

    def of(row: PageRow | Page) -> tuple[Extracted, ...]:
        if isinstance(row, PageRow):
            return row.extracted
        return tuple(Extracted(name, found) for name, found in (row.extract or {}).items())

    return {row.url.rsplit("/", 1)[1]: of(row) for row in rows}


def test_a_newcomer_extracts_prices_with_a_css_rule_and_filters_pages_by_them(
    app: tuple[Application, Caller], shop: HTTPServer
) -> None:
    application, me = app
    audit_id = audited(app, shop, RULES)
    listing = application.handle(ListPages(audit_id), me)
    nothing = (Extracted("price", ()), Extracted("sku", ()))
    assert values(listing.data) == {
        "": nothing,
        "mantel": (Extracted("price", ("€49.00",)), Extracted("sku", ("RC-1",))),
        "cuckoo": (Extracted("price", ("€129.00",)), Extracted("sku", ("RC-2",))),
        "wall": (Extracted("price", ("€49.00",)), Extracted("sku", ("RC-3",))),
        "about.txt": nothing,  # not HTML: not read, every rule still on the row
    }
    cheap = application.handle(ListPages(audit_id, extract_rule="price", extract_value="€49.00"), me)
    assert (sorted(values(cheap.data)), cheap.meta.total) == (["mantel", "wall"], 2)
    priced = application.handle(ListPages(audit_id, extract_rule="price", per_page=2), me)
    assert (len(priced.data), priced.meta.total) == (2, 3)
    by_sku = application.handle(ListPages(audit_id, extract_rule="sku", extract_value="RC-2"), me)
    assert [row.url for row in by_sku.data] == [shop.url_for("/cuckoo")]
    exported = [
        row for row in application.export_rows(audit_id, ExportKind.PAGES, me) if isinstance(row, PageRow)
    ]
    assert values(exported) == values(listing.data)


def test_a_filter_on_a_rule_the_audit_does_not_have_is_refused(
    app: tuple[Application, Caller], shop: HTTPServer
) -> None:
    application, me = app
    audit_id = audited(app, shop, RULES[:1])
    with pytest.raises(ValidationFailed) as refused:
        application.handle(ListPages(audit_id, extract_rule="sku", extract_value="RC-2"), me)
    assert list(refused.value.fields) == ["extract_rule"]


def test_an_audit_without_rules_has_no_values_on_its_rows(
    app: tuple[Application, Caller], shop: HTTPServer
) -> None:
    application, me = app
    audit_id = audited(app, shop, ())
    assert all(row.extract is None for row in application.handle(ListPages(audit_id), me).data)


def test_a_rule_that_does_not_parse_is_refused_naming_it_and_starts_nothing(
    app: tuple[Application, Caller], shop: HTTPServer
) -> None:
    application, me = app
    rules = (ExtractionRule("price", ".price"), ExtractionRule("sku", "//span[", kind=RuleKind.XPATH))
    with pytest.raises(ValidationFailed) as refused:
        application.handle(StartAudit(url=shop.url_for("/"), extract=rules), me)
    assert list(refused.value.fields) == ["extract[1].expression"]
    assert "XPath" in refused.value.fields["extract[1].expression"]
    assert application.list_audits(AuditQuery(), me).total == 0


def test_an_audit_with_rules_reads_every_page_in_full_without_validators(
    app: tuple[Application, Caller], shop: HTTPServer
) -> None:
    """A page that answered 304 has no body to read: an audit with rules never asks conditionally."""

    def conditional() -> int:
        return sum(1 for request, _ in shop.log if "If-None-Match" in request.headers)

    first = audited(app, shop, RULES)
    again = audited(app, shop, RULES)
    assert conditional() == 0
    application, me = app
    rows = application.handle(ListPages(again, extract_rule="price", extract_value="€49.00"), me).data
    assert shop.url_for("/mantel") in [row.url for row in rows]
    audited(app, shop, ())  # without rules the previous audit's validator is sent
    assert conditional() == 1
    assert first != again
