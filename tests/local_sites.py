"""Crawl terms for test sites served on 127.0.0.1.

An audit is paced by its own `max_rps` (2 requests/s unless the audit says otherwise) and by robots.txt's
`Crawl-delay`, and every host by the shared host limit (10/s, burst 5): right for other people's sites, but a
test of what an audit finds, reports or costs would spend most of its time waiting for its turns on a site
of a handful of pages. `SITEAUDIT_UNPACED_HOSTS` and `SITEAUDIT_HOST_LIMITS` are the operator's way out for
their own sites (docs/configuration.md); the tests use it for their sites on 127.0.0.1. Tests of the pacing itself (max_rps,
Crawl-delay, the host limit) do not use these terms.
"""

from typing import Any, Final

# 127.0.0.1 by address, and by name as pytest-httpserver's URLs have it
LOCAL_HOSTS: Final = ("127.0.0.1", "localhost")


def unpaced(*names: str) -> dict[str, Any]:
    """Settings(**unpaced(...), ...): audits of 127.0.0.1, localhost and these host names (the names a test's
    own resolver points at 127.0.0.1: an audit is paced by the host name of its URL) wait for no max_rps or
    Crawl-delay turn, and the host limit lets the whole site through at once."""
    hosts = (*LOCAL_HOSTS, *names)
    return {"unpaced_hosts": hosts, "host_limits": tuple((host, 1000.0) for host in hosts)}


# Settings(**UNPACED_LOCAL, ...): the sites reached at 127.0.0.1 or localhost.
UNPACED_LOCAL: Final[dict[str, Any]] = unpaced()


# The same terms as a service or the CLI reads them from its environment (Settings.from_env).
UNPACED_LOCAL_ENV: Final[dict[str, str]] = {
    "SITEAUDIT_UNPACED_HOSTS": ",".join(LOCAL_HOSTS),
    "SITEAUDIT_HOST_LIMITS": ",".join(f"{host}=1000" for host in LOCAL_HOSTS),
}

# serve_forever()'s poll interval for the tests' own HTTP servers: shutdown() waits for the loop's next poll,
# 0.5 s by default, which every server stopped at the end of a test paid.
SERVER_POLL_S: Final = 0.05
