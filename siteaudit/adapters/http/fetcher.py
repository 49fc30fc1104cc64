"""HttpxFetcher: one request at a time through the SSRF guard, with a body cap and a wall-clock deadline."""

import asyncio
import concurrent.futures
import importlib
import re
import ssl
import time
import zlib
from collections.abc import Coroutine
from typing import Any, Final, TypeVar

import httpcore2 as httpcore
import httpx2 as httpx
from attrs import field, frozen

from siteaudit.adapters.http.guard import AddressGuard, GuardedAsyncTransport, refusing_cookies
from siteaudit.domain.facts import FetchError
from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.network import (
    MAX_REDIRECTS,
    AddressPolicy,
    FetchRequest,
    FetchResponse,
    FollowedFetch,
    NetworkFailure,
    RedirectChain,
    UrlRefused,
)
from siteaudit.ports.network import Fetcher, HostResolver

# Imported with this module rather than by a process's first request: on a loaded machine, importing
# anyio's asyncio backend took hundreds of milliseconds between a host's shared turn and its first
# request leaving, so that request reached the host bunched with the turns after it.
importlib.import_module("anyio._backends._asyncio")

# Only encodings decoded here with a bound on the output; brotli is not installed, so it is not offered.
ACCEPT_ENCODING: Final = "gzip, deflate"

# Host names as httpx hands them over (lower-cased, IDNA applied); anything else (percent escapes,
# stray punctuation) is a trick or a mistake, and getaddrinfo's reading of it is not worth finding out.
_HOST_NAME = re.compile(r"[a-z0-9_.-]+")


@frozen
class FetchLimits:
    """Per-phase timeouts, the whole-request deadline, the body cap and the pool size of one fetcher."""

    connect_s: float = 10.0
    read_s: float = 15.0
    write_s: float = 10.0
    deadline_s: float = 30.0
    max_bytes: int = 5 * 1024 * 1024
    max_connections: int = 10


class _Undecodable(Exception):
    pass


