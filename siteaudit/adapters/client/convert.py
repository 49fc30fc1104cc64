# Over 500 lines: one reader per REST answer, turning the JSON back into the typed results.
"""The REST answers read back into the application's typed results.

Each reader takes the JSON of one answer (docs/rest-api.md "Endpoints") and returns the value the in-process
application returns for the same call, as far as the interface shows it. What `/v1` never shows is filled with
the neutral values below and documented here once: who started and who pays for an audit (`UNSHOWN_USER`), a
site's creation time (`UNSHOWN_TIME`) and crawler secret reference (empty), a listed page's internal url id
(0). Rendering a read-back value through the REST views gives the JSON it was read from.
"""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import Audit, AuditStatus, AuditTrigger
from siteaudit.domain.ids import AuditId, SiteId, UserId
from siteaudit.domain.site import (
    Notice,
    NoticeCode,
)
from siteaudit.ports.application import (
    AuditDetail,
)

UNSHOWN_USER: Final = UserId(0)
UNSHOWN_TIME: Final = datetime(1970, 1, 1, tzinfo=UTC)

J = Mapping[str, Any]


def tenths(number: float) -> int:
    return round(float(number) * 10)


def moment(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _audit(answer: J, caller: Caller, **more: Any) -> Audit:
    created = moment(answer["created_at"])
    assert created is not None
    return Audit(
        id=AuditId(int(answer["crawl_id"])),
        team_id=caller.team_id,
        user_id=UNSHOWN_USER,
        payer_id=UNSHOWN_USER,
        url=answer["site_url"],
        origin=origin_of(answer["site_url"]),
        created_at=created,
        max_pages=int(answer["max_pages"]),
        site_id=None if answer["site_id"] is None else SiteId(int(answer["site_id"])),
        trigger=AuditTrigger(answer["trigger"]),
        status=AuditStatus(answer["status"]),
        finished_at=moment(answer["finished_at"]),
        archived_at=moment(answer["archived_at"]),
        pages_crawled=int(answer["pages_crawled"]),
        **more,
    )


def audit_detail(answer: J, caller: Caller) -> AuditDetail:
    """`GET /crawls/{id}`, read back after `POST /crawls` (the 202 names the audit): the detail carries no
    health score (the list rows do)."""
    audit = _audit(
        answer,
        caller,
        concurrency=int(answer["concurrency"]),
        max_rps=float(answer["max_rps"]),
        credits_reserved=tenths(answer["credits_reserved"]),
        verify_token_set=bool(answer["verify_token_set"]),
        started_at=moment(answer["started_at"]),
        last_progress_at=moment(answer.get("last_progress_at")),
        failure_reason=answer["failure_reason"],
        render=bool(answer.get("render", False)),
    )
    return AuditDetail(audit=audit, stalled=bool(answer.get("stalled", False)))


def notices(answer: J) -> tuple[Notice, ...]:
    """The `warnings` of an answer (none from a server that sends none)."""
    return tuple(Notice(NoticeCode(w["code"]), w["message"]) for w in answer.get("warnings", ()))
