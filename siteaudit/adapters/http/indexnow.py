"""HttpxIndexNowClient: the IndexNow protocol's JSON submission (indexnow.org/documentation) over httpx2.

The endpoint comes from settings (SITEAUDIT_INDEXNOW_ENDPOINT, by default the shared
https://api.indexnow.org/indexnow, which passes submissions on to every engine that takes part). It is
the operator's choice, not a caller's URL, so it is not put through the SSRF guard; no proxy from the
environment, no redirects followed, and at most 4 KB of an answer read.
"""

import json
import logging
import threading
from collections.abc import Sequence
from typing import Final

import httpx2 as httpx

from siteaudit.domain.identity import USER_AGENT
from siteaudit.domain.indexnow import NETWORK_ERROR, BatchResult, error_code_of

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT: Final = "https://api.indexnow.org/indexnow"
ANSWER_BYTES: Final = 4_096


class HttpxIndexNowClient:
    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, *, timeout_s: float = 30.0) -> None:
        self.endpoint = endpoint
        self._timeout_s = timeout_s
        self._made: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def _client(self) -> httpx.Client:
        # Made on first submission: a client loads the CA bundle (tens of milliseconds), and building the
        # application (every CLI command, every gunicorn worker, every test) should not pay for it.
        with self._lock:
            if self._made is None:
                self._made = httpx.Client(
                    timeout=httpx.Timeout(self._timeout_s),
                    trust_env=False,
                    follow_redirects=False,
                    headers={"user-agent": USER_AGENT},
                )
            return self._made

    def submit(self, *, host: str, key: str, key_location: str, urls: Sequence[str]) -> BatchResult:
        body = json.dumps({"host": host, "key": key, "keyLocation": key_location, "urlList": list(urls)})
        try:
            with self._client.stream(
                "POST",
                self.endpoint,
                content=body.encode(),
                headers={"content-type": "application/json; charset=utf-8"},
            ) as answer:
                text = _read_some(answer)
                status = answer.status_code
        except httpx.HTTPError as exc:
            log.warning("IndexNow request for %s failed: %s", host, type(exc).__name__)
            return BatchResult(len(urls), None, NETWORK_ERROR, f"{type(exc).__name__}: {exc}"[:300])
        code = error_code_of(status)
        if code is not None:
            log.warning("IndexNow answered %s for %s (%s URLs)", status, host, len(urls))
        return BatchResult(len(urls), status, code, (text.strip()[:300] or None) if code else None)

    def close(self) -> None:
        with self._lock:
            if self._made is not None:
                self._made.close()
                self._made = None


def _read_some(answer: httpx.Response) -> str:
    read = bytearray()
    for chunk in answer.iter_raw():
        read.extend(chunk)
        if len(read) >= ANSWER_BYTES:
            break
    return bytes(read[:ANSWER_BYTES]).decode("utf-8", errors="replace")
