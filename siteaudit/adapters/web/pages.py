# Over 500 lines: one small Falcon resource per app page, all behind the same guard.
"""The app's pages: each turns a form into one call of the application interface and renders the result."""

import string
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, NoReturn, Protocol
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import falcon
import jinja2

from siteaudit.adapters.web.guard import CookieNames, Guard
from siteaudit.adapters.web.remembered import SIGN_IN_PER_BROWSER, RememberedBrowsers
from siteaudit.domain.account import DEFAULT_PLANS, Caller, NotTeamOwner, Role
from siteaudit.domain.apikey import ApiKeyKind, SettingsKeyExists
from siteaudit.domain.billing import (
    PACKS,
    TIER_CREDITS,
    Fulfilment,
    Interval,
    Pack,
    PlanChoice,
    PlanName,
    PriceNotConfigured,
    Tier,
)
from siteaudit.domain.credit import as_number
from siteaudit.domain.error import DomainError, NotFound, ValidationFailed
from siteaudit.domain.ids import MAX_ID, TeamId, UserId
from siteaudit.domain.signin import MIN_PASSWORD_LENGTH, SignInRefused
from siteaudit.ports.application import AppViewer, CallerApi, Exports, WebSession, run_declared
from siteaudit.ports.clock import Clock
from siteaudit.ports.ratelimit import Limit, RateLimiter

# docs/security.md "Sign-in throttling and remembered browsers": a browser not remembered for
# the account is refused from the 6th failure of its address or the 11th of the account; a remembered
# browser only by its own failures (SIGN_IN_PER_BROWSER), so nobody else's failures lock an owner out.
SIGN_IN_PER_ADDRESS: Final = Limit(5, 300.0)
SIGN_IN_PER_ACCOUNT: Final = Limit(10, 900.0)
# Wrong user codes on the approval page (docs/security.md "Device login"), per address, per person and for
# everyone at once.
DEVICE_PER_ADDRESS: Final = Limit(10, 900.0)
DEVICE_PER_USER: Final = Limit(10, 900.0)
DEVICE_EVERYONE: Final = Limit(500, 3600.0)
# Password-reset mails asked for, per address and per address asked about (mails are not free either).
RESET_PER_ADDRESS: Final = Limit(5, 3600.0)
RESET_PER_ACCOUNT: Final = Limit(3, 3600.0)

NOTICES: Final = {
    "signed-out": "You are signed out.",
    "password-set": "Your password is set: sign in with it.",
    "reset-sent": "If an account has this address, a link to choose a new password is on its way.",
    "team": "Team switched. It decides the team of keys you create from now on; existing keys keep theirs.",
    "revoked": "The key is revoked: it answers 401 from now on.",
    "invited": "Invitation mailed.",
    "removed": "Member removed: their keys for this team answer 403 from now on.",
}


