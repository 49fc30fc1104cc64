"""Request ids, access logs, authentication and the per-key and per-IP rate limits."""

import logging
import re
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import falcon

from siteaudit.adapters.client_address import client_address, trusted_networks
from siteaudit.domain.account import Caller
from siteaudit.domain.apikey import key_prefix
from siteaudit.domain.error import ErrorCode, RateLimited, Unauthenticated
from siteaudit.domain.ids import AuditId
from siteaudit.ports.application import Admission
from siteaudit.ports.clock import Clock
from siteaudit.ports.ratelimit import Limit, RateDecision, RateLimiter

access_log = logging.getLogger("siteaudit.access")

PER_KEY: Final = Limit(60, 60.0)
UNAUTHENTICATED_PER_IP: Final = Limit(60, 60.0)
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
# Paths under /v1 answered without a key even when no route matches them: liveness, the OpenAPI
# document and the device login (docs/rest-api.md "Endpoints").
_OPEN_PATHS: Final = frozenset({"/v1/health", "/v1/openapi.json"})
_OPEN_PREFIXES: Final = ("/v1/device/",)


def needs_key(path: str) -> bool:
    """Whether a path no route matched still asks for a key first, so a caller without one learns
    nothing about which paths and ids exist (401 before 404)."""
    return path.startswith("/v1/") and path not in _OPEN_PATHS and not path.startswith(_OPEN_PREFIXES)


