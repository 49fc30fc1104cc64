"""The staging-access use cases (docs/security.md "Staging access"), each declared once: its inputs with
their bounds, its result, and how `/v1` and the tools offer it (docs/architecture.md, "Adding a use case");
the handlers are in `access.py`.

Only reading the status is a tool. Setting and removing are not: the values are credentials, and a
model's context (with the host's logs and transcripts of it) is no place to pass them through; a person
sets them over `/v1` with their key."""

from typing import Final

from attrs import field, frozen

from siteaudit.domain.access import (
    COOKIE_PATTERN,
    HEADER_PATTERN,
    MAX_COOKIES,
    MAX_ENTRY_LENGTH,
    MAX_HEADERS,
    MAX_PASSWORD_LENGTH,
    MAX_USER_LENGTH,
    PASSWORD_PATTERN,
    REFUSED_HEADER_PATTERN,
    USER_PATTERN,
)
from siteaudit.domain.error import ErrorCode
from siteaudit.domain.ids import SiteId
from siteaudit.ports.usecases import (
    BODY_ERRORS,
    LOOKUP_ERRORS,
    SITE_ID,
    Http,
    NotOffered,
    Tool,
    UseCase,
    body,
    lookup,
)
from siteaudit.services.access import doors
from siteaudit.services.access.answers import SiteAccessStatus

_PATH: Final = "/v1/sites/{site_id}/access"
_NO_SECRETS_TOOL: Final = (
    "the values are credentials: a model's context, and its host's logs and transcripts, are no place "
    "for them; a person sets or removes them over /v1"
)


@frozen
class GetSiteAccess(UseCase[SiteAccessStatus]):
    """Which kinds of staging access a site of the team has, and when they were set; never a value.
    Raises NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = lookup(
        _PATH,
        "getSiteAccess",
        "Which staging access (basic auth, headers, cookies) the site has and when it was set; never a value",
    )
    tool = Tool(
        "get_site_access",
        "Staging access of a site",
        "Which staging access (basic auth, headers, cookies) a site's audits send its origin, never a "
        "value; set and removed over the API only (/v1/sites/{id}/access).",
        doors.access_text,
    )


@frozen
class SetSiteAccess(UseCase[SiteAccessStatus]):
    """Set or replace a verified site's staging access, sealed. Raises NotFound, ValidationFailed (422)
    or SiteNotVerified (409)."""

    site_id: SiteId = field(metadata=SITE_ID)
    basic_auth_user: str | None = field(
        default=None,
        metadata=body(
            f"Basic auth user name, 1-{MAX_USER_LENGTH} characters without a colon; with basic_auth_password.",
            doc=f"basic auth user name, 1-{MAX_USER_LENGTH} characters without a colon or control character; "
            "given with basic_auth_password",
            max_length=MAX_USER_LENGTH,
            pattern=USER_PATTERN,
        ),
    )
    basic_auth_password: str | None = field(
        default=None,
        metadata=body(
            "Basic auth password; with basic_auth_user.",
            doc=f"basic auth password, at most {MAX_PASSWORD_LENGTH:,} characters, no control character",
            max_length=MAX_PASSWORD_LENGTH,
            pattern=PASSWORD_PATTERN,
        ),
    )
    headers: tuple[str, ...] | None = field(
        default=None,
        metadata=body(
            f'Extra request headers, at most {MAX_HEADERS}, each "Name: value".',
            doc=f'at most {MAX_HEADERS} extra request headers, each "Name: value" (printable ASCII); '
            "hop-by-hop headers, Host, Content-Length, Authorization, Cookie and the headers the crawler "
            "sets itself are refused; each name once",
            max_length=MAX_ENTRY_LENGTH,
            max_items=MAX_HEADERS,
            pattern=HEADER_PATTERN,
            refuses=REFUSED_HEADER_PATTERN,
        ),
    )
    cookies: tuple[str, ...] | None = field(
        default=None,
        metadata=body(
            f'Cookies, at most {MAX_COOKIES}, each "name=value".',
            doc=f'at most {MAX_COOKIES} cookies, each "name=value" (RFC 6265 characters), sent in one Cookie '
            "header; each name once",
            max_length=MAX_ENTRY_LENGTH,
            max_items=MAX_COOKIES,
            pattern=COOKIE_PATTERN,
        ),
    )
    # docs/security.md "Staging access": the user and the password go together, and at least one kind is
    # given. That a header or a cookie is named once only the handler checks (the document says it in prose).
    given_together = ("basic_auth_user", "basic_auth_password")
    at_least_one_of = ("basic_auth_user", "headers", "cookies")

    http = Http(
        "PUT",
        _PATH,
        "setSiteAccess",
        "Set or replace the staging access of a verified site: basic auth, headers, cookies, sent only to "
        "the site's own origin",
        errors=(ErrorCode.NOT_FOUND, ErrorCode.SITE_NOT_VERIFIED, *BODY_ERRORS),
        examples=({"basic_auth_user": "preview", "basic_auth_password": "correct horse battery staple"},),
    )
    tool = NotOffered("mcp", _NO_SECRETS_TOOL)


@frozen
class RemoveSiteAccess(UseCase[SiteAccessStatus]):
    """Remove a site's staging access (any site of the team: one that lost its verification too). Raises
    NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = Http(
        "DELETE",
        _PATH,
        "removeSiteAccess",
        "Remove the site's staging access; its audits send none from then on",
        errors=LOOKUP_ERRORS,
    )
    tool = NotOffered("mcp", _NO_SECRETS_TOOL)


# In the order the doors list them (the tool list, the remote CLI's commands).
USE_CASES: Final = (GetSiteAccess, SetSiteAccess, RemoveSiteAccess)