def _when(moment: datetime | None) -> str:
    return "never" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("siteaudit.adapters.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["credits"] = lambda tenths: f"{as_number(tenths):,}"
    # Credits as `/v1` answers them (the account's): already numbers, an integer when whole.
    env.filters["amount"] = lambda number: f"{number:,}"
    return env


class Throttle:
    """Counts failures only: a bucket refuses once it holds its limit of recent failures."""

    def __init__(self, limiter: RateLimiter, clock: Clock) -> None:
        self.limiter = limiter
        self.clock = clock

    def wait(self, buckets: Sequence[tuple[str, Limit]]) -> int:
        """Seconds until every bucket would take another failure (0: go ahead)."""
        now = self.clock.now()
        decisions = [self.limiter.peek(name, limit, now=now) for name, limit in buckets]
        return max([0, *(int(d.retry_after_s + 0.999) for d in decisions if not d.allowed)])

    def failed(self, buckets: Sequence[tuple[str, Limit]]) -> None:
        now = self.clock.now()
        for name, limit in buckets:
            self.limiter.hit(name, limit, now=now)


class Page:
    """What every page shares: the application, the templates, the guard's cookies and the throttle."""

    anonymous = False

    def __init__(self, app: "WebParts") -> None:
        self.app = app
        self.application = app.application

    def render(self, req: falcon.Request, resp: falcon.Response, name: str, **context: Any) -> None:
        viewer: AppViewer | None = req.context.viewer
        csrf = (
            viewer.session.csrf if viewer is not None and not self.anonymous else req.context.anonymous_csrf
        )
        notice = NOTICES.get(req.get_param("done") or "", "")
        resp.content_type = falcon.MEDIA_HTML
        resp.text = self.app.env.get_template(name).render(
            viewer=viewer,
            csrf=csrf,
            path=req.path,
            notice=context.pop("notice", notice),
            error=context.pop("error", ""),
            sign_up_open=self.application.sign_up_open(),
            **context,
        )

    def sign_in_buckets(self, req: falcon.Request, email: str) -> list[tuple[str, Limit]]:
        """The buckets a password for `email` is judged by: a remembered browser's own, else those of
        the address and the account (docs/security.md)."""
        remembered = (req.get_cookie_values(self.app.cookies.browser) or [""])[0]
        bucket = self.app.browsers.bucket(remembered, email)
        if bucket is not None:
            return [(bucket, SIGN_IN_PER_BROWSER)]
        return [
            (f"app-sign-in:ip:{req.context.client_ip}", SIGN_IN_PER_ADDRESS),
            (f"app-sign-in:account:{email.strip().lower()[:254]}", SIGN_IN_PER_ACCOUNT),
        ]

    def remember_browser(self, resp: falcon.Response, email: str) -> None:
        value, max_age = self.app.browsers.issue(email)
        self.app.guard.set_cookie(resp, self.app.cookies.browser, value, max_age=max_age)

    def owner_email(self, viewer: AppViewer, owner: bool) -> str:
        """The email of the team owner, for a member to know whom to ask ("" for the owner themselves)."""
        if viewer.team is None or owner:
            return ""
        members = self.application.team_members(viewer.caller)
        return next((m.user.email for m in members if m.role is Role.OWNER), "")

    @staticmethod
    def viewer(req: falcon.Request) -> AppViewer:
        viewer: AppViewer = req.context.viewer
        return viewer

    def sure(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        *,
        title: str,
        lines: Sequence[str],
        fields: dict[str, str],
        button: str,
        back: str,
    ) -> bool:
        """True when the form says it was confirmed; otherwise a page saying what it will do, whose
        button posts the same form again with `confirmed=yes` (no script needed), and False."""
        if req.context.form.get("confirmed") == "yes":
            return True
        self.render(
            req, resp, "sure.html", title=title, lines=lines, fields=fields, button=button,
            back=back, action=req.path,
        )  # fmt: skip
        return False

    def rotation_confirmed_and_fresh(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        *,
        action: str,
        what: str,
        title: str,
        lines: Sequence[str],
        button: str,
        back: str,
    ) -> bool:
        """For a form whose `action` may be `rotate`: a rotation is confirmed first (`sure`, with `title`,
        `lines`, `button` and `back`), then any action asks for the password again (`fresh_enough`)."""
        fields = {"action": action}
        if action == "rotate":
            if not self.sure(req, resp, title=title, lines=lines, fields=fields, button=button, back=back):
                return False
            fields = {"action": action, "confirmed": "yes"}
        return self.fresh_enough(req, resp, what=what, fields=fields)

    def fresh_enough(
        self, req: falcon.Request, resp: falcon.Response, *, what: str, fields: dict[str, str]
    ) -> bool:
        """The password asked again (docs/app.md "The app at"): True when the password was given in the last
        few minutes, or is given now with this form. Otherwise the page asking for it is rendered (it posts
        the same form again)."""
        viewer = self.viewer(req)
        if viewer.fresh:
            return True
        password = req.context.form.get("password")
        error = ""
        if password:
            buckets = self.sign_in_buckets(req, viewer.user.email)
            wait = self.app.throttle.wait(buckets)
            if wait:
                error = f"Too many wrong passwords. Try again in {wait} seconds."
            else:
                try:
                    self.application.confirm_password(req.context.session_token, password)
                    return True
                except SignInRefused:
                    self.app.throttle.failed(buckets)
                    error = "That password is wrong."
        resp.status = falcon.HTTP_200
        self.render(req, resp, "confirm.html", what=what, action=req.path, fields=fields, error=error)
        return False


class WebApplication(CallerApi, WebSession, Exports, Protocol):
    """What the app uses (docs/architecture.md "Roles"): the callers' API, its own sessions and pages, and the
    audits' downloads."""


class WebParts:
    def __init__(
        self,
        application: WebApplication,
        clock: Clock,
        limiter: RateLimiter,
        cookies: CookieNames,
        guard: Guard,
        browsers: RememberedBrowsers,
    ) -> None:
        self.application = application
        self.clock = clock
        self.browsers = browsers
        self.env = templates()
        self.throttle = Throttle(limiter, clock)
        self.cookies = cookies
        self.guard = guard


# Every character a URL may hold as it is: anything else in a redirect target is percent-encoded, so no
# Location header of the app can carry CR, LF or a character outside latin-1 (docs/security.md).
URL_CHARACTERS: Final = frozenset(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/?#%")
HOME: Final = "/app/account"


def form_id(value: str) -> int:
    """A row id from a form field; ValueError unless it is one (a 30-digit number is no row, and no
    database integer holds it)."""
    number = int(value)
    if not 1 <= number <= MAX_ID:
        raise ValueError(f"{value!r} is no id")
    return number


def _redirect(to: str) -> falcon.HTTPSeeOther:
    return falcon.HTTPSeeOther(quote(to, safe="".join(URL_CHARACTERS)))


def _safe_next(target: str | None) -> str:
    """docs/security.md "Where the app may send you after signing in (`next`)": a path of this app,
    rebuilt from its parsed parts; anything else (another site, a character a URL may not hold as it
    is, a `//` or a dot segment) leads to the account page. Nothing is decoded: `%0d%0a` stays text."""
    if not target or len(target) > 2048 or not set(target) <= URL_CHARACTERS:
        return HOME
    parts = urlsplit(target)
    path = parts.path
    if parts.scheme or parts.netloc or "//" in path or not (path == "/app" or path.startswith("/app/")):
        return HOME
    if any(unquote(segment) in (".", "..") for segment in path.split("/")):
        return HOME
    return urlunsplit(("", "", path, parts.query, ""))


# --- signing in -------------------------------------------------------------------------------------------


class Home(Page):
    anonymous = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        raise _redirect("/app/account" if req.context.viewer is not None else "/app/sign-in")


class SignIn(Page):
    anonymous = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.render(req, resp, "sign_in.html", next=_safe_next(req.get_param("next")), email="")

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        form = req.context.form
        email, password = form.get("email", "")[:254], form.get("password", "")
        target = _safe_next(form.get("next"))
        buckets = self.sign_in_buckets(req, email)
        wait = self.app.throttle.wait(buckets)
        if wait:
            resp.status = falcon.HTTP_429
            resp.set_header("Retry-After", str(wait))
            self.render(
                req, resp, "sign_in.html", next=target, email=email,
                error=f"Too many failed sign-ins. Try again in {wait} seconds.",
            )  # fmt: skip
            return
        try:
            signed = self.application.sign_in(email, password)
        except SignInRefused:
            self.app.throttle.failed(buckets)
            resp.status = falcon.HTTP_401
            self.render(req, resp, "sign_in.html", next=target, email=email, error="Wrong email or password.")
            return
        if req.context.session_token:
            self.application.sign_out(req.context.session_token)  # a new id at every sign-in
        self.app.guard.set_cookie(resp, self.app.cookies.session, signed.token, max_age=None)
        self.remember_browser(resp, email)
        raise _redirect(target)


class SignUp(Page):
    anonymous = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.render(req, resp, "sign_up.html", email="", min_length=MIN_PASSWORD_LENGTH)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        form = req.context.form
        email = form.get("email", "")[:254]

        def sign_up(password: str) -> NoReturn:
            signed = self.application.sign_up(email, password)
            self.app.guard.set_cookie(resp, self.app.cookies.session, signed.token, max_age=None)
            raise _redirect("/app/account")

        error = _password_refused(form, sign_up)
        resp.status = falcon.HTTP_422
        self.render(req, resp, "sign_up.html", email=email, min_length=MIN_PASSWORD_LENGTH, error=error)


class SignOut(Page):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.application.sign_out(req.context.session_token)
        self.app.guard.forget_session(resp)
        raise _redirect("/app/sign-in?done=signed-out")


class ForgotPassword(Page):
    anonymous = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.render(req, resp, "forgot.html")

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        email = req.context.form.get("email", "")[:254]
        buckets = [
            (f"app-reset:ip:{req.context.client_ip}", RESET_PER_ADDRESS),
            (f"app-reset:account:{email.strip().lower()}", RESET_PER_ACCOUNT),
        ]
        if not self.app.throttle.wait(buckets):
            self.app.throttle.failed(buckets)  # every request counts, answered alike either way
            self.application.request_password_reset(email)
        raise _redirect("/app/sign-in?done=reset-sent")


class ChoosePassword(Page):
    """Where one-time links lead (reset, invitation, `siteaudit admin password-link`)."""

    anonymous = True

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        token = (req.get_param("token") or "")[:128]
        self.render(req, resp, "password.html", token=token, min_length=MIN_PASSWORD_LENGTH)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        form = req.context.form
        token = form.get("token", "")[:128]

        def reset(password: str) -> NoReturn:
            self.application.reset_password(token, password)
            if req.context.session_token:
                self.app.guard.forget_session(resp)
            raise _redirect("/app/sign-in?done=password-set")

        error = _password_refused(form, reset)
        resp.status = falcon.HTTP_422
        self.render(req, resp, "password.html", token=token, min_length=MIN_PASSWORD_LENGTH, error=error)


def _password_refused(form: Mapping[str, str], take: Callable[[str], NoReturn]) -> str:
    """Why the form's new password was refused: `repeat` differs from it, or `take` (which redirects once
    the password is taken) refused it."""
    password = form.get("password", "")
    if password != form.get("repeat", ""):
        return "The two passwords differ."
    try:
        take(password)
    except DomainError as refused:
        return _say(refused)


def _say(error: DomainError) -> str:
    if isinstance(error, ValidationFailed):
        return "; ".join(f"{name}: {why}" for name, why in error.fields.items())
    return error.message[:1].upper() + error.message[1:] + "."


# --- the signed-in pages ------------------------------------------------------------------------------------


class SwitchTeam(Page):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        try:
            team = TeamId(form_id(req.context.form.get("team_id", "")))
            self.application.switch_team(req.context.session_token, team)
        except (ValueError, NotFound):
            raise falcon.HTTPBadRequest() from None
        raise _redirect(_safe_next(req.context.form.get("next")).split("?")[0] + "?done=team")


class AccountPage(Page):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        viewer = self.viewer(req)
        account = (
            run_declared(self.application, "GetAccount", viewer.caller) if viewer.team is not None else None
        )
        owner = viewer.team is not None and viewer.team.owner_id == viewer.user.id
        self.render(
            req,
            resp,
            "account.html",
            account=account,
            owner=owner,
            owner_email=self.owner_email(viewer, owner),
        )


class KeysPage(Page):
    """Agent & MCP settings (docs/app.md): the Settings key of the team being viewed, and every key listed."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp)

    def show(self, req: falcon.Request, resp: falcon.Response, **context: Any) -> None:
        viewer = self.viewer(req)
        keys = [k for k in self.application.list_keys(viewer.user.email) if k.active]
        names = {t.id: t.name for t in viewer.teams}
        has_settings_key = any(
            k.kind is ApiKeyKind.SETTINGS and viewer.team is not None and k.team_id == viewer.team.id
            for k in keys
        )
        self.render(
            req, resp, "keys.html", keys=keys, team_names=names, has_settings_key=has_settings_key,
            issued=context.pop("issued", None), rotated=context.pop("rotated", False), **context,
        )  # fmt: skip

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        viewer = self.viewer(req)
        action = req.context.form.get("action", "")
        if action not in ("create", "rotate") or viewer.team is None:
            raise falcon.HTTPBadRequest()
        if not self.rotation_confirmed_and_fresh(
            req, resp, action=action, what="create a key" if action == "create" else "rotate your Settings key",
            title="Rotate your Settings key?",
            lines=[f"A new key is made for {viewer.team.name}; the current one answers 401 at once, "
                   "so every agent and script using it stops until it gets the new one."],
            button="Rotate key", back="/app/keys",
        ):  # fmt: skip
            return
        make: Callable[[str, str], Any] = (
            self.application.create_key if action == "create" else self.application.rotate_key
        )
        try:
            issued = make(viewer.user.email, viewer.team.name)
        except SettingsKeyExists:
            self.show(req, resp, error="You already have a Settings key for this team: rotate it instead.")
            return
        self.show(req, resp, issued=issued, rotated=action == "rotate")


class RevokeKey(Page):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        prefix = req.context.form.get("prefix", "")[:12]
        if not self.sure(
            req, resp, title="Revoke this key?", lines=[f"The key {prefix}… answers 401 from now on; "
            "this cannot be undone."], fields={"prefix": prefix}, button="Revoke key", back="/app/keys",
        ):  # fmt: skip
            return
        try:
            self.application.revoke_key(self.viewer(req).user.email, prefix)
        except NotFound:
            raise falcon.HTTPNotFound() from None
        raise _redirect("/app/keys?done=revoked")


class WebhookPage(Page):
    """The person's webhook signing secret (docs/rest-api.md "The audit-ended webhook"): revealed or rotated
    after the password."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.render(req, resp, "webhook.html", secret=None, rotated=False)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        action = req.context.form.get("action", "")
        if action not in ("reveal", "rotate"):
            raise falcon.HTTPBadRequest()
        if not self.rotation_confirmed_and_fresh(
            req, resp, action=action,
            what="see your webhook secret" if action == "reveal" else "rotate your webhook secret",
            title="Rotate your webhook secret?",
            lines=["Webhooks are signed with the new secret from now on, retries of earlier ones too: "
                   "receivers checking the old one refuse them until they have the new one."],
            button="Rotate secret", back="/app/webhook",
        ):  # fmt: skip
            return
        secret = self.application.webhook_secret(self.viewer(req).user.email, rotate=action == "rotate")
        self.render(req, resp, "webhook.html", secret=secret, rotated=action == "rotate")


class MembersPage(Page):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp)

    def show(self, req: falcon.Request, resp: falcon.Response, **context: Any) -> None:
        viewer = self.viewer(req)
        members = self.application.team_members(viewer.caller) if viewer.team is not None else []
        owner = viewer.team is not None and viewer.team.owner_id == viewer.user.id
        self.render(
            req, resp, "members.html", members=members, owner=owner, owner_role=Role.OWNER,
            invited=context.pop("invited", ""), invite_link=context.pop("invite_link", None), **context,
        )  # fmt: skip


class InviteMember(MembersPage):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        email = req.context.form.get("email", "")[:254]
        try:
            invitation = self.application.invite_member(self.viewer(req).caller, email)
        except DomainError as refused:
            resp.status = falcon.HTTP_422 if isinstance(refused, ValidationFailed) else falcon.HTTP_403
            self.show(req, resp, error=_say(refused))
            return
        if invitation.mailed:
            raise _redirect("/app/members?done=invited")
        # No mail server: nothing was sent, so the page says so and hands over what the mail would have.
        self.show(req, resp, invited=email.strip().lower(), invite_link=invitation.link)


class RemoveMember(MembersPage):
    def member_line(self, req: falcon.Request, user: UserId) -> str:
        viewer = self.viewer(req)
        members = self.application.team_members(viewer.caller) if viewer.team is not None else []
        email = next((m.user.email for m in members if m.user.id == user), "")
        team = viewer.team.name if viewer.team is not None else "the team"
        who = email or "This person"
        return f"{who} leaves {team}: their keys for it answer 403 from now on."

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        try:
            user = UserId(form_id(req.context.form.get("user_id", "")))
            viewer = self.viewer(req)
            owner = viewer.team is not None and viewer.team.owner_id == viewer.user.id
            if owner and not self.sure(
                req, resp, title="Remove this member?", lines=[self.member_line(req, user)],
                fields={"user_id": str(user)}, button="Remove member", back="/app/members",
            ):  # fmt: skip
                return
            self.application.remove_team_member(self.viewer(req).caller, user)
        except ValueError:
            raise falcon.HTTPBadRequest() from None
        except DomainError as refused:
            resp.status = falcon.HTTP_403
            self.show(req, resp, error=_say(refused))
            return
        raise _redirect("/app/members?done=removed")


class DevicePage(Page):
    """The device approval page (docs/security.md "Device login"): the code typed or brought by the link, the
    client's name, address and time shown, a team chosen, an explicit approve or deny."""

    def buckets(self, req: falcon.Request) -> list[tuple[str, Limit]]:
        return [
            (f"app-device:ip:{req.context.client_ip}", DEVICE_PER_ADDRESS),
            (f"app-device:user:{self.viewer(req).user.id}", DEVICE_PER_USER),
            ("app-device:everyone", DEVICE_EVERYONE),
        ]

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        code = (req.get_param("code") or "")[:32]
        if code:
            self.look_up(req, resp, code)
        else:
            self.render(req, resp, "device.html", login=None, code="", decided=None)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        form = req.context.form
        code = form.get("code", "")[:32]
        action = form.get("action", "look")
        if action == "look":
            self.look_up(req, resp, code)
            return
        if action not in ("approve", "deny"):
            raise falcon.HTTPBadRequest()
        viewer = self.viewer(req)
        buckets = self.buckets(req)
        if self.refused_while_throttled(req, resp, code, buckets):
            return
        try:
            if action == "approve":
                team = TeamId(form_id(form.get("team_id", "")))
                decided = self.application.approve_device_login(code, Caller(viewer.user.id, team))
            else:
                decided = self.application.deny_device_login(code, viewer.user.id)
        except ValueError:
            raise falcon.HTTPBadRequest() from None
        except DomainError as refused:
            if isinstance(refused, NotFound | ValidationFailed):
                self.app.throttle.failed(buckets)
            resp.status = falcon.HTTP_409 if not isinstance(refused, NotFound) else falcon.HTTP_404
            self.render(req, resp, "device.html", login=None, code=code, decided=None, error=_say(refused))
            return
        team_name = next((t.name for t in viewer.teams if t.id == decided.team_id), "")
        self.render(req, resp, "device.html", login=decided, code=code, decided=action, team_name=team_name)

    def refused_while_throttled(
        self, req: falcon.Request, resp: falcon.Response, code: str, buckets: list[tuple[str, Limit]]
    ) -> bool:
        wait = self.app.throttle.wait(buckets)
        if wait:
            resp.status = falcon.HTTP_429
            resp.set_header("Retry-After", str(wait))
            error = f"Too many wrong codes. Try again in {wait} seconds."
            self.render(req, resp, "device.html", login=None, code=code, decided=None, error=error)
        return wait > 0

    def look_up(self, req: falcon.Request, resp: falcon.Response, code: str) -> None:
        buckets = self.buckets(req)
        if self.refused_while_throttled(req, resp, code, buckets):
            return
        try:
            login = self.application.device_login_to_decide(code)
        except (NotFound, ValidationFailed):
            self.app.throttle.failed(buckets)
            resp.status = falcon.HTTP_404
            error = "No login waits with this code. Check it, or start again on the device."
            self.render(req, resp, "device.html", login=None, code=code, decided=None, error=error)
            return
        self.render(req, resp, "device.html", login=login, code=login.display_user_code, decided=None)


# --- billing (docs/billing.md) -----------------------------------------------------------------------------

CHECKOUT_NOTICES: Final = {
    "done": "Thank you: the purchase is complete. Credits and plan show here as soon as the payment "
    "provider confirms it (usually at once; reload in a moment otherwise).",
    "cancelled": "The checkout was cancelled: nothing was bought and nothing was charged.",
    "changed": "Your subscription is changed; the provider prorates what is already paid.",
    "renewed": "TEST renewal done: the next period is paid and its first month's credits are granted.",
    "renewed-before": "That period was renewed already: nothing more was granted.",
}
CHECKOUT_PACKS: Final = tuple(PACKS[pack] for pack in Pack)


class BillingPage(Page):
    """Plan, credits, packs, subscription and the portal (docs/billing.md "In the app"). Every purchase is a
    link to the payment provider made by the application; a plan change is made here at once; only the team
    owner's forms are shown (and accepted)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp)

    def show(self, req: falcon.Request, resp: falcon.Response, **context: Any) -> None:
        viewer = self.viewer(req)
        status = self.application.billing_status(viewer.caller)
        account = (
            run_declared(self.application, "GetAccount", viewer.caller) if viewer.team is not None else None
        )
        owner = viewer.team is not None and viewer.team.owner_id == viewer.user.id
        owner_email = self.owner_email(viewer, owner)
        subscription = status.subscription
        live = subscription is not None and not subscription.ended
        notice = CHECKOUT_NOTICES.get(req.get_param("checkout") or "", "")
        self.render(
            req, resp, "billing.html", status=status, account=account, owner=owner, owner_email=owner_email,
            subscription=subscription, live=live, packs=CHECKOUT_PACKS, plans=list(PlanName),
            tiers=list(Tier), intervals=list(Interval), tier_credits=TIER_CREDITS,
            price_of=lambda plan, tier, interval: status.prices.get(PlanChoice(plan, tier, interval)),
            notice=context.pop("notice", notice), **context,
        )  # fmt: skip

    def lower(self, viewer: AppViewer, choice: PlanChoice) -> list[str]:
        """What choosing `choice` takes away (empty when nothing): a plan below the current one, or a
        tier granting fewer monthly credits than the live subscription's."""
        status = self.application.billing_status(viewer.caller)
        said = []
        current, chosen = DEFAULT_PLANS.get(status.plan), DEFAULT_PLANS[choice.plan.value]
        if current is not None and (chosen.max_pages_per_audit, chosen.max_sites) < (
            current.max_pages_per_audit,
            current.max_sites,
        ):
            said.append(
                f"Your plan goes from {current.name} to {chosen.name}: at most "
                f"{chosen.max_pages_per_audit:,} pages an audit (now {current.max_pages_per_audit:,}) and "
                f"{chosen.max_sites} sites (now {current.max_sites})."
            )
        sub = status.subscription
        if sub is not None and not sub.ended and sub.choice is not None:
            now, then = TIER_CREDITS[sub.choice.tier], TIER_CREDITS[choice.tier]
            if then < now:
                said.append(f"Each month grants {then:,} credits instead of {now:,}.")
        return said

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        viewer = self.viewer(req)
        form = req.context.form
        action = form.get("action", "")
        try:
            if action == "checkout":
                pack = Pack(form.get("pack", ""))
                link = run_declared(self.application, "GetCreditPackLink", viewer.caller, pack=pack)
            elif action in ("subscribe", "change"):
                choice = PlanChoice(
                    PlanName(form.get("plan", "")),
                    Tier(form.get("tier", "")),
                    Interval(form.get("interval", "")),
                )
                lower = self.lower(viewer, choice)
                if lower and not self.sure(
                    req, resp, title="Lower your plan?", lines=lower, fields={
                        "action": action, "plan": choice.plan.value, "tier": choice.tier.value,
                        "interval": choice.interval.value,
                    }, button="Yes, lower it", back="/app/billing",
                ):  # fmt: skip
                    return
                if action == "change":
                    self.application.billing_change_plan(choice, viewer.caller)
                    raise _redirect("/app/billing?checkout=changed")
                link = run_declared(
                    self.application,
                    "GetSubscriptionLink",
                    viewer.caller,
                    plan=choice.plan,
                    tier=choice.tier,
                    interval=choice.interval,
                )
            elif action == "portal":
                link = run_declared(self.application, "GetBillingPortalLink", viewer.caller)
            elif action == "renew":
                outcome = self.application.renew_test_subscription(
                    form.get("paid_from", "")[:64], viewer.caller
                )
                done = "renewed" if outcome is Fulfilment.APPLIED else "renewed-before"
                raise _redirect(f"/app/billing?checkout={done}")
            else:
                raise falcon.HTTPBadRequest()
        except ValueError:
            raise falcon.HTTPBadRequest() from None
        except DomainError as refused:
            resp.status = falcon.HTTP_403 if isinstance(refused, NotTeamOwner) else falcon.HTTP_409
            if isinstance(refused, ValidationFailed | PriceNotConfigured):
                resp.status = falcon.HTTP_422
            self.show(req, resp, error=_say(refused))
            return
        if _same_origin(link.url, self.app.guard.public_origin):
            raise _redirect(link.url)  # the local test checkout, or the billing page itself
        # A provider elsewhere: a plain link, since the page's form-action 'self' also governs where a
        # form's redirect may lead (browsers enforce it on redirects).
        self.render(req, resp, "billing_go.html", url=link.url, action=action)


def _same_origin(url: str, origin: str) -> bool:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() == origin
