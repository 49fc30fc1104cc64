"""The SQL crawl store's URL-id cache: only committed ids, shared safely between stores, forgotten on archive."""

from collections.abc import Iterator

import pytest
from sql_backend import T0, Backend, people
from sqlalchemy import func, select

from siteaudit.adapters.sql import SqlCrawlStore
from siteaudit.adapters.sql.crawl import UrlIdCache
from siteaudit.adapters.sql.tables import crawl_urls
from siteaudit.domain.audit import Audit
from siteaudit.domain.facts import Link, PageFacts
from siteaudit.domain.ids import AuditId

SITE = "https://retro-clock.example"


def _audit(backend: Backend) -> AuditId:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        audit = uow.audits.add(Audit(AuditId(0), team.id, owner.id, owner.id, f"{SITE}/", SITE, T0, 500))
        uow.commit()
    return audit.id


def _stored_urls(backend: Backend, audit: AuditId) -> dict[str, int]:
    assert backend.engine is not None
    with backend.engine.connect() as conn:
        rows = conn.execute(select(crawl_urls.c.url, crawl_urls.c.id).where(crawl_urls.c.audit_id == audit))
        return {url: url_id for url, url_id in rows}


def test_ids_from_a_rolled_back_batch_are_not_remembered(sql_backend: Backend) -> None:
    assert sql_backend.engine is not None
    audit = _audit(sql_backend)
    store = SqlCrawlStore(sql_backend.engine)
    store.intern(audit, [f"{SITE}/kept"])

    def pages_then_failure() -> Iterator[PageFacts]:
        yield PageFacts(url=f"{SITE}/lost-1")
        yield PageFacts(url=f"{SITE}/lost-2")
        raise RuntimeError("the crawler died mid-batch")

    with pytest.raises(RuntimeError):
        store.write_pages(audit, pages_then_failure())
    assert store.intern(audit, [f"{SITE}/lost-2", f"{SITE}/kept"]) == {f"{SITE}/lost-2": 2, f"{SITE}/kept": 1}
    assert _stored_urls(sql_backend, audit) == {f"{SITE}/kept": 1, f"{SITE}/lost-2": 2}


def test_two_stores_writing_one_audit_never_give_a_url_two_ids(sql_backend: Backend) -> None:
    assert sql_backend.engine is not None
    audit = _audit(sql_backend)
    first, second = SqlCrawlStore(sql_backend.engine), SqlCrawlStore(sql_backend.engine)
    first.write_links(audit, [(f"{SITE}/", Link(f"{SITE}/a")), (f"{SITE}/", Link(f"{SITE}/b"))])
    second.write_links(audit, [(f"{SITE}/c", Link(f"{SITE}/a")), (f"{SITE}/c", Link(f"{SITE}/d"))])
    # `first` knows /, /a and /b from its cache; /c and /d it must learn from the database
    ids = first.intern(audit, [f"{SITE}/d", f"{SITE}/a", f"{SITE}/c", f"{SITE}/e"])
    stored = _stored_urls(sql_backend, audit)
    assert ids == {url: stored[url] for url in ids}
    assert sorted(stored.values()) == list(range(1, 7))
    assert {(r.source, r.target) for r in second.stream_links(audit)} == {
        (stored[f"{SITE}/"], stored[f"{SITE}/a"]),
        (stored[f"{SITE}/"], stored[f"{SITE}/b"]),
        (stored[f"{SITE}/c"], stored[f"{SITE}/a"]),
        (stored[f"{SITE}/c"], stored[f"{SITE}/d"]),
    }


def test_an_archived_audit_starts_its_ids_afresh(sql_backend: Backend) -> None:
    assert sql_backend.engine is not None
    audit = _audit(sql_backend)
    store = SqlCrawlStore(sql_backend.engine)
    store.intern(audit, [f"{SITE}/a", f"{SITE}/b"])
    store.archive(audit)
    assert store.intern(audit, [f"{SITE}/b"]) == {f"{SITE}/b": 1}
    with sql_backend.engine.connect() as conn:
        count = conn.execute(select(func.count()).select_from(crawl_urls)).scalar_one()
    assert count == 1


def test_the_cache_keeps_the_most_recently_used_urls_of_the_most_recent_audits() -> None:
    cache = UrlIdCache(per_audit=3, audits=2)
    cache.remember(AuditId(1), {"a": 1, "b": 2, "c": 3})
    assert cache.known(AuditId(1), ["a", "x", "a"]) == ({"a": 1}, ["x"])  # "a" is now the most recent
    cache.remember(AuditId(1), {"d": 4})
    assert cache.known(AuditId(1), ["a", "b", "c", "d"]) == ({"a": 1, "c": 3, "d": 4}, ["b"])
    cache.remember(AuditId(2), {"a": 10})
    cache.remember(AuditId(3), {"a": 20})
    assert cache.known(AuditId(1), ["a"]) == ({}, ["a"])
    assert cache.known(AuditId(3), ["a"]) == ({"a": 20}, [])
    cache.forget(AuditId(3))
    assert cache.known(AuditId(3), ["a"]) == ({}, ["a"])
