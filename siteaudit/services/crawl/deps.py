"""What a crawl slice works with: the ports and the service's crawl terms, travelling as one value."""

from collections.abc import Callable

from attrs import field, frozen

from siteaudit.domain.crawl import CrawlLimits
from siteaudit.domain.hostlimit import HostLimits
from siteaudit.domain.render import RenderBudget
from siteaudit.domain.thresholds import Thresholds
from siteaudit.ports.clock import Clock
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.metrics import NO_METRICS, Metrics
from siteaudit.ports.network import Fetcher
from siteaudit.ports.parse import PageParser
from siteaudit.ports.queue import TaskQueue
from siteaudit.ports.ratelimit import RateLimiter
from siteaudit.ports.render import Renderer
from siteaudit.ports.repository import UnitOfWork

# Connections wanted -> a fetcher with its own small pool, closed at the end of the slice.
FetcherFactory = Callable[[int], Fetcher]


@frozen
class CrawlDeps:
    """The crawl engine's dependencies, built once by the composition root.

    `limits` are the service's terms (time cap, slice budget, lease terms...); each slice fills in its
    audit's own page cap, concurrency and rate (`CrawlLimits.for_audit`).
    """

    uow: Callable[[], UnitOfWork]
    crawl: CrawlStore
    fetcher_factory: FetcherFactory
    parser: PageParser
    clock: Clock
    queue: TaskQueue
    limits: CrawlLimits = field(factory=CrawlLimits)
    thresholds: Thresholds = field(factory=Thresholds)
    metrics: Metrics = NO_METRICS
    # The per-target-host limit shared by every audit and worker (`hostgate`); None: audits pace only
    # themselves (tests of one audit, benchmarks).
    host_limiter: RateLimiter | None = None
    host_limits: HostLimits = field(factory=HostLimits)
    # JavaScript rendering (docs/rendering.md): the process's browser pool, None where no browser is
    # configured (an audit asking for rendering then reports each page as not rendered).
    renderer: Renderer | None = None
    render_budget: RenderBudget = field(factory=RenderBudget)
    render_third_party: bool = False  # requests of a rendered page to other hosts than the audited one
