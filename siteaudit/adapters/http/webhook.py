"""HttpxWebhookSender: one signed POST through the SSRF guard, cut at a wall-clock deadline, 4 KB read."""

import ssl
import time
from collections.abc import Sequence
from typing import Final

from siteaudit.adapters.http.fetcher import FetchLimits, HttpxBlockingFetcher
from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.network import AddressPolicy, FetchRequest
from siteaudit.domain.webhook import DEADLINE_S, MAX_RESPONSE_BYTES, SendOutcome, url_refusal
from siteaudit.ports.network import Resolver

REFUSED: Final = "refused"
# Whatever the caller passes: the body is JSON, and an encoded answer could not be capped as read.
_FIXED: Final = {"content-type": "application/json", "accept-encoding": "identity"}


class HttpxWebhookSender:
    """The WebhookSender port on HttpxBlockingFetcher, which gives the guard, the cap and the deadline.

    `deadline_s` bounds the whole exchange, DNS included; the per-phase httpx timeouts are set no
    longer, so whichever comes first ends the attempt, and the deadline always does by `deadline_s`.
    """

    def __init__(
        self,
        resolver: Resolver,
        policy: AddressPolicy,
        *,
        deadline_s: float = DEADLINE_S,
        max_bytes: int = MAX_RESPONSE_BYTES,
        user_agent: str = USER_AGENT,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.deadline_s = deadline_s
        self.max_bytes = max_bytes
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
        return SendOutcome(
            answer.status,
            error=None if answer.error is None else answer.error.value,
            detail=answer.error_detail,
            duration_ms=answer.total_ms if answer.total_ms is not None else _ms(started),
            response_bytes=len(answer.body),
            truncated=answer.truncated,
        )

    def close(self) -> None:
        self._fetcher.close()


def _ms(since: float) -> int:
    return round((time.perf_counter() - since) * 1000)
