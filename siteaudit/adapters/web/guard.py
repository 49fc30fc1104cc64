"""What every page of the app gets before its resource runs (docs/app.md "The app at"): the security headers,
the session from its cookie, the form parsed, and the CSRF token and Origin checked on every POST."""

import hmac
import re
import secrets
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import falcon

from siteaudit.adapters.client_address import client_address, trusted_networks
from siteaudit.domain.error import Unauthenticated
from siteaudit.ports.application import WebSession

MAX_FORM_BYTES: Final = 64 * 1024
# C0 controls but tab, line feed and carriage return; DEL and the C1 controls.
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
STATIC: Final = "/app/static/"
# No script at all; styles from our own file; images only inline (the score sparklines are inline SVG).
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
    "Cache-Control": "no-store",
}


class CookieNames:
    """`__Host-` names behind TLS (the browser then insists on Secure, path / and no domain)."""

    def __init__(self, secure: bool) -> None:
        prefix = "__Host-" if secure else ""
        self.session = f"{prefix}siteaudit_session"
        self.csrf = f"{prefix}siteaudit_csrf"  # double-submit token of the forms shown before sign-in
        self.browser = f"{prefix}siteaudit_browser"  # a remembered browser (docs/security.md)
        self.secure = secure


class FormRefused(Exception):
    """A POST without the right CSRF token or from another origin: nothing changes, 403."""


class Guard:
    """Falcon middleware of the app. Resources say `anonymous = True` when they serve people who are
    not signed in (sign-in, sign-up, password links); every other page sends them to sign in."""

    def __init__(
        self,
        application: WebSession,
        *,
        cookies: CookieNames,
        public_url: str,
        trusted_proxies: Sequence[str] = (),
    ) -> None:
        self.application = application
        self.cookies = cookies
        public = urlsplit(public_url)
        self.public_origin = f"{public.scheme}://{public.netloc}".lower()
        self.proxies = trusted_networks(trusted_proxies)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        for name, value in HEADERS.items():
            resp.set_header(name, value)
        if self.cookies.secure:
            resp.set_header("Strict-Transport-Security", "max-age=31536000")
        req.context.client_ip = client_address(req, self.proxies)
        req.context.form = {}
        req.context.viewer = None
        req.context.session_token = ""
        req.context.anonymous_csrf = ""
        if req.path.startswith(STATIC):
            return  # the stylesheet: no session, no cookies
        token = self.session_token(req)
        req.context.session_token = token
        if token:
            try:
                req.context.viewer = self.application.app_viewer(token)
            except Unauthenticated:
                req.context.session_token = ""
                self.forget_session(resp)
        anonymous_csrf = (req.get_cookie_values(self.cookies.csrf) or [""])[0]
        if not anonymous_csrf:
            anonymous_csrf = secrets.token_hex(32)
            self.set_cookie(resp, self.cookies.csrf, anonymous_csrf, max_age=None)
        req.context.anonymous_csrf = anonymous_csrf
        if req.method == "POST":
            req.context.form = self.read_form(req)

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: Any
    ) -> None:
        if resource is None:
            return
        anonymous = getattr(resource, "anonymous", False)
        if req.method == "POST":
            self.check_form(req, anonymous=anonymous)
        if not anonymous and req.context.viewer is None:
            target = req.path + (f"?{req.query_string}" if req.query_string else "")
            raise falcon.HTTPSeeOther(f"/app/sign-in?{_query(next=target)}")

    # --- cookies ---------------------------------------------------------------------------------------

    def session_token(self, req: falcon.Request) -> str:
        values = req.get_cookie_values(self.cookies.session) or []
        return values[0] if values and len(values[0]) <= 128 else ""

    def set_cookie(self, resp: falcon.Response, name: str, value: str, *, max_age: int | None) -> None:
        resp.set_cookie(
            name,
            value,
            max_age=max_age,
            path="/",
            secure=self.cookies.secure,
            http_only=True,
            same_site="Lax",
        )

    def forget_session(self, resp: falcon.Response) -> None:
        # Set, not unset: a `__Host-` cookie is replaced only by one that is Secure as well.
        self.set_cookie(resp, self.cookies.session, "", max_age=0)

    # --- forms -----------------------------------------------------------------------------------------

    @staticmethod
    def read_form(req: falcon.Request) -> dict[str, str]:
        media_type = (req.content_type or "").split(";")[0].strip().lower()
        if media_type != "application/x-www-form-urlencoded":
            return {}
        raw = req.bounded_stream.read(MAX_FORM_BYTES + 1)
        if len(raw) > MAX_FORM_BYTES:
            raise falcon.HTTPContentTooLarge()
        parsed = parse_qs(raw.decode("utf-8", errors="replace"), keep_blank_values=True)
        form = {name: values[0] for name, values in parsed.items()}
        # Bytes that are not UTF-8 were replaced above; control characters no field needs are refused
        # before they reach storage (docs/security.md, "Strict JSON bodies").
        if any(_CONTROL.search(text) for pair in form.items() for text in pair):
            raise falcon.HTTPBadRequest(title="A form field holds a control character.")
        return form

    def check_form(self, req: falcon.Request, *, anonymous: bool) -> None:
        origin = req.get_header("Origin")
        if origin is not None and origin.lower() not in self.allowed_origins(req):
            raise FormRefused()
        viewer = req.context.viewer
        expected = (
            viewer.session.csrf if (viewer is not None and not anonymous) else req.context.anonymous_csrf
        )
        given = req.context.form.get("csrf", "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            raise FormRefused()

    def allowed_origins(self, req: falcon.Request) -> set[str]:
        # The public URL's origin, and the origin the request was addressed to (a local `serve`).
        own = f"{req.scheme}://{req.host}" + (f":{req.port}" if req.port not in (80, 443) else "")
        return {self.public_origin, own.lower()}


def _query(**values: str) -> str:
    from urllib.parse import urlencode

    return urlencode(values)
