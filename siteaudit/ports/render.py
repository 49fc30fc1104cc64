"""Rendering pages in a browser (docs/rendering.md): the crawl service hands a page's raw answer to a
`Renderer` and gets back its rendered DOM and what happened on the way.

The browser never reaches the network on its own: every request it makes (the page's scripts, styles,
images, fetches, frames) is handed to the `BrowserRequests` the crawl gives, which answers it through the
crawler's own guard or refuses it. The renderer reports each refusal with the page.
"""

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from attrs import frozen

from siteaudit.domain.network import FetchResponse
from siteaudit.domain.render import Refusal, RenderBudget, Rendered


@frozen
class BrowserRequest:
    """A request the page's browser wants made."""

    url: str
    method: str = "GET"
    navigation: bool = False  # the page itself or a frame's document
    resource_type: str = ""  # what the browser calls it: document, script, stylesheet, image, fetch...


@frozen
class Refused:
    """The guard did not make the request."""

    reason: Refusal
    detail: str = ""


# Answers one browser request: the response it got (an error response for a network failure), or why it
# was not made. Called on the crawl's event loop.
BrowserRequests = Callable[[BrowserRequest], Awaitable[FetchResponse | Refused]]


class RenderSession(Protocol):
    """One audit's browser context: its storage (cookies, local storage, caches) is the audit's alone."""

    async def render(self, document: FetchResponse, *, budget: RenderBudget) -> Rendered:
        """Load `document` (the page's raw answer, already fetched: it is not fetched again) in a fresh
        tab and return its DOM once the page has loaded and its network stayed quiet, or at the time
        budget. Never raises for what the page does: a crash, a timeout or a spent budget comes back in
        `Rendered.end` and `over_budget`."""
        ...


class Renderer(Protocol):
    def session(self, requests: BrowserRequests) -> AbstractAsyncContextManager[RenderSession]:
        """A browser context for one audit's slice, whose every request goes to `requests`; closed (its
        storage dropped) when the block ends."""
        ...

    async def aclose(self) -> None:
        """Stop the browser. The renderer is unusable afterwards."""
        ...
