"""`siteaudit admin console-connect` and `console-disconnect` on a SQLite file: the refresh token is read
from a file (never an argument), stored sealed, and revoked at the (local) Google endpoint on removal."""

import json
from pathlib import Path

import sqlalchemy
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from siteaudit.entrypoints.cli import main
from tests.unit.console.fake_google import FakeGoogle


def test_connect_and_disconnect_a_team(tmp_path: Path, httpserver: HTTPServer) -> None:
    google = FakeGoogle(httpserver)
    database = tmp_path / "siteaudit.sqlite3"
    cli = CliRunner(
        env={
            "SITEAUDIT_DATABASE_URL": f"sqlite:///{database}",
            "SITEAUDIT_GSC_REVOKE_URL": google.endpoints.revoke,
        }
    )
    for args in (
        ["admin", "create-user", "owner@retro-clock.example"],
        ["admin", "create-team", "Retro Clock", "--owner", "owner@retro-clock.example"],
    ):
        assert cli.invoke(main, args).exit_code == 0
    token = tmp_path / "refresh-token"
    token.write_text("rt-good\n")
    connected = cli.invoke(
        main, ["admin", "console-connect", "Retro Clock", "--refresh-token-file", str(token), "--json"]
    )
    assert connected.exit_code == 0, connected.output
    assert json.loads(connected.output) == {"team": "Retro Clock", "connected": True}
    engine = sqlalchemy.create_engine(f"sqlite:///{database}")
    with engine.connect() as conn:
        (sealed,) = conn.execute(
            sqlalchemy.text("SELECT sealed_refresh_token FROM console_connections")
        ).one()
    engine.dispose()
    assert "rt-good" not in sealed
    unknown = cli.invoke(main, ["admin", "console-connect", "Nobody", "--refresh-token-file", str(token)])
    assert unknown.exit_code != 0
    gone = cli.invoke(main, ["admin", "console-disconnect", "Retro Clock", "--json"])
    assert json.loads(gone.output) == {"team": "Retro Clock", "disconnected": True}
    assert google.revoked == ["rt-good"]
    again = cli.invoke(main, ["admin", "console-disconnect", "Retro Clock"])
    assert again.output.strip() == "team Retro Clock: was not connected"
