"""HttpxWebhookSender: one signed POST through the SSRF guard, cut at a wall-clock deadline, 4 KB read."""

import logging
import ssl
import time
from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

from siteaudit.adapters.http.fetcher import FetchLimits, HttpxBlockingFetcher
from siteaudit.adapters.http.guard import AddressGuard
from siteaudit.domain.facts import FetchError
from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.network import AddressPolicy, AddressRefused, FetchRequest, NetworkFailure
from siteaudit.domain.webhook import DEADLINE_S, MAX_RESPONSE_BYTES, SendOutcome, url_refusal
from siteaudit.ports.network import HostResolver

log = logging.getLogger(__name__)

REFUSED: Final = "refused"
# Whatever the caller passes: the body is JSON, and an encoded answer could not be capped as read.
_FIXED: Final = {"content-type": "application/json", "accept-encoding": "identity"}


class HttpxWebhookSender:
    """The WebhookSender port on HttpxBlockingFetcher, which gives the guard, the cap and the deadline.

    `deadline_s` bounds the whole exchange, DNS included; the per-phase httpx timeouts are set no
    longer, so whichever comes first ends the attempt, and the deadline always does by `deadline_s`.
    An attempt that gets no answer is logged in one line naming the receiver's origin only (a webhook
    URL's path or query may carry a token).
    """

    def __init__(
        self,
        resolver: HostResolver,
        policy: AddressPolicy,
        *,
        deadline_s: float = DEADLINE_S,
        max_bytes: int = MAX_RESPONSE_BYTES,
        user_agent: str = USER_AGENT,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.deadline_s = deadline_s
        self.max_bytes = max_bytes
        self._guard = AddressGuard(resolver, policy, resolve_timeout_s=deadline_s)
        limits = FetchLimits(
            connect_s=deadline_s,
            read_s=deadline_s,
            write_s=deadline_s,
            deadline_s=deadline_s,
            max_bytes=max_bytes,
            max_connections=1,
        )
        self._fetcher = HttpxBlockingFetcher(
            resolver, policy, limits=limits, user_agent=user_agent, verify=verify
        )

    def send(self, url: str, body: bytes, headers: Sequence[tuple[str, str]]) -> SendOutcome:
        started = time.perf_counter()
        refusal = url_refusal(url)
        if refusal is not None:
            log.warning("webhook to %s not sent: %s", _origin(url), refusal)
            return SendOutcome(None, error=REFUSED, detail=refusal, duration_ms=_ms(started))
        request = FetchRequest(
            url,
            method="POST",
            headers=tuple({**{name.lower(): value for name, value in headers}, **_FIXED}.items()),
            content=body,
            max_bytes=self.max_bytes,
            deadline_s=self.deadline_s,
        )
        answer = self._fetcher.fetch(request)
        if answer.error is not None:
            self._log_failure(url, answer.error, answer.error_detail)
        return SendOutcome(
            answer.status,
            error=None if answer.error is None else answer.error.value,
            detail=answer.error_detail,
            duration_ms=answer.total_ms if answer.total_ms is not None else _ms(started),
            response_bytes=len(answer.body),
            truncated=answer.truncated,
        )

    def _log_failure(self, url: str, error: FetchError, detail: str | None) -> None:
        refused = self._address_refusal(url) if error is FetchError.REFUSED else None
        if refused is not None:
            log.warning(
                "webhook to %s not sent: its host resolves to a non-public address (%s: %s), which "
                "deliveries never reach; for local development only, SITEAUDIT_ALLOW_NETWORKS=%s lets "
                "them through",
                _origin(url),
                refused.rule,
                refused.address,
                refused.address,
            )
        else:
            log.warning("webhook attempt to %s failed (%s): %s", _origin(url), error.value, detail)

    def _address_refusal(self, url: str) -> AddressRefused | None:
        """The guard's refusal of the URL's host, judged again to say why (only after a refused attempt)."""
        try:
            self._guard.check(urlsplit(url).hostname or "")
        except AddressRefused as refused:
            return refused
        except NetworkFailure:
            return None
        return None

    def close(self) -> None:
        self._fetcher.close()


def _origin(url: str) -> str:
    """`scheme://host[:port]` of `url`, what a log line may name of it."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "an invalid URL"
    host = parts.hostname or ""
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{port}"


def _ms(since: float) -> int:
    return round((time.perf_counter() - since) * 1000)
