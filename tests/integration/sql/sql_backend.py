"""What a contract test gets: a unit-of-work factory and a crawl store over one backend."""

from collections.abc import Callable
from datetime import UTC, datetime

from attrs import frozen
from sqlalchemy import Engine

from siteaudit.domain.account import Team, User
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork


@frozen
class Backend:
    name: str
    uow: Callable[[], UnitOfWork]
    crawl: CrawlStore
    engine: Engine | None = None


T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def people(backend: Backend) -> tuple[User, User, Team]:
    """An owner, a second person and the owner's team, committed."""
    with backend.uow() as uow:
        owner = uow.users.add(User(UserId(0), "owner@retro-clock.example", "growth", T0, name="Ada"))
        member = uow.users.add(User(UserId(0), "member@retro-clock.example", "free", T0))
        team = uow.teams.add(Team(TeamId(0), "Retro Clock", owner.id, T0))
        uow.commit()
    return owner, member, team
