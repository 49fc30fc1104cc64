"""The app's forms (docs/security.md, "Strict JSON bodies"): a control character in a field is refused
before it reaches storage, and an id no database integer holds is a bad request, never a 500."""

from pathlib import Path

import pytest

from siteaudit.adapters.http.resolver import StaticResolver
from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.adapters.system import FixedClock
from siteaudit.bootstrap import bootstrap
from siteaudit.settings import Settings
from tests.unit.web.conftest import OWNER, PASSWORD, SentMail, Site, quick_hasher


@pytest.mark.parametrize("bad", ["a\x00b", "\x1b[2J", "x\x7f"])
def test_a_control_character_in_a_form_field_is_refused_and_nothing_is_stored(site: Site, bad: str) -> None:
    browser = site.browser()
    browser.get("/app/sign-up")
    result = browser.post("/app/sign-up", {"email": f"new{bad}@retro-clock.example", "password": "x" * 20})
    assert result.status_code == 400
    assert "control character" in result.text
    with site.app.uow() as uow:
        assert [u for u in uow.users.all() if u.email != OWNER and "new" in u.email] == []


@pytest.mark.parametrize("team", ["999999999999999999999999999999", str(2**62 + 1), "-1", "0"])
def test_a_team_id_no_database_holds_is_a_bad_request(tmp_path: Path, team: str) -> None:
    app = bootstrap(
        Settings(database_url=f"sqlite:///{tmp_path / 'siteaudit.sqlite3'}"),
        clock=FixedClock(),
        queue=MemoryTaskQueue(),
        resolver=StaticResolver({}),
        hasher=quick_hasher(),
    )
    app.application.create_user(OWNER, plan="growth")
    app.application.create_team("Retro Clock", owner_email=OWNER)
    app.application.set_password(OWNER, PASSWORD)
    browser = Site(app, FixedClock(), SentMail()).browser()
    browser.sign_in()
    browser.get("/app/keys")
    assert browser.post("/app/team", {"team_id": team, "next": "/app/keys"}).status_code == 400
