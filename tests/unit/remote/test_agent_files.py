"""The agents' MCP files (siteaudit/adapters/agents.py): each agent's entry in its own format and place, the
stdio form, merging in and out, atomic 0600 writes, and files that do not parse left alone."""

import json
import stat
from pathlib import Path

import pytest
import tomlkit

from siteaudit.adapters import agents
from siteaudit.adapters.agents import BY_NAME, Target, Unparsable

KEY = "sk_" + "k" * 40
HTTP = Target("https://audit.example.com", KEY)
STDIO = Target("https://audit.example.com", KEY, stdio=True)


def write(agent: str, path: Path, target: Target = HTTP) -> str:
    change = agents.with_entry(BY_NAME[agent], path, target)
    agents.write_atomically(path, change.after)
    return path.read_text()


@pytest.mark.parametrize(
    ("agent", "servers", "entry"),
    [
        (
            "claude-code",
            "mcpServers",
            {"type": "http", "url": HTTP.mcp_url, "headers": {"Authorization": f"Bearer {KEY}"}},
        ),
        ("cursor", "mcpServers", {"url": HTTP.mcp_url, "headers": {"Authorization": f"Bearer {KEY}"}}),
        (
            "vscode",
            "servers",
            {"type": "http", "url": HTTP.mcp_url, "headers": {"Authorization": f"Bearer {KEY}"}},
        ),
        (
            "windsurf",
            "mcpServers",
            {"serverUrl": HTTP.mcp_url, "headers": {"Authorization": f"Bearer {KEY}"}},
        ),
        ("gemini", "mcpServers", {"httpUrl": HTTP.mcp_url, "headers": {"Authorization": f"Bearer {KEY}"}}),
    ],
)
def test_each_json_agent_gets_its_documented_http_entry(
    tmp_path: Path, agent: str, servers: str, entry: dict[str, object]
) -> None:
    path = tmp_path / "deep" / "folder" / "mcp.json"
    assert json.loads(write(agent, path)) == {servers: {"siteaudit": entry}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_stdio_form_runs_siteaudit_mcp_with_the_url_and_key_in_its_environment(tmp_path: Path) -> None:
    env = {"SITEAUDIT_URL": "https://audit.example.com", "SITEAUDIT_API_KEY": KEY}
    claude = json.loads(write("claude-code", tmp_path / "c.json", STDIO))["mcpServers"]["siteaudit"]
    assert claude == {"type": "stdio", "command": "siteaudit", "args": ["mcp"], "env": env}
    cursor = json.loads(write("cursor", tmp_path / "u.json", STDIO))["mcpServers"]["siteaudit"]
    assert cursor == {"command": "siteaudit", "args": ["mcp"], "env": env}
    codex = tomlkit.parse(write("codex", tmp_path / "config.toml", STDIO))
    assert codex["mcp_servers"]["siteaudit"] == {"command": "siteaudit", "args": ["mcp"], "env": env}  # type: ignore[index]
    assert agents.entry_root(BY_NAME["codex"], tmp_path / "config.toml") == "https://audit.example.com"


def test_codex_keeps_comments_and_other_tables_and_removal_restores_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    before = '# top\n[profiles.fast]\nmodel = "o4"  # inline\n\n[mcp_servers.docs]\ncommand = "docs"\n'
    path.write_text(before)
    written = write("codex", path)
    assert written.startswith(before)
    assert '[mcp_servers.siteaudit]\nurl = "https://audit.example.com/mcp"\n' in written
    again = write("codex", path, Target("https://other.example", KEY))  # replaced, not duplicated
    assert again.count("[mcp_servers.siteaudit]") == 1 and "other.example" in again
    removed = agents.without_entry(BY_NAME["codex"], path)
    assert removed is not None and removed.after == before


def test_a_codex_file_without_other_servers_loses_the_empty_table_on_removal(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "o4"\n')
    write("codex", path)
    removed = agents.without_entry(BY_NAME["codex"], path)
    assert removed is not None and removed.after == 'model = "o4"\n'
    assert agents.without_entry(BY_NAME["codex"], tmp_path / "missing.toml") is None


@pytest.mark.parametrize(
    ("agent", "text"),
    [
        ("vscode", '{\n  // a comment VS Code allows\n  "servers": {}\n}'),
        ("claude-code", "[1, 2]"),
        ("cursor", '{"mcpServers": ["not", "a", "table"]}'),
        ("codex", "mcp_servers = 3\n"),
        ("codex", "[broken\n"),
    ],
)
def test_a_file_that_does_not_parse_raises_and_is_never_written(
    tmp_path: Path, agent: str, text: str
) -> None:
    path = tmp_path / "file"
    path.write_text(text)
    with pytest.raises(Unparsable, match="left untouched"):
        agents.with_entry(BY_NAME[agent], path, HTTP)
    with pytest.raises(Unparsable):
        agents.without_entry(BY_NAME[agent], path)
    assert path.read_text() == text


def test_paths_by_scope(tmp_path: Path) -> None:
    home, cwd = tmp_path / "h", tmp_path / "p"
    env = {"CODEX_HOME": str(tmp_path / "codex-home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert BY_NAME["codex"].path("user", home, cwd, env) == tmp_path / "codex-home" / "config.toml"
    assert BY_NAME["codex"].path("project", home, cwd, env) == cwd / ".codex" / "config.toml"
    assert BY_NAME["claude-code"].path("user", home, cwd, {}) == home / ".claude.json"
    assert BY_NAME["claude-code"].path("project", home, cwd, {}) == cwd / ".mcp.json"
    assert BY_NAME["windsurf"].path("project", home, cwd, {}) is None
    assert BY_NAME["gemini"].path("user", home, cwd, {}) == home / ".gemini" / "settings.json"
    if not str(BY_NAME["vscode"].path("user", home, cwd, env)).startswith(str(home)):  # Linux
        assert (
            BY_NAME["vscode"].path("user", home, cwd, env) == tmp_path / "xdg" / "Code" / "User" / "mcp.json"
        )


def test_the_key_is_masked() -> None:
    assert agents.mask(f"Bearer {KEY}", KEY) == "Bearer sk_kkkk********"
