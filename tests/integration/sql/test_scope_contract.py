"""What an audit covers, in the stores (docs/audits.md): an audit's list, sitemap-only flag, patterns and
query handling, and a site's saved rules and extraction rules read back as written, cleared to the
defaults, and older rows (NULL) read as the whole site; memory, SQLite and PostgreSQL alike."""

from attrs import evolve
from sql_backend import T0, Backend, people

from siteaudit.domain.audit import Audit
from siteaudit.domain.extraction import ExtractionRule, RuleKind
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.scope import WHOLE_SITE, AuditScope, QueryParams, ScopeRules
from siteaudit.domain.site import Site

SITE = "https://retro-clock.example"
RULES = ScopeRules(
    include=("/shop/", "*.html"),
    exclude=("/shop/cart",),
    query_params=QueryParams.KEEP_LISTED,
    keep_params=("id", "page"),
)


def test_an_audits_scope_reads_back_as_written(backend: Backend) -> None:
    owner, _, team = people(backend)
    for scope in (
        AuditScope(urls=tuple(f"{SITE}/p/{i}" for i in range(50))),
        AuditScope(sitemap_only=True, rules=RULES),
        AuditScope(rules=ScopeRules(query_params=QueryParams.DROP)),
        WHOLE_SITE,
    ):
        with backend.uow() as uow:
            audit = uow.audits.add(
                Audit(
                    AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, max_pages=50, scope=scope
                )
            )
            uow.commit()
        with backend.uow() as uow:
            assert uow.audits.get(audit.id, team=audit.team_id).scope == scope
            assert uow.audits.get_any(audit.id).scope == scope


def test_a_sites_saved_rules_read_back_and_clear(backend: Backend) -> None:
    _, _, team = people(backend)
    price = ExtractionRule("price", "//p[@class='price']/text()", kind=RuleKind.XPATH, all=True)
    with backend.uow() as uow:
        site = uow.sites.add(
            Site.register(
                site_id=SiteId(0),
                team_id=team.id,
                url=f"{SITE}/",
                verify_token="tok_retro_clock_0123456789",
                crawler_secret_ref="crawler-ref-1",
                plan_page_limit=10_000,
                now=T0,
            )
        )
        uow.commit()
    with backend.uow() as uow:
        assert (uow.sites.get(site.id, team=team.id).rules, site.extract) == (ScopeRules(), ())
        saved = uow.sites.get(site.id, team=team.id)
        uow.sites.save(evolve(saved, rules=RULES, extract=(price,), version=saved.version + 1))
        uow.commit()
    with backend.uow() as uow:
        read = uow.sites.get(site.id, team=team.id)
        assert (read.rules, read.extract) == (RULES, (price,))
        uow.sites.save(evolve(read, rules=ScopeRules(), extract=(), version=read.version + 1))
        uow.commit()
    with backend.uow() as uow:
        read = uow.sites.get(site.id, team=team.id)
        assert (read.rules, read.extract) == (ScopeRules(), ())
