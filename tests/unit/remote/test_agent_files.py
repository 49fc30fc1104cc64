"""The agents' MCP files (siteaudit/adapters/agents.py): each agent's entry in its own format and place, the
stdio form, merging in and out, atomic 0600 writes, and files that do not parse left alone."""

import json
import os
import stat
from pathlib import Path

import pytest
import tomlkit
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.adapters import agents, config_layout
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


GOLDEN = Path(__file__).parent / "agent_golden"
GOLDEN_CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())


def read_exactly(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_merging_in_and_out_keeps_the_files_layout(tmp_path: Path, case: str, newline: str) -> None:
    """Golden files (agent_golden/<agent>--<what>/): `before` merged gives `after` byte for byte, the
    same with every line ending CRLF; removing the entry again gives `removed` (or `before` when the
    case has none: what connect added, disconnect takes away). SITEAUDIT_REPIN=1 rewrites `after` and
    `removed` from the code: read the diff before committing it."""
    folder = GOLDEN / case
    agent = BY_NAME[case.split("--")[0]]
    (before_file,) = folder.glob("before.*")
    ext = before_file.suffix
    target = Target("https://audit.example.com", KEY, by_reference="--project-" in case)
    path = tmp_path / f"config{ext}"
    path.write_bytes(read_exactly(before_file).replace("\n", newline).encode("utf-8"))

    merged = agents.with_entry(agent, path, target).after
    agents.write_atomically(path, merged)
    removed = agents.without_entry(agent, path)
    assert removed is not None
    if os.environ.get("SITEAUDIT_REPIN") and newline == "\n":
        (folder / f"after{ext}").write_bytes(merged.encode("utf-8"))
        if removed.after != read_exactly(before_file):
            (folder / f"removed{ext}").write_bytes(removed.after.encode("utf-8"))
    expected_after = read_exactly(folder / f"after{ext}").replace("\n", newline)
    removed_file = folder / f"removed{ext}"
    expected_removed = read_exactly(removed_file if removed_file.exists() else before_file).replace(
        "\n", newline
    )
    assert merged == expected_after
    assert read_exactly(path) == expected_after
    assert removed.after == expected_removed


def test_codex_servers_in_dotted_keys_keep_every_other_setting_where_it_was(tmp_path: Path) -> None:
    """A whole-document write through tomlkit put the root's `model` under [mcp_servers.siteaudit]
    here; the table is added at the end instead, and every text written is checked to mean the old
    settings plus the entry."""
    path = tmp_path / "config.toml"
    path.write_text('mcp_servers.docs.command = "docs"\nmodel = "o4"\n')
    written = tomlkit.parse(write("codex", path)).unwrap()
    assert written["model"] == "o4"
    assert written["mcp_servers"]["docs"] == {"command": "docs"}
    assert written["mcp_servers"]["siteaudit"]["url"] == HTTP.mcp_url
    removed = agents.without_entry(BY_NAME["codex"], path)
    assert removed is not None and removed.after == 'mcp_servers.docs.command = "docs"\nmodel = "o4"\n'


def test_a_codex_servers_table_written_inline_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = 'mcp_servers = { docs = { command = "docs" } }\n'
    path.write_text(text)
    with pytest.raises(Unparsable, match="without changing another setting"):
        agents.with_entry(BY_NAME["codex"], path, HTTP)
    assert path.read_text() == text
    with pytest.raises(Unparsable):  # found before connect asks for a key
        agents.check(BY_NAME["codex"], path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@given(
    document=st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4),
    servers=st.none() | st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3),
    indent=st.sampled_from([None, 2, 4, "\t"]),
)
def test_json_edits_in_place_mean_the_document_plus_the_entry_in_its_order(
    document: dict[str, object], servers: dict[str, object] | None, indent: int | str | None
) -> None:
    if servers is not None:
        document = {**document, "mcpServers": servers}
    else:
        document.pop("mcpServers", None)
    text = json.dumps(document, indent=indent)
    entry = {"url": "https://audit.example.com/mcp", "headers": {"Authorization": "Bearer x"}}
    edited = config_layout.json_set(text, ("mcpServers", "siteaudit"), entry)
    assert edited is not None
    expected = json.loads(text)
    expected.setdefault("mcpServers", {})["siteaudit"] = entry
    assert json.dumps(json.loads(edited)) == json.dumps(expected)
    removed = config_layout.json_remove(edited, ("mcpServers", "siteaudit"))
    assert removed is not None
    del expected["mcpServers"]["siteaudit"]
    assert json.dumps(json.loads(removed)) == json.dumps(expected)
    if servers is not None and "siteaudit" not in servers:
        assert removed == text  # what was added is taken away, byte for byte


