"""The IndexNow use cases (docs/rest-api.md "IndexNow"), each declared once: its inputs with their bounds,
its result, and how `/v1` and the tools offer it. Every door is derived from these (docs/architecture.md,
"Adding a use case"); the handlers are in `indexnow.py`. The four calls that reach out (check-key,
detect-key, PUT key, submit) share one stricter limit of 10 requests a minute per key, on top of the
shared 60 (docs/rest-api.md "Errors and limits")."""

from collections.abc import Mapping
from typing import Any, Final, Literal

from attrs import field, frozen

from siteaudit.domain.error import ErrorCode
from siteaudit.domain.ids import SiteId
from siteaudit.domain.indexnow import MAX_SUBMIT_URLS
from siteaudit.domain.site import MAX_URL_LENGTH
from siteaudit.ports.ratelimit import Limit
from siteaudit.ports.usecases import (
    BODY_ERRORS,
    CHANGES,
    REACHES_OUT,
    SITE_ID,
    STARTS_WORK,
    Http,
    Summary,
    Tool,
    UseCase,
    body,
    lookup,
    url_list,
)
from siteaudit.services.indexnow import doors
from siteaudit.services.indexnow.answers import IndexNowKeyCheck, IndexNowStatus, IndexNowSubmitResult

INDEXNOW_LIMIT: Final = ("indexnow", Limit(10, 60.0))
LIMIT_NOTE: Final = "10 requests a minute per key on check-key, detect-key, PUT key and submit together"
CALLS_NOTE: Final = "10 IndexNow calls a minute"
# The errors every call changing a site's IndexNow answers besides its own and a body's.
_ERRORS: Final = (ErrorCode.NOT_FOUND, ErrorCode.CONFLICT)
_PATH: Final = "/v1/sites/{site_id}/indexnow"


def _reaching_out(
    method: Literal["POST", "PUT"],
    path: str,
    operation_id: str,
    summary: str,
    *errors: ErrorCode,
    examples: tuple[Mapping[str, Any], ...] = (),
) -> Http:
    """The binding of a call that reaches out (to the site or IndexNow): under the site's IndexNow path,
    with the shared stricter limit its summary states."""
    return Http(
        method,
        _PATH + path,
        operation_id,
        f"{summary} ({LIMIT_NOTE})",
        errors=(*_ERRORS, *errors, *BODY_ERRORS),
        examples=examples,
        limit=INDEXNOW_LIMIT,
    )


def _key_tool(name: str, title: str, description: str, summary: Summary, after: str) -> Tool:
    """The tool of a call fetching a key file from the site (what the site serves is quoted)."""
    return Tool(name, title, description, summary, **REACHES_OUT, untrusted=True, after=after)


@frozen
class GetIndexNowStatus(UseCase[IndexNowStatus]):
    """The site's IndexNow status (any site of the team; its key is generated on first use). Raises
    NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = lookup(
        _PATH,
        "getIndexNow",
        "IndexNow status: key, key file, allowance, recent submissions (not the largest engine)",
    )
    tool = Tool(
        "get_indexnow_status",
        "IndexNow status",
        "A site's IndexNow key (Bing, Yandex), key file, auto-submit, allowance, submissions. Publish "
        "the key file (agent_prompt), then check_indexnow_key.",
        doors.indexnow_text,
        after="get_index_triage",
    )


@frozen
class CheckIndexNowKey(UseCase[IndexNowKeyCheck]):
    """Fetch the key file now (through the SSRF guard); a failed check unverifies the key. Raises
    NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = _reaching_out("POST", "/check-key", "checkIndexNowKey", "Fetch the key file now")
    tool = _key_tool(
        "check_indexnow_key",
        "Check the IndexNow key file",
        f"Fetch the site's IndexNow key file now: verified or failed; {CALLS_NOTE}.",
        doors.key_check_text,
        after="get_indexnow_status",
    )


