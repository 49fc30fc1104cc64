"""One HTTP session to a siteaudit service's `/v1`: bearer keys, JSON, retries that honour Retry-After,
and REST errors raised again as the DomainError codes they carry."""

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import httpx2 as httpx

from siteaudit.domain.error import DomainError, ErrorCode, RateLimited, ValidationFailed

# Answers worth asking again once the service says when: a limit (429) or a failed dispatch (503).
RETRIED_STATUSES: Final = frozenset({429, 503})
USER_AGENT: Final = "siteaudit-client"


class RemoteError(DomainError):
    """An error the service answered with: its error code and message, and any extra body fields
    (`resets_at`, ...). `code_text` keeps a code this client does not know (the code is then
    internal_error)."""

    def __init__(self, code: str, message: str, *, extra: Mapping[str, Any] | None = None) -> None:
        known = code in ErrorCode.__members__.values()
        super().__init__(message, code=ErrorCode(code) if known else ErrorCode.INTERNAL_ERROR)
        self.code_text = code
        self.extra = dict(extra or {})


class Unreachable(DomainError):
    """The service did not answer (refused, timed out, not HTTP)."""

    code = ErrorCode.INTERNAL_ERROR

    def __init__(self, base_url: str, why: str) -> None:
        super().__init__(f"cannot reach {base_url}: {why}")


def error_from(status: int, body: Any, retry_after: int | None) -> DomainError:
    """The DomainError an error answer stands for; a body that is not the error envelope
    (docs/rest-api.md "Errors and limits") still gives one."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return RemoteError("internal_error", f"the service answered HTTP {status} without an error body")
    code, message = error["code"], str(error.get("message", ""))
    extra = {k: v for k, v in error.items() if k not in ("code", "message")}
    if code == ErrorCode.VALIDATION_FAILED and isinstance(error.get("fields"), dict):
        failed = ValidationFailed({str(k): str(v) for k, v in error["fields"].items()})
        failed.message = message or failed.message
        return failed
    if status == 429 and code in ErrorCode.__members__.values() and retry_after is not None:
        limited = RateLimited(retry_after, code=ErrorCode(code))
        limited.message = message
        limited.extra = extra  # type: ignore[attr-defined]
        return limited
    return RemoteError(code, message, extra=extra)


def retry_after_s(response: httpx.Response) -> int | None:
    value = response.headers.get("Retry-After", "")
    return int(value) if value.strip().isdigit() else None


class Transport:
    """Calls under `base_url` (ending in `/v1`). A 429 or 503 with Retry-After is asked again after that
    many seconds, at most `attempts` times in all and never when the wait would pass `max_wait_s`."""

    def __init__(
        self,
        base_url: str,
        *,
        attempts: int = 3,
        max_wait_s: float = 60.0,
        timeout_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.attempts = attempts
        self.max_wait_s = max_wait_s
        self._sleep = sleep
        self._http = http or httpx.Client(timeout=timeout_s, trust_env=False, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def call(
        self,
        method: str,
        path: str,
        *,
        key: str,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        """The answer's JSON (None for 204). Raises the DomainError of an error answer, or Unreachable."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        headers = {"Authorization": f"Bearer {key}", "User-Agent": USER_AGENT, "Accept": "application/json"}
        waited = 0.0
        for attempt in range(1, self.attempts + 1):
            try:
                response = self._http.request(
                    method, self.base_url + path, params=query, json=body, headers=headers
                )
            except httpx.HTTPError as error:
                raise Unreachable(self.base_url, str(error) or type(error).__name__) from None
            if response.status_code == 204:
                return None
            if response.status_code < 400:
                return _json(response)
            wait = retry_after_s(response)
            if (
                response.status_code in RETRIED_STATUSES
                and wait is not None
                and attempt < self.attempts
                and waited + wait <= self.max_wait_s
            ):
                self._sleep(wait)
                waited += wait
                continue
            raise error_from(response.status_code, _json(response, strict=False), wait)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _json(response: httpx.Response, *, strict: bool = True) -> Any:
    try:
        return response.json()
    except ValueError:
        if strict:
            raise RemoteError(
                "internal_error", f"the service answered HTTP {response.status_code} with no JSON"
            ) from None
        return None
