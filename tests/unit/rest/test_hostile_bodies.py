"""The guard of docs/security.md's "Strict JSON bodies": every JSON endpoint of `/v1` (from the OpenAPI
document the service serves), every tool of `/mcp` (from its `tools/list` answer) and every form of the
app (from the pages it renders) is sent hostile input: lone surrogates, NUL and control characters, nesting
10,000 deep, digit strings for numbers, numbers no float holds, unknown fields, wrong types, oversized
bodies. Every answer is a success or a 4xx (in the error envelope at the JSON doors); never a 5xx, and a
refused request writes no row. One SQLite store serves all, as `siteaudit serve` runs it."""

import json
import re
import string
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from typing import Any, Final
from urllib.parse import quote

import falcon.inspect
import falcon.testing
import pytest
import sqlalchemy as sa
from attrs import frozen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.mcp.tools import tool_specs
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.rest.openapi import document
from siteaudit.adapters.rest.params import MAX_BODY_BYTES
from siteaudit.adapters.sql.tables import metadata
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import USE_CASES, App, bootstrap
from siteaudit.domain.credit import credits
from siteaudit.ports.ratelimit import Limit, RateDecision
from siteaudit.ports.site import ProofPage
from siteaudit.services.audits.usecases import CancelAudit, StartAudit
from siteaudit.settings import Settings
from tests.unit.web.conftest import quick_hasher

DOCUMENT: Final = document(USE_CASES)
TOOLS: Final = tool_specs(USE_CASES)

HOME: Final = "https://retro-clock.example/"
TOOL_NAMES: Final = [spec.name for spec in TOOLS]
PASSWORD: Final = "correct horse battery staple"
OWNER: Final = "owner@retro-clock.example"
DEEP: Final = 10_000
MCP_MAX_BODY: Final = 4 * 1024 * 1024
MCP_HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
# Examples per endpoint, tool and form: about 40 s on two cores in all (docs/security.md's guard).
EXAMPLES: Final = 25
GUARD = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


class Raw(str):
    """JSON text sent as it is (what `json.dumps` cannot write: 1e400, NaN, 10,000 nested arrays)."""


def dump(value: Any, *, ascii_only: bool) -> str:
    """JSON text of `value` with its Raw parts as they are. With `ascii_only` a lone surrogate is the escape
    `\\ud800`; without, it is written as itself (then sent as the bytes UTF-8 forbids)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        items = (
            f"{dump(k, ascii_only=ascii_only)}:{dump(v, ascii_only=ascii_only)}" for k, v in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v, ascii_only=ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


def encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


# --- hostile values -------------------------------------------------------------------------------------

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
controls = st.sampled_from(["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x85", "\u2028", "\t", "\n", "\r"])
plain = st.text(string.ascii_letters + string.digits + "-./", max_size=12)


def tainted(bad: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A string holding `bad` somewhere: alone, at the end of a URL, inside a word."""
    return st.builds(lambda head, b, tail: head + b + tail, st.sampled_from(["", HOME, "a"]), bad, plain)


