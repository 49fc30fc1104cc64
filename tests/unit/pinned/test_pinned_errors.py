"""Refused requests at `/v1`, pinned: a table of representative ones (no key, a bad key, unknown fields,
wrong types, bad values, not found, another team's crawl, no route, a wrong method or content type, a
body that is not JSON, no credits, over the plan) with their exact status and error envelope
(docs/architecture.md, "Pinned behaviour"). None of them is rate limited."""

import json
from typing import Any, Final

from tests.unit.pinned.pinning import assert_pinned, normalised
from tests.unit.rest.conftest import make_world

HOME: Final = "https://retro-clock.example/"
# (who asks: owner, member, rival, poor or None for no key, or a literal key; method; path; body: a
# JSON value, bytes sent as they are as JSON, or a str sent as text/plain)
Row = tuple[str | None, str, str, Any]
REFUSED: Final[tuple[Row, ...]] = (
    (None, "GET", "/v1/account", None),
    ("sk_notakeyatall", "GET", "/v1/account", None),
    ("owner", "GET", "/v1/nowhere", None),
    ("owner", "PUT", "/v1/account", None),
    ("owner", "POST", "/v1/crawls", {"url": HOME, "colour": "red"}),
    ("owner", "POST", "/v1/crawls", {"url": 5}),
    ("owner", "POST", "/v1/crawls", {"url": HOME, "max_pages": "ten", "max_rps": True}),
    ("owner", "POST", "/v1/crawls", {"url": HOME, "max_pages": 0, "concurrency": 99}),
    ("owner", "POST", "/v1/crawls", {}),
    ("owner", "POST", "/v1/crawls", ["not", "an", "object"]),
    ("owner", "POST", "/v1/crawls", b'{"url": '),
    ("owner", "POST", "/v1/crawls", {"url": "ftp://retro-clock.example/"}),
    ("owner", "POST", "/v1/crawls", {"url": "http://127.0.0.1/"}),
    ("poor", "POST", "/v1/crawls", {"url": HOME}),
    ("owner", "POST", "/v1/crawls", "url=https://retro-clock.example/"),
    ("member", "POST", "/v1/crawls", {"url": HOME, "max_pages": 1_000_000}),
    ("member", "POST", "/v1/crawls", {"url": HOME, "max_pages": 100_000}),
    ("owner", "GET", "/v1/crawls/424242", None),
    ("owner", "GET", "/v1/crawls/0", None),
    ("rival", "GET", "/v1/crawls/1", None),
    ("rival", "GET", "/v1/crawls/1/report", None),
    ("owner", "GET", "/v1/crawls/1/report", None),
    ("owner", "GET", "/v1/crawls/1/issues?severity=fatal", None),
    ("owner", "GET", "/v1/crawls/1/pages?per_page=0&page=-1", None),
    ("owner", "GET", "/v1/crawls?per_page=abc", None),
    ("owner", "DELETE", "/v1/crawls/424242", None),
    ("owner", "GET", "/v1/sites/424242", None),
    ("owner", "POST", "/v1/sites", {"url": HOME, "max_rps": 1000}),
    ("owner", "PATCH", "/v1/sites/424242", {"monitoring": "weekly"}),
    ("owner", "GET", "/v1/sites/1/tasks/nothex", None),
    ("owner", "GET", "/v1/rechecks/424242", None),
    ("owner", "POST", "/v1/device/token", {"device_code": "nope"}),
)


def test_refused_requests_are_answered_as_pinned() -> None:
    world = make_world()
    keys = {
        "owner": world.owner_key,
        "member": world.member_key,
        "rival": world.rival_key,
        "poor": world.poor_key,
    }
    # One running crawl of the owner's team, for the rival to be refused and its report to be not ready.
    started = world.client.simulate_post(
        "/v1/crawls", json={"url": HOME}, headers=world.auth(world.owner_key)
    )
    assert started.status_code == 202 and started.json["crawl_id"] == 1, started.text
    table = []
    for who, method, path, body in REFUSED:
        key = keys.get(who, who) if who is not None else None
        headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
        if isinstance(body, bytes | str):
            kind = "application/json" if isinstance(body, bytes) else "text/plain"
            result = world.client.simulate_request(
                method, path, body=body, headers={**headers, "Content-Type": kind}
            )
        else:
            result = world.client.simulate_request(method, path, json=body, headers=headers)
        assert result.status_code >= 400, (method, path, result.text)
        table.append(
            {
                "request": f"{method} {path} as {who}",
                "sent": body.decode() if isinstance(body, bytes) else body,
                "status": result.status_code,
                "content_type": result.headers.get("content-type"),
                "body": json.loads(result.text) if result.text else None,
            }
        )
    assert_pinned("errors", normalised(table, secrets=tuple(keys.values())), sort_keys=False)
