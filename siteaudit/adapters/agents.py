# Over 400 lines: one table of every agent's files and entry format, and the merge in and out of each.
"""AI agents' MCP configuration files: where each agent keeps them, the siteaudit entry in each one's own
format, and merging that entry in (or out) without touching anything else in the file.

Used by `siteaudit connect` and `siteaudit disconnect` (`siteaudit/entrypoints/connect.py`). The key is
written only here, into the agents' own files (docs/security.md), never into a file of siteaudit's.

- Every entry is named `siteaudit` (ENTRY). The streamable HTTP form is `<service>/mcp` with the key in an
  `Authorization: Bearer` header; the stdio form runs `siteaudit mcp` (the absolute path of the running
  `siteaudit`, else `python -m siteaudit`: `siteaudit_program`) with SITEAUDIT_URL and
  SITEAUDIT_API_KEY in its environment (for an agent that cannot send headers, or `--stdio`).
- A file is merged keeping its layout (`siteaudit.adapters.config_layout`): only the siteaudit table
  (TOML) or member (JSON) changes; comments stay with their tables, blank lines, CRLF, key order and
  indentation stay. Where the file's shape is not edited in place, the whole document is written out
  instead (`tomlkit` keeps other tables and comments; JSON in the file's own indentation). Either text
  is written only once it is checked to mean the old settings plus (or minus) the entry; a file where
  neither does, or that does not parse, is never written (Unparsable). Writes are atomic: a temporary file in the same folder, created with mode 0600, fsynced,
  then renamed over the old one (so the result is 0600 whatever the old file's mode was).
- The formats and locations are each agent's documented ones; the source is noted beside each agent.
- A project file never holds the key (`Target.by_reference`): it names SITEAUDIT_API_KEY in the agent's
  own syntax (`Agent.reference`, `Agent.reference_entry`), see docs/security.md "Agent configuration
  files hold no key".
"""

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Literal

import tomlkit
import tomlkit.exceptions
from attrs import evolve, frozen

from siteaudit.adapters import config_layout

ENTRY: Final = "siteaudit"
KEY_VARIABLE: Final = "SITEAUDIT_API_KEY"  # what a project file names instead of the key
VSCODE_INPUT: Final = "siteaudit-api-key"  # the `inputs` id VS Code asks the key for
Scope = Literal["user", "project"]


@frozen
class Target:
    """What an entry points at: the service root (no `/v1`), the key, and the transport; for stdio, the
    program that runs siteaudit's CLI (an absolute path: an agent does not start it from your venv's PATH)."""

    root: str
    key: str
    stdio: bool = False
    program: tuple[str, ...] = ("siteaudit",)
    by_reference: bool = False  # a project file: the agent's reference to the key, not the key

    @property
    def mcp_url(self) -> str:
        return self.root.rstrip("/") + "/mcp"

    @property
    def bearer(self) -> str:
        return f"Bearer {self.key}"

    @property
    def env(self) -> dict[str, str]:
        return {"SITEAUDIT_URL": self.root.rstrip("/"), "SITEAUDIT_API_KEY": self.key}


@frozen(kw_only=True)
class Agent:
    """One agent: its name for `--agents`, its files, the table holding MCP servers, and its entry."""

    name: str
    label: str
    source: str  # where the format and location below are documented
    binary: str  # the program whose presence on PATH means the agent is installed
    fmt: Literal["json", "toml"] = "json"
    servers_key: str = "mcpServers"  # the top-level object (JSON) or super-table (TOML) holding the servers
    user_file: Callable[[Path, Mapping[str, str]], Path]
    project_file: Callable[[Path], Path] | None  # None: the agent documents no project file
    # Paths whose presence means installed; None: the user file's folder.
    marks: Callable[[Path, Mapping[str, str]], tuple[Path, ...]] | None = None
    http_entry: Callable[[Target], dict[str, Any]]
    stdio_type: str | None = None  # a `type` the stdio form carries ("stdio"), when the agent wants one
    # A project file names the key by reference (docs/security.md "Agent configuration files hold no
    # key"): the string the agent replaces with the key when it starts, or an entry of its own shape.
    reference: str = f"${{{KEY_VARIABLE}}}"
    reference_entry: Callable[[Target], dict[str, Any]] | None = None

    def path(self, scope: Scope, home: Path, cwd: Path, env: Mapping[str, str]) -> Path | None:
        if scope == "user":
            return self.user_file(home, env)
        return None if self.project_file is None else self.project_file(cwd)

    def entry(self, target: Target) -> dict[str, Any]:
        if target.by_reference:
            if self.reference_entry is not None:
                return self.reference_entry(target)
            target = evolve(target, key=self.reference, by_reference=False)
        if not target.stdio:
            return self.http_entry(target)
        entry: dict[str, Any] = {"type": self.stdio_type} if self.stdio_type else {}
        entry.update({"command": target.program[0], "args": [*target.program[1:], "mcp"], "env": target.env})
        return entry

    def installed(self, home: Path, env: Mapping[str, str]) -> bool:
        found = shutil.which(self.binary, path=env.get("PATH", "")) is not None
        marks = (self.user_file(home, env).parent,) if self.marks is None else self.marks(home, env)
        return found or any(mark.exists() for mark in marks)