@pytest.mark.parametrize("case", [c for c in GOLDEN_CASES if c.startswith("codex--")])
def test_each_toml_golden_is_edited_in_place_not_written_whole(case: str) -> None:
    """The golden TOML files are shapes the in-place edit takes (strings and arrays over several lines
    with what looks like headers inside): the whole-document write is only the fallback."""
    before = read_exactly(GOLDEN / case / "before.toml")
    table = '[mcp_servers.siteaudit]\nurl = "https://audit.example.com/mcp"\n'
    edited = config_layout.toml_set_table(before, ("mcp_servers", "siteaudit"), table)
    assert edited is not None and table in edited
    assert config_layout.toml_remove_table(edited, ("mcp_servers", "siteaudit")) is not None


TOML_KEYS = st.text(alphabet="abcxyz_-", min_size=1, max_size=5)
TOML_SCALARS = (
    st.integers(-5, 5)
    | st.booleans()
    | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=6)
    | st.text(alphabet='[]#"\n ', max_size=8)  # what looks like headers, comments and quotes inside strings
)
TOML_VALUES = TOML_SCALARS | st.lists(TOML_SCALARS | st.lists(st.integers(0, 3), max_size=2), max_size=3)
TOML_TABLES = st.dictionaries(TOML_KEYS, TOML_VALUES, max_size=3)


@given(
    root=TOML_TABLES,
    tables=st.dictionaries(TOML_KEYS, TOML_TABLES, max_size=2),
    servers=st.dictionaries(TOML_KEYS.filter(lambda k: k != "siteaudit"), TOML_TABLES, max_size=2),
    multiline=st.booleans(),
)
def test_toml_edits_in_place_mean_the_document_plus_the_table(
    root: dict[str, object],
    tables: dict[str, dict[str, object]],
    servers: dict[str, dict[str, object]],
    multiline: bool,
) -> None:
    """Whatever tomlkit writes (strings with newlines become multi-line strings, arrays may span lines):
    the in-place edit takes it, means the old settings plus the table, and is taken away again exactly."""
    document = tomlkit.document()
    for key, value in root.items():
        document.add(key, value)
    for key, table in tables.items():
        if key in document:
            continue
        item = tomlkit.table()
        for name, value in table.items():
            array = tomlkit.array()
            if multiline and isinstance(value, list):
                array.extend(value)
                array.multiline(True)
                item.add(name, array)
            else:
                item.add(name, value)
        document.add(key, item)
    if servers and "mcp_servers" not in document:
        document.add("mcp_servers", tomlkit.table(is_super_table=True))
        for key, table in servers.items():
            document["mcp_servers"].add(key, table)  # type: ignore[union-attr]
    text = tomlkit.dumps(document)
    expected = tomlkit.parse(text).unwrap()
    table = '[mcp_servers.siteaudit]\nurl = "https://audit.example.com/mcp"\n'
    edited = config_layout.toml_set_table(text, ("mcp_servers", "siteaudit"), table)
    assert edited is not None, text
    expected.setdefault("mcp_servers", {})["siteaudit"] = {"url": "https://audit.example.com/mcp"}
    assert tomlkit.parse(edited).unwrap() == expected
    assert config_layout.toml_remove_table(edited, ("mcp_servers", "siteaudit")) in (text, text + "\n")
