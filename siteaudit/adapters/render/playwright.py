# Over 400 lines: the rendering pool's browser, its loop thread, contexts, budgets and replacement are one lifecycle.
"""The rendering pool: Debian's chromium driven by Playwright's Python API (docs/rendering.md).

One browser per process, launched on first use from the installed executable (nothing is downloaded),
on a thread of its own with its own event loop: crawl slices each run their own loop (`asyncio.run`),
and a Playwright connection belongs to the loop that opened it. Calls cross between the two loops.

Every request the browser makes is intercepted (`BrowserContext.route`) and answered by the crawl's
`BrowserRequests`, which fetches it through the crawler's guard, or refuses it; the browser itself
reaches nothing: it is started behind a proxy that does not exist and with every name resolving to
nothing, so a request that escaped interception (a redirect the browser followed on its own, a prefetch)
fails instead of leaving. WebSockets are closed, service workers blocked, downloads refused.

The browser is replaced after `pages_per_browser` pages, when its processes hold more than
`max_browser_mb` (checked every `memory_every` pages), and after a crash; a crash mid-page
reports that page as crashed and ends no audit. A page is bounded by its `RenderBudget`; the caller's
wait is bounded too, so a browser that stops answering costs one page, never a slice.
"""

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from concurrent.futures import Future
from typing import Any, Final, TypeVar

from attrs import define, field
from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Error,
    Page,
    Playwright,
    Route,
    WebSocketRoute,
    async_playwright,
)

from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.network import FetchResponse
from siteaudit.domain.render import Refusal, RenderBudget, Rendered, RenderEnd, RequestNote
from siteaudit.ports.render import BrowserRequest, BrowserRequests, Refused

log = logging.getLogger("siteaudit.render")

T = TypeVar("T")

CHROMIUM: Final = "/usr/bin/chromium"
# Nothing listens there: a request the interception did not catch fails at the proxy.
_NOWHERE_PROXY: Final = {"server": "http://127.0.0.1:9", "bypass": "<-loopback>"}
_LAUNCH_ARGS: Final = (
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-dev-shm-usage",
)
# Headers the browser must not see from a fetched answer: the body it gets is decoded and whole.
_DROPPED_HEADERS: Final = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)
# The console lines the browser writes for requests we refused or that failed: reported as requests.
_REQUEST_NOISE: Final = "Failed to load resource"
_GRACE_S: Final = 5.0  # beyond the page's budget: reading the DOM, closing the tab


def _headers(response: FetchResponse) -> dict[str, str]:
    merged: dict[str, str] = {}
    for name, value in response.headers:
        if name in _DROPPED_HEADERS:
            continue
        if name in merged:
            merged[name] += ("\n" if name == "set-cookie" else ", ") + value
        else:
            merged[name] = value
    return merged


@define
class _PageRun:
    """What one page's rendering gathered while it ran (on the browser's loop)."""

    document: FetchResponse
    budget: RenderBudget
    requests: int = 0
    bytes: int = 0
    in_flight: int = 0
    last_activity: float = field(factory=time.monotonic)
    console_errors: list[str] = field(factory=list)
    failed: list[RequestNote] = field(factory=list)
    refused: list[RequestNote] = field(factory=list)
    over_budget: str | None = None
    crashed: bool = False
    document_served: bool = False
    loaded: asyncio.Event = field(factory=asyncio.Event)

    def over(self, what: str) -> None:
        if self.over_budget is None:
            self.over_budget = what


@define
class _Browser:
    browser: Browser
    pages: int = 0
    contexts: int = 0
    dead: bool = False  # crashed or stopped answering
    retired: bool = False  # spent (pages or memory): its sessions move to a fresh browser

    @property
    def usable(self) -> bool:
        return not self.dead and not self.retired