def siteaudit_program(argv0: str | None = None, executable: str | None = None) -> tuple[str, ...]:
    """The command that runs this siteaudit's CLI from any PATH: the running `siteaudit` script, else the
    one beside this Python (a venv's bin/ or Scripts/), else this Python with `-m siteaudit`. Paths are
    made absolute but not resolved: a venv's python is a symlink that only works as the venv's."""
    script = Path(sys.argv[0] if argv0 is None else argv0)
    python = Path(sys.executable if executable is None else executable)
    if script.stem == "siteaudit" and script.is_file():
        return (str(script.absolute()),)
    for beside in (python.parent / "siteaudit", python.parent / "siteaudit.exe"):
        if beside.is_file():
            return (str(beside.absolute()),)
    return (str(python.absolute()), "-m", "siteaudit")


def _codex_home(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"


def _vscode_user(home: Path, env: Mapping[str, str]) -> Path:
    """The user profile folder of VS Code (stable build) on this platform."""
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32":
        return Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Code" / "User"
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Code" / "User"


def _headers(target: Target) -> dict[str, str]:
    return {"Authorization": target.bearer}


def _codex_reference(target: Target) -> dict[str, Any]:
    """Codex expands no `${...}`: its own fields name the variable (developers.openai.com/codex/mcp):
    `bearer_token_env_var` sends `Authorization: Bearer <its value>`; a stdio server gets the variables
    listed in `env_vars` from Codex's environment."""
    if not target.stdio:
        return {"url": target.mcp_url, "bearer_token_env_var": KEY_VARIABLE}
    return {
        "command": target.program[0],
        "args": [*target.program[1:], "mcp"],
        "env": {"SITEAUDIT_URL": target.root.rstrip("/")},
        "env_vars": [KEY_VARIABLE],
    }


VSCODE_KEY_INPUT: Final[Mapping[str, Any]] = {
    "type": "promptString",
    "id": VSCODE_INPUT,
    "description": "siteaudit API key (printed once by siteaudit connect)",
    "password": True,
}


AGENTS: Final[tuple[Agent, ...]] = (
    # Source: code.claude.com/docs/en/mcp. User scope: top-level `mcpServers` of ~/.claude.json (what
    # `claude mcp add --scope user` writes); project scope: `.mcp.json` at the project root. Remote
    # servers are `"type": "http"` with `headers`. A project file names the key as `${SITEAUDIT_API_KEY}`:
    # .mcp.json expands `${VAR}` in command, args, env, url and headers (same page, "Environment variable
    # expansion in .mcp.json").
    Agent(
        name="claude-code",
        label="Claude Code",
        source="code.claude.com/docs/en/mcp",
        binary="claude",
        user_file=lambda home, env: home / ".claude.json",
        project_file=lambda cwd: cwd / ".mcp.json",
        marks=lambda home, env: (home / ".claude", home / ".claude.json"),
        http_entry=lambda t: {"type": "http", "url": t.mcp_url, "headers": _headers(t)},
        stdio_type="stdio",
    ),
    # Source: developers.openai.com/codex/mcp (and codex-rs/config mcp_types.rs): `[mcp_servers.NAME]`
    # in $CODEX_HOME/config.toml (default ~/.codex), or `.codex/config.toml` of a trusted project;
    # streamable HTTP is `url` with literal headers in `http_headers` (`headers` is ignored by Codex).
    Agent(
        name="codex",
        label="Codex",
        source="developers.openai.com/codex/mcp",
        binary="codex",
        fmt="toml",
        servers_key="mcp_servers",
        user_file=lambda home, env: _codex_home(home, env) / "config.toml",
        project_file=lambda cwd: cwd / ".codex" / "config.toml",
        http_entry=lambda t: {"url": t.mcp_url, "http_headers": _headers(t)},
        reference_entry=_codex_reference,
    ),
    # Source: cursor.com/docs/mcp: `mcpServers` in ~/.cursor/mcp.json or the project's .cursor/mcp.json;
    # a remote server is `url` with `headers`. A project file names the key as `${env:SITEAUDIT_API_KEY}`
    # (cursor.com/docs/context/mcp, "Config interpolation": `${env:NAME}` in command, args, env, url,
    # headers).
    Agent(
        name="cursor",
        label="Cursor",
        source="cursor.com/docs/mcp",
        binary="cursor",
        user_file=lambda home, env: home / ".cursor" / "mcp.json",
        project_file=lambda cwd: cwd / ".cursor" / "mcp.json",
        http_entry=lambda t: {"url": t.mcp_url, "headers": _headers(t)},
        reference=f"${{env:{KEY_VARIABLE}}}",
    ),
    # Source: code.visualstudio.com/docs/copilot/reference/mcp-configuration: `servers` in the user
    # profile's mcp.json or the workspace's .vscode/mcp.json; `"type": "http"` with `headers`. A project
    # file names the key as `${input:siteaudit-api-key}`, a `promptString` input with `"password": true`
    # (same page, "Input variables for sensitive data"): VS Code asks for it once and keeps it in its
    # secret storage.
    Agent(
        name="vscode",
        label="VS Code",
        source="code.visualstudio.com/docs/copilot/reference/mcp-configuration",
        binary="code",
        servers_key="servers",
        user_file=lambda home, env: _vscode_user(home, env) / "mcp.json",
        project_file=lambda cwd: cwd / ".vscode" / "mcp.json",
        http_entry=lambda t: {"type": "http", "url": t.mcp_url, "headers": _headers(t)},
        stdio_type="stdio",
        reference=f"${{input:{VSCODE_INPUT}}}",
    ),
    # Source: docs.windsurf.com/windsurf/cascade/mcp: `mcpServers` in ~/.codeium/windsurf/mcp_config.json
    # (no project file is documented); a remote server is `serverUrl` (not `url`) with `headers`.
    Agent(
        name="windsurf",
        label="Windsurf",
        source="docs.windsurf.com/windsurf/cascade/mcp",
        binary="windsurf",
        user_file=lambda home, env: home / ".codeium" / "windsurf" / "mcp_config.json",
        project_file=None,
        http_entry=lambda t: {"serverUrl": t.mcp_url, "headers": _headers(t)},
    ),
    # Source: github.com/google-gemini/gemini-cli docs/tools/mcp-server.md: `mcpServers` in
    # ~/.gemini/settings.json or the project's .gemini/settings.json; streamable HTTP is `httpUrl` (`url`
    # means SSE) with `headers`. A project file names the key as `${SITEAUDIT_API_KEY}`: string values of
    # settings.json may reference environment variables as `$VAR_NAME` or `${VAR_NAME}`
    # (geminicli.com/docs/cli/configuration, "Note on environment variables in settings").
    Agent(
        name="gemini",
        label="Gemini CLI",
        source="github.com/google-gemini/gemini-cli docs/tools/mcp-server.md",
        binary="gemini",
        user_file=lambda home, env: home / ".gemini" / "settings.json",
        project_file=lambda cwd: cwd / ".gemini" / "settings.json",
        http_entry=lambda t: {"httpUrl": t.mcp_url, "headers": _headers(t)},
    ),
)
BY_NAME: Final[Mapping[str, Agent]] = {agent.name: agent for agent in AGENTS}


class Unparsable(Exception):
    """A configuration file that is not valid JSON/TOML of the expected shape: it is left untouched."""

    def __init__(self, path: Path, why: str, *, parses: bool = False) -> None:
        what = "cannot take the siteaudit entry" if parses else "does not parse"
        super().__init__(f"{path} {what} ({why}); it was left untouched")
        self.path = path


def installed_agents(home: Path, env: Mapping[str, str]) -> tuple[Agent, ...]:
    """The agents found on this machine: their configuration folder exists or their program is on PATH."""
    return tuple(agent for agent in AGENTS if agent.installed(home, env))


def _load(agent: Agent, path: Path) -> tuple[str | None, Any]:
    """The file's text (None when there is no file) and its parsed document. Raises Unparsable."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:  # CRLF stays CRLF
            text: str | None = handle.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as error:
        raise Unparsable(path, str(error)) from None
    if agent.fmt == "toml":
        try:
            document: Any = tomlkit.parse(text or "")
        except tomlkit.exceptions.TOMLKitError as error:
            raise Unparsable(path, f"TOML: {error}") from None
    else:
        if text is None or not text.strip():
            document = {}
        else:
            try:
                document = json.loads(text)
            except ValueError as error:
                raise Unparsable(path, f"JSON: {error}") from None
        if not isinstance(document, dict):
            raise Unparsable(path, "the top level is not a JSON object")
    servers = document.get(agent.servers_key)
    if servers is not None and not isinstance(servers, dict):
        raise Unparsable(path, f"`{agent.servers_key}` is not a table of servers")
    return text, document


def check(agent: Agent, path: Path) -> None:
    """Raises Unparsable when `path` exists and would not be merged into (a trial merge, written nowhere:
    connect checks before it asks for a key)."""
    with_entry(agent, path, Target("http://127.0.0.1", "sk_trial"))


def _dump(agent: Agent, document: Any, before: str | None) -> str:
    """The whole document written out, in the old file's indentation and line ending (JSON)."""
    if agent.fmt == "toml":
        return str(tomlkit.dumps(document))
    indent, nl = config_layout.json_style(before or "")
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    return text.replace("\n", nl) + ("" if before and not before.endswith("\n") else nl)


def _plain(agent: Agent, text: str) -> Any:
    """What a file's text means, as plain values (TOML: an empty servers table counts as none)."""
    if agent.fmt == "json":
        return json.loads(text) if text.strip() else {}
    document = tomlkit.parse(text).unwrap()
    if document.get(agent.servers_key) == {}:
        del document[agent.servers_key]
    return document


def _chosen(agent: Agent, path: Path, candidates: tuple[str | None, ...], expected: Any) -> str:
    """The first text that means `expected` (JSON: key order included): the in-place edit, else the
    whole document written out. Raises Unparsable when neither does (the file is left untouched rather
    than another of its settings changed)."""
    for text in candidates:
        if text is None:
            continue
        try:
            meant = _plain(agent, text)
        except (ValueError, tomlkit.exceptions.TOMLKitError):
            continue
        ordered = agent.fmt == "json"  # a TOML table's keys may come in another order, with the same meaning
        if json.dumps(meant, default=str, sort_keys=not ordered) == json.dumps(
            expected, default=str, sort_keys=not ordered
        ):
            return text
    raise Unparsable(path, "the entry cannot be changed without changing another setting", parses=True)


def _toml_table_text(agent: Agent, entry: Mapping[str, Any]) -> str:
    document = tomlkit.document()
    servers = tomlkit.table(is_super_table=True)
    document.add(agent.servers_key, servers)
    servers.add(ENTRY, _toml_entry(entry))
    return str(tomlkit.dumps(document))


def _edited_with(
    agent: Agent, before: str | None, entry: Mapping[str, Any], input_declared: bool
) -> str | None:
    """The old file with the entry set in place (None: the caller writes the whole document)."""
    if before is None or not before.strip():
        return None
    if agent.fmt == "toml":
        return config_layout.toml_set_table(
            before, (agent.servers_key, ENTRY), _toml_table_text(agent, entry)
        )
    edited = config_layout.json_set(before, (agent.servers_key, ENTRY), dict(entry))
    if edited is not None and input_declared:
        edited = config_layout.json_set_element(edited, ("inputs",), dict(VSCODE_KEY_INPUT), _is_our_input)
    return edited


def _toml_entry(entry: Mapping[str, Any]) -> Any:
    table = tomlkit.table()
    for name, value in entry.items():
        if isinstance(value, Mapping):
            inline = tomlkit.inline_table()
            inline.update(value)
            table.add(name, inline)
        else:
            table.add(name, value)
    return table


@frozen
class Change:
    """The file's text before (None: no file) and after adding or removing the entry."""

    agent: Agent
    path: Path
    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def with_entry(agent: Agent, path: Path, target: Target) -> Change:
    """The file with the siteaudit entry set (replacing an earlier one). Raises Unparsable."""
    before, document = _load(agent, path)
    entry = agent.entry(target)
    servers = document.get(agent.servers_key)
    declared = False
    dumped: str | None = None
    if agent.fmt == "toml":
        expected = _plain(agent, before or "")
        expected.setdefault(agent.servers_key, {})[ENTRY] = json.loads(json.dumps(entry))
        try:  # the whole document through tomlkit, which cannot edit every shape (an inline servers table)
            if servers is None:
                servers = tomlkit.table(is_super_table=True)
                document.add(agent.servers_key, servers)
            if ENTRY in servers:
                del servers[ENTRY]
            servers.add(ENTRY, _toml_entry(entry))
            dumped = _dump(agent, document, before)
        except (ValueError, tomlkit.exceptions.TOMLKitError):
            dumped = None
    else:
        if servers is None:
            servers = document[agent.servers_key] = {}
        servers[ENTRY] = entry
        if declared := f"${{input:{VSCODE_INPUT}}}" in json.dumps(entry):  # the input it names is declared
            existing = document.get("inputs")
            inputs = list(existing) if isinstance(existing, list) else []
            ours = [n for n, i in enumerate(inputs) if _is_our_input(i)]
            inputs = [i for n, i in enumerate(inputs) if n not in ours[1:]]  # in place of the first
            if ours:
                inputs[ours[0]] = dict(VSCODE_KEY_INPUT)
            else:
                inputs.append(dict(VSCODE_KEY_INPUT))
            document["inputs"] = inputs
        dumped = _dump(agent, document, before)
        expected = json.loads(dumped)
    edited = _edited_with(agent, before, entry, declared)
    return Change(agent, path, before, _chosen(agent, path, (edited, dumped), expected))


def _is_our_input(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("id") == VSCODE_INPUT


def without_entry(agent: Agent, path: Path) -> Change | None:
    """The file with the siteaudit entry removed; None when the file has none. Raises Unparsable."""
    before, document = _load(agent, path)
    servers = document.get(agent.servers_key)
    if before is None or servers is None or ENTRY not in servers:
        return None
    inputs = document.get("inputs") if agent.fmt == "json" else None
    ours_declared = isinstance(inputs, list) and any(_is_our_input(i) for i in inputs)
    try:  # the whole document (tomlkit may refuse a shape: then only the in-place edit can do)
        del servers[ENTRY]
        if agent.fmt == "toml" and not servers:
            del document[agent.servers_key]
        if isinstance(inputs, list) and ours_declared:
            document["inputs"] = [i for i in inputs if not _is_our_input(i)]
            if not document["inputs"]:
                del document["inputs"]
        after = _dump(agent, document, before)
        # tomlkit keeps the blank line that separated the removed table: trim what the entry left at the end
        dumped: str | None = after.rstrip("\n") + "\n" if after.strip() else ""
    except (ValueError, KeyError, tomlkit.exceptions.TOMLKitError):
        dumped = None
    if agent.fmt == "toml":
        edited = config_layout.toml_remove_table(before, (agent.servers_key, ENTRY))
    else:
        edited = config_layout.json_remove(before, (agent.servers_key, ENTRY))
        if edited is not None and ours_declared:
            edited = config_layout.json_remove_elements(edited, ("inputs",), _is_our_input)
    if agent.fmt == "json":
        expected = json.loads(dumped) if dumped else {}  # JSON: plain dicts, the tree edit cannot fail
    else:
        expected = _plain(agent, before)
        del expected[agent.servers_key][ENTRY]
        if not expected[agent.servers_key]:
            del expected[agent.servers_key]
    return Change(agent, path, before, _chosen(agent, path, (edited, dumped), expected))


def entry_root(agent: Agent, path: Path) -> str | None:
    """The service root the file's siteaudit entry points at (its URL without `/mcp`, or its stdio
    SITEAUDIT_URL); None without an entry or when the file does not parse."""
    try:
        _, document = _load(agent, path)
    except Unparsable:
        return None
    entry = (document.get(agent.servers_key) or {}).get(ENTRY)
    if not isinstance(entry, Mapping):
        return None
    for field in ("url", "serverUrl", "httpUrl"):
        url = entry.get(field)
        if isinstance(url, str):
            return str(url).removesuffix("/").removesuffix("/mcp")
    env = entry.get("env")
    url = env.get("SITEAUDIT_URL") if isinstance(env, Mapping) else None
    return str(url) if isinstance(url, str) else None


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text`: a temporary file in the same folder (mode 0600 from creation, as
    mkstemp makes it), written and fsynced, then renamed over `path`. The folder is created if needed
    (mode 0700)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o600)  # mkstemp's mode already; said again for platforms that differ
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable where the platform allows
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def mask(text: str, key: str) -> str:
    """`text` with the key shown as its first 7 characters and asterisks."""
    return text.replace(key, key[:7] + "*" * 8) if key else text
