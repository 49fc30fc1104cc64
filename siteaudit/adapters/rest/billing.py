"""Billing doors of their own (docs/rest-api.md "Billing"): the Stripe webhook (its raw body and signature)
and the local provider's TEST PURCHASE page; the three `/v1/billing` links are declared use cases, their
routes derived. Each turns its input into one call of the application."""

import re
import secrets
from typing import Any, Final, Protocol
from urllib.parse import urlencode, urlsplit

import falcon
import jinja2

from siteaudit.adapters.rest.params import MAX_BODY_BYTES, PayloadTooLarge
from siteaudit.domain.credit import as_number
from siteaudit.domain.error import DomainError, Unauthenticated
from siteaudit.domain.ids import UserId
from siteaudit.ports.application import Payments, WebSession

STRIPE_WEBHOOK_PATH: Final = "/billing/stripe/webhook"
TEST_CHECKOUT_PATH: Final = "/app/test-checkout/{session_id}"
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_]{1,255}")


class StripeWebhook:
    """`POST /billing/stripe/webhook`: no key; Stripe's signature over the raw body is the check, and
    validly signed posts count against a per-address limit (after the check, so unsigned ones cost
    no write)."""

    public = True

    def __init__(self, application: Payments) -> None:
        self.application = application

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        if (req.content_length or 0) > MAX_BODY_BYTES:
            raise PayloadTooLarge()
        payload = req.bounded_stream.read(MAX_BODY_BYTES + 1)
        if len(payload) > MAX_BODY_BYTES:
            raise PayloadTooLarge()
        # The client address as the middleware found it (behind trusted proxies, the forwarded one).
        client = getattr(req.context, "client_ip", None) or req.remote_addr or "-"
        outcome = self.application.receive_payment_event(
            payload, req.get_header("Stripe-Signature") or "", client
        )
        resp.media = {"received": True, "outcome": outcome.value}


# --- the local provider's TEST PURCHASE page --------------------------------------------------------------

_templates = jinja2.Environment(
    loader=jinja2.PackageLoader("siteaudit.adapters.rest", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def _page_headers(resp: falcon.Response, nonce: str) -> None:
    """As every page of the app (docs/app.md "The app at"): no script at all, the one style block by nonce,
    never framed, no referrer leaks."""
    resp.set_header(
        "Content-Security-Policy",
        f"default-src 'none'; style-src 'nonce-{nonce}'; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'",
    )
    resp.set_header("X-Frame-Options", "DENY")
    resp.set_header("Referrer-Policy", "same-origin")
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.set_header("Cache-Control", "no-store")


def _render(resp: falcon.Response, status: int, **context: Any) -> None:
    nonce = secrets.token_urlsafe(16)
    _page_headers(resp, nonce)
    resp.status = status
    resp.content_type = falcon.MEDIA_HTML
    values: dict[str, Any] = {"checkout": None, "done": None, "error": None, "balance": None}
    values.update(context)
    resp.text = _templates.get_template("test_checkout.html").render(nonce=nonce, **values)


def _same_origin(req: falcon.Request) -> bool:
    """A form post from another site is refused; browsers send Origin on every POST."""
    origin = req.get_header("Origin")
    if origin is None:
        return True  # not a browser's cross-site form post; the single-use token still applies
    return urlsplit(origin).netloc == req.netloc


class TestCheckoutApplication(Payments, WebSession, Protocol):
    """The test checkout page's roles: the local provider's checkout, for the person the app's session is."""


class TestCheckoutPage:
    """`/app/test-checkout/{session}` (the local provider only): GET shows what is bought, clearly marked
    as a test purchase, with a single-use token in its form; POST with that token completes it. Only for
    the person signed in to the app who asked for it: signed out, the app's sign-in comes first; anyone
    else's session is not found (404), and nothing is bought."""

    public = True
    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, application: TestCheckoutApplication, *, session_cookie: str) -> None:
        self.application = application
        self.session_cookie = session_cookie  # the app's (`/app`) session cookie

    def buyer(self, req: falcon.Request) -> UserId:
        """The person signed in to the app; the app's sign-in, coming back here, when nobody is."""
        token = (req.get_cookie_values(self.session_cookie) or [""])[0]
        try:
            if token and len(token) <= 128:
                return self.application.app_viewer(token).user.id
        except Unauthenticated:
            pass
        raise falcon.HTTPSeeOther(f"/app/sign-in?{urlencode({'next': req.path})}")

    def on_get(self, req: falcon.Request, resp: falcon.Response, session_id: str) -> None:
        try:
            if not _SESSION_ID.fullmatch(session_id):
                raise falcon.HTTPNotFound()
            checkout = self.application.open_test_checkout(session_id, self.buyer(req))
        except (DomainError, falcon.HTTPError) as error:
            _render(resp, _status(error), error=_why(error))
            return
        _render(resp, 200, checkout=checkout)

    def on_post(self, req: falcon.Request, resp: falcon.Response, session_id: str) -> None:
        try:
            if not _SESSION_ID.fullmatch(session_id):
                raise falcon.HTTPNotFound()
            if not _same_origin(req):
                _render(resp, 403, error="This form was sent from another site; nothing was bought.")
                return
            buyer = self.buyer(req)
            form = req.get_media(default_when_empty={})
            token = form.get("token", "") if isinstance(form, dict) else ""
            done = self.application.complete_test_checkout(session_id, str(token)[:200], buyer)
        except (DomainError, falcon.HTTPError) as error:
            _render(resp, _status(error), error=_why(error))
            return
        _render(resp, 200, done=done, balance=as_number(done.balance))


def _status(error: DomainError | falcon.HTTPError) -> int:
    return error.status if isinstance(error, DomainError) else error.status_code


def _why(error: DomainError | falcon.HTTPError) -> str:
    if isinstance(error, DomainError):
        return error.message
    if error.status_code == 404:
        return "There is no open test checkout at this address."
    return "The form could not be read; reload the page and try again."
