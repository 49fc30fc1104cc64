"""The IndexNow allowance under concurrent submissions on PostgreSQL (and the SQLite file): eight
requests at once, 16,000 distinct URLs between them, exactly 10,000 reach the local endpoint and are
counted; the same requests retried at once send nothing again and count nothing twice."""

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.error import DomainError
from siteaudit.domain.ids import SiteId
from siteaudit.domain.indexnow import KeyCheckResult
from siteaudit.domain.site import VerifyMethod
from siteaudit.ports.site import ProofPage
from siteaudit.services.indexnow.answers import IndexNowSubmitResult
from siteaudit.services.indexnow.usecases import CheckIndexNowKey, GetIndexNowStatus, SubmitToIndexNow
from siteaudit.services.sites.usecases import RegisterSite, VerifySite
from siteaudit.settings import Settings
from tests.indexnow_endpoint import LocalIndexNow
from tests.unit.application.test_application_doors import owner
from tests.unit.rest.conftest import ScriptedProofs

HOST = "retro-clock.example"
REQUESTS, URLS_EACH = 8, 2_000


@pytest.fixture
def endpoint() -> Iterator[LocalIndexNow]:
    server = LocalIndexNow().start()
    try:
        yield server
    finally:
        server.stop()


def _ready(database_url: str, endpoint: LocalIndexNow) -> tuple[App, Caller, SiteId]:
    proofs = ScriptedProofs()
    app = bootstrap(
        Settings(
            database_url=database_url, secret_key=SecretBox.generate_key(), indexnow_endpoint=endpoint.url
        ),
        clock=FixedClock(),
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({HOST: ["93.184.215.14"]}),
        proof_reader=proofs,
    )
    caller = owner(app)
    application = app.application
    site = application.handle(RegisterSite(f"https://{HOST}/"), caller)
    proofs.pages[site.verify.url] = ProofPage(site.verify.url, status=200, text=site.verify_token)
    application.handle(VerifySite(site.id, VerifyMethod.FILE), caller)
    status = application.handle(GetIndexNowStatus(site.id), caller)
    key_url = status.key_file_url
    proofs.pages[key_url] = ProofPage(key_url, status=200, text=status.key)
    assert application.handle(CheckIndexNowKey(site.id), caller).result is KeyCheckResult.VERIFIED
    return app, caller, site.id


def _at_once(app: App, caller: Caller, site_id: SiteId) -> list[IndexNowSubmitResult | str]:
    results: list[IndexNowSubmitResult | str] = [""] * REQUESTS
    start = threading.Barrier(REQUESTS)

    def submit(n: int) -> None:
        urls = [f"https://{HOST}/clock/{n}/{i}" for i in range(URLS_EACH)]
        start.wait()
        try:
            results[n] = app.application.handle(SubmitToIndexNow(site_id, tuple(urls)), caller)
        except DomainError as exc:
            results[n] = exc.code.value

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(REQUESTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def _check(database_url: str, endpoint: LocalIndexNow) -> None:
    app, caller, site_id = _ready(database_url, endpoint)
    first = _at_once(app, caller, site_id)
    submitted = [r for r in first if isinstance(r, IndexNowSubmitResult)]
    refused = [r for r in first if isinstance(r, str)]
    assert set(refused) <= {"indexnow_cap"}, refused
    assert sum(r.submitted for r in submitted) == 10_000
    assert sum(r.capped for r in submitted) + URLS_EACH * len(refused) == REQUESTS * URLS_EACH - 10_000
    sent = endpoint.urls_sent()
    assert len(sent) == len(set(sent)) == 10_000
    assert app.application.handle(GetIndexNowStatus(site_id), caller).today.used == 10_000

    again = _at_once(app, caller, site_id)  # every request retried at once
    assert len(endpoint.urls_sent()) == 10_000  # nothing sent twice
    assert app.application.handle(GetIndexNowStatus(site_id), caller).today.used == 10_000
    assert sum(r.submitted for r in again if isinstance(r, IndexNowSubmitResult)) == 10_000


@pytest.mark.postgres
def test_concurrent_submissions_on_postgresql_never_overspend_the_allowance(
    new_postgres_database: Callable[..., str], endpoint: LocalIndexNow
) -> None:
    _check(new_postgres_database(migrated=True), endpoint)


def test_concurrent_submissions_on_sqlite_never_overspend_the_allowance(
    tmp_path: Path, endpoint: LocalIndexNow
) -> None:
    _check(f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}", endpoint)