class PlaywrightRenderer:
    """A `Renderer` over one chromium of this process, shared by every audit's slices.

    `max_tabs`: pages rendered at once by this process (each tab costs tens of megabytes);
    `pages_per_browser`: pages after which the browser is replaced by a fresh one; `max_browser_mb`: the
    memory (PSS of the browser's processes) above which it is replaced too, looked at every
    `memory_every` pages."""

    def __init__(
        self,
        *,
        executable: str = CHROMIUM,
        max_tabs: int = 4,
        pages_per_browser: int = 500,
        max_browser_mb: int = 2048,
        memory_every: int = 20,
        sandbox: bool = False,
        launch_timeout_s: float = 30.0,
    ) -> None:
        self.executable = executable
        self.max_tabs = max_tabs
        self.pages_per_browser = pages_per_browser
        self.max_browser_mb = max_browser_mb
        self.sandbox = sandbox  # Chromium's own sandbox (its renderers confined); it cannot run as root
        self.memory_every = max(1, memory_every)
        self.launch_timeout_s = launch_timeout_s
        self.launches = 0  # browsers started by this renderer (figures, tests)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Playwright | None = None
        self._current: _Browser | None = None
        self._tabs: asyncio.Semaphore | None = None
        self._launching: asyncio.Lock | None = None

    # --- the browser's loop ------------------------------------------------------------------------

    def _browser_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=run, name="siteaudit-render", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def _submit(self, coro: Coroutine[Any, Any, T]) -> "Future[T]":
        return asyncio.run_coroutine_threadsafe(coro, self._browser_loop())

    async def _on_browser_loop(self, coro: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
        future = self._submit(coro)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        finally:
            future.cancel()  # the caller stopped waiting: the work on the browser's loop stops too

    async def _browser(self) -> _Browser:
        """The current browser, launched (or replaced) when there is none, it crashed or it is spent."""
        if self._launching is None:
            self._launching = asyncio.Lock()
            self._tabs = asyncio.Semaphore(self.max_tabs)
        async with self._launching:
            current = self._current
            if current is not None and current.usable:
                return current
            if current is not None and current.contexts == 0:
                await _quietly(current.browser.close())
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            browser = await self._playwright.chromium.launch(
                executable_path=self.executable,
                chromium_sandbox=self.sandbox,
                args=list(_LAUNCH_ARGS),
                proxy=dict(_NOWHERE_PROXY),  # type: ignore[arg-type]  # a ProxySettings TypedDict
                timeout=self.launch_timeout_s * 1000,
                handle_sigint=False,
                handle_sigterm=False,
                handle_sighup=False,
            )
            self.launches += 1
            held = _Browser(browser)
            browser.on("disconnected", lambda _: setattr(held, "dead", True))
            self._current = held
            log.info("chromium %s started for rendering", browser.version)
            return held

    async def _release(self, held: _Browser) -> None:
        held.contexts -= 1
        if held is not self._current and held.contexts == 0:
            await _quietly(held.browser.close())

    def _spend(self, held: _Browser) -> None:
        """One more page for `held`: retired when it has rendered its share or holds too much memory."""
        held.pages += 1
        if held.pages >= self.pages_per_browser:
            held.retired = True
        elif held.pages % self.memory_every == 0 and browser_memory() > self.max_browser_mb << 20:
            log.info("the rendering browser holds over %d MB: replaced", self.max_browser_mb)
            held.retired = True

    async def _open_context(self) -> tuple[_Browser, BrowserContext]:
        held = await self._browser()
        context = await held.browser.new_context(
            service_workers="block",
            accept_downloads=False,
            user_agent=USER_AGENT,
            java_script_enabled=True,
            bypass_csp=False,
        )
        held.contexts += 1
        await context.route_web_socket("**/*", _close_socket)
        return held, context

    async def _close(self) -> None:
        current, self._current = self._current, None
        if current is not None:
            await _quietly(current.browser.close())
        if self._playwright is not None:
            await _quietly(self._playwright.stop())
            self._playwright = None

    # --- the caller's side ---------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def session(self, requests: BrowserRequests) -> AsyncIterator["PlaywrightSession"]:
        session = PlaywrightSession(self, _Bridge(requests, asyncio.get_running_loop()))
        try:
            yield session
        finally:
            await session.aclose()

    async def aclose(self) -> None:
        if self._loop is None:
            return
        loop, thread = self._loop, self._thread
        try:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._close(), loop))
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                await asyncio.to_thread(thread.join, 10)
            self._loop = self._thread = None
            self._launching = self._tabs = None


class _Bridge:
    """Calls the crawl's `BrowserRequests` on the crawl's loop from the browser's loop."""

    def __init__(self, requests: BrowserRequests, loop: asyncio.AbstractEventLoop) -> None:
        self.requests = requests
        self.loop = loop

    async def __call__(self, request: BrowserRequest) -> FetchResponse | Refused:
        future = asyncio.run_coroutine_threadsafe(_call(self.requests, request), self.loop)
        try:
            return await asyncio.wrap_future(future)
        finally:
            future.cancel()


async def _call(requests: BrowserRequests, request: BrowserRequest) -> FetchResponse | Refused:
    return await requests(request)


