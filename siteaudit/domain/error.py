"""The error catalogue of the interface (docs/rest-api.md "Errors and limits") and the typed errors the domain
raises."""

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar, Final


class ErrorCode(enum.StrEnum):
    EXPIRED_TOKEN = "expired_token"
    INVALID_GRANT = "invalid_grant"
    UNAUTHENTICATED = "unauthenticated"
    INSUFFICIENT_CREDITS = "insufficient_credits"
    TEAM_ACCESS_REVOKED = "team_access_revoked"
    NOT_TEAM_OWNER = "not_team_owner"
    ACCESS_DENIED = "access_denied"
    PLAN_LIMIT_MAX_PAGES = "plan_limit_max_pages"
    PLAN_LIMIT_SITES = "plan_limit_sites"
    PLAN_LIMIT_MONITORING = "plan_limit_monitoring"
    NOT_FOUND = "not_found"
    REPORT_NOT_READY = "report_not_ready"
    CONFLICT = "conflict"
    SITE_NOT_VERIFIED = "site_not_verified"
    SITE_EXISTS = "site_exists"
    SC_NOT_CONNECTED = "sc_not_connected"
    INDEXNOW_KEY_UNVERIFIED = "indexnow_key_unverified"
    SUBSCRIPTION_EXISTS = "subscription_exists"
    NO_BILLING_ACCOUNT = "no_billing_account"
    CRAWL_ARCHIVED = "crawl_archived"
    VALIDATION_FAILED = "validation_failed"
    INVALID_URL = "invalid_url"
    SITE_URL_MISMATCH = "site_url_mismatch"
    MAX_RPS_REQUIRES_VERIFIED_SITE = "max_rps_requires_verified_site"
    VERIFICATION_FAILED = "verification_failed"
    CANNOT_VERIFY = "cannot_verify"
    INVALID_URLS = "invalid_urls"
    URL_NOT_IN_SITE = "url_not_in_site"
    INVALID_INDEXNOW_KEY = "invalid_indexnow_key"
    INVALID_INDEXNOW_KEY_LOCATION = "invalid_indexnow_key_location"
    PRICE_NOT_CONFIGURED = "price_not_configured"
    AUTHORIZATION_PENDING = "authorization_pending"
    SLOW_DOWN = "slow_down"
    RECHECK_RATE_LIMITED = "recheck_rate_limited"
    BUDGET_EXHAUSTED = "budget_exhausted"
    INDEXNOW_CAP = "indexnow_cap"
    INDEXNOW_REJECTED = "indexnow_rejected"
    DISPATCH_FAILED = "dispatch_failed"
    # Beyond the REST contract's error table, which leaves the shared per-key limit's answer open.
    RATE_LIMITED = "rate_limited"
    # Beyond the REST contract's error table: framework-level answers every interface needs.
    METHOD_NOT_ALLOWED = "method_not_allowed"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    INTERNAL_ERROR = "internal_error"
    # ...and the request line and headers the HTTP server itself refuses before any interface sees them.
    BAD_REQUEST = "bad_request"
    URI_TOO_LONG = "uri_too_long"
    HEADERS_TOO_LARGE = "headers_too_large"
    HTTP_VERSION_NOT_SUPPORTED = "http_version_not_supported"
    # Beyond the REST contract's error table: the payment provider's webhook and outage (billing, outside
    # /v1's contract).
    INVALID_SIGNATURE = "invalid_signature"
    PAYMENT_PROVIDER_FAILED = "payment_provider_failed"


