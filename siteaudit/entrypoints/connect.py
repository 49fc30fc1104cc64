# Over 400 lines: connect and disconnect share the device login, the agents' files and the one-line errors and exit codes.
"""`siteaudit connect` and `siteaudit disconnect`: a device login (docs/app.md) whose key is written into AI
agents' MCP configuration files only (docs/security.md), and the removal of those entries.

connect: the place and agents travel in the start's `client_name` as `connect on HOST: agent1, agent2`
for the user scope and `connect on HOST in /abs/project: ...` for a project
(`siteaudit.domain.device.CONNECT_FORM`), so connecting again with the same agents and team replaces the
key of that place only: a project's connect leaves the user scope's key, and other projects', working. The files are checked before the login starts: a file that does not parse is left
untouched and its agent dropped, so a key is never fetched for nothing. Polling waits the interval the
service gave, 5 s more after each `slow_down` (RFC 8628 3.5). `--dry-run` contacts no service.

Exit codes (EXIT_*): 0 connected, every chosen file written (disconnect: done, or nothing was connected,
which it says without pointing at a key page: there is no key to revoke); 1 a file was left
untouched (it does not parse or cannot be written), the others were written; 2 a usage error or an error
the service answered (`invalid_grant`, ...); 3 the service could not be reached; 4 the server does not
answer MCP at `<server>/mcp` (checked before the login starts, so no key is issued for a dead URL); 5 the login was denied
(`access_denied`); 6 the code expired (`expired_token`, or its lifetime passed while polling); 7 the
service kept answering `slow_down` (SLOW_DOWN_LIMIT answers in a row); 130 interrupted (Ctrl-C: while
waiting for approval the login is cancelled on the service first, so its code can no longer be approved).

While waiting it shows a sign of life (WaitingLine): on a terminal one line updated in place, otherwise a
line every PLAIN_EVERY_S seconds. A rate-limited start is asked again after the service's Retry-After
when that is short (start_login).
"""

import contextlib
import difflib
import hashlib
import os
import re
import socket
import sys
import time
import webbrowser
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import click

from siteaudit.adapters import agents as agent_files
from siteaudit.adapters import text
from siteaudit.adapters.agents import AGENTS, BY_NAME, Agent, Change, Scope, Target, Unparsable
from siteaudit.adapters.client.device import DeviceClient, Granted
from siteaudit.adapters.client.transport import Unreachable
from siteaudit.domain.device import MAX_CLIENT_NAME_LENGTH
from siteaudit.domain.error import DomainError, RateLimited
from siteaudit.entrypoints.output import echo, error_line
from siteaudit.ports.application import DeviceLoginStarted

EXIT_OK: Final = 0
EXIT_FILE_UNTOUCHED: Final = 1
EXIT_REFUSED: Final = 2
EXIT_UNREACHABLE: Final = 3
EXIT_NO_MCP: Final = 4
EXIT_DENIED: Final = 5
EXIT_EXPIRED: Final = 6
EXIT_SLOW_DOWN: Final = 7
EXIT_INTERRUPTED: Final = 130  # Ctrl-C while waiting for approval, as shells report SIGINT
SLOW_DOWN_STEP_S: Final = 5  # RFC 8628 3.5: each slow_down adds 5 s to the interval
SLOW_DOWN_LIMIT: Final = 5
START_ATTEMPTS: Final = 3  # a rate-limited device start is asked again, at most this many times in all
MAX_START_WAIT_S: Final = 120  # ...and only when the service's Retry-After is this short
PLAIN_EVERY_S: Final = 30  # not on a terminal: one "still waiting" line this often, never a flood
DEFAULT_SERVER: Final = "http://127.0.0.1:8080"  # `siteaudit serve`'s default address
MASKED_KEY: Final = "sk_" + "*" * 8
KEYS_PAGE: Final = "/app/keys"


