"""What a contract test gets: a unit-of-work factory and a crawl store over one backend."""

from collections.abc import Callable

from attrs import frozen
from sqlalchemy import Engine

from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.repository import UnitOfWork


@frozen
class Backend:
    name: str
    uow: Callable[[], UnitOfWork]
    crawl: CrawlStore
    engine: Engine | None = None