class RequestContext:
    """Request ids (echoed in X-Request-ID) and one structured access-log line per request."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        incoming = req.get_header("X-Request-ID") or ""
        req.context.request_id = incoming if _REQUEST_ID.fullmatch(incoming) else secrets.token_hex(8)
        req.context.started = time.perf_counter()
        resp.set_header("X-Request-ID", req.context.request_id)
        resp.set_header("Cache-Control", "no-store")

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any, ok: bool) -> None:
        if not access_log.isEnabledFor(logging.INFO):
            return  # the line's fields cost more than a cheap request's database work
        caller = getattr(req.context, "caller", None)
        access_log.info(
            "%s %s %s",
            req.method,
            req.path,
            resp.status,
            extra={
                "request_id": getattr(req.context, "request_id", "-"),
                "method": req.method,
                "path": req.path,  # never the query string: it could carry tokens
                "status": int(str(resp.status).split()[0]) if resp.status else 0,
                "duration_ms": round(
                    (time.perf_counter() - getattr(req.context, "started", time.perf_counter())) * 1000, 1
                ),
                "key_prefix": caller.key_prefix if caller else None,
                "remote": client_address(req, ()),
            },
        )


def rate_headers(resp: falcon.Response, decision: RateDecision, limit: Limit) -> None:
    resp.set_header("RateLimit-Limit", str(decision.limit))
    resp.set_header("RateLimit-Remaining", str(decision.remaining))
    resp.set_header("RateLimit-Reset", str(max(0, round(decision.reset_s))))
    resp.set_header("RateLimit-Policy", f"{limit.count};w={round(limit.period_s)}")


def enforce(
    limiter: RateLimiter,
    clock: Clock,
    checks: Sequence[tuple[str, Limit, ErrorCode]],
    resp: falcon.Response | None,
) -> None:
    """Count the request against every bucket; when any refuses, answer with the largest Retry-After.

    Buckets are peeked first so a request refused by one bucket is counted by none.
    """
    now = clock.now()
    if len(checks) == 1:
        # One bucket (every request but the few with stricter extra limits): a refused hit counts
        # nothing, so the peek would only cost a database round trip on the hot path.
        bucket, limit, code = checks[0]
        decision = limiter.hit(bucket, limit, now=now)
        if resp is not None:
            rate_headers(resp, decision, limit)
        if not decision.allowed:
            raise RateLimited(max(1, int(decision.retry_after_s + 0.999)), code=code)
        return
    refusals = [(limiter.peek(b, lim, now=now), code) for b, lim, code in checks]
    refused = [(d, code) for d, code in refusals if not d.allowed]
    if refused:
        wait = max(d.retry_after_s for d, _ in refused)
        decision, code = max(refused, key=lambda pair: pair[0].retry_after_s)
        if resp is not None and checks:
            rate_headers(resp, decision, checks[0][1])
        raise RateLimited(max(1, int(wait + 0.999)), code=code)
    decisions = [limiter.hit(b, lim, now=now) for b, lim, _ in checks]
    refused_now = [d for d in decisions if not d.allowed]
    if refused_now:  # lost a race between peek and hit
        raise RateLimited(max(1, int(max(d.retry_after_s for d in refused_now) + 0.999)))
    if resp is not None and decisions:
        rate_headers(resp, decisions[0], checks[0][1])


class Authentication:
    """Bearer keys (docs/security.md "API keys"): every resource needs one unless it says `public = True`.

    Then the shared per-key limit (60 a minute) and any stricter limit the resource names in
    `extra_limits` (a mapping of HTTP method to (name, Limit)). With `admit` (the application's
    `authenticate_and_hit`), a request under the per-key limit alone is let in and counted by one call:
    on PostgreSQL one round trip for the key, the membership and the count.
    """

    def __init__(
        self,
        authenticate: Callable[[str], Caller],
        limiter: RateLimiter,
        clock: Clock,
        trusted_proxies: Sequence[str] = (),
        admit: Callable[..., Admission] | None = None,
    ) -> None:
        self._authenticate = authenticate
        self._admit = admit
        self._limiter = limiter
        self._clock = clock
        self._proxies = trusted_networks(trusted_proxies)

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: Any
    ) -> None:
        req.context.client_ip = client_address(req, self._proxies)
        if resource is None or getattr(resource, "public", False):
            return
        audit_input = getattr(resource, "audit_with_key", {}).get(req.method)
        audit = None if audit_input is None else params.get(audit_input)
        self.identify(req, resp, getattr(resource, "extra_limits", {}).get(req.method), audit=audit)

    def identify(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        extra: tuple[str, Limit] | None,
        *,
        audit: AuditId | None = None,
    ) -> None:
        """The caller of the request's key into `req.context.caller`, counted against its limits; with
        `admit`, the admission into `req.context.admission` too, with the `audit` it read with the key
        (the resource's `audit_with_key`: its handler is given it)."""
        req.context.client_ip = client_address(req, self._proxies)
        header = req.get_header("Authorization") or ""
        scheme, _, raw = header.partition(" ")
        try:
            if scheme.lower() != "bearer" or not raw.strip():
                raise Unauthenticated()
            if extra is None and self._admit is not None:
                key = raw.strip()
                admission = self._admit(key, bucket=f"key:{key_prefix(key)}", limit=PER_KEY, audit=audit)
            else:
                admission = None
                caller = self._authenticate(raw.strip())
        except Unauthenticated:
            # Floods of 401s are not free: unauthenticated traffic is limited per client address.
            enforce(
                self._limiter,
                self._clock,
                [
                    (
                        f"ip:{req.context.client_ip}:unauthenticated",
                        UNAUTHENTICATED_PER_IP,
                        ErrorCode.RATE_LIMITED,
                    )
                ],
                None,
            )
            raise
        if admission is not None:  # let in and counted against the per-key limit already
            req.context.caller = admission.caller
            req.context.admission = admission
            decision = admission.decision
            rate_headers(resp, decision, PER_KEY)
            if not decision.allowed:
                raise RateLimited(max(1, int(decision.retry_after_s + 0.999)), code=ErrorCode.RATE_LIMITED)
            return
        req.context.caller = caller
        checks: list[tuple[str, Limit, ErrorCode]] = [
            (f"key:{caller.key_prefix}", PER_KEY, ErrorCode.RATE_LIMITED)
        ]
        if extra is not None:
            name, limit = extra
            checks.append((f"key:{caller.key_prefix}:{name}", limit, ErrorCode.RATE_LIMITED))
        enforce(self._limiter, self._clock, checks, resp)


class Unrouted:
    """The sink of `/v1` paths no route matches: a key first (401), then 404, so a caller without one
    learns nothing about which paths and ids exist (Falcon runs no resource middleware for them)."""

    def __init__(self, authentication: Authentication) -> None:
        self._authentication = authentication

    def __call__(self, req: falcon.Request, resp: falcon.Response, **params: Any) -> None:
        if needs_key(req.path):
            self._authentication.identify(req, resp, None)
        raise falcon.HTTPRouteNotFound()
