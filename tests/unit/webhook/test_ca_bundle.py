"""SITEAUDIT_CA_BUNDLE: extra certificate authorities, trusted for webhook deliveries and crawling.

A receiver on 127.0.0.1 whose certificate comes from a test CA (trustme) is refused as a TLS error while
only the default authorities are trusted, and reached once the CA's PEM file is given through the
setting; the file adds to the default trust store, is read once at startup, and a file that cannot be
read stops the start with an error naming the setting.
"""

import asyncio
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from webhook_doubles import LOOPBACK_ALLOWED, RECEIVER_NAME, StartReceiver, answering

from siteaudit.adapters.http.guard import ssl_context, trust_authorities
from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.facts import FetchError
from siteaudit.domain.network import FetchRequest, FetchResponse
from siteaudit.services.application import LocalApplication
from siteaudit.settings import Settings

BODY = b'{"event": "audit.ended"}'


@pytest.fixture(autouse=True)
def default_authorities() -> Iterator[None]:
    """Every test leaves the process trusting the default authorities only, as it found it."""
    yield
    trust_authorities("")


@pytest.fixture
def ca_bundle(certificate_authority: trustme.CA, tmp_path: Path) -> Path:
    path = tmp_path / "extra-authorities.pem"
    certificate_authority.cert_pem.write_to_path(str(path))
    return path


def started(ca_bundle: str | Path = "") -> App:
    """The application as `serve` builds it from settings, with the receiver's name resolving to 127.0.0.1."""
    settings = Settings(
        database_url="memory://", allow_networks=(LOOPBACK_ALLOWED,), ca_bundle=str(ca_bundle)
    )
    return bootstrap(settings, resolver=StaticResolver({RECEIVER_NAME: ["127.0.0.1"]}))


def local(app: App) -> LocalApplication:
    """The in-process application under `app`, whose driven adapters these tests reach."""
    assert isinstance(app.application, LocalApplication)
    return app.application


def crawl_fetch(app: App, url: str) -> FetchResponse:
    async def once() -> FetchResponse:
        fetcher = local(app).fetcher_factory(1)
        async with fetcher:  # type: ignore[attr-defined]
            return await fetcher.fetch(FetchRequest(url))

    return asyncio.run(once())


def webhook_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "siteaudit.adapters.http.webhook"]


def test_without_the_bundle_a_webhook_to_a_receiver_of_a_private_ca_fails_as_tls_and_is_logged(
    receiver: StartReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    hook = receiver(answering(204))

    outcome = local(started()).webhook_sender.send(hook.url(), BODY, [("content-type", "application/json")])

    assert outcome.status_code is None and outcome.error == FetchError.TLS.value
    assert "CERTIFICATE_VERIFY_FAILED" in (outcome.detail or "")
    assert hook.requests == []
    (line,) = webhook_lines(caplog)
    assert f"https://{RECEIVER_NAME}:{hook.port} failed (tls)" in line
    assert "/hooks/audit-ended" not in line  # a URL's path may carry a token: only the origin is logged


def test_with_the_bundle_given_through_the_setting_the_webhook_is_delivered(
    receiver: StartReceiver, ca_bundle: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hook = receiver(answering(204))

    outcome = local(started(ca_bundle)).webhook_sender.send(
        hook.url(), BODY, [("content-type", "application/json")]
    )

    assert (outcome.status_code, outcome.error) == (204, None)
    assert [r.body for r in hook.requests] == [BODY]
    assert webhook_lines(caplog) == []


def test_a_crawl_fetch_of_a_site_with_a_private_ca_needs_the_bundle(
    receiver: StartReceiver, ca_bundle: Path
) -> None:
    site = receiver(answering(200))

    refused = crawl_fetch(started(), site.url("/"))
    fetched = crawl_fetch(started(ca_bundle), site.url("/"))

    assert refused.error is FetchError.TLS and refused.status is None
    assert fetched.ok and fetched.status == 200 and fetched.body == b"thanks"
    assert [r.method for r in site.requests] == ["GET"]


def test_the_bundle_adds_to_the_default_authorities_and_is_read_once(
    receiver: StartReceiver, ca_bundle: Path, certificate_authority: trustme.CA
) -> None:
    default = ssl_context(True).get_ca_certs(binary_form=True)
    app = started(ca_bundle)
    extended = ssl_context(True).get_ca_certs(binary_form=True)

    assert len(default) > 10  # the default store, not an empty one
    assert all(c in extended for c in default)  # added to, not replaced
    test_ca = ssl.PEM_cert_to_DER_cert(certificate_authority.cert_pem.bytes().decode())
    assert [c for c in extended if c not in default] == [test_ca]

    ca_bundle.unlink()  # read at startup: later fetchers do not read it again
    hook = receiver(answering(204))
    for _ in range(2):
        assert local(app).webhook_sender.send(hook.url(), BODY, []).status_code == 204
    assert crawl_fetch(app, hook.url("/")).status == 204


@pytest.mark.parametrize("kind", ["missing", "not certificates", "a directory", "empty"])
def test_a_bundle_that_cannot_be_read_stops_the_start_with_an_error_naming_the_setting(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "authorities.pem"
    if kind == "not certificates":
        path.write_text("-----BEGIN NOTHING-----\nretro clock\n")
    elif kind == "a directory":
        path.mkdir()
    elif kind == "empty":
        path.write_text("")

    with pytest.raises(ValueError) as refused:
        started(path)

    message = str(refused.value)
    assert message.startswith(f"SITEAUDIT_CA_BUNDLE={str(path)!r}: no certificate authorities could be read")
    assert "\n" not in message
