"""Search traffic per URL: the seam through which search-console figures reach fix tasks and rechecks.

Bootstrap wires `siteaudit.services.traffic.ConsoleTraffic` (the stored console figures, 28 days ending
at the latest stored day). `NO_TRAFFIC`, the default of an application built without it, answers "no
data" for every site: tasks then show `clicks_28d`/`impressions_28d` null, `has_traffic_data` false, and
the impact's traffic term is zero.
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
