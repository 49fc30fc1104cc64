"""Search traffic per URL: the seam through which search-console figures reach fix tasks and rechecks.

The console store is built apart; until it is wired in, `NO_TRAFFIC` answers "no data" for every site,
so tasks show `clicks_28d`/`impressions_28d` null, `has_traffic_data` false, and the impact's traffic
term is zero.
"""

from collections.abc import Collection, Mapping
from typing import Final, Protocol

from siteaudit.domain.ids import SiteId
from siteaudit.domain.task import Traffic


class TrafficSource(Protocol):
    def traffic(self, site_id: SiteId, urls: Collection[str]) -> Mapping[str, Traffic] | None:
        """Clicks and impressions of the last 28 days for those of `urls` the console knows (URLs it
        does not know are left out), or None when the site has no console data at all. Never raises for
        a site without a connection: that is None."""
        ...


class _NoTraffic:
    def traffic(self, site_id: SiteId, urls: Collection[str]) -> Mapping[str, Traffic] | None:
        return None


NO_TRAFFIC: Final[TrafficSource] = _NoTraffic()