class Stop(Exception):
    """Ends the command with one line on stderr and `exit_code`."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def with_scheme(server: str) -> str:
    """`server` as a URL: an address written without a scheme (`localhost:8080`, `audit.example.com`) gets
    `http://` for this machine (localhost, *.localhost, 127.x, ::1: `siteaudit serve` speaks plain HTTP)
    and `https://` for any other host, instead of being written into the agents' files as a URL that is
    none. It is completed rather than refused: the intent is plain, and connect prints the URL it uses.
    Raises Stop for another scheme or no host."""
    if "://" in server:
        scheme = server.split("://", 1)[0].lower()
        if scheme not in ("http", "https"):
            raise Stop(
                f"--server {server}: only http:// and https:// services can be connected", EXIT_REFUSED
            )
        return server
    bare = f"[{server}]" if server.count(":") > 1 and not server.startswith("[") else server  # a bare IPv6
    try:
        host = (urlsplit(f"//{bare}").hostname or "").lower()
    except ValueError:
        host = ""
    if not host:
        raise Stop(f"--server {server}: not a service address (give it as https://host[:port])", EXIT_REFUSED)
    local = host in ("localhost", "::1") or host.endswith(".localhost") or host.startswith("127.")
    return f"{'http' if local else 'https'}://{bare}"


def service_root(server: str | None, env: Mapping[str, str]) -> str:
    """The service's root (no `/v1`): --server, else SITEAUDIT_URL, else the local service; an address
    without a scheme is completed (`with_scheme`). Raises Stop for one that is not an http(s) address."""
    root = with_scheme((server or env.get("SITEAUDIT_URL") or DEFAULT_SERVER).strip().rstrip("/"))
    return root.removesuffix("/v1")


def client_name(host: str, names: Sequence[str], folder: Path | None = None) -> str:
    """`connect on HOST: a, b` (user scope) or `connect on HOST in FOLDER: a, b` (project scope, FOLDER
    absolute) within the device start's 64 characters: the agents sorted (as the service reads them), `,` without
    spaces when needed, the host shortened to its first label, then cut; a folder too long to fit keeps
    its end after `...` and 6 hex digits of its whole path's SHA-256, so two projects never share a key."""
    ordered = sorted(names)
    listed = ", ".join(ordered)
    if len(f"connect on x: {listed}") > MAX_CLIENT_NAME_LENGTH - (0 if folder is None else 20):
        listed = ",".join(ordered)
    host = re.sub(r"[\s:,]+", "-", host.strip()) or "localhost"  # the form reads HOST up to `:`
    place = ""
    if folder is not None:
        budget = MAX_CLIENT_NAME_LENGTH - len(f"connect on  in : {listed}")  # for the host and the folder
        host = host if len(host) <= 16 else host.split(".")[0][:16]
        host = host[: max(budget - 10, 1)]  # at least 10 characters for the folder
        whole, room = str(folder), budget - len(host)
        if len(whole) > room:
            digest = hashlib.sha256(whole.encode("utf-8")).hexdigest()
            tail = whole[len(whole) - (room - 9) :] if room > 9 else ""
            whole = f"{digest[:6]}...{tail}" if tail else digest[: max(room, 6)]
        place = f" in {whole}"
    room = MAX_CLIENT_NAME_LENGTH - len(f"connect on {place}: {listed}")
    if len(host) > room:
        host = host.split(".")[0][: max(room, 1)]
    return f"connect on {host}{place}: {listed}"


def choose_agents(wanted: str | None, home: Path, env: Mapping[str, str]) -> tuple[Agent, ...]:
    if wanted:
        names = [n.strip().lower() for n in wanted.split(",") if n.strip()]
        unknown = [n for n in names if n not in BY_NAME]
        if unknown or not names:
            raise Stop(
                f"unknown agent {', '.join(unknown) or '(none given)'}; known: {', '.join(BY_NAME)}",
                EXIT_REFUSED,
            )
        return tuple(BY_NAME[n] for n in dict.fromkeys(names))
    found = agent_files.installed_agents(home, env)
    if not found:
        raise Stop(
            f"no agent found on this machine; name them with --agents ({', '.join(BY_NAME)})", EXIT_REFUSED
        )
    return found


