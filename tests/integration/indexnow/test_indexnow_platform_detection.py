"""IndexNow detection of a platform that submits for the site (SPEC 2.10 `managed`, `platform`), through
`POST /v1/sites/{id}/indexnow/detect-key` on the real proof reader (SSRF guard, httpx) against a local
site on 127.0.0.1 serving each platform's signals (docs/indexnow.md)."""

from typing import Any

import falcon.testing
import pytest
from pytest_httpserver import HTTPServer

from siteaudit.bootstrap import App, bootstrap
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL

PAGE = "<!doctype html><html lang=en><head><title>Retro Clock</title>{head}</head><body>{body}</body></html>"
WIX_HEAD = '<meta name="generator" content="Wix.com Website Builder">'
YOAST_BODY = (
    "<!-- This site is optimized with the Yoast SEO Premium plugin v22.0 - https://yoast.com/wordpress/"
    "plugins/seo/ --><h1>Clocks</h1>"
)
FREE_YOAST_BODY = (
    "<!-- This site is optimized with the Yoast SEO plugin v22.0 - https://yoast.com/wordpress/"
    "plugins/seo/ --><h1>Clocks</h1>"
)


@pytest.fixture
def app() -> App:
    return bootstrap(Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL))


@pytest.fixture
def client(app: App) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(app.rest_api())


@pytest.fixture
def key(app: App) -> str:
    issued = app.application.ensure_local_owner(plan="scale", starting_credits=100)
    assert issued is not None
    return issued.raw


def serve_home(
    server: HTTPServer,
    *,
    head: str = "",
    body: str = "<h1>Clocks</h1>",
    headers: dict[str, str] | None = None,
) -> None:
    server.clear_all_handlers()
    server.no_handler_status_code = 404
    server.expect_request("/").respond_with_data(
        PAGE.format(head=head, body=body), content_type="text/html; charset=utf-8", headers=headers or {}
    )


def detect(client: falcon.testing.TestClient, key: str, server: HTTPServer) -> tuple[dict[str, Any], int]:
    auth = {"Authorization": f"Bearer {key}"}
    made = client.simulate_post("/v1/sites", json={"url": server.url_for("/")}, headers=auth)
    assert made.status_code in (200, 201), made.text
    site_id = made.json["id"]
    answer = client.simulate_post(f"/v1/sites/{site_id}/indexnow/detect-key", headers=auth)
    assert answer.status_code == 200, answer.text
    return answer.json["detection"], len(server.log)


@pytest.mark.parametrize(
    ("head", "body", "headers", "platform"),
    [
        (WIX_HEAD, "<h1>Clocks</h1>", {}, "wix"),
        ("", "<h1>Clocks</h1>", {"X-Wix-Request-Id": "1700000000.123456789"}, "wix"),
        ("", YOAST_BODY, {}, "yoast"),
    ],
    ids=["wix-generator", "wix-header", "yoast-premium"],
)
def test_a_platform_that_submits_for_the_site_is_managed(
    httpserver: HTTPServer,
    client: falcon.testing.TestClient,
    key: str,
    head: str,
    body: str,
    headers: dict[str, str],
    platform: str,
) -> None:
    serve_home(httpserver, head=head, body=body, headers=headers)

    detection, requests = detect(client, key, httpserver)

    assert (detection["status"], detection["platform"]) == ("managed", platform)
    assert (detection["key"], detection["key_file_url"], detection["source"]) == (None, None, None)
    assert detection["checked_at"]
    assert requests == 1  # the home page told it: no key file was looked for


@pytest.mark.parametrize(
    "headers",
    [{"Server": "cloudflare", "CF-RAY": "8a1b2c3d4e5f6789-AMS"}, {"CF-RAY": "8a1b2c3d4e5f6789-AMS"}],
)
def test_cloudflare_in_front_is_named_but_not_managed(
    httpserver: HTTPServer, client: falcon.testing.TestClient, key: str, headers: dict[str, str]
) -> None:
    # Crawler Hints may be on or off: nothing outside Cloudflare's dashboard tells, so the key search
    # goes on and its answer stands, with the platform named.
    serve_home(httpserver, headers=headers)

    detection, requests = detect(client, key, httpserver)

    assert (detection["status"], detection["platform"]) == ("none", "cloudflare")
    assert requests == 2  # the home page, then the site's own key file


def test_cloudflare_with_a_served_key_is_found_and_named(
    httpserver: HTTPServer, client: falcon.testing.TestClient, key: str
) -> None:
    serve_home(httpserver, headers={"Server": "cloudflare", "CF-RAY": "8a1b2c3d4e5f6789-AMS"})
    auth = {"Authorization": f"Bearer {key}"}
    site_id = client.simulate_post("/v1/sites", json={"url": httpserver.url_for("/")}, headers=auth).json[
        "id"
    ]
    own = client.simulate_get(f"/v1/sites/{site_id}/indexnow", headers=auth).json["key"]
    httpserver.expect_request(f"/{own}.txt").respond_with_data(own, content_type="text/plain")

    detection = client.simulate_post(f"/v1/sites/{site_id}/indexnow/detect-key", headers=auth).json[
        "detection"
    ]

    assert (detection["status"], detection["key"], detection["platform"]) == ("found", own, "cloudflare")


@pytest.mark.parametrize(
    ("head", "body"),
    [("", "<h1>Clocks</h1>"), ("", FREE_YOAST_BODY), ('<meta name="generator" content="WordPress 6.5">', "")],
    ids=["plain", "free-yoast", "wordpress"],
)
def test_a_site_without_a_submitting_platform_is_not_managed(
    httpserver: HTTPServer, client: falcon.testing.TestClient, key: str, head: str, body: str
) -> None:
    serve_home(httpserver, head=head, body=body)

    detection, _ = detect(client, key, httpserver)

    assert (detection["status"], detection["platform"]) == ("none", None)
