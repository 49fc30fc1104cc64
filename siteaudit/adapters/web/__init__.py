"""The app at `/app` (docs/app.md): server-rendered pages for what `/v1` does not do (keys, the webhook
secret, team members, device approval), on the same service. A driving adapter: it calls the application
interface only."""

from collections.abc import Callable, Iterable, Sequence
from importlib.resources import files
from typing import Any

import falcon

from siteaudit.adapters.web import audits, pages, sites
from siteaudit.adapters.web.guard import CookieNames, FormRefused, Guard
from siteaudit.adapters.web.remembered import RememberedBrowsers
from siteaudit.domain.error import DomainError
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.ratelimit import RateLimiter
from siteaudit.ports.sealing import Sealing

__all__ = ["create_web_app", "mount"]

PREFIX = "/app"


class Stylesheet:
    """A static file of the app: a stylesheet, or the report page's one script (`content_type`)."""

    anonymous = True

    def __init__(self, name: str = "app.css", content_type: str = "text/css; charset=utf-8") -> None:
        self.css = (files("siteaudit.adapters.web") / "static" / name).read_bytes()
        self.content_type = content_type

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = self.content_type
        resp.set_header("Cache-Control", "public, max-age=3600")
        resp.data = self.css


def create_web_app(
    application: pages.WebApplication,
    *,
    clock: Clock,
    limiter: RateLimiter,
    sealing: Sealing,
    secrets: Secrets,
    trusted_proxies: Sequence[str] = (),
    secure_cookies: bool = False,
    public_url: str = "http://127.0.0.1:8080",
) -> "falcon.App[Any, Any]":
    """The WSGI application of the pages under `/app`."""
    cookies = CookieNames(secure_cookies)
    guard = Guard(application, cookies=cookies, public_url=public_url, trusted_proxies=trusted_proxies)
    browsers = RememberedBrowsers(sealing, secrets, clock)
    parts = pages.WebParts(application, clock, limiter, cookies, guard, browsers)
    web: falcon.App[Any, Any] = falcon.App(middleware=[guard], cors_enable=False)
    web.req_options.strip_url_path_trailing_slash = True

    def refused(req: falcon.Request, resp: falcon.Response, error: Exception, params: Any) -> None:
        _page(
            parts,
            req,
            resp,
            403,
            "This form has expired or came from elsewhere: reload the page and try again.",
        )

    def domain_error(req: falcon.Request, resp: falcon.Response, error: DomainError, params: Any) -> None:
        _page(parts, req, resp, error.status, pages._say(error))

    def http_error(req: falcon.Request, resp: falcon.Response, error: falcon.HTTPError, params: Any) -> None:
        _page(parts, req, resp, error.status_code, error.title or "That did not work.")

    web.add_error_handler(FormRefused, refused)
    web.add_error_handler(DomainError, domain_error)
    web.add_error_handler(falcon.HTTPError, http_error)
    for path, resource in (
        ("", pages.Home(parts)),
        ("/sign-in", pages.SignIn(parts)),
        ("/sign-up", pages.SignUp(parts)),
        ("/sign-out", pages.SignOut(parts)),
        ("/forgot", pages.ForgotPassword(parts)),
        ("/password", pages.ChoosePassword(parts)),
        ("/team", pages.SwitchTeam(parts)),
        ("/account", pages.AccountPage(parts)),
        ("/keys", pages.KeysPage(parts)),
        ("/keys/revoke", pages.RevokeKey(parts)),
        ("/webhook", pages.WebhookPage(parts)),
        ("/members", pages.MembersPage(parts)),
        ("/members/invite", pages.InviteMember(parts)),
        ("/members/remove", pages.RemoveMember(parts)),
        ("/sites", sites.SitesList(parts)),
        ("/sites/{site_id}", sites.SitePage(parts)),
        ("/device", pages.DevicePage(parts)),
        ("/billing", pages.BillingPage(parts)),
        ("/static/app.css", Stylesheet()),
        *audits.routes(parts),
        ("/static/reports.css", Stylesheet("reports.css")),
        ("/static/copy.js", Stylesheet("copy.js", "text/javascript; charset=utf-8")),
    ):
        web.add_route(PREFIX + path, resource)
    web.add_route("/", audits.ServiceRoot())
    return web


def _page(
    parts: pages.WebParts, req: falcon.Request, resp: falcon.Response, status: int, message: str
) -> None:
    resp.status = status
    resp.content_type = falcon.MEDIA_HTML
    resp.text = parts.env.get_template("problem.html").render(
        viewer=getattr(req.context, "viewer", None),
        csrf="",
        path=req.path,
        notice="",
        error="",
        sign_up_open=False,
        status=status,
        message=message,
    )


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def mount(web: WsgiApp, rest: WsgiApp, *, rest_prefixes: tuple[str, ...] = ()) -> WsgiApp:
    """One WSGI service: `/app` and everything under it to the app, the rest to `/v1`'s application.
    `rest_prefixes` are paths under `/app` that the REST application serves (the local test checkout)."""

    def service(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path in ("", "/"):  # the service's root leads to the app (docs/app.md)
            return web(environ, start_response)
        if (path == PREFIX or path.startswith(PREFIX + "/")) and not path.startswith(rest_prefixes):
            return web(environ, start_response)
        return rest(environ, start_response)

    return service
