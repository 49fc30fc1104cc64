"""The Google provider against a local stand-in of the documented endpoints: paging with startRow and
rowLimit, quota (429) and permission (403) errors, an expired access token refreshed once, a revoked
grant, the service-account JWT grant, and revocation."""

import json
from datetime import date
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pytest_httpserver import HTTPServer

from siteaudit.adapters.console.google import SCOPE
from siteaudit.adapters.console.providers import ConsoleClients
from siteaudit.domain.console import ConsoleProperty, Permission
from siteaudit.ports.searchconsole import (
    ConsoleError,
    ConsolePermissionDenied,
    ConsoleQuotaExceeded,
    ConsoleTokenInvalid,
)
from tests.unit.console.fake_google import FakeGoogle

PROPERTY = "https://retro-clock.example/"
PAGES = [f"https://retro-clock.example/clocks/{n}" for n in range(7)]


@pytest.fixture
def google(httpserver: HTTPServer) -> FakeGoogle:
    return FakeGoogle(httpserver)


def clients(google: FakeGoogle, *, row_limit: int = 3, key_file: str = "") -> ConsoleClients:
    return ConsoleClients(
        google.endpoints,
        client_id="client-1.apps.example",
        client_secret="shh",
        service_account_file=key_file,
        row_limit=row_limit,
        timeout_s=5.0,
    )


def test_properties_come_with_their_permission_levels(google: FakeGoogle) -> None:
    google.sites.append({"siteUrl": "sc-domain:other-shop.example", "permissionLevel": "siteRestrictedUser"})
    google.sites.append({"siteUrl": "https://new.example/", "permissionLevel": "siteUnverifiedUser"})
    console = clients(google).oauth("rt-good")
    assert list(console.properties()) == [
        ConsoleProperty(PROPERTY, Permission.OWNER),
        ConsoleProperty("sc-domain:other-shop.example", Permission.RESTRICTED),
        ConsoleProperty("https://new.example/", Permission.UNVERIFIED),
    ]
    token_request = next(body for name, body in google.requests if name == "token")
    assert token_request["grant_type"] == "refresh_token"
    assert token_request["refresh_token"] == "rt-good"
    assert token_request["client_id"] == "client-1.apps.example"
    assert token_request["scope"] == SCOPE


def test_search_analytics_pages_through_every_row(google: FakeGoogle) -> None:
    google.rows = [
        {
            "keys": [url, f"2026-11-0{day}"],
            "clicks": day,
            "impressions": 10 * day,
            "ctr": 0.1,
            "position": 4.5,
        }
        for url in PAGES
        for day in (1, 2)
    ]  # 14 rows, 3 a page: 5 requests, the last one short
    console = clients(google, row_limit=3).oauth("rt-good")
    days = console.page_days(PROPERTY, start=date(2026, 11, 1), end=date(2026, 11, 28))
    assert len(days) == 14
    assert {(d.url, d.day, d.clicks, d.impressions, d.position) for d in days} == {
        (url, date(2026, 11, day), day, 10 * day, 4.5) for url in PAGES for day in (1, 2)
    }
    asked = [body for name, body in google.requests if name == "query"]
    assert [(b["startRow"], b["rowLimit"]) for b in asked] == [(0, 3), (3, 3), (6, 3), (9, 3), (12, 3)]
    assert asked[0]["dimensions"] == ["page", "date"]
    assert (asked[0]["startDate"], asked[0]["endDate"]) == ("2026-11-01", "2026-11-28")


def test_an_exact_multiple_of_the_page_size_asks_once_more_and_stops_at_an_empty_page(
    google: FakeGoogle,
) -> None:
    google.rows = [
        {"keys": [url, "query"], "clicks": 1, "impressions": 2, "position": 3.0} for url in PAGES[:6]
    ]
    console = clients(google, row_limit=3).oauth("rt-good")
    rows = console.query_days(PROPERTY, start=date(2026, 11, 1), end=date(2026, 11, 2))
    assert len(rows) == 6
    assert google.count("query") == 3
    one = console.query_days(PROPERTY, start=date(2026, 11, 1), end=date(2026, 11, 2), page=PAGES[0])
    assert [(q.url, q.query) for q in one] == [(PAGES[0], "query")]
    last = [body for name, body in google.requests if name == "query"][-1]
    assert last["dimensionFilterGroups"][0]["filters"] == [
        {"dimension": "page", "operator": "equals", "expression": PAGES[0]}
    ]


