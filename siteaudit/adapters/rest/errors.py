"""Every error answers the envelope of docs/rest-api.md "Errors and limits": never an HTML page, never a stack
trace."""

import logging
from typing import Any

import falcon

from siteaudit.domain.error import HTTP_STATUS, DomainError, ErrorCode, RateLimited, ValidationFailed

log = logging.getLogger("siteaudit.rest")

_FRAMEWORK: dict[int, tuple[ErrorCode, str]] = {
    400: (ErrorCode.VALIDATION_FAILED, "the request could not be read"),
    404: (ErrorCode.NOT_FOUND, "there is nothing at this path"),
    405: (ErrorCode.METHOD_NOT_ALLOWED, "this method is not allowed on this path"),
    411: (ErrorCode.VALIDATION_FAILED, "a Content-Length header is required"),
    413: (ErrorCode.PAYLOAD_TOO_LARGE, "the request body is too large"),
    415: (ErrorCode.UNSUPPORTED_MEDIA_TYPE, "send JSON with Content-Type: application/json"),
}


def envelope(code: ErrorCode | str, message: str, **extra: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": str(code), "message": message}
    error.update(extra)
    return {"error": error}


def answer(resp: falcon.Response, status: int, body: dict[str, Any]) -> None:
    resp.status = status
    resp.media = body
    resp.content_type = falcon.MEDIA_JSON
    resp.complete = True


def handle_domain_error(req: falcon.Request, resp: falcon.Response, error: DomainError, params: Any) -> None:
    extra: dict[str, Any] = {}
    if isinstance(error, ValidationFailed):
        extra["fields"] = error.fields
    if isinstance(error, RateLimited):
        resp.set_header("Retry-After", str(max(1, error.retry_after)))
    interval = getattr(error, "interval_seconds", None)  # a device poll answered slow_down
    if isinstance(interval, int):
        resp.set_header("Retry-After", str(max(1, interval)))
    more = getattr(error, "extra", None)
    if isinstance(more, dict):
        extra.update(more)
    answer(resp, HTTP_STATUS[error.code], envelope(error.code, error.message, **extra))


def handle_http_error(
    req: falcon.Request, resp: falcon.Response, error: falcon.HTTPError, params: Any
) -> None:
    status = error.status_code
    code, message = _FRAMEWORK.get(status, (ErrorCode.VALIDATION_FAILED, "the request could not be handled"))
    extra: dict[str, Any] = {}
    if code is ErrorCode.VALIDATION_FAILED and status == 400:
        status = 422
        extra["fields"] = {"body": error.description or error.title or "malformed"}
    if status == 405 and error.headers:
        allow = dict(error.headers).get("Allow")
        if allow:
            resp.set_header("Allow", allow)
    answer(resp, status, envelope(code, message, **extra))


def handle_unexpected(req: falcon.Request, resp: falcon.Response, error: Exception, params: Any) -> None:
    if isinstance(error, falcon.HTTPError):
        handle_http_error(req, resp, error, params)
        return
    if isinstance(error, DomainError):
        handle_domain_error(req, resp, error, params)
        return
    request_id = getattr(req.context, "request_id", "-")
    log.exception("unhandled error in %s %s (request %s)", req.method, req.path, request_id)
    answer(
        resp,
        500,
        envelope(
            ErrorCode.INTERNAL_ERROR, f"something went wrong on our side; quote request id {request_id}"
        ),
    )


def install(app: "falcon.App[Any, Any]") -> None:
    # Falcon picks the most specific handler: order of registration does not matter.
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(falcon.HTTPError, handle_http_error)
    app.add_error_handler(DomainError, handle_domain_error)