@frozen
class DetectIndexNowKey(UseCase[IndexNowStatus]):
    """Whether the site's platform submits for it, else a key the site already serves (at most 10
    requests); a found key is only a suggestion, in `detection`. Raises NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)

    http = _reaching_out(
        "POST",
        "/detect-key",
        "detectIndexNowKey",
        "Whether the site's platform submits for it (detection.status managed, detection.platform), "
        "else look for a key the site already serves, at most 10 requests in all; a found key is a "
        "suggestion",
    )
    tool = _key_tool(
        "detect_indexnow_key",
        "Find an existing IndexNow key",
        "Whether the site's platform submits to IndexNow, else a key it serves (then "
        f"set_indexnow_key); {CALLS_NOTE}.",
        doors.detect_text,
        after="check_indexnow_key",
    )


@frozen
class SetIndexNowKey(UseCase[IndexNowKeyCheck]):
    """Use an existing key, checked at once. Raises NotFound, InvalidIndexNowKey,
    InvalidIndexNowKeyLocation (422) or SiteNotVerified (409)."""

    site_id: SiteId = field(metadata=SITE_ID)
    # Any string within its length reaches the key rules, which answer 422 invalid_indexnow_key for a
    # malformed one (the pattern is what the document shows).
    key: str = field(
        metadata=body(
            "The key: 8-128 characters of A-Z a-z 0-9 and -.",
            doc="422 invalid_indexnow_key",
            min_length=1,
            max_length=MAX_URL_LENGTH,
            pattern="^[A-Za-z0-9-]{8,128}$",
        )
    )
    key_location: str | None = field(
        default=None,
        metadata=body(
            "Only when not https://<host>/<key>.txt: an https .txt URL on the site's host.",
            doc="only when the file is not at https://<host>/<key>.txt: an https URL on the site's host "
            "ending in .txt, on port 80, 443 or the site's own port (422 invalid_indexnow_key_location)",
            min_length=1,
            max_length=MAX_URL_LENGTH,
        ),
    )

    http = _reaching_out(
        "PUT",
        "/key",
        "setIndexNowKey",
        "Use an existing key on a verified site, checked at once",
        ErrorCode.SITE_NOT_VERIFIED,
        ErrorCode.INVALID_INDEXNOW_KEY,
        ErrorCode.INVALID_INDEXNOW_KEY_LOCATION,
        examples=({"key": "4f6a1c0e9b8d4e2f8a7b6c5d4e3f2a1b"},),
    )
    tool = _key_tool(
        "set_indexnow_key",
        "Use an existing IndexNow key",
        f"Use a key the site already serves and check it now; {CALLS_NOTE}. invalid_indexnow_key, "
        "invalid_indexnow_key_location.",
        doors.key_check_text,
        after="detect_indexnow_key",
    )


@frozen
class SetIndexNowAuto(UseCase[IndexNowStatus]):
    """Turn auto-submit after each audit on or off. Raises NotFound."""

    site_id: SiteId = field(metadata=SITE_ID)
    auto: bool = field(metadata=body("Submit after each audit."))

    http = Http(
        "PATCH",
        _PATH,
        "updateIndexNow",
        "Turn auto-submit of new and changed pages after each audit on or off",
        errors=(*_ERRORS, *BODY_ERRORS),
        examples=({"auto": True},),
    )
    tool = Tool(
        "set_indexnow_auto",
        "IndexNow auto-submit",
        "Turn on or off submitting a site's new and changed pages to IndexNow after each audit.",
        doors.indexnow_text,
        **CHANGES,
        after="set_indexnow_key",
    )


@frozen
class SubmitToIndexNow(UseCase[IndexNowSubmitResult]):
    """Send the site's URLs to IndexNow. Raises NotFound, SiteNotVerified, IndexNowKeyUnverified (409),
    IndexNowUrlNotInSite (422), IndexNowCap (429) or IndexNowRejected (502)."""

    site_id: SiteId = field(metadata=SITE_ID)
    urls: tuple[str, ...] = field(
        metadata=url_list(
            "URLs of the site.",
            MAX_SUBMIT_URLS,
            doc="URLs on other hosts are skipped (422 url_not_in_site when none is on the host); 10,000 "
            "URLs per site per UTC day, each counted once a day",
            counted=True,
        )
    )

    http = _reaching_out(
        "POST",
        "",
        "submitIndexNow",
        "Submit URLs of a verified site with a verified key",
        ErrorCode.SITE_NOT_VERIFIED,
        ErrorCode.INDEXNOW_KEY_UNVERIFIED,
        ErrorCode.URL_NOT_IN_SITE,
        ErrorCode.INDEXNOW_CAP,
        ErrorCode.INDEXNOW_REJECTED,
        examples=({"urls": ["https://retro-clock.example/blog/first-post"]},),
    )
    tool = Tool(
        "submit_to_indexnow",
        "Submit URLs to IndexNow",
        f"Notify IndexNow of new or changed URLs; a daily allowance, {CALLS_NOTE}. "
        "indexnow_key_unverified, indexnow_cap, indexnow_rejected.",
        doors.submit_text,
        **STARTS_WORK,
        after="set_indexnow_auto",
    )


# In the order the doors list them (the tool list, the remote CLI's commands).
USE_CASES: Final = (
    GetIndexNowStatus,
    CheckIndexNowKey,
    DetectIndexNowKey,
    SetIndexNowKey,
    SetIndexNowAuto,
    SubmitToIndexNow,
)