def _targets(
    agents: Sequence[Agent],
    scope: Scope,
    home: Path,
    cwd: Path,
    env: Mapping[str, str],
    say: Callable[[str], None],
) -> list[tuple[Agent, Path]]:
    chosen = []
    for agent in agents:
        path = agent.path(scope, home, cwd, env)
        if path is None:
            say(f"{agent.label}: no project configuration is documented; use --scope user (skipped)")
            continue
        chosen.append((agent, path))
    return chosen


def _diff(change: Change, key: str) -> str:
    before = agent_files.mask(change.before or "", key).splitlines(keepends=True)
    after = agent_files.mask(change.after, key).splitlines(keepends=True)
    name = str(change.path)
    lines = difflib.unified_diff(before, after, "/dev/null" if change.before is None else name, name)
    return "".join(lines)


def _open_browser(url: str, env: Mapping[str, str]) -> None:
    """Open the approval page when there is a graphical session; never fails (nor starts a text-mode
    browser in this terminal)."""
    graphical = sys.platform in ("darwin", "win32") or bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))
    if not graphical:
        return
    with contextlib.suppress(Exception):  # any browser failure: the URL is printed anyway
        webbrowser.open(url)


def _minutes(seconds: float) -> str:
    whole = max(0, int(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


class WaitingLine:
    """The sign of life while the person approves. On a terminal (`live`, a writer to stderr): one line
    rewritten in place every second, a spinner with the time waited and left, cleared when the wait
    ends. Otherwise (a pipe, a log) through `say`: the line once, then one `still waiting` line every
    PLAIN_EVERY_S seconds, so a log shows life without filling up."""

    SPINNER: Final = "|/-\\"

    def __init__(self, say: Callable[[str], None], live: Callable[[str], None] | None = None) -> None:
        self._say = say
        self._live = live
        self._shown = False
        self._said_at = 0.0
        self._turn = 0

    @classmethod
    def on_stderr(cls, say: Callable[[str], None]) -> "WaitingLine":
        def write(raw: str) -> None:
            sys.stderr.write(raw)
            sys.stderr.flush()

        return cls(say, write if sys.stderr.isatty() else None)

    @property
    def live(self) -> bool:
        return self._live is not None

    def begin(self, expires_in: float) -> None:
        if self._live is None:
            self._say("waiting for approval... (Ctrl-C to cancel)")
        else:
            self.show(0.0, expires_in)

    def show(self, waited: float, left: float) -> None:
        if self._live is not None:
            spin = self.SPINNER[self._turn % len(self.SPINNER)]
            self._turn += 1
            what = f"{spin} waiting for approval... {_minutes(waited)} so far, {_minutes(left)} left"
            self._live(f"\r{text.line(what)} (Ctrl-C to cancel)\x1b[K")
            self._shown = True
        elif waited - self._said_at >= PLAIN_EVERY_S:
            self._said_at = waited
            self._say(f"still waiting for approval: {_minutes(waited)} so far, {_minutes(left)} left")

    def end(self) -> None:
        """Clear the terminal's line, so what comes next starts on a clean one."""
        if self._live is not None and self._shown:
            self._live("\r\x1b[K")
            self._shown = False


def wait_for_key(
    device: DeviceClient,
    started: DeviceLoginStarted,
    *,
    sleep: Callable[[float], None],
    say: Callable[[str], None],
    waiting: WaitingLine | None = None,
) -> Granted:
    """Poll until the login ends: the key, or Stop with the exit code of a denial, an expiry, slow_down
    answered SLOW_DOWN_LIMIT times in a row, or another error. `waiting` shows the wait (on a terminal
    every second: the interval is slept in one-second steps there)."""
    waiting = waiting or WaitingLine(say)
    interval = max(started.interval, 1)
    waited = 0.0
    slow_downs = 0
    waiting.begin(started.expires_in)
    while True:
        if waited >= started.expires_in:
            raise Stop(
                "expired: the code was not approved in time; run `siteaudit connect` again", EXIT_EXPIRED
            )
        steps = (
            [1.0] * int(interval) + ([interval % 1] if interval % 1 else []) if waiting.live else [interval]
        )
        for step in steps:
            sleep(step)
            waited += step
            waiting.show(waited, started.expires_in - waited)
        try:
            return device.poll(started.device_code)
        except Unreachable as error:
            raise Stop(error.message, EXIT_UNREACHABLE) from None
        except DomainError as error:
            code = str(getattr(error, "code_text", error.code))
            if code == "authorization_pending":
                slow_downs = 0
                continue
            if code == "slow_down":
                slow_downs += 1
                if slow_downs >= SLOW_DOWN_LIMIT:
                    raise Stop(
                        f"slow_down: the service answered slow_down {slow_downs} times in a row; try again later",
                        EXIT_SLOW_DOWN,
                    ) from None
                interval += SLOW_DOWN_STEP_S
                waiting.end()
                say(f"slow_down: the service asked to poll less often; polling every {interval} s now")
                continue
            if code == "access_denied":
                raise Stop(
                    "denied: the login was denied on the approval page; nothing was written", EXIT_DENIED
                ) from None
            if code == "expired_token":
                raise Stop(
                    "expired: the code expired before approval; run `siteaudit connect` again", EXIT_EXPIRED
                ) from None
            raise Stop(f"{code}: {error.message}", EXIT_REFUSED) from None


def start_login(
    device: DeviceClient, name: str, *, sleep: Callable[[float], None], say: Callable[[str], None]
) -> DeviceLoginStarted:
    """`device.start(name)`; a rate-limited start (429 with Retry-After) is asked again after the wait the
    service gave, said on screen, at most START_ATTEMPTS times in all and only when the wait is at most
    MAX_START_WAIT_S (the service allows 10 starts an hour per address: a longer wait is said, not
    slept). Raises Stop."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return device.start(name)
        except Unreachable as error:
            raise Stop(error.message, EXIT_UNREACHABLE) from None
        except RateLimited as error:
            wait = max(error.retry_after, 1)
            if attempt == START_ATTEMPTS or wait > MAX_START_WAIT_S:
                raise Stop(
                    "rate_limited: too many device logins from this address (10 an hour); try again in "
                    f"{_minutes(wait)} (minutes:seconds)",
                    EXIT_REFUSED,
                ) from None
            say(
                f"rate_limited: too many device logins from this address; trying again in {wait} s "
                f"(attempt {attempt + 1} of {START_ATTEMPTS}, Ctrl-C to stop)"
            )
            sleep(wait)
        except DomainError as error:
            raise Stop(f"{getattr(error, 'code_text', error.code)}: {error.message}", EXIT_REFUSED) from None
    raise AssertionError("unreachable: the last attempt returns or raises")


def cancelled(device: DeviceClient, started: DeviceLoginStarted, keys_page: str) -> Stop:
    """What Ctrl-C while waiting ends with: the login cancelled on the service, so its code can no longer
    be approved (exit 130 either way; the line says whether the cancel was done)."""
    code = started.user_code
    try:
        device.cancel(started.device_code)
    except Unreachable as error:
        return Stop(
            f"interrupted: the login could not be cancelled ({error.message}); code {code} stays approvable"
            " until it expires, do not approve it; nothing was written",
            EXIT_INTERRUPTED,
        )
    except DomainError as error:
        why = getattr(error, "code_text", error.code)
        if why == "invalid_grant":  # exchanged in the very poll Ctrl-C cut short
            return Stop(
                f"interrupted: the login had just been approved and its key issued; nothing was written,"
                f" revoke the key in {keys_page}",
                EXIT_INTERRUPTED,
            )
        return Stop(
            f"interrupted: the login could not be cancelled ({why}: {error.message}); code {code} stays"
            " approvable until it expires, do not approve it; nothing was written",
            EXIT_INTERRUPTED,
        )
    return Stop(
        f"interrupted: the login was cancelled, code {code} can no longer be approved; nothing was written",
        EXIT_INTERRUPTED,
    )


def run_connect(
    *,
    server: str | None,
    agents: str | None,
    scope: Scope,
    dry_run: bool,
    stdio: bool = False,
    open_browser: bool = True,
    home: Path | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    host: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    say: Callable[[str], None] = echo,
    device_client: Callable[[str], DeviceClient] = DeviceClient,
    waiting: WaitingLine | None = None,
) -> int:
    """The whole `siteaudit connect`; returns the exit code (Stop's message is printed by the caller)."""
    env = os.environ if env is None else env
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    root = service_root(server, env)
    given = (server or env.get("SITEAUDIT_URL") or "").strip()
    if given and "://" not in given:
        say(f"{given} has no scheme: connecting to {root}")
    chosen = choose_agents(agents, home, env)
    targets = _targets(chosen, scope, home, cwd, env, say)
    untouched = False
    ready: list[tuple[Agent, Path]] = []
    for agent, path in targets:
        try:
            agent_files.check(agent, path)
        except Unparsable as error:
            say(f"{agent.label}: {error}; fix the file or leave out --agents {agent.name}")
            untouched = True
            continue
        ready.append((agent, path))
    if not ready:
        raise Stop("no configuration file can be written; nothing to connect", EXIT_FILE_UNTOUCHED)
    folder = cwd.resolve() if scope == "project" else None  # the place this key is for (its replace rule)
    name = client_name(host or socket.gethostname(), [agent.name for agent, _ in ready], folder)
    program = agent_files.siteaudit_program()
    by_reference = scope == "project"  # a project's files may be committed: they name the key, never hold it
    if dry_run:
        say(f"would start a device login at {root} as {name!r}, then write (key masked):")
        for agent, path in ready:
            change = agent_files.with_entry(
                agent, path, Target(root, MASKED_KEY, stdio, program, by_reference)
            )
            say(f"{agent.label} ({agent.source}): {path}")
            say(_diff(change, MASKED_KEY) or "  (no change)")
        return EXIT_FILE_UNTOUCHED if untouched else EXIT_OK

    device = device_client(root + "/v1")
    try:
        try:
            refusal = device.mcp_refusal(root + "/mcp")
        except Unreachable as error:
            raise Stop(error.message, EXIT_UNREACHABLE) from None
        if refusal is not None:  # before any key is issued or file written: no dead URL in the agents
            raise Stop(
                f"no MCP server at {root}/mcp: it {refusal}; is it a siteaudit service with the MCP SDK "
                "installed (pip install siteaudit)? nothing was written",
                EXIT_NO_MCP,
            )
        started = start_login(device, name, sleep=sleep, say=say)
        say(f"To connect {', '.join(a.label for a, _ in ready)}, approve this device in the app:")
        say(f"  {started.verification_uri_complete}")
        say(f"  code: {started.user_code} (expires in {started.expires_in // 60} minutes)")
        if open_browser:
            _open_browser(started.verification_uri_complete, env)
        waiting = waiting or WaitingLine.on_stderr(say)
        try:
            granted = wait_for_key(device, started, sleep=sleep, say=say, waiting=waiting)
        except KeyboardInterrupt:  # the code must not stay approvable for a login nobody waits for
            waiting.end()
            raise cancelled(device, started, root + KEYS_PAGE) from None
        finally:
            waiting.end()
    finally:
        device.close()

    target = Target(root, granted.api_key, stdio, program, by_reference)
    for agent, path in ready:
        try:
            change = agent_files.with_entry(agent, path, target)
            agent_files.write_atomically(path, change.after)
        except (Unparsable, OSError) as error:
            say(f"{agent.label}: {error}; its file was left untouched")
            untouched = True
            continue
        say(f"{agent.label}: wrote the `{agent_files.ENTRY}` server into {path} (mode 0600)")
    if by_reference and any(agent.name != "vscode" for agent, _ in ready):
        say(
            f"the project files name the key as the variable {agent_files.KEY_VARIABLE}, they do not hold it:"
            f" set it where your agents start (export {agent_files.KEY_VARIABLE}=sk_..., or your secret"
            " manager)"
        )
    if by_reference and any(agent.name == "vscode" for agent, _ in ready):
        say("VS Code asks for the key when it first starts the server, and keeps it in its secret storage")
    if by_reference:
        say(f"the key, shown only this once (store it now): {granted.api_key}")
    say(f"connected to team {granted.team_name!r}; the key is {name!r} in {root}{KEYS_PAGE}, revoke it there")
    return EXIT_FILE_UNTOUCHED if untouched else EXIT_OK


def run_disconnect(
    *,
    server: str | None,
    agents: str | None,
    scope: Scope,
    home: Path | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    say: Callable[[str], None] = echo,
) -> int:
    """The whole `siteaudit disconnect`; returns the exit code."""
    env = os.environ if env is None else env
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    chosen = choose_agents(agents, home, env) if agents else AGENTS
    untouched = unreadable = False
    roots: list[str] = []
    removed = 0
    for agent in chosen:
        path = agent.path(scope, home, cwd, env)
        if path is None:
            continue
        root = agent_files.entry_root(agent, path)
        try:
            change = agent_files.without_entry(agent, path)
        except Unparsable as error:
            say(f"{agent.label}: {error}")
            unreadable = True
            untouched = untouched or bool(agents)  # only a file named with --agents makes it a failure
            continue
        if change is None:
            continue
        try:
            agent_files.write_atomically(path, change.after)
        except OSError as error:
            say(f"{agent.label}: {error}; its file was left untouched")
            untouched = True
            continue
        removed += 1
        if root:
            roots.append(root)
        say(f"{agent.label}: removed the `{agent_files.ENTRY}` server from {path}")
    if not removed and not unreadable:  # nothing was connected: no key to revoke, so no key page either
        say(f"nothing to disconnect: no agent's {scope} configuration has a `{agent_files.ENTRY}` server")
        return EXIT_OK
    if not removed:
        say("no siteaudit entry found in the chosen agents' files that could be read")
    pages = dict.fromkeys([service_root(server, env)] if server else roots or [service_root(None, env)])
    for root in pages:
        say(f"the key still works until you revoke it in the app: {root}{KEYS_PAGE}")
    return EXIT_FILE_UNTOUCHED if untouched else EXIT_OK


def _finish(run: Callable[[], int]) -> None:
    try:
        code = run()
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Stop as stop:
        error_line(str(stop))
        sys.exit(stop.exit_code)
    sys.exit(code)


_server_option = click.option(
    "--server", default=None, help=f"The service (default SITEAUDIT_URL, else {DEFAULT_SERVER})."
)
_agents_option = click.option(
    "--agents",
    default=None,
    help=f"Comma-separated agents ({', '.join(BY_NAME)}); default: those installed here.",
)
_scope_option = click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="The agents' user configuration, or this project's (the current folder).",
)


@click.command()
@_server_option
@_agents_option
@_scope_option
@click.option("--dry-run", is_flag=True, help="Show what would change (key masked); contact no service.")
@click.option(
    "--stdio",
    is_flag=True,
    help="Write the stdio command (this siteaudit's absolute path, `mcp`) instead of the URL.",
)
@click.option("--no-browser", is_flag=True, help="Do not open the approval page in a browser.")
def connect(
    server: str | None, agents: str | None, scope: Scope, dry_run: bool, stdio: bool, no_browser: bool
) -> None:
    """Log in through the app (device login) and write the key into your AI agents' MCP configuration.

    Exit codes: 0 connected; 1 a configuration file was left untouched; 2 usage or service error;
    3 service unreachable; 4 no MCP server at <server>/mcp; 5 denied; 6 expired; 7 slow_down kept coming;
    130 Ctrl-C (while waiting, the pending code is cancelled on the service first).
    """
    _finish(
        lambda: run_connect(
            server=server,
            agents=agents,
            scope=scope,
            dry_run=dry_run,
            stdio=stdio,
            open_browser=not no_browser,
        )
    )


@click.command()
@_server_option
@_agents_option
@_scope_option
def disconnect(server: str | None, agents: str | None, scope: Scope) -> None:
    """Remove the siteaudit server from your AI agents' MCP configuration (default: every agent's file
    that has it); the key itself is revoked in the app's key page, which is printed.

    Exit codes: 0 done, or nothing was connected (it says so); 1 a file was left untouched; 2 usage error.
    """
    _finish(lambda: run_disconnect(server=server, agents=agents, scope=scope))