DEEP_ARRAYS: Final = Raw("[" * DEEP + "]" * DEEP)
DEEP_OBJECTS: Final = Raw('{"a":' * DEEP + "1" + "}" * DEEP)
HUGE_NUMBERS: Final = [
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1" + "0" * 400),
    Raw("9" * 5000),
    2**64,
    -(2**63) - 1,
]
hostile_text = st.one_of(tainted(surrogates), tainted(controls))
wrong_types = st.one_of(
    st.none(),
    st.booleans(),
    st.just(5.5),
    st.integers(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(plain, st.integers(), max_size=2),
    st.just(""),
)
anything_hostile = st.one_of(
    hostile_text,
    wrong_types,
    st.sampled_from([DEEP_ARRAYS, DEEP_OBJECTS, Raw("NaN"), Raw("Infinity"), *HUGE_NUMBERS]),
)


def kinds(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type", "string")
    return set(kind) if isinstance(kind, list) else {kind}


def hostile(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value a field of `schema` must refuse (or may take: some hostile values are fine for a string)."""
    options = [anything_hostile]
    types = kinds(schema)
    if types & {"integer", "number"}:
        low, high = schema.get("minimum", 0), schema.get("maximum", 10**6)
        options.append(st.integers(int(low), int(high)).map(str))  # "5" is a string, never the integer 5
        options.append(st.sampled_from([" 5", "5.0", "1e3", "0x10"]))
    if "boolean" in types:
        options.append(st.sampled_from(["true", "false", "1", "0"]))
    if "array" in types:
        options.append(st.lists(st.one_of(hostile_text, wrong_types), min_size=1, max_size=3))
        options.append(st.lists(hostile_text, min_size=1, max_size=2).map(lambda bad: [HOME, *bad]))
    return st.one_of(options)


def fitting(name: str, schema: dict[str, Any], ids: dict[str, int]) -> st.SearchStrategy[Any]:
    """A value `schema` takes, so that the other fields of a body pass and the hostile one is reached."""
    if name in ids:
        return st.just(ids[name])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    types = kinds(schema)
    if "integer" in types:
        return st.integers(int(schema.get("minimum", 1)), int(min(schema.get("maximum", 50), 50)))
    if "number" in types:
        return st.floats(float(schema.get("minimum", 1)), float(min(schema.get("maximum", 5), 5)))
    if "boolean" in types:
        return st.booleans()
    if "array" in types:
        return st.lists(st.sampled_from([HOME, HOME + "shop/"]), min_size=1, max_size=2)
    if "url" in name or schema.get("format") == "uri":
        return st.sampled_from([HOME, HOME + "shop/"])
    low, high = int(schema.get("minLength", 1)), min(int(schema.get("maxLength", 20)), 20)
    return st.text(string.ascii_lowercase + string.digits, min_size=low, max_size=max(low, high))


@st.composite
def bodies(
    draw: st.DrawFn, props: dict[str, dict[str, Any]], ids: dict[str, int], *, max_bytes: int
) -> tuple[bytes, str]:
    """(body, what is hostile in it): one field hostile among fitting ones, an unknown field, or a whole
    body that is not what a JSON endpoint takes."""
    body = {name: draw(fitting(name, s, ids)) for name, s in props.items() if draw(st.booleans())}
    attack = draw(
        st.sampled_from(["field", "field", "field", "unknown", "whole"] if props else ["unknown", "whole"])
    )
    if attack == "field":
        name = draw(st.sampled_from(sorted(props)))
        body[name] = draw(hostile(props[name]))
    elif attack == "unknown":
        body[draw(st.one_of(plain, tainted(surrogates), tainted(controls)))] = draw(anything_hostile)
    else:
        whole = draw(
            st.sampled_from(
                [
                    DEEP_ARRAYS,
                    DEEP_OBJECTS,
                    Raw('{"a":' + "[" * DEEP),  # deep and never closed
                    Raw("[]"),
                    Raw('"text"'),
                    Raw("5"),
                    Raw("NaN"),
                    Raw("{"),
                    Raw(""),
                    Raw('{"a": "' + "x" * (max_bytes + 1) + '"}'),
                ]
            )
        )
        return encoded(whole), "whole body"
    ascii_only = draw(st.booleans())
    return encoded(dump(body, ascii_only=ascii_only)), attack


# --- the store ------------------------------------------------------------------------------------------


class AllowAll:
    """No rate limit: hundreds of requests a minute, each answered for what it is, not with 429."""

    def hit(self, bucket: str, limit: Limit, *, now: Any) -> RateDecision:
        return RateDecision(True, limit.count, limit.count - 1, limit.interval_s, 0.0)

    peek = hit


class NoProofs:
    def read(self, url: str, *, origin: str) -> ProofPage:
        return ProofPage(url, status=404)

    def txt_records(self, name: str) -> tuple[str, ...]:
        return ()


@frozen
class Door:
    app: App
    client: falcon.testing.TestClient
    engine: sa.Engine
    key: str
    ids: dict[str, int]
    session: dict[str, str]  # the cookies of a signed-in browser

    def rows(self) -> dict[str, int]:
        with self.engine.connect() as connection:
            return {
                name: connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
                for name, table in metadata.tables.items()
            }

    def refused_writes_nothing(self, send: Callable[[], Any], refused: Callable[[Any], bool]) -> Any:
        before = self.rows()
        result = send()
        if refused(result):
            after = self.rows()
            assert after == before, {t: (before[t], after[t]) for t in before if before[t] != after[t]}
        return result


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Door]:
    url = f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'siteaudit.sqlite3'}"
    app = bootstrap(
        Settings(database_url=url, indexnow_endpoint="http://127.0.0.1:9/indexnow", app_sign_up="open"),
        clock=FixedClock(),
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({"retro-clock.example": ["93.184.215.14"]}),
        limiter=AllowAll(),
        proof_reader=NoProofs(),
        hasher=quick_hasher(),  # its /app forms sign in on every example: never what a hash costs
    )
    application = app.application
    application.create_user(OWNER, plan="scale")
    application.create_team("Retro Clock", owner_email=OWNER)
    application.grant_credits(OWNER, credits(1_000_000), idempotency_key="start")
    application.set_password(OWNER, PASSWORD)
    from siteaudit.services import key as keys

    key = keys.create_settings_key(
        OWNER, "Retro Clock", uow=app.uow(), clock=app.clock, secrets=app.secrets
    ).raw
    client = falcon.testing.TestClient(app.service())
    auth = {"Authorization": f"Bearer {key}"}
    site = client.simulate_post("/v1/sites", json={"url": HOME}, headers=auth).json["id"]
    caller = application.authenticate(key)
    audit = application.handle(StartAudit(url=HOME, max_pages=5), caller)
    application.handle(CancelAudit(audit.crawl_id), caller)  # ended: a tool that waits on it answers at once
    ids = {"site_id": site, "crawl_id": audit.crawl_id, "recheck_id": 1}
    engine = sa.create_engine(url)
    yield Door(app, client, engine, key, ids, sign_in(client))
    engine.dispose()


def is_envelope(result: Any) -> bool:
    try:
        error = json.loads(result.text).get("error")
    except (ValueError, AttributeError):
        return False
    return (
        isinstance(error, dict)
        and isinstance(error.get("code"), str | int)
        and isinstance(error.get("message"), str)
    )


def assert_clean(result: Any, sent: str) -> None:
    assert result.status_code < 500, (sent, result.status_code, result.text[:300])
    if result.status_code >= 400:
        assert is_envelope(result), (sent, result.status_code, result.text[:300])


# --- /v1 --------------------------------------------------------------------------------------------------


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every field a body schema names, its alternatives (oneOf, anyOf, allOf) included."""
    schema = resolve(schema)
    found = {name: resolve(inner) for name, inner in schema.get("properties", {}).items()}
    for key in ("oneOf", "anyOf", "allOf"):
        for part in schema.get(key, []):
            found.update(properties(part))
    return found


def json_operations() -> list[tuple[str, str, dict[str, dict[str, Any]]]]:
    """(method, path, fields) of every operation of the document that takes a body."""
    found = []
    for path, item in DOCUMENT["paths"].items():
        for method, operation in item.items():
            if method not in ("post", "put", "patch") or "stripe" in path:  # Stripe's signed webhook
                continue
            content = operation.get("requestBody", {}).get("content", {})
            schema = content.get("application/json", {}).get("schema", {})
            found.append((method.upper(), path, properties(schema)))
    return found


OPERATIONS: Final = json_operations()


def test_the_guard_covers_every_route_that_takes_a_body(door: Door) -> None:
    """The document the service serves names every POST, PUT and PATCH route of /v1, so none escapes."""
    assert door.client.simulate_get("/v1/openapi.json").json == json.loads(json.dumps(DOCUMENT))
    routed = {
        (method.method, re.sub(r"{(\w+):[^}]*}", r"{\1}", route.path))
        for route in falcon.inspect.inspect_routes(door.app.rest_api())
        for method in route.methods
        if method.method in ("POST", "PUT", "PATCH") and not method.internal and route.path.startswith("/v1/")
    }
    assert routed == {(method, path) for method, path, _ in OPERATIONS}


@pytest.mark.parametrize(("method", "path", "props"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
@GUARD
@given(data=st.data())
def test_v1_answers_hostile_bodies_with_a_4xx_envelope_and_writes_nothing(
    door: Door, method: str, path: str, props: dict[str, dict[str, Any]], data: st.DataObject
) -> None:
    body, attack = data.draw(bodies(props, door.ids, max_bytes=MAX_BODY_BYTES))
    target = re.sub(r"{(\w+)}", lambda m: str(door.ids.get(m.group(1), 1)), path)
    headers = {"Authorization": f"Bearer {door.key}", "Content-Type": "application/json"}

    def send() -> Any:
        return door.client.simulate_request(method, target, body=body, headers=headers)

    result = door.refused_writes_nothing(send, lambda r: r.status_code >= 400)
    assert_clean(result, f"{method} {target} ({attack}): {body[:200]!r}")


# --- /mcp ---------------------------------------------------------------------------------------------------


def rpc(door: Door, body: bytes) -> Any:
    return door.client.simulate_post(
        "/mcp", body=body, headers={**MCP_HEADERS, "Authorization": f"Bearer {door.key}"}
    )


def answered(result: Any) -> dict[str, Any]:
    """The JSON-RPC answer of a 200: the last `data:` line of the event stream, or the JSON body."""
    # Lines end at CR or LF only: a JSON string may hold U+2028 or NEL, which str.splitlines also cuts at.
    lines = [line[5:].strip() for line in re.split(r"\r?\n", result.text) if line.startswith("data:")]
    message: dict[str, Any] = json.loads(lines[-1] if lines else result.text)
    return message


@pytest.fixture(scope="module")
def listed(door: Door) -> dict[str, dict[str, Any]]:
    """Each tool's input schema, as `tools/list` answers it."""
    result = rpc(door, b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')
    assert result.status_code == 200, result.text
    return {tool["name"]: tool["inputSchema"] for tool in answered(result)["result"]["tools"]}


def mcp_refused(result: Any) -> bool:
    if result.status_code >= 400:
        return True
    message = answered(result)
    return "error" in message or bool(message.get("result", {}).get("isError"))


def test_the_guard_covers_every_listed_tool(listed: dict[str, dict[str, Any]]) -> None:
    assert sorted(listed) == sorted(TOOL_NAMES)


@pytest.mark.parametrize("tool", TOOL_NAMES)
@GUARD
@given(data=st.data())
def test_mcp_answers_hostile_arguments_without_a_server_error_and_writes_nothing(
    door: Door, listed: dict[str, dict[str, Any]], tool: str, data: st.DataObject
) -> None:
    props = listed[tool]["properties"]
    arguments, attack = data.draw(bodies(props, door.ids, max_bytes=MCP_MAX_BODY))
    if attack == "whole body" and data.draw(st.booleans()):
        body = arguments  # the whole JSON-RPC message is the hostile body
    else:
        head = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": %s, "arguments": '
        body = head.encode() % json.dumps(tool).encode() + arguments + b"}}"
    result = door.refused_writes_nothing(lambda: rpc(door, body), mcp_refused)
    sent = f"{tool} ({attack}): {body[:200]!r}"
    assert_clean(result, sent)
    if result.status_code == 200:
        message = answered(result)
        assert message.get("jsonrpc") == "2.0", (sent, message)
        error = (message.get("result", {}).get("structuredContent") or {}).get("error") or {}
        assert error.get("code") != "internal_error", (sent, message)


# --- the app's forms ----------------------------------------------------------------------------------------

SIGNED_IN_PAGES: Final = (
    "/app/keys",
    "/app/webhook",
    "/app/members",
    "/app/sites",
    "/app/device",
    "/app/billing",
)
ANONYMOUS_PAGES: Final = (
    "/app/sign-in",
    "/app/sign-up",
    "/app/forgot",
    "/app/password?token=abc",
)  # sign-up open


class Forms(HTMLParser):
    """The POST forms of a page: (action, {name: value}) of each."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = {k: v or "" for k, v in attrs}
        if tag == "form" and given.get("method", "").lower() == "post":
            self.forms.append((given.get("action", ""), {}))
        elif tag in ("input", "select", "textarea", "button") and self.forms and given.get("name"):
            self.forms[-1][1].setdefault(given["name"], given.get("value", ""))


def cookies_of(result: Any, jar: dict[str, str]) -> dict[str, str]:
    for name, cookie in result.cookies.items():
        jar[name] = cookie.value
    return jar


def form_body(fields: dict[str, str]) -> bytes:
    return "&".join(f"{quote(encoded(k))}={quote(encoded(v))}" for k, v in fields.items()).encode()


def page_forms(text: str) -> list[tuple[str, dict[str, str]]]:
    parser = Forms()
    parser.feed(text)
    return parser.forms


def sign_in(client: falcon.testing.TestClient) -> dict[str, str]:
    """The cookies of a signed-in browser."""
    shown = client.simulate_get("/app/sign-in")
    jar = cookies_of(shown, {})
    _, fields = page_forms(shown.text)[0]
    signed = client.simulate_post(
        "/app/sign-in",
        body=form_body({**fields, "email": OWNER, "password": PASSWORD}),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
        },
    )
    assert signed.status_code == 303, signed.text
    return cookies_of(signed, jar)


@pytest.mark.parametrize("page", SIGNED_IN_PAGES + ANONYMOUS_PAGES)
@GUARD
@given(data=st.data())
def test_app_forms_answer_hostile_fields_without_a_server_error_and_write_nothing(
    door: Door, page: str, data: st.DataObject
) -> None:
    client = door.client
    jar = dict(door.session) if page in SIGNED_IN_PAGES else {}
    shown = client.simulate_get(page, headers={"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())})
    if shown.status_code == 303 and page in SIGNED_IN_PAGES:  # a hostile form ended the session
        door.session.clear()
        door.session.update(sign_in(client))
        jar = dict(door.session)
        shown = client.simulate_get(page, headers={"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())})
    cookies_of(shown, jar)
    forms = [(action, fields) for action, fields in page_forms(shown.text) if action != "/app/sign-out"]
    assert forms, (page, shown.status_code)
    # Which forms a page shows depends on what earlier examples did: picked by a number, not from the list.
    action, fields = forms[data.draw(st.integers(0, 99)) % len(forms)]
    names = sorted(name for name in fields if name != "csrf")
    attack = "field" if names and data.draw(st.booleans()) else "unknown"
    sent = dict(fields)
    bad = data.draw(st.one_of(hostile_text, st.sampled_from(["9" * 30, "-1", "9" * 5000, "x" * 70_000])))
    if attack == "field":
        sent[names[data.draw(st.integers(0, 99)) % len(names)]] = bad
    else:
        sent[data.draw(st.one_of(plain, tainted(surrogates), tainted(controls)))] = bad
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
    }
    body = form_body(sent)
    result = door.refused_writes_nothing(
        lambda: client.simulate_post(action, body=body, headers=headers), lambda r: r.status_code >= 400
    )
    assert result.status_code < 500, (action, attack, body[:300], result.status_code, result.text[:300])