HTTP_STATUS: Final[Mapping[ErrorCode, int]] = MappingProxyType(
    {
        ErrorCode.EXPIRED_TOKEN: 400,
        ErrorCode.INVALID_GRANT: 400,
        ErrorCode.UNAUTHENTICATED: 401,
        ErrorCode.INSUFFICIENT_CREDITS: 402,
        ErrorCode.TEAM_ACCESS_REVOKED: 403,
        ErrorCode.NOT_TEAM_OWNER: 403,
        ErrorCode.ACCESS_DENIED: 403,
        ErrorCode.PLAN_LIMIT_MAX_PAGES: 403,
        ErrorCode.PLAN_LIMIT_SITES: 403,
        ErrorCode.PLAN_LIMIT_MONITORING: 403,
        ErrorCode.NOT_FOUND: 404,
        ErrorCode.REPORT_NOT_READY: 404,
        ErrorCode.CONFLICT: 409,
        ErrorCode.SITE_NOT_VERIFIED: 409,
        ErrorCode.SITE_EXISTS: 409,
        ErrorCode.SC_NOT_CONNECTED: 409,
        ErrorCode.INDEXNOW_KEY_UNVERIFIED: 409,
        ErrorCode.SUBSCRIPTION_EXISTS: 409,
        ErrorCode.NO_BILLING_ACCOUNT: 409,
        ErrorCode.CRAWL_ARCHIVED: 410,
        ErrorCode.VALIDATION_FAILED: 422,
        ErrorCode.INVALID_URL: 422,
        ErrorCode.SITE_URL_MISMATCH: 422,
        ErrorCode.MAX_RPS_REQUIRES_VERIFIED_SITE: 422,
        ErrorCode.VERIFICATION_FAILED: 422,
        ErrorCode.CANNOT_VERIFY: 422,
        ErrorCode.INVALID_URLS: 422,
        ErrorCode.URL_NOT_IN_SITE: 422,
        ErrorCode.INVALID_INDEXNOW_KEY: 422,
        ErrorCode.INVALID_INDEXNOW_KEY_LOCATION: 422,
        ErrorCode.PRICE_NOT_CONFIGURED: 422,
        ErrorCode.AUTHORIZATION_PENDING: 428,
        ErrorCode.SLOW_DOWN: 429,
        ErrorCode.RECHECK_RATE_LIMITED: 429,
        ErrorCode.BUDGET_EXHAUSTED: 429,
        ErrorCode.INDEXNOW_CAP: 429,
        ErrorCode.INDEXNOW_REJECTED: 502,
        ErrorCode.DISPATCH_FAILED: 503,
        ErrorCode.RATE_LIMITED: 429,
        ErrorCode.METHOD_NOT_ALLOWED: 405,
        ErrorCode.UNSUPPORTED_MEDIA_TYPE: 415,
        ErrorCode.PAYLOAD_TOO_LARGE: 413,
        ErrorCode.INTERNAL_ERROR: 500,
        ErrorCode.BAD_REQUEST: 400,
        ErrorCode.URI_TOO_LONG: 414,
        ErrorCode.HEADERS_TOO_LARGE: 431,
        ErrorCode.HTTP_VERSION_NOT_SUPPORTED: 505,
        ErrorCode.INVALID_SIGNATURE: 400,
        ErrorCode.PAYMENT_PROVIDER_FAILED: 502,
    }
)


class DomainError(Exception):
    """A broken rule. `code` is the interface's error code; `status` its HTTP status."""

    code: ErrorCode = ErrorCode.CONFLICT
    # What an error that always says the same says when raised without a message.
    default_message: ClassVar[str | None] = None

    def __init__(self, message: str | None = None, *, code: ErrorCode | None = None) -> None:
        message = self.default_message if message is None else message
        if message is None:
            raise TypeError(f"{type(self).__name__} is raised with a message")
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    @property
    def status(self) -> int:
        return HTTP_STATUS[self.code]


class NotFound(DomainError):
    code = ErrorCode.NOT_FOUND

    def __init__(self, entity: str, key: object) -> None:
        super().__init__(f"{entity} {key} was not found")
        self.entity = entity
        self.key = key


class Conflict(DomainError):
    code = ErrorCode.CONFLICT


class InvalidTransition(Conflict):
    def __init__(self, entity: str, state: str, move: str) -> None:
        super().__init__(f"{entity} in state {state!r} cannot {move!r}")
        self.entity = entity
        self.state = state
        self.move = move


class ConcurrentUpdate(Conflict):
    def __init__(self, entity: str, key: object) -> None:
        super().__init__(f"{entity} {key} was changed by someone else; reload and try again")


class InsufficientCredits(DomainError):
    code = ErrorCode.INSUFFICIENT_CREDITS

    def __init__(self, needed_tenths: int, available_tenths: int) -> None:
        super().__init__(
            f"this needs {needed_tenths / 10:g} credits but the account has {available_tenths / 10:g}"
        )
        self.needed_tenths = needed_tenths
        self.available_tenths = available_tenths


class ValidationFailed(DomainError):
    """Invalid parameters; `fields` names each bad field with what is wrong with it."""

    code = ErrorCode.VALIDATION_FAILED

    def __init__(self, fields: Mapping[str, str]) -> None:
        names = ", ".join(sorted(fields))
        super().__init__(f"invalid parameters: {names}")
        self.fields = dict(fields)


class Unauthenticated(DomainError):
    code = ErrorCode.UNAUTHENTICATED
    default_message = "a valid API key is required: Authorization: Bearer sk_..."


class TeamAccessRevoked(DomainError):
    code = ErrorCode.TEAM_ACCESS_REVOKED
    default_message = "the key's holder is no longer a member of its team"


class RateLimited(DomainError):
    """A limit refused the call; `retry_after` is the whole seconds until it would pass."""

    code = ErrorCode.RATE_LIMITED

    def __init__(self, retry_after: int, *, code: ErrorCode = ErrorCode.RATE_LIMITED, what: str = "") -> None:
        super().__init__(
            f"too many requests{' ' + what if what else ''}; retry in {retry_after} s", code=code
        )
        self.retry_after = retry_after
