"""Custom extraction in the stores (docs/extraction.md): an audit's rules read back, each page's values
stored with its row, shown on the lists and exports, and filtered; memory, SQLite and PostgreSQL alike."""

from datetime import UTC, datetime

from sql_backend import Backend

from siteaudit.domain.account import Team, User
from siteaudit.domain.audit import Audit
from siteaudit.domain.extraction import Extracted, ExtractionRule, ExtractMatch, RuleKind
from siteaudit.domain.facts import HtmlFacts, PageFacts
from siteaudit.domain.ids import AuditId, TeamId, UserId
from siteaudit.ports.crawl import PageQuery

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
SITE = "https://retro-clock.example"
RULES = (
    ExtractionRule("price", ".price"),
    ExtractionRule("sku", "//span[@itemprop='sku']/text()", kind=RuleKind.XPATH, all=True),
    ExtractionRule("images", "img", take="count"),
    ExtractionRule("buy", "a.buy", take="attribute:href"),
)


def _audit(backend: Backend, rules: tuple[ExtractionRule, ...] = RULES) -> Audit:
    with backend.uow() as uow:
        owner = uow.users.add(User(UserId(0), "owner@retro-clock.example", "growth", T0))
        team = uow.teams.add(Team(TeamId(0), "Retro Clock", owner.id, T0))
        audit = uow.audits.add(
            Audit(AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, max_pages=50, extract=rules)
        )
        uow.commit()
    return audit


def _page(path: str, price: str | None, skus: tuple[str, ...] = ()) -> PageFacts:
    return PageFacts(
        url=f"{SITE}{path}",
        status_code=200,
        content_type="text/html",
        html=HtmlFacts(titles=(f"Clock {path}",)),
        extracted=(
            Extracted("price", () if price is None else (price,)),
            Extracted("sku", skus),
            Extracted("images", ("2",)),
            Extracted("buy", ()),
        ),
    )


def test_an_audits_extraction_rules_read_back_in_order(backend: Backend) -> None:
    audit = _audit(backend)
    with backend.uow() as uow:
        assert uow.audits.get(audit.id, team=audit.team_id).extract == RULES
    plain = _audit_without_rules(backend)
    with backend.uow() as uow:
        assert uow.audits.get(plain.id, team=plain.team_id).extract == ()


def _audit_without_rules(backend: Backend) -> Audit:
    with backend.uow() as uow:
        owner = uow.users.add(User(UserId(0), "plain@retro-clock.example", "growth", T0))
        team = uow.teams.add(Team(TeamId(0), "Plain", owner.id, T0))
        audit = uow.audits.add(
            Audit(AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, max_pages=5)
        )
        uow.commit()
    return audit


def test_values_are_on_the_page_rows_and_filter_them(backend: Backend) -> None:
    audit = _audit(backend).id
    store = backend.crawl
    pages = [
        _page("/a", "€12.00", ("A-1", "A-2")),
        _page("/b", None),
        _page("/c", "€12.00"),
        _page("/d", "€9.50"),
        PageFacts(url=f"{SITE}/gone", status_code=404, content_type="text/plain"),
    ]
    store.write_pages(audit, pages)
    rows, total = store.list_pages(audit, PageQuery())
    assert total == 5
    assert [r.extracted for r in rows] == [p.extracted for p in pages]
    assert rows[0].extracted[1] == Extracted("sku", ("A-1", "A-2"))  # every value, in document order

    rows, total = store.list_pages(audit, PageQuery(extract=ExtractMatch("price", "€12.00")))
    assert ([r.url for r in rows], total) == ([f"{SITE}/a", f"{SITE}/c"], 2)
    rows, total = store.list_pages(audit, PageQuery(extract=ExtractMatch("price"), offset=1, limit=1))
    assert ([r.url for r in rows], total) == ([f"{SITE}/c"], 3)
    rows, total = store.list_pages(audit, PageQuery(extract=ExtractMatch("sku", "A-2"), status_code=200))
    assert ([r.url for r in rows], total) == ([f"{SITE}/a"], 1)
    assert store.list_pages(audit, PageQuery(extract=ExtractMatch("buy"))) == ([], 0)  # read nothing anywhere
    assert store.list_pages(audit, PageQuery(extract=ExtractMatch("price", "€12.0"))) == (
        [],
        0,
    )  # exact values


def test_the_export_stream_carries_each_pages_values(backend: Backend) -> None:
    audit = _audit(backend).id
    store = backend.crawl
    pages = [_page(f"/p{i}", f"€{i}") for i in range(5)]
    pages[2] = PageFacts(url=f"{SITE}/p2", status_code=301)
    store.write_pages(audit, pages)
    streamed = list(store.stream_page_rows(audit))
    assert [r.extracted for r in streamed] == [p.extracted for p in pages]


def test_rewriting_a_page_replaces_its_values_and_archiving_drops_them(backend: Backend) -> None:
    audit = _audit(backend).id
    store = backend.crawl
    store.write_pages(audit, [_page("/a", "€1")])
    store.write_pages(audit, [_page("/a", "€2")])  # a redelivered batch
    rows, _ = store.list_pages(audit, PageQuery())
    assert rows[0].extracted[0] == Extracted("price", ("€2",))
    assert store.list_pages(audit, PageQuery(extract=ExtractMatch("price", "€1"))) == ([], 0)
    store.archive(audit)
    assert store.list_pages(audit, PageQuery(extract=ExtractMatch("price"))) == ([], 0)