class _BodyReader:
    """Collects at most `cap` decoded bytes; gzip and deflate are inflated with the output bounded."""

    def __init__(self, encoding: str | None, cap: int) -> None:
        self.cap = cap
        self.body = bytearray()
        self.truncated = False
        codings = [c.strip().lower() for c in (encoding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise _Undecodable(f"unsupported content-encoding {encoding!r}")
        self._coding = codings[0] if codings else None
        self._inflater: Any = None
        if self._coding in ("gzip", "x-gzip"):
            self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self._coding == "deflate":
            self._inflater = zlib.decompressobj()
        self._first = True

    def feed(self, raw: bytes) -> bool:
        """Take one chunk off the wire; False once the cap is reached and nothing more is wanted."""
        room = self.cap - len(self.body) + 1  # one byte past the cap tells "exactly full" from "more"
        piece = raw[:room] if self._inflater is None else self._inflate(raw, room)
        self.body += piece
        if len(self.body) > self.cap:
            del self.body[self.cap :]
            self.truncated = True
            return False
        return True

    def _inflate(self, raw: bytes, room: int) -> bytes:
        try:
            piece: bytes = self._inflater.decompress(raw, room)
        except zlib.error as error:
            if self._coding == "deflate" and self._first:
                # Some servers send raw deflate without the zlib wrapper the RFC asks for.
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                self._first = False
                return self._inflate(raw, room)
            raise _Undecodable(f"bad {self._coding} body: {error}") from None
        self._first = False
        return piece


class _Progress:
    """What has arrived so far, kept outside the deadline's scope so a cut keeps it."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: tuple[tuple[str, str], ...] = ()
        self.ttfb_ms: int | None = None
        self.remote_address: str | None = None
        self.reader: _BodyReader | None = None


def _ms(since: float) -> int:
    return round((time.perf_counter() - since) * 1000)


def _check_url(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as error:
        raise UrlRefused(url, f"invalid URL: {error}") from None
    if parsed.scheme not in ("http", "https"):
        raise UrlRefused(url, f"scheme {parsed.scheme or '(none)'!r} is not fetched")
    if parsed.userinfo:
        raise UrlRefused(url, "credentials in the URL are never sent")
    host = parsed.host
    if not host:
        raise UrlRefused(url, "no host")
    if ":" not in host and not _HOST_NAME.fullmatch(host):
        raise UrlRefused(url, f"host {host!r} is not a plain host name")
    return parsed


def _classify(error: BaseException) -> tuple[FetchError, str]:
    detail = str(error) or type(error).__name__
    if isinstance(error, NetworkFailure):
        return error.kind, error.message
    if isinstance(error, httpx.TimeoutException):
        return FetchError.TIMEOUT, f"{type(error).__name__}: {detail}"
    if isinstance(error, httpx.ConnectError):
        cause: BaseException | None = error
        while cause is not None:
            if isinstance(cause, ssl.SSLError):
                return FetchError.TLS, detail
            cause = cause.__cause__ or cause.__context__
        return FetchError.CONNECT, detail
    if isinstance(error, httpx.NetworkError):
        return FetchError.CONNECT, detail
    if isinstance(error, httpx.RemoteProtocolError) and "too long" in detail:
        # h11's limit on the header section (100 KB in httpcore).
        return FetchError.TOO_LARGE, f"response head too large: {detail}"
    if isinstance(error, httpx.ProtocolError | _Undecodable):
        return FetchError.PROTOCOL, detail
    if isinstance(error, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return FetchError.REFUSED, detail
    if isinstance(error, httpx.HTTPError):
        return FetchError.PROTOCOL, detail
    raise error


class HttpxFetcher:
    """The Fetcher port over httpx: one small connection pool, every connection through the guard."""

    def __init__(
        self,
        resolver: HostResolver,
        policy: AddressPolicy,
        *,
        limits: FetchLimits = FetchLimits(),
        user_agent: str = USER_AGENT,
        verify: ssl.SSLContext | bool = True,
        inner_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self.limits = limits
        self.guard = AddressGuard(resolver, policy, resolve_timeout_s=limits.connect_s)
        pool = httpx.Limits(
            max_connections=limits.max_connections, max_keepalive_connections=limits.max_connections
        )
        self._client = httpx.AsyncClient(
            transport=GuardedAsyncTransport(self.guard, verify=verify, limits=pool, inner=inner_backend),
            trust_env=False,
            follow_redirects=False,
            cookies=refusing_cookies(),
            timeout=httpx.Timeout(
                connect=limits.connect_s, read=limits.read_s, write=limits.write_s, pool=limits.deadline_s
            ),
            headers={"User-Agent": user_agent, "Accept-Encoding": ACCEPT_ENCODING},
        )

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        started = time.perf_counter()
        deadline = request.deadline_s if request.deadline_s is not None else self.limits.deadline_s
        cap = request.max_bytes if request.max_bytes is not None else self.limits.max_bytes
        progress = _Progress()
        error: FetchError | None = None
        detail: str | None = None
        try:
            url = _check_url(request.url)
            async with asyncio.timeout(deadline):
                await self._exchange(url, request, cap, progress, started)
        except TimeoutError:
            error, detail = FetchError.TIMEOUT, f"no complete answer within the {deadline:g} s deadline"
        except Exception as failure:  # classified, or re-raised when not a network outcome
            error, detail = _classify(failure)
        reader = progress.reader
        return FetchResponse(
            url=request.url,
            status=progress.status,
            headers=progress.headers,
            body=bytes(reader.body) if reader else b"",
            truncated=reader.truncated if reader else False,
            ttfb_ms=progress.ttfb_ms,
            total_ms=_ms(started),
            error=error,
            error_detail=detail,
            remote_address=progress.remote_address,
        )

    async def _exchange(
        self, url: httpx.URL, request: FetchRequest, cap: int, progress: _Progress, started: float
    ) -> None:
        outgoing = self._client.build_request(
            request.method, url, headers=request.headers, content=request.content
        )
        response = await self._client.send(outgoing, stream=True)
        try:
            progress.ttfb_ms = _ms(started)
            progress.status = response.status_code
            progress.headers = tuple(
                (name.decode("latin-1").lower(), value.decode("latin-1"))
                for name, value in response.headers.raw
            )
            stream = response.extensions.get("network_stream")
            peer = stream.get_extra_info("server_addr") if stream is not None else None
            progress.remote_address = str(peer[0]) if peer else None
            progress.reader = _BodyReader(response.headers.get("content-encoding"), cap)
            if request.method == "HEAD":
                return
            async for raw in response.aiter_raw():
                if not progress.reader.feed(raw):
                    break
        finally:
            # Closing an unfinished body drops the connection instead of reading the rest.
            await response.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> "HttpxFetcher":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def follow_redirects(
    fetcher: Fetcher,
    request: FetchRequest,
    *,
    max_hops: int = MAX_REDIRECTS,
    ports: frozenset[int] | None = None,
) -> FollowedFetch:
    """Fetch `request`, following up to `max_hops` redirects (`RedirectChain`), each a new fetch through
    the guard. `ports` defaults to 80, 443 and the first URL's own port. A refused hop (loop, too many, a
    port outside the crawl, or an address the guard refuses) ends the chain with that error as the answer.
    """
    chain: RedirectChain | FollowedFetch = RedirectChain.start(request, max_hops=max_hops, ports=ports)
    while isinstance(chain, RedirectChain):
        chain = chain.answered(await fetcher.fetch(chain.request))
    return chain


_T = TypeVar("_T")


def _run_blocking(work: Coroutine[Any, Any, _T]) -> _T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    # Called from a thread that runs an event loop: block a helper thread instead of that loop's own.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()


@frozen(eq=False)
class HttpxBlockingFetcher:
    """The BlockingFetcher port: each call runs an HttpxFetcher on a private event loop.

    For low-volume synchronous callers (webhook deliveries, verification files): no pool is kept
    between calls, so nothing leaks between them, and the deadline is the same wall clock as above.
    """

    _resolver: HostResolver
    _policy: AddressPolicy
    _limits: FetchLimits = field(default=FetchLimits(max_connections=1), kw_only=True)
    _user_agent: str = field(default=USER_AGENT, kw_only=True)
    _verify: ssl.SSLContext | bool = field(default=True, kw_only=True)

    def fetch(self, request: FetchRequest) -> FetchResponse:
        return _run_blocking(self._once(request, follow=False)).response

    def fetch_following(self, request: FetchRequest, *, max_hops: int = MAX_REDIRECTS) -> FollowedFetch:
        """As follow_redirects, blocking."""
        return _run_blocking(self._once(request, follow=True, max_hops=max_hops))

    async def _once(
        self, request: FetchRequest, *, follow: bool, max_hops: int = MAX_REDIRECTS
    ) -> FollowedFetch:
        fetcher = HttpxFetcher(
            self._resolver,
            self._policy,
            limits=self._limits,
            user_agent=self._user_agent,
            verify=self._verify,
        )
        async with fetcher:
            if follow:
                return await follow_redirects(fetcher, request, max_hops=max_hops)
            return FollowedFetch(response=await fetcher.fetch(request))

    def close(self) -> None:
        pass  # nothing is held between calls
