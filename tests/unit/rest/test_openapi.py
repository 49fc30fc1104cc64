"""The OpenAPI document matches the routes, and every error code it names is in the catalogue."""

import falcon.inspect

from siteaudit.adapters.rest.openapi import DOCUMENT
from siteaudit.domain.error import ErrorCode
from tests.unit.rest.conftest import World

METHODS = {"get", "post", "put", "patch", "delete"}


def routes(world: World) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for route in falcon.inspect.inspect_routes(world.app.rest_api()):
        path = route.path
        for part in ("crawl_id",):
            path = path.replace(f"{{{part}:int(min=1, max=4611686018427387904)}}", f"{{{part}}}")
        methods = {m.method.lower() for m in route.methods if m.internal is False}
        found[path] = methods
    return found


def test_every_route_is_documented_with_its_methods_and_nothing_else(world: World) -> None:
    documented = {path: {m for m in ops if m in METHODS} for path, ops in DOCUMENT["paths"].items()}
    assert routes(world) == documented


def test_every_documented_error_code_is_in_the_catalogue() -> None:
    for path, operations in DOCUMENT["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            for status, response in operation["responses"].items():
                if int(status) >= 400:
                    for code in response["description"].split(", "):
                        assert ErrorCode(code), (path, method, code)


def test_the_document_is_served_without_a_key(world: World) -> None:
    result = world.client.simulate_get("/v1/openapi.json")
    assert result.status_code == 200
    assert result.json["openapi"] == "3.1.0"