class PlaywrightSession:
    """One audit slice's browser context (its own storage), opened on the first page it renders."""

    def __init__(self, renderer: PlaywrightRenderer, bridge: _Bridge) -> None:
        self.renderer = renderer
        self.bridge = bridge
        self._held: _Browser | None = None
        self._context: BrowserContext | None = None
        self._idle: list[_Tab] = []

    async def render(self, document: FetchResponse, *, budget: RenderBudget) -> Rendered:
        started = time.monotonic()
        try:
            return await self.renderer._on_browser_loop(
                self._render(document, budget), timeout=budget.time_s + 2 * _GRACE_S
            )
        except TimeoutError:
            # The browser stopped answering: replaced before the next page.
            if self._held is not None:
                self._held.dead = True
            return Rendered(
                RenderEnd.CRASHED,
                elapsed_ms=_ms_since(started),
                over_budget="time",
                detail="the browser did not answer within the page's time budget",
            )
        except Exception as error:  # the browser or its connection failed: this page only
            log.warning("rendering %s failed: %s", document.url, error)
            return Rendered(RenderEnd.CRASHED, elapsed_ms=_ms_since(started), detail=_short(error))

    async def _context_for_page(self) -> BrowserContext:
        held, context = self._held, self._context
        if held is not None and context is not None and held.usable:
            return context
        if held is not None:
            await self.renderer._release(held)
        self._idle = []
        self._held, self._context = await self.renderer._open_context()
        return self._context

    async def _render(self, document: FetchResponse, budget: RenderBudget) -> Rendered:
        context = await self._context_for_page()
        tabs = self.renderer._tabs
        assert tabs is not None
        async with tabs:
            assert self._held is not None
            self.renderer._spend(self._held)
            tab = self._idle.pop() if self._idle else await _Tab.open(context, self.bridge)
            rendered = await tab.render(_PageRun(document, budget))
            # A tab that ended cleanly is blanked and kept for the audit's next page (opening one costs
            # more than the page); one that timed out, crashed or failed is closed.
            if rendered.end is RenderEnd.DONE and await tab.blank():
                self._idle.append(tab)
            else:
                await tab.close()
            return rendered

    async def aclose(self) -> None:
        held, context = self._held, self._context
        self._held = self._context = None
        if held is None or context is None:
            return

        async def close() -> None:
            await _quietly(context.close())
            await self.renderer._release(held)

        with contextlib.suppress(Exception):
            await self.renderer._on_browser_loop(close(), timeout=_GRACE_S * 2)


class _Tab:
    """A browser tab of a session, its listeners and interception set once; `run` is the page it is
    rendering now (the listeners report to it)."""

    def __init__(self, page: Page, bridge: _Bridge) -> None:
        self.page = page
        self.bridge = bridge
        self.run: _PageRun | None = None

    @classmethod
    async def open(cls, context: BrowserContext, bridge: _Bridge) -> "_Tab":
        tab = cls(await context.new_page(), bridge)
        page = tab.page
        page.on("load", lambda _: tab._note(lambda run: run.loaded.set()))
        page.on("console", lambda message: tab._note(lambda run: _console(run, message)))
        page.on(
            "pageerror",
            lambda error: tab._note(lambda run: run.console_errors.append(f"uncaught: {_short(error)}")),
        )
        page.on("crash", lambda _: tab._note(lambda run: setattr(run, "crashed", True)))
        page.on(
            "download",
            lambda download: tab._note(
                lambda run: run.refused.append(RequestNote(download.url, Refusal.DOWNLOAD))
            ),
        )
        await page.route("**/*", tab._route)
        return tab

    def _note(self, record: Callable[[_PageRun], object]) -> None:
        if self.run is not None:
            record(self.run)

    async def _route(self, route: Route) -> None:
        if self.run is None:
            await route.abort("blockedbyclient")  # between pages: a late timer of the last one
            return
        await _answer(route, self.run, self.bridge)

    async def render(self, run: _PageRun) -> Rendered:
        self.run = run
        try:
            return await _render_page(self.page, run)
        finally:
            self.run = None

    async def blank(self) -> bool:
        """Leave the page (its timers and requests stop); False when the tab no longer answers."""
        try:
            await asyncio.wait_for(self.page.goto("about:blank"), _GRACE_S)
        except (TimeoutError, Error):
            return False
        return True

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.page.close(run_before_unload=False), _GRACE_S)


