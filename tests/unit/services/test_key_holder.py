"""`whoami`: whose a key is, by the key or the start of its prefix, through the application."""

import itertools

import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import bootstrap
from siteaudit.domain.error import DomainError, ErrorCode, NotFound
from siteaudit.ports.application import Application
from siteaudit.settings import Settings


class CountingSecrets:
    """Tokens that share their first characters: keys whose prefixes start alike."""

    def __init__(self) -> None:
        self._n = itertools.count(1)

    def token(self, length: int, alphabet: str) -> str:
        return ("Clk" + f"{next(self._n):05d}" + "x" * length)[:length]

    def token_hex(self, nbytes: int) -> str:
        return f"{next(self._n):0{nbytes * 2}x}"


@pytest.fixture
def application() -> Application:
    return bootstrap(
        Settings(database_url="memory://"), queue=MemoryTaskQueue(), secrets=CountingSecrets()
    ).application


def test_whoami_by_key_by_prefix_and_a_prefix_that_fits_several(application: Application) -> None:
    application.create_user("ada@retro-clock.example")
    application.create_user("bob@retro-clock.example")
    application.create_team("Retro Clock", owner_email="ada@retro-clock.example")
    application.create_team("Second Hand", owner_email="bob@retro-clock.example")
    ada = application.create_key("ada@retro-clock.example", "Retro Clock")
    bob = application.create_key("bob@retro-clock.example", "Second Hand")

    for given in (ada.raw, ada.key.prefix, f"  {ada.raw}\n"):
        holder = application.whoami(given)
        assert (holder.key, holder.email, holder.team_name) == (
            ada.key,
            "ada@retro-clock.example",
            "Retro Clock",
        )
    assert application.whoami(bob.key.prefix).email == "bob@retro-clock.example"

    with pytest.raises(DomainError) as several:
        application.whoami("sk_Clk0")
    assert several.value.code is ErrorCode.CONFLICT
    assert ada.key.prefix in several.value.message and bob.key.prefix in several.value.message
    with pytest.raises(NotFound):
        application.whoami("sk_" + "y" * 40)  # well formed, never issued


def test_list_users_and_teams_show_balances_and_members(application: Application) -> None:
    assert (application.list_users(), application.list_teams()) == ([], [])
    application.create_user("ada@retro-clock.example", plan="growth")
    application.create_user("bob@retro-clock.example")
    application.create_team("Retro Clock", owner_email="ada@retro-clock.example")
    application.add_member("Retro Clock", "bob@retro-clock.example")
    application.grant_credits("ada@retro-clock.example", 125, idempotency_key="grant-1")

    people = application.list_users()
    assert [(p.user.email, p.user.plan, p.balance, list(p.teams)) for p in people] == [
        ("ada@retro-clock.example", "growth", 125, ["Retro Clock"]),
        ("bob@retro-clock.example", "free", 0, ["Retro Clock"]),
    ]
    (team,) = application.list_teams()
    assert (team.team.name, team.owner_email, team.owner_balance, team.members) == (
        "Retro Clock",
        "ada@retro-clock.example",
        125,
        2,
    )