def test_inspection_and_sitemaps_read_the_documented_fields(google: FakeGoogle) -> None:
    google.inspections[PAGES[0]] = {
        "verdict": "NEUTRAL",
        "coverageState": "Crawled - currently not indexed",
        "robotsTxtState": "ALLOWED",
        "indexingState": "INDEXING_ALLOWED",
        "lastCrawlTime": "2026-11-20T08:15:00Z",
        "pageFetchState": "SUCCESSFUL",
        "googleCanonical": PAGES[1],
        "userCanonical": PAGES[0],
        "sitemap": ["https://retro-clock.example/sitemap.xml"],
        "crawledAs": "MOBILE",
    }
    google.sitemap_list = [
        {
            "path": "https://retro-clock.example/sitemap.xml",
            "lastSubmitted": "2026-11-01T00:00:00Z",
            "isPending": False,
            "warnings": "1",
            "errors": "0",
            "contents": [{"type": "web", "submitted": "120", "indexed": "0"}],
        }
    ]
    console = clients(google).oauth("rt-good")
    inspection = console.inspect(PROPERTY, PAGES[0])
    assert inspection.coverage_state == "Crawled - currently not indexed"
    assert inspection.verdict == "NEUTRAL"
    assert inspection.google_canonical == PAGES[1] and inspection.user_canonical == PAGES[0]
    assert inspection.last_crawled is not None and inspection.last_crawled.day == 20
    assert inspection.sitemaps == ("https://retro-clock.example/sitemap.xml",)
    sent = next(body for name, body in google.requests if name == "inspect")
    assert sent == {"inspectionUrl": PAGES[0], "siteUrl": PROPERTY, "languageCode": "en-US"}
    (sitemap,) = console.sitemaps(PROPERTY)
    assert (sitemap.submitted, sitemap.warnings, sitemap.errors) == (120, 1, 0)


def test_quota_and_permission_errors_are_typed(google: FakeGoogle) -> None:
    console = clients(google).oauth("rt-good")
    google.fail["inspect"] = [(429, "RESOURCE_EXHAUSTED")]
    with pytest.raises(ConsoleQuotaExceeded):
        console.inspect(PROPERTY, PAGES[0])
    google.forbidden.add(PROPERTY)
    with pytest.raises(ConsolePermissionDenied):
        console.page_days(PROPERTY, start=date(2026, 11, 1), end=date(2026, 11, 2))
    google.fail["sites"] = [(500, "INTERNAL")]
    with pytest.raises(ConsoleError) as raised:
        console.properties()
    assert "500" in str(raised.value)


def test_an_expired_access_token_is_refreshed_once_and_the_call_repeated(google: FakeGoogle) -> None:
    console = clients(google).oauth("rt-good")
    console.properties()
    assert google.count("token") == 1
    google.expire_access_tokens()
    assert console.properties()[0].url == PROPERTY
    assert google.count("token") == 2
    assert google.count("sites") == 3  # the first call, the refused one, and its repetition


def test_a_revoked_grant_is_a_token_error(google: FakeGoogle) -> None:
    console = clients(google).oauth("rt-revoked")
    with pytest.raises(ConsoleTokenInvalid):
        console.properties()
    assert google.count("sites") == 0  # no call without a token


def test_revocation_posts_the_token(google: FakeGoogle) -> None:
    made = clients(google)
    made.revoke("rt-good")
    assert google.revoked == ["rt-good"]
    with pytest.raises(ConsoleTokenInvalid):
        made.oauth("rt-good").properties()
    made.revoke("rt-good")  # already gone (400): counted as revoked


def _key_file(tmp_path: Path) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = tmp_path / "service-account.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "siteaudit-test",
                "private_key_id": "k1",
                "private_key": pem,
                "client_email": "siteaudit@siteaudit-test.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": "https://oauth2.googleapis.com/token",
            }
        )
    )
    return str(path)


def test_the_service_account_signs_a_jwt_grant_at_the_configured_token_url(
    google: FakeGoogle, tmp_path: Path
) -> None:
    console = clients(google, key_file=_key_file(tmp_path)).service_account()
    assert console is not None
    assert console.properties()[0].permission is Permission.OWNER
    grant = next(body for name, body in google.requests if name == "token")
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert grant["assertion"].count(".") == 2  # a signed JWT
    assert clients(google).service_account() is None  # no key file: no service account


def test_an_unreadable_key_file_is_a_console_error(google: FakeGoogle, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConsoleError):
        clients(google, key_file=str(tmp_path / "bad.json")).service_account()
