"""`siteaudit connect` / `disconnect` against a running service (the Falcon app with /mcp in a thread, on a
settable clock): the login approved, denied or expired through the application interface while the CLI
polls, slow_down honoured, the agents' files merged atomically with mode 0600, and the MCP SDK client
configured from the written Claude Code file listing the tools over HTTP."""

import json
import re
import signal
import stat
import string
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import falcon.testing
import httpx2
import pytest
import tomlkit
from attrs import define, field
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pytest_httpserver import HTTPServer

from siteaudit.adapters.client.device import MCP_INITIALIZE
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller
from siteaudit.domain.device import client_identity
from siteaudit.domain.error import DomainError, NotFound, RateLimited
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.entrypoints import connect as cli
from siteaudit.entrypoints.cli import main
from siteaudit.entrypoints.embedded import mcp_greeting
from siteaudit.settings import Settings
from tests.integration.rest.live import drain, seed, serve
from tests.local_sites import UNPACED_LOCAL
from tests.unit.web.conftest import PASSWORD, Browser

OWNER = Caller(UserId(1), TeamId(1))  # owner@retro-clock.example in Retro Clock (seed's first person)
ROOT = Path(__file__).resolve().parents[3]  # the checkout, for the CLI run as a process
CLI = (sys.executable, "-c", "from siteaudit.entrypoints.cli import main; main()")
CODEX_BEFORE = """# my Codex settings
model = "o4"  # the model I like

[mcp_servers.docs]
command = "docs-server"  # keep me
args = ["--fast"]
"""
CLAUDE_BEFORE = {
    "theme": "dark",
    "mcpServers": {"other": {"type": "http", "url": "https://other.example/mcp"}},
}


@define
class Service:
    app: App
    clock: FixedClock
    root: str


@pytest.fixture
def service() -> Iterator[Service]:
    clock = FixedClock()
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue(), clock=clock)
    seed(app)
    with serve(app.rest_api()) as root:
        yield Service(app, clock, root)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


@define
class Poller:
    """The CLI's sleep: records each wait, moves the service's clock by it, then lets the test act as the
    person on the approval page (`on_wait(n)` after the n-th wait)."""

    service: Service
    on_wait: Callable[["Poller", int], None]
    said: list[str] = field(factory=list)
    waits: list[float] = field(factory=list)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.service.clock.advance(seconds)
        self.on_wait(self, len(self.waits))

    @property
    def user_code(self) -> str:
        found = re.search(r"code: ([A-Z]{4}-[A-Z]{4})", "\n".join(self.said))
        assert found, self.said
        return found[1]


def approve_on(n: int) -> Callable[[Poller, int], None]:
    def act(poller: Poller, waits: int) -> None:
        if waits == n:
            poller.service.app.application.approve_device_login(poller.user_code, OWNER)

    return act


def run(service: Service, home: Path, cwd: Path, poller: Poller, **options: Any) -> int:
    arguments: dict[str, Any] = {
        "server": service.root,
        "agents": "claude-code,codex",
        "scope": "user",
        "dry_run": False,
        "open_browser": False,
        "home": home,
        "cwd": cwd,
        "env": {"PATH": ""},
        "host": "tea-kettle.local",
        "sleep": poller.sleep,
        "say": poller.said.append,
    }
    arguments.update(options)
    return cli.run_connect(**arguments)


def stopped(call: Callable[[], int]) -> tuple[int, str]:
    with pytest.raises(cli.Stop) as stop:
        call()
    return stop.value.exit_code, str(stop.value)


def claude_key(home: Path) -> str:
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["siteaudit"]
    return str(entry["headers"]["Authorization"].removeprefix("Bearer "))


def printed_key(poller: Poller) -> str:
    """The key a project connect prints once for the person to store (its files only name it)."""
    found = [line.rsplit(": ", 1)[1] for line in poller.said if "shown only this once" in line]
    assert len(found) == 1, poller.said
    return found[0]


