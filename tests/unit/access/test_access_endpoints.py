"""The staging-access endpoints on the memory adapters (docs/rest-api.md "Staging access"): PUT sets or
replaces, GET says which kinds and when (never a value), DELETE removes; verified sites only for PUT, team
scope everywhere, every bad input a 422 naming its field."""

from typing import Any

import falcon.testing
import pytest

from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.credit import credits
from siteaudit.domain.ids import SiteId
from siteaudit.services.sites.usecases import RegisterSite
from siteaudit.settings import Settings
from tests.local_sites import UNPACED_LOCAL

BODY = {
    "basic_auth_user": "preview",
    "basic_auth_password": "staging-password-5b9e",
    "headers": ["X-Preview-Token: preview-token-c41a"],
    "cookies": ["gate=gate-cookie-77d0", "lang=en"],
}
VALUES = ("preview", "staging-password-5b9e", "preview-token-c41a", "gate-cookie-77d0")


class Client:
    def __init__(self) -> None:
        self.app: App = bootstrap(
            Settings(database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL)
        )
        self.http = falcon.testing.TestClient(self.app.rest_api())
        application = self.app.application
        issued = application.ensure_local_owner(plan="scale", starting_credits=1_000)
        assert issued is not None
        self.owner = issued.raw
        caller = application.authenticate(self.owner)
        self.verified = application.handle(RegisterSite("http://127.0.0.1:8001/"), caller)
        application.verify_site_by_hand(SiteId(self.verified.id), "the test owns it")
        self.unverified = application.handle(RegisterSite("http://127.0.0.1:8002/"), caller)
        application.create_user("rival@other-shop.example", plan="growth")
        application.create_team("Other Shop", owner_email="rival@other-shop.example")
        application.grant_credits("rival@other-shop.example", credits(100), idempotency_key="rival")
        self.rival = application.create_key("rival@other-shop.example", "Other Shop").raw

    def call(
        self, method: str, site_id: int, body: Any = None, key: str | None = None
    ) -> falcon.testing.Result:
        return self.http.simulate_request(
            method,
            f"/v1/sites/{site_id}/access",
            json=body,
            headers={"Authorization": f"Bearer {key or self.owner}"},
        )


@pytest.fixture
def client() -> Client:
    return Client()


def test_put_get_and_delete_answer_kinds_counts_and_time_never_a_value(client: Client) -> None:
    site = client.verified.id
    empty = client.call("GET", site)
    assert empty.status_code == 200
    assert empty.json == {
        "site_id": site,
        "kinds": [],
        "headers": 0,
        "cookies": 0,
        "sent_to": "http://127.0.0.1:8001",
        "updated_at": None,
    }
    put = client.call("PUT", site, BODY)
    assert put.status_code == 200, put.json
    assert put.json["kinds"] == ["basic_auth", "headers", "cookies"]
    assert (put.json["headers"], put.json["cookies"]) == (1, 2) and put.json["updated_at"]
    got = client.call("GET", site)
    assert got.json == put.json
    assert not any(value in put.text + got.text for value in VALUES)
    replaced = client.call("PUT", site, {"cookies": ["gate=b"]})
    assert replaced.json["kinds"] == ["cookies"] and replaced.json["headers"] == 0
    removed = client.call("DELETE", site)
    assert removed.status_code == 200 and removed.json["kinds"] == [] and removed.json["updated_at"] is None
    assert client.call("GET", site).json["kinds"] == []


def test_an_unverified_site_is_refused_and_another_teams_site_is_not_found(client: Client) -> None:
    refused = client.call("PUT", client.unverified.id, BODY)
    assert refused.status_code == 409 and refused.json["error"]["code"] == "site_not_verified"
    assert client.call("GET", client.unverified.id).json["kinds"] == []
    assert client.call("DELETE", client.unverified.id).status_code == 200
    for method, body in (("GET", None), ("PUT", BODY), ("DELETE", None)):
        answer = client.call(method, client.verified.id, body, key=client.rival)
        assert answer.status_code == 404 and answer.json["error"]["code"] == "not_found", method


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "headers"),
        ({"basic_auth_user": "preview"}, "basic_auth_password"),
        ({"basic_auth_user": 5, "basic_auth_password": "x"}, "basic_auth_user"),
        ({"headers": "X-A: b"}, "headers"),
        ({"headers": [5]}, "headers"),
        ({"headers": None}, "headers"),
        ({"headers": ["Host: evil.example"]}, "headers"),
        ({"headers": ["X-A: b\r\nX-B: c"]}, "headers"),
        ({"cookies": ["a b=c"]}, "cookies"),
        ({"cookies": ["c=" + "v" * 5000]}, "cookies"),
        ({"basic_auth_password": "x" * 2000, "basic_auth_user": "u"}, "basic_auth_password"),
        ({"cookies": ["a=b"], "token": "x"}, "token"),
    ],
)
def test_bad_input_answers_422_naming_the_field_and_stores_nothing(
    client: Client, body: dict[str, Any], field: str
) -> None:
    answer = client.call("PUT", client.verified.id, body)
    assert answer.status_code == 422, answer.json
    assert answer.json["error"]["code"] == "validation_failed"
    assert field in answer.json["error"]["fields"], answer.json
    assert client.call("GET", client.verified.id).json["kinds"] == []


def test_a_list_that_is_not_of_strings_is_named_for_what_it_holds(client: Client) -> None:
    answer = client.call("PUT", client.verified.id, {"headers": "X-A: b"})
    assert answer.json["error"]["fields"] == {
        "headers": "must be a list of strings of at most 4,096 characters"
    }
