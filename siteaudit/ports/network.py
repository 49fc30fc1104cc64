"""What the services need to reach other machines: host name resolution and single HTTP fetches."""

from typing import Protocol

from siteaudit.domain.network import FetchRequest, FetchResponse, IPAddress


class HostResolver(Protocol):
    def resolve(self, host: str) -> tuple[IPAddress, ...]:
        """Return every address `host` resolves to (A and AAAA), in the resolver's order, never empty.

        Blocking: async callers run it off the event loop. `host` is a name as it appears in a URL
        (IDNA already applied). Raises NameNotResolved when the name has no address, the resolver
        fails, or it gives up waiting. It does not judge the addresses: that is the guard's job.
        """
        ...


class Fetcher(Protocol):
    async def fetch(self, request: FetchRequest) -> FetchResponse:
        """Send `request` once and read its answer; redirects are returned, never followed.

        Every connection goes through the SSRF guard: the host is resolved once, the fetch is refused
        when any answer is outside the address policy, and the checked address is the one connected to.
        The body is read up to the cap (`request.max_bytes` or the fetcher's default), the rest
        discarded with `truncated` set; the whole exchange ends at the deadline (`request.deadline_s`
        or the default), however slowly the server drips. Never raises for network outcomes: they come
        back as `error` (dns, connect, tls, timeout, too_large, refused, protocol) with a detail.
        """
        ...

    async def aclose(self) -> None:
        """Close pooled connections. The fetcher is unusable afterwards."""
        ...


class BlockingFetcher(Protocol):
    """The same contract as Fetcher for synchronous callers (webhook sender, site verification)."""

    def fetch(self, request: FetchRequest) -> FetchResponse:
        """As Fetcher.fetch, blocking the calling thread until the answer or the deadline."""
        ...

    def close(self) -> None:
        """Release what the fetcher holds. The fetcher is unusable afterwards."""
        ...