def status_with(service: Service, key: str) -> int:
    answer = httpx2.get(service.root + "/v1/account", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    return answer.status_code


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_approved_writes_claude_code_and_codex_merged_with_mode_0600(
    service: Service, home: Path, cwd: Path
) -> None:
    (home / ".claude.json").write_text(json.dumps(CLAUDE_BEFORE))
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(CODEX_BEFORE)
    (home / ".codex" / "config.toml").chmod(0o644)
    poller = Poller(service, approve_on(2))
    assert run(service, home, cwd, poller) == cli.EXIT_OK
    assert poller.waits == [5, 5]  # pending, then approved and granted: at the interval the service gave

    claude = json.loads((home / ".claude.json").read_text())
    key = claude_key(home)
    assert claude["theme"] == "dark" and claude["mcpServers"]["other"] == CLAUDE_BEFORE["mcpServers"]["other"]
    assert claude["mcpServers"]["siteaudit"] == {
        "type": "http",
        "url": service.root + "/mcp",
        "headers": {"Authorization": f"Bearer {key}"},
    }
    codex_text = (home / ".codex" / "config.toml").read_text()
    assert codex_text.startswith(CODEX_BEFORE)  # comments and the other server kept as they were
    codex = tomlkit.parse(codex_text)
    assert codex["model"] == "o4"
    assert codex["mcp_servers"]["docs"]["command"] == "docs-server"  # type: ignore[index]
    assert codex["mcp_servers"]["siteaudit"] == {  # type: ignore[index]
        "url": service.root + "/mcp",
        "http_headers": {"Authorization": f"Bearer {key}"},
    }
    assert mode(home / ".claude.json") == 0o600 and mode(home / ".codex" / "config.toml") == 0o600
    assert not [p for p in home.rglob("*.tmp")]  # no temporary file left behind
    assert status_with(service, key) == 200
    assert any("Retro Clock" in line for line in poller.said)
    logins = service.app.uow().store.devices.values()  # type: ignore[attr-defined]
    assert {client_identity(login.client_name) for login in logins} == {
        ("tea-kettle.local", ("claude-code", "codex"))
    }


def test_a_file_that_does_not_parse_is_left_untouched_and_the_others_written(
    service: Service, home: Path, cwd: Path
) -> None:
    broken = "[mcp_servers.docs\ncommand = 'x'\n"
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(broken)
    poller = Poller(service, approve_on(1))
    assert run(service, home, cwd, poller) == cli.EXIT_FILE_UNTOUCHED
    assert (home / ".codex" / "config.toml").read_text() == broken
    assert any("does not parse" in line and "left untouched" in line for line in poller.said)
    assert status_with(service, claude_key(home)) == 200
    # only the agents that could be written were named to the service
    logins = service.app.uow().store.devices.values()  # type: ignore[attr-defined]
    assert [client_identity(login.client_name)[1] for login in logins] == [("claude-code",)]


def test_nothing_writable_starts_no_login(service: Service, home: Path, cwd: Path) -> None:
    (home / ".claude.json").write_text("{not json")
    poller = Poller(service, approve_on(1))
    code, _ = stopped(lambda: run(service, home, cwd, poller, agents="claude-code"))
    assert code == cli.EXIT_FILE_UNTOUCHED
    assert not list(service.app.uow().store.devices.values())  # type: ignore[attr-defined]


def test_denied_gives_its_exit_code_and_writes_nothing(service: Service, home: Path, cwd: Path) -> None:
    def deny(poller: Poller, waits: int) -> None:
        if waits == 1:
            service.app.application.deny_device_login(poller.user_code, OWNER.user_id)

    poller = Poller(service, deny)
    code, message = stopped(lambda: run(service, home, cwd, poller))
    assert (code, message.split(":")[0]) == (cli.EXIT_DENIED, "denied")
    assert list(home.iterdir()) == []


def test_expired_gives_its_exit_code(service: Service, home: Path, cwd: Path) -> None:
    def nobody_comes(poller: Poller, waits: int) -> None:
        if waits == 1:
            service.clock.advance(600)

    poller = Poller(service, nobody_comes)
    code, message = stopped(lambda: run(service, home, cwd, poller))
    assert (code, message.split(":")[0]) == (cli.EXIT_EXPIRED, "expired")
    assert list(home.iterdir()) == []


def test_the_lifetime_passing_while_pending_ends_as_expired(service: Service, home: Path, cwd: Path) -> None:
    poller = Poller(service, lambda poller, waits: None)
    code, _ = stopped(lambda: run(service, home, cwd, poller))
    assert code == cli.EXIT_EXPIRED
    assert sum(poller.waits) in (600, 605)


class RecordingDevice(cli.DeviceClient):
    """The real client, remembering the device code it was given (what another poller would also hold)."""

    codes: ClassVar[list[str]] = []

    def start(self, client_name: str) -> cli.DeviceLoginStarted:
        started = super().start(client_name)
        RecordingDevice.codes.append(started.device_code)
        return started


class TooEagerDevice(cli.DeviceClient):
    """The real client, but each poll is sent twice in a row: the second, too soon, answers slow_down."""

    def poll(self, device_code: str) -> cli.Granted:
        with pytest.raises(DomainError, match="approved yet"):
            super().poll(device_code)
        return super().poll(device_code)


def test_slow_down_adds_five_seconds_to_the_interval(service: Service, home: Path, cwd: Path) -> None:
    RecordingDevice.codes = []

    def someone_else_polls_first(poller: Poller, waits: int) -> None:
        if waits == 1:  # another poller of the same code just asked: our poll now comes too soon
            with pytest.raises(DomainError, match="approved yet"):
                service.app.application.poll_device_login(RecordingDevice.codes[0])
        if waits == 2:
            service.app.application.approve_device_login(poller.user_code, OWNER)

    poller = Poller(service, someone_else_polls_first)
    assert run(service, home, cwd, poller, device_client=RecordingDevice) == cli.EXIT_OK
    assert poller.waits == [5, 10]
    assert [line for line in poller.said if line.startswith("slow_down")] == [
        "slow_down: the service asked to poll less often; polling every 10 s now"
    ]
    assert status_with(service, claude_key(home)) == 200


def test_slow_down_answered_again_and_again_gives_its_exit_code(
    service: Service, home: Path, cwd: Path
) -> None:
    poller = Poller(service, lambda poller, waits: None)
    code, message = stopped(lambda: run(service, home, cwd, poller, device_client=TooEagerDevice))
    assert (code, message.split(":")[0]) == (cli.EXIT_SLOW_DOWN, "slow_down")
    assert poller.waits == [5, 10, 15, 20, 25]


def test_reconnecting_replaces_the_machines_key(service: Service, home: Path, cwd: Path) -> None:
    assert run(service, home, cwd, Poller(service, approve_on(1))) == cli.EXIT_OK
    first = claude_key(home)
    service.clock.advance(60)
    assert run(service, home, cwd, Poller(service, approve_on(1))) == cli.EXIT_OK
    second = claude_key(home)
    assert first != second
    assert status_with(service, first) == 401
    assert status_with(service, second) == 200
    codex = tomlkit.parse((home / ".codex" / "config.toml").read_text())
    assert list(codex["mcp_servers"]) == ["siteaudit"]  # type: ignore[arg-type]


def test_dry_run_writes_nothing_contacts_nothing_and_masks_the_key(
    service: Service, home: Path, cwd: Path
) -> None:
    (home / ".claude.json").write_text(json.dumps(CLAUDE_BEFORE))
    before = (home / ".claude.json").read_text()
    poller = Poller(service, approve_on(1))
    assert (
        run(service, home, cwd, poller, dry_run=True, scope="project", agents="codex,cursor") == cli.EXIT_OK
    )
    assert (home / ".claude.json").read_text() == before
    assert list(cwd.iterdir()) == []
    assert not list(service.app.uow().store.devices.values())  # type: ignore[attr-defined]
    shown = "\n".join(poller.said)
    assert str(cwd / ".codex" / "config.toml") in shown and str(cwd / ".cursor" / "mcp.json") in shown
    assert '+url = "' in shown and '+bearer_token_env_var = "SITEAUDIT_API_KEY"' in shown
    assert '"Authorization": "Bearer ${env:SITEAUDIT_API_KEY}"' in shown and "sk_" not in shown


def test_disconnect_removes_the_entries_keeps_the_rest_and_points_at_the_key_page(
    service: Service, home: Path, cwd: Path
) -> None:
    (home / ".claude.json").write_text(json.dumps(CLAUDE_BEFORE))
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(CODEX_BEFORE)
    assert run(service, home, cwd, Poller(service, approve_on(1))) == cli.EXIT_OK
    said: list[str] = []
    assert (
        cli.run_disconnect(
            server=None, agents=None, scope="user", home=home, cwd=cwd, env={}, say=said.append
        )
        == 0
    )
    assert json.loads((home / ".claude.json").read_text()) == CLAUDE_BEFORE
    assert (home / ".codex" / "config.toml").read_text() == CODEX_BEFORE
    assert said[-1] == f"the key still works until you revoke it in the app: {service.root}/app/keys"


def test_installed_agents_are_found_by_their_folder_or_program(home: Path, tmp_path: Path) -> None:
    (home / ".gemini").mkdir()
    programs = tmp_path / "bin"
    programs.mkdir()
    (programs / "codex").write_text("#!/bin/sh\n")
    (programs / "codex").chmod(0o755)
    found = cli.choose_agents(None, home, {"PATH": str(programs)})
    assert [agent.name for agent in found] == ["codex", "gemini"]
    code, _ = stopped(lambda: cli.choose_agents(None, home / "nobody", {"PATH": ""}) and 0)
    assert code == cli.EXIT_REFUSED


def test_the_client_name_fits_64_characters_and_reads_back() -> None:
    every = [agent.name for agent in cli.AGENTS]
    name = cli.client_name("a-very-long-workstation-name.corp.example.com", every)
    assert len(name) <= 64
    host, agents = client_identity(name)
    assert agents == tuple(sorted(every)) and "a-very-long-workstation-name".startswith(host)
    assert client_identity(cli.client_name("my mac: 2", ["codex"])) == ("my-mac-2", ("codex",))
    assert cli.client_name("tea-kettle.local", ["codex", "claude-code"]) == (
        "connect on tea-kettle.local: claude-code, codex"
    )


def test_the_cli_commands_are_registered_and_an_unknown_agent_is_refused(tmp_path: Path) -> None:
    runner = CliRunner()
    answer = runner.invoke(main, ["connect", "--agents", "notepad", "--dry-run"], env={"HOME": str(tmp_path)})
    assert answer.exit_code == cli.EXIT_REFUSED and "unknown agent notepad" in answer.output
    answer = runner.invoke(
        main, ["connect", "--agents", "gemini", "--dry-run", "--server", "https://audit.example.com"]
    )
    assert answer.exit_code == 0 and '"httpUrl": "https://audit.example.com/mcp"' in answer.output


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_the_sdk_client_configured_from_the_written_file_lists_the_tools(
    service: Service, home: Path, cwd: Path, agent: str
) -> None:
    assert run(service, home, cwd, Poller(service, approve_on(1)), agents=agent) == cli.EXIT_OK
    if agent == "claude-code":
        entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["siteaudit"]
        assert entry["type"] == "http"
        url, headers = entry["url"], entry["headers"]
    else:
        table = tomlkit.parse((home / ".codex" / "config.toml").read_text())["mcp_servers"]["siteaudit"]  # type: ignore[index]
        url, headers = table["url"], dict(table["http_headers"])  # type: ignore[index]

    async def scenario() -> list[str]:
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        async with http, Client(streamable_http_client(str(url), http_client=http)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    names = anyio.run(scenario)
    assert "start_audit" in names and "get_fix_prompt" in names


def test_disconnect_leaves_a_named_file_that_does_not_parse_and_says_so(tmp_path: Path) -> None:
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text("{oops")
    runner = CliRunner()
    answer = runner.invoke(
        main,
        ["disconnect", "--agents", "cursor", "--server", "https://audit.example.com"],
        env={"HOME": str(tmp_path)},
    )
    assert answer.exit_code == cli.EXIT_FILE_UNTOUCHED
    assert "does not parse" in answer.output
    assert "revoke it in the app: https://audit.example.com/app/keys" in answer.output
    assert (tmp_path / ".cursor" / "mcp.json").read_text() == "{oops"


def test_a_newcomer_connects_from_the_command_line_and_the_agent_audits_and_reads_the_fix_prompt(
    site_url: str, tmp_path: Path
) -> None:
    """The issue's "done when", in real time: `siteaudit connect --agents claude-code,codex` as a process,
    approved while it polls, then the SDK client configured from the written Claude Code file starts an
    audit of a small site on 127.0.0.1 and reads its fix prompt."""
    settings = Settings(
        database_url="memory://", allow_networks=("127.0.0.0/8",), **UNPACED_LOCAL, slice_pages=2
    )
    app = bootstrap(settings, queue=MemoryTaskQueue())
    seed(app)
    home = tmp_path / "home"
    home.mkdir()
    with serve(app.rest_api()) as root:
        process = subprocess.Popen(
            [*CLI, "connect", "--server", root, "--agents", "claude-code,codex", "--no-browser"],
            cwd=tmp_path,
            env={"HOME": str(home), "PATH": "", "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        output = []
        for line in process.stdout:
            output.append(line)
            found = re.search(r"code: ([A-Z]{4}-[A-Z]{4})", line)
            if found:
                app.application.approve_device_login(found[1], OWNER)
                break
        output.extend(process.stdout)
        assert process.wait(timeout=60) == 0, "".join(output)
        assert stat.S_IMODE((home / ".codex" / "config.toml").stat().st_mode) == 0o600
        entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["siteaudit"]

        async def scenario() -> str:
            http = httpx2.AsyncClient(headers=entry["headers"], timeout=60)
            async with http, Client(streamable_http_client(entry["url"], http_client=http)) as client:
                started = await client.call_tool("start_audit", {"url": site_url, "max_pages": 10})
                assert not started.is_error, started.content
                crawl_id = started.structured_content["crawl_id"]  # type: ignore[index]
                await anyio.to_thread.run_sync(lambda: drain(app))
                prompt = await client.call_tool("get_fix_prompt", {"crawl_id": crawl_id})
                assert not prompt.is_error, prompt.content
                return "\n".join(c.text for c in prompt.content if c.type == "text")

        text = anyio.run(scenario)
    assert "UNTRUSTED DATA" in text


def test_approved_on_the_apps_device_page_while_the_cli_polls(
    service: Service, home: Path, cwd: Path
) -> None:
    service.app.application.set_password("owner@retro-clock.example", PASSWORD)
    browser = Browser(falcon.testing.TestClient(service.app.service()))

    def person_approves(poller: Poller, waits: int) -> None:
        if waits == 1:
            browser.sign_in("owner@retro-clock.example", PASSWORD)
            shown = browser.get("/app/device", code=poller.user_code)
            assert "tea-kettle.local" in shown.text
            decided = browser.post(
                "/app/device", {"code": poller.user_code, "action": "approve", "team_id": "1"}
            )
            assert decided.status_code in (200, 303), decided.text

    poller = Poller(service, person_approves)
    assert run(service, home, cwd, poller, agents="cursor", scope="project") == cli.EXIT_OK
    entry = json.loads((cwd / ".cursor" / "mcp.json").read_text())["mcpServers"]["siteaudit"]
    assert entry["url"] == service.root + "/mcp"
    assert status_with(service, printed_key(poller)) == 200
    assert stat.S_IMODE((cwd / ".cursor" / "mcp.json").stat().st_mode) == 0o600


@pytest.mark.parametrize("where", ["mcp turned off", "not siteaudit"])
def test_a_server_without_mcp_is_refused_before_any_key_or_file(
    home: Path, cwd: Path, httpserver: HTTPServer, where: str
) -> None:
    """A service without `/mcp` (here SITEAUDIT_MCP_HTTP off, as a service without the SDK was) or a
    server that is not siteaudit: connect says so in one line and exits 4, having issued no key and
    written no file, instead of writing a dead `<server>/mcp` into the agents."""
    clock = FixedClock()
    app = bootstrap(Settings(database_url="memory://", mcp_http=False), queue=MemoryTaskQueue(), clock=clock)
    seed(app)
    httpserver.expect_request("/mcp").respond_with_data("<html>hello</html>", content_type="text/html")
    with serve(app.rest_api()) as root:
        service = Service(app, clock, root if where == "mcp turned off" else httpserver.url_for("/"))
        poller = Poller(service, approve_on(1))
        code, message = stopped(lambda: run(service, home, cwd, poller))
    assert code == cli.EXIT_NO_MCP == 4
    assert message.startswith(f"no MCP server at {service.root.rstrip('/')}/mcp: it answered ")
    assert not list(app.uow().store.devices.values())  # type: ignore[attr-defined]
    assert list(home.iterdir()) == [] and list(cwd.iterdir()) == []


def test_serve_prints_the_mcp_url_and_the_connect_command_and_the_url_answers_mcp() -> None:
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
    with serve(app.rest_api()) as root:
        said = mcp_greeting(app, root)
        assert said is not None
        url = re.search(r"(\S+/mcp) ", said)
        assert url is not None and url[1] == root + "/mcp"
        assert f"siteaudit connect --server {root}" in said
        device = cli.DeviceClient(root + "/v1")
        try:
            assert device.mcp_refusal(url[1]) is None  # 401 without a key: an MCP endpoint is there
            assert (
                device.mcp_refusal(root + "/v1/health")
                == "answered 405 (application/json) to an MCP initialize request"
            )
        finally:
            device.close()
    assert mcp_greeting(bootstrap(Settings(database_url="memory://", mcp_http=False)), root) is None


def test_a_project_connect_keeps_the_user_scope_key_and_other_projects_keys(
    service: Service, home: Path, tmp_path: Path
) -> None:
    """The key is of a place: this machine's user configuration, or one project folder. Connecting a
    project (same agents, same team) replaces neither the user scope's key nor another project's; the
    same place again replaces its own. The key list names each place."""
    shop, blog = tmp_path / "src" / "shop", tmp_path / "src" / "blog"
    shop.mkdir(parents=True)
    blog.mkdir(parents=True)
    both = {"agents": "claude-code", "scope": "project"}
    assert run(service, home, shop, Poller(service, approve_on(1)), agents="claude-code") == cli.EXIT_OK
    keys = [claude_key(home)]
    for folder in (shop, blog):
        service.clock.advance(60)
        poller = Poller(service, approve_on(1))
        assert run(service, home, folder, poller, **both) == cli.EXIT_OK
        keys.append(printed_key(poller))
    assert len(set(keys)) == 3
    assert [status_with(service, key) for key in keys] == [200, 200, 200]

    labels = {key.label for key in service.app.uow().store.keys.values() if key.active}  # type: ignore[attr-defined]
    assert labels >= {
        "connect on tea-kettle.local: claude-code",
        cli.client_name("tea-kettle.local", ["claude-code"], shop.resolve()),
        cli.client_name("tea-kettle.local", ["claude-code"], blog.resolve()),
    }

    service.clock.advance(60)  # the shop again: only the shop's key is replaced
    assert run(service, home, shop, Poller(service, approve_on(1)), **both) == cli.EXIT_OK
    assert [status_with(service, key) for key in keys] == [200, 401, 200]


def test_a_long_project_folder_fits_64_characters_and_stays_its_own_place() -> None:
    every = [agent.name for agent in cli.AGENTS if agent.project_file is not None]
    deep = Path("/home/someone/work/clients/a-rather-long-client-name/websites")
    names = {
        cli.client_name("a-very-long-workstation-name.corp.example.com", agents, deep / leaf)
        for agents in (every, ["codex"])
        for leaf in ("shop", "blog")
    }
    assert len(names) == 4 and all(len(name) <= 64 for name in names)
    places = {client_identity(name)[0] for name in names}
    assert len(places) == 4 and all(" in " in place for place in places)
    short = cli.client_name("tea-kettle.local", ["codex"], Path("/src/shop"))
    assert short == "connect on tea-kettle.local in /src/shop: codex"
    assert client_identity(short) == ("tea-kettle.local in /src/shop", ("codex",))


def test_the_stdio_command_written_runs_from_a_clean_path_and_answers_mcp(
    service: Service, home: Path, cwd: Path
) -> None:
    """An agent starts the stdio server with its own PATH, not the venv's: the written command is the
    absolute path of this siteaudit, and it answers an MCP initialize with the written environment."""
    assert run(service, home, cwd, Poller(service, approve_on(1)), agents="claude-code", stdio=True) == 0
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["siteaudit"]
    assert Path(entry["command"]).is_absolute() and entry["args"][-1] == "mcp"
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": MCP_INITIALIZE["params"]}
    answer = subprocess.run(
        [entry["command"], *entry["args"]],
        input=json.dumps(initialize) + "\n",
        env={"PATH": "/usr/bin:/bin", **entry["env"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    first = json.loads(answer.stdout.splitlines()[0])
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"], answer.stderr


def test_without_the_script_the_stdio_command_is_python_m_siteaudit(tmp_path: Path) -> None:
    program = cli.agent_files.siteaudit_program(str(tmp_path / "pytest"), str(tmp_path / "python3"))
    assert program == (str(tmp_path / "python3"), "-m", "siteaudit")
    helped = subprocess.run(
        [sys.executable, "-m", "siteaudit", "mcp", "--help"],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert helped.returncode == 0 and "Usage: siteaudit mcp" in helped.stdout, helped.stderr


def test_a_project_connect_writes_each_agents_reference_never_the_key(
    service: Service, home: Path, cwd: Path
) -> None:
    """A project's files may be committed: each names the key in its agent's own syntax, the command
    says which variable to set and prints the key once; the entry, expanded as the agent does, works."""
    (cwd / ".vscode").mkdir()
    (cwd / ".vscode" / "mcp.json").write_text(json.dumps({"inputs": [{"id": "other"}], "servers": {}}))
    poller = Poller(service, approve_on(1))
    agents = "claude-code,codex,cursor,vscode,gemini"
    assert run(service, home, cwd, poller, agents=agents, scope="project") == cli.EXIT_OK
    key = printed_key(poller)
    files = [p for p in cwd.rglob("*") if p.is_file()]
    assert len(files) == 5 and not [p for p in files if key in p.read_text()]
    said = "\n".join(poller.said)
    assert "export SITEAUDIT_API_KEY=sk_..." in said and said.count(key) == 1

    def entry(path: str, servers: str = "mcpServers") -> Any:
        return json.loads((cwd / path).read_text())[servers]["siteaudit"]

    claude = entry(".mcp.json")
    assert claude["headers"] == {"Authorization": "Bearer ${SITEAUDIT_API_KEY}"}
    assert entry(".cursor/mcp.json")["headers"] == {"Authorization": "Bearer ${env:SITEAUDIT_API_KEY}"}
    assert entry(".gemini/settings.json")["headers"] == {"Authorization": "Bearer ${SITEAUDIT_API_KEY}"}
    assert entry(".vscode/mcp.json", "servers")["headers"] == {
        "Authorization": "Bearer ${input:siteaudit-api-key}"
    }
    vscode = json.loads((cwd / ".vscode" / "mcp.json").read_text())
    assert [i["id"] for i in vscode["inputs"]] == ["other", "siteaudit-api-key"]
    assert vscode["inputs"][1]["password"] is True
    codex = tomlkit.parse((cwd / ".codex" / "config.toml").read_text())["mcp_servers"]["siteaudit"]  # type: ignore[index]
    assert dict(codex) == {"url": service.root + "/mcp", "bearer_token_env_var": "SITEAUDIT_API_KEY"}  # type: ignore[call-overload]

    # Claude Code expands ${VAR} in headers when it starts the server: the same expansion, then the SDK
    headers = {k: string.Template(v).substitute(SITEAUDIT_API_KEY=key) for k, v in claude["headers"].items()}

    async def scenario() -> list[str]:
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        async with http, Client(streamable_http_client(claude["url"], http_client=http)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert "start_audit" in anyio.run(scenario)

    said_off: list[str] = []
    assert (
        cli.run_disconnect(
            server=None, agents="vscode", scope="project", home=home, cwd=cwd, env={}, say=said_off.append
        )
        == 0
    )
    assert json.loads((cwd / ".vscode" / "mcp.json").read_text()) == {
        "inputs": [{"id": "other"}],
        "servers": {},
    }


def test_a_project_stdio_entry_names_the_key_too(service: Service, home: Path, cwd: Path) -> None:
    poller = Poller(service, approve_on(1))
    assert run(service, home, cwd, poller, agents="claude-code,codex", scope="project", stdio=True) == 0
    claude = json.loads((cwd / ".mcp.json").read_text())["mcpServers"]["siteaudit"]
    assert claude["env"] == {"SITEAUDIT_URL": service.root, "SITEAUDIT_API_KEY": "${SITEAUDIT_API_KEY}"}
    codex = tomlkit.parse((cwd / ".codex" / "config.toml").read_text())["mcp_servers"]["siteaudit"]  # type: ignore[index]
    assert codex["env_vars"] == ["SITEAUDIT_API_KEY"] and "SITEAUDIT_API_KEY" not in codex["env"]  # type: ignore[index,operator]
    assert printed_key(poller) not in (cwd / ".codex" / "config.toml").read_text()


def test_disconnect_with_nothing_connected_says_so_and_points_at_no_key_page(tmp_path: Path) -> None:
    """Nothing connected: one line saying so and exit 0 (the state asked for holds), not the key page of
    a service nobody connected to."""
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text('{"mcpServers": {"other": {"url": "https://o.example"}}}')
    answer = CliRunner().invoke(main, ["disconnect"], env={"HOME": str(tmp_path), "SITEAUDIT_URL": ""})
    assert answer.exit_code == cli.EXIT_OK == 0, answer.output
    assert answer.output == "nothing to disconnect: no agent's user configuration has a `siteaudit` server\n"
    assert "/app/keys" not in answer.output


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("localhost:8080", "http://localhost:8080"),
        ("127.0.0.1:8080/", "http://127.0.0.1:8080"),
        ("[::1]:8080", "http://[::1]:8080"),
        ("::1", "http://[::1]"),
        ("app.localhost", "http://app.localhost"),
        ("siteaudit.example.com", "https://siteaudit.example.com"),
        ("siteaudit.example.com:8443/v1", "https://siteaudit.example.com:8443"),
        ("HTTP://Audit.example.com/", "HTTP://Audit.example.com"),
    ],
)
def test_a_server_without_a_scheme_gets_one(given: str, root: str) -> None:
    assert cli.service_root(given, {}) == root
    assert cli.service_root(None, {"SITEAUDIT_URL": given}) == root


@pytest.mark.parametrize("given", ["ftp://audit.example.com", ":8080", "file:///etc/passwd"])
def test_a_server_that_is_no_http_address_is_refused(given: str) -> None:
    code, message = stopped(lambda: len(cli.service_root(given, {})))
    assert code == cli.EXIT_REFUSED and message.startswith(f"--server {given}: ")


def test_a_server_without_a_scheme_is_written_with_one_and_said(tmp_path: Path) -> None:
    answer = CliRunner().invoke(
        main,
        ["connect", "--agents", "claude-code", "--dry-run", "--server", "siteaudit.example.com"],
        env={"HOME": str(tmp_path)},
    )
    assert answer.exit_code == 0, answer.output
    assert "siteaudit.example.com has no scheme: connecting to https://siteaudit.example.com" in answer.output
    assert '"url": "https://siteaudit.example.com/mcp"' in answer.output


def test_while_waiting_a_log_gets_a_line_every_30_seconds_not_a_flood(
    service: Service, home: Path, cwd: Path
) -> None:
    poller = Poller(service, lambda poller, waits: None)
    code, _ = stopped(lambda: run(service, home, cwd, poller))
    assert code == cli.EXIT_EXPIRED
    assert poller.said.count("waiting for approval... (Ctrl-C to cancel)") == 1
    still = [line for line in poller.said if line.startswith("still waiting for approval: ")]
    assert still[:2] == [
        "still waiting for approval: 0:30 so far, 9:30 left",
        "still waiting for approval: 1:00 so far, 9:00 left",
    ]
    assert len(still) == sum(poller.waits) // 30  # one every 30 s of the 600, nothing in between


def test_on_a_terminal_one_line_is_updated_every_second_then_cleared(
    service: Service, home: Path, cwd: Path
) -> None:
    written: list[str] = []
    poller = Poller(service, approve_on(7))
    waiting = cli.WaitingLine(poller.said.append, written.append)
    assert run(service, home, cwd, poller, waiting=waiting) == cli.EXIT_OK
    assert poller.waits == [1.0] * 10  # two polls at the 5 s interval, each slept in one-second steps
    assert all(part.startswith("\r") and "\n" not in part for part in written)
    assert written[0] == "\r| waiting for approval... 0:00 so far, 10:00 left (Ctrl-C to cancel)\x1b[K"
    assert written[2] == "\r- waiting for approval... 0:02 so far, 9:58 left (Ctrl-C to cancel)\x1b[K"
    assert written[-1] == "\r\x1b[K" and len(written) == 12
    assert not [line for line in poller.said if "waiting" in line]


def test_ctrl_c_while_waiting_cancels_the_code_on_the_service(
    service: Service, home: Path, cwd: Path
) -> None:
    def interrupt(poller: Poller, waits: int) -> None:
        if waits == 2:  # after one poll answered pending
            raise KeyboardInterrupt

    poller = Poller(service, interrupt)
    code, message = stopped(lambda: run(service, home, cwd, poller))
    assert code == cli.EXIT_INTERRUPTED == 130
    assert message == (
        f"interrupted: the login was cancelled, code {poller.user_code} can no longer be approved;"
        " nothing was written"
    )
    (login,) = service.app.uow().store.devices.values()  # type: ignore[attr-defined]
    assert login.status == "denied"
    with pytest.raises(NotFound):
        service.app.application.approve_device_login(poller.user_code, OWNER)
    assert list(home.iterdir()) == []


class NoCancelDevice(cli.DeviceClient):
    def cancel(self, device_code: str) -> str:
        raise cli.Unreachable(self.base_url, "connection refused")


def test_ctrl_c_when_the_cancel_cannot_reach_the_service_says_so(
    service: Service, home: Path, cwd: Path
) -> None:
    def interrupt(poller: Poller, waits: int) -> None:
        raise KeyboardInterrupt

    poller = Poller(service, interrupt)
    code, message = stopped(lambda: run(service, home, cwd, poller, device_client=NoCancelDevice))
    assert code == cli.EXIT_INTERRUPTED
    assert message.startswith("interrupted: the login could not be cancelled (cannot reach ")
    assert f"code {poller.user_code} stays approvable until it expires" in message


class LimitedOnceDevice(cli.DeviceClient):
    """The real client, whose first start is answered 429 with Retry-After: 7."""

    starts: ClassVar[int] = 0

    def start(self, client_name: str) -> cli.DeviceLoginStarted:
        LimitedOnceDevice.starts += 1
        if LimitedOnceDevice.starts == 1:
            raise RateLimited(7)
        return super().start(client_name)


def test_a_rate_limited_start_is_asked_again_after_the_wait_and_says_so(
    service: Service, home: Path, cwd: Path
) -> None:
    LimitedOnceDevice.starts = 0
    poller = Poller(service, approve_on(2))
    assert run(service, home, cwd, poller, device_client=LimitedOnceDevice) == cli.EXIT_OK
    assert poller.waits == [7, 5]
    assert poller.said[0] == (
        "rate_limited: too many device logins from this address; trying again in 7 s"
        " (attempt 2 of 3, Ctrl-C to stop)"
    )
    assert status_with(service, claude_key(home)) == 200


def test_a_start_limited_for_longer_than_two_minutes_is_not_slept_through(
    service: Service, home: Path, cwd: Path
) -> None:
    device = cli.DeviceClient(service.root + "/v1")
    try:
        for _ in range(10):  # the service's 10 starts an hour from this address
            device.start("connect on elsewhere: codex")
    finally:
        device.close()
    poller = Poller(service, approve_on(1))
    code, message = stopped(lambda: run(service, home, cwd, poller))
    assert code == cli.EXIT_REFUSED and poller.waits == []
    assert message.startswith(
        "rate_limited: too many device logins from this address (10 an hour); try again in "
    )


def test_ctrl_c_in_the_command_cancels_the_code(tmp_path: Path) -> None:
    """The real signal on the real process: SIGINT while it waits ends it with 130 and one line, and the
    code it showed can no longer be approved."""
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())
    seed(app)
    with serve(app.rest_api()) as root:
        process = subprocess.Popen(
            [*CLI, "connect", "--server", root, "--agents", "claude-code", "--no-browser"],
            cwd=tmp_path,
            env={"HOME": str(tmp_path), "PATH": "", "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        output, user_code = [], ""
        for line in process.stdout:
            output.append(line)
            found = re.search(r"code: ([A-Z]{4}-[A-Z]{4})", line)
            user_code = found[1] if found else user_code
            if line.startswith("waiting for approval"):
                break
        process.send_signal(signal.SIGINT)
        output.extend(process.stdout)
        assert process.wait(timeout=60) == cli.EXIT_INTERRUPTED, "".join(output)
        with pytest.raises(NotFound):
            app.application.approve_device_login(user_code, OWNER)
    assert output[-1] == (
        f"error: interrupted: the login was cancelled, code {user_code} can no longer be approved;"
        " nothing was written\n"
    )
    assert "waiting for approval... (Ctrl-C to cancel)\n" in output