async def _render_page(page: Page, run: _PageRun) -> Rendered:
    """Load the page, let it settle within its budget, and read its DOM."""
    started = time.monotonic()
    deadline = started + run.budget.time_s
    loaded = run.loaded
    end = RenderEnd.DONE
    detail: str | None = None
    try:
        await page.goto(run.document.url, wait_until="commit", timeout=run.budget.time_s * 1000)
        while True:
            now = time.monotonic()
            if run.crashed:
                break
            if now >= deadline:
                end = RenderEnd.TIMEOUT
                run.over("time")
                break
            quiet = now - run.last_activity
            if loaded.is_set() and run.in_flight == 0 and quiet >= run.budget.settle_s:
                break
            await asyncio.sleep(0.02)
    except Error as error:
        if run.crashed:
            end = RenderEnd.CRASHED
        elif "Timeout" in type(error).__name__ or "Timeout" in str(error):
            end = RenderEnd.TIMEOUT
            run.over("time")
        else:
            end, detail = RenderEnd.FAILED, _short(error)
    html: str | None = None
    if run.crashed:
        end, detail = RenderEnd.CRASHED, "the page crashed"
    elif end is not RenderEnd.FAILED:
        try:
            html = await asyncio.wait_for(page.content(), _GRACE_S)
        except TimeoutError:
            # A script that never yields keeps the page from answering: no DOM to judge.
            end, detail = RenderEnd.TIMEOUT, "the page's scripts never yielded"
            run.over("time")
        except Error as error:
            end, detail = RenderEnd.FAILED, _short(error)
    return Rendered(
        end,
        html=html,
        console_errors=tuple(run.console_errors),
        failed=tuple(run.failed),
        refused=tuple(run.refused),
        requests=run.requests,
        bytes=run.bytes,
        elapsed_ms=_ms_since(started),
        over_budget=run.over_budget,
        detail=detail,
    )


async def _answer(route: Route, run: _PageRun, bridge: _Bridge) -> None:
    """One request of the page: the document from its raw answer, anything else through the guard."""
    request = route.request
    run.requests += 1
    run.in_flight += 1
    run.last_activity = time.monotonic()
    try:
        url = request.url
        navigation = request.is_navigation_request()
        if navigation and not run.document_served and url == run.document.url:
            run.document_served = True
            await _fulfil(route, run, run.document)
            return
        if run.requests > run.budget.max_requests:
            run.over("requests")
            run.refused.append(RequestNote(url, Refusal.BUDGET))
            await route.abort("blockedbyclient")
            return
        if run.bytes >= run.budget.max_bytes:
            run.over("bytes")
            run.refused.append(RequestNote(url, Refusal.BUDGET))
            await route.abort("blockedbyclient")
            return
        answer = await bridge(
            BrowserRequest(url, request.method, navigation=navigation, resource_type=request.resource_type)
        )
        if isinstance(answer, Refused):
            reason = answer.reason.value if not answer.detail else f"{answer.reason.value}: {answer.detail}"
            run.refused.append(RequestNote(url, reason))
            await route.abort("blockedbyclient")
            return
        if answer.error is not None or answer.status is None:
            note = answer.error.value if answer.error is not None else "no answer"
            run.failed.append(
                RequestNote(url, note if not answer.error_detail else f"{note}: {answer.error_detail}")
            )
            await route.abort("failed")
            return
        if answer.status >= 400:
            run.failed.append(RequestNote(url, str(answer.status)))
        await _fulfil(route, run, answer)
    except Error:
        pass  # the page went away (closed at its budget) while this request was answered
    finally:
        run.in_flight -= 1
        run.last_activity = time.monotonic()


async def _fulfil(route: Route, run: _PageRun, answer: FetchResponse) -> None:
    run.bytes += len(answer.body)
    if run.bytes > run.budget.max_bytes:
        run.over("bytes")
    await route.fulfill(status=answer.status or 200, headers=_headers(answer), body=answer.body)


def _console(run: _PageRun, message: ConsoleMessage) -> None:
    if message.type != "error" or message.text.startswith(_REQUEST_NOISE):
        return  # failed and refused requests are reported as requests
    run.console_errors.append(message.text[:500])


async def _close_socket(socket: WebSocketRoute) -> None:
    await socket.close(code=1008, reason="refused by the auditor")


async def _quietly(awaitable: Awaitable[Any]) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(awaitable, _GRACE_S * 2)


def browser_memory() -> int:
    """Bytes held by the chromium processes under this process: their proportional set sizes (shared
    pages counted once) summed. 0 where /proc cannot tell."""
    parents: dict[int, int] = {}
    chromium: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().split(b"\0", 1)[0]
        except OSError:
            continue
        parents[int(entry)] = int(text[text.rindex(")") + 2 :].split()[1])
        if b"chrom" in command:
            chromium.append(int(entry))
    me, total = os.getpid(), 0
    for pid in chromium:
        at = pid
        while at > 1 and at in parents and at != me:
            at = parents[at]
        if at == me:
            total += _pss(pid)
    return total


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _short(error: BaseException | str) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]
