"""Audit use cases: start, cancel, fail and end an audit, with its credits reserved and settled once.

Each audit event is one info line on the `siteaudit.audit` logger, written once its transaction
committed: started here, handed over in `crawl/handover.py`, ended here (and by finalisation), the webhook
delivered or given up in `webhook.py`.
"""

import logging
from collections.abc import Callable, Mapping, Sequence

from siteaudit.domain.account import Caller, plan_named
from siteaudit.domain.audit import (
    Audit,
    AuditEnded,
    AuditRequest,
    AuditStatus,
    decide_audit_settings,
    dispatch_failed,
    origin_of,
)
from siteaudit.domain.credit import as_number, audit_cost
from siteaudit.domain.credit import audit_reference as audit_reference  # where tests and callers look
from siteaudit.domain.error import DomainError, ErrorCode, ValidationFailed
from siteaudit.domain.extraction import check_rules
from siteaudit.domain.ids import AuditId, TeamId
from siteaudit.domain.lease import is_stalled
from siteaudit.domain.network import AddressPolicy
from siteaudit.ports.application import AuditDetail, AuditQuery, AuditStarted
from siteaudit.ports.clock import Clock
from siteaudit.ports.metrics import NO_METRICS, Metrics
from siteaudit.ports.network import HostResolver
from siteaudit.ports.parse import PageParser
from siteaudit.ports.queue import DispatchError, TaskQueue
from siteaudit.ports.repository import TeamAuditQuery, UnitOfWork
from siteaudit.ports.usecases import copy_named
from siteaudit.services.events import MessageBus
from siteaudit.services.site import require_public_address, site_terms

log = logging.getLogger("siteaudit.audit")


class DispatchFailed(DomainError):
    code = ErrorCode.DISPATCH_FAILED

    def __init__(self, audit_id: AuditId) -> None:
        super().__init__(f"audit {audit_id} could not be dispatched; its credits were refunded, try again")


def start_audit(
    request: AuditRequest,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    queue: TaskQueue,
    metrics: Metrics = NO_METRICS,
    site_endpoint: bool = False,
    public_only: tuple[HostResolver, AddressPolicy] | None = None,
    parser: PageParser | None = None,
) -> AuditStarted:
    """Validate, reserve `estimated_credits`, store the audit `queued`, commit, then dispatch it.

    With `request.site_id` the team's site supplies the settings (another team's site answers NotFound);
    a plain URL counts as verified when the team has a verified site for its origin. Plain-URL audits are
    paid by the caller, site audits by the team owner (docs/rest-api.md "Credits"). A refused request (402,
    403, 404, 409, 422) creates nothing. When dispatching fails the audit ends `failed` (`dispatch_failed:
    ...`), the reservation is refunded in full, and DispatchFailed (503) is raised.

    `parser` judges the grammar of the extraction rules (docs/extraction.md): a rule that does not parse
    is refused (422) with the others' faults; without one, an audit with rules is refused.
    """
    if request.extract:  # a site's saved rules were judged when they were saved
        if parser is None:
            raise ValidationFailed({"extract": "this service cannot read extraction rules"})
        check_rules(request.extract, parser.rule_errors(request.extract))
    now = clock.now()
    with uow:
        team = uow.teams.get(caller.team_id)
        site = None
        origin_verified = False
        if request.site_id is not None:
            site = site_terms(uow.sites.get(request.site_id, team=team.id))
        elif (start := request.url or (request.urls[0] if request.urls else None)) is not None:
            try:
                origin_verified = (
                    uow.sites.verified_for_origin(team=team.id, origin=origin_of(start)) is not None
                )
            except DomainError:
                origin_verified = False  # decide_audit_settings names what is wrong with the URL
        paid_by = team.owner_id if site is not None else caller.user_id
        plan = plan_named(uow.users.get(paid_by).plan)
        settings = decide_audit_settings(
            request, plan=plan, site=site, origin_verified=origin_verified, site_endpoint=site_endpoint
        )
        if public_only is not None:
            require_public_address(settings.url, *public_only)
        # The decided settings are the audit's fields named alike (url, origin, site, limits, scope).
        audit = uow.audits.add(
            copy_named(
                Audit,
                settings,
                id=AuditId(0),
                team_id=caller.team_id,
                user_id=caller.user_id,
                payer_id=paid_by,
                created_at=now,
                trigger=request.trigger,
                credits_reserved=settings.estimated_credits,
                verify_token_set=request.verify_token is not None,
                webhook_url=request.webhook_url if not site_endpoint else None,
            )
        )
        uow.credits.reserve(
            paid_by,
            settings.estimated_credits,
            reference=audit_reference(audit.id),
            at=now,
            team=caller.team_id,
        )
        uow.commit()
    try:
        queue.crawl_slice(audit.id, verify_token=request.verify_token)
    except DispatchError as exc:
        fail_audit(
            audit.id, dispatch_failed(str(exc) or type(exc).__name__), uow=uow, clock=clock, metrics=metrics
        )
        raise DispatchFailed(audit.id) from exc
    log.info(
        "audit %s started: %s (max %d pages, trigger %s)",
        audit.id,
        audit.url,
        audit.max_pages,
        audit.trigger.value,
    )
    return AuditStarted(audit, notices=settings.notices)


def log_ended(audit: Audit) -> None:
    """The line of an audit's end, once the ending transaction committed."""
    charged = audit_cost(
        pages_fetched=audit.pages_fetched_in_full,
        pages_not_modified=audit.pages_not_modified,
        reserved=audit.credits_reserved,
        render=audit.render,
    )
    duration = audit.duration_s
    log.info(
        "audit %s ended: %s%s, %d pages, score %s, %s credits charged, %s",
        audit.id,
        audit.status.value,
        f" ({audit.failure_reason})" if audit.status is AuditStatus.FAILED else "",
        audit.pages_crawled,
        "none" if audit.health_score is None else audit.health_score,
        as_number(charged),
        "never started" if duration is None else f"took {duration:.1f} s",
    )


def _end_audit(
    audit_id: AuditId,
    end: Callable[[Audit], tuple[Audit, AuditEnded] | None],
    *,
    team: TeamId | None,
    uow: UnitOfWork,
    metrics: Metrics,
    bus: MessageBus | None,
) -> Audit:
    """Move the audit (the team's, or any team's for None) to an ended status with `end` (None: it is left
    as it is), its `AuditEnded` to `bus`, by default the settling bus over `metrics`: credits settle in the
    same transaction."""
    bus = bus or MessageBus.settling(metrics)
    with uow:
        audit = uow.audits.get_any(audit_id) if team is None else uow.audits.get(audit_id, team=team)
        moved = end(audit)
        if moved is None:
            return audit
        audit, ended = moved
        uow.audits.save(audit)
        published = bus.in_transaction(ended, uow=uow)
        uow.commit()
    log_ended(audit)
    bus.after_commit(published, uow=uow)
    return audit


def cancel_audit(
    audit_id: AuditId,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    metrics: Metrics = NO_METRICS,
    bus: MessageBus | None = None,
) -> Audit:
    """Cancel a queued, running or finalizing audit; an ended one raises Conflict (409). Its `AuditEnded`
    goes to `bus` (by default the settling bus over `metrics`: credits settle in the same transaction)."""
    return _end_audit(
        audit_id,
        lambda audit: audit.cancel(now=clock.now()),
        team=caller.team_id,
        uow=uow,
        metrics=metrics,
        bus=bus,
    )


def fail_audit(
    audit_id: AuditId,
    reason: str,
    *,
    uow: UnitOfWork,
    clock: Clock,
    metrics: Metrics = NO_METRICS,
    bus: MessageBus | None = None,
) -> Audit:
    """End an audit `failed` with `reason`, settling what it fetched. An ended audit is left as it is.
    Its `AuditEnded` goes to `bus` (by default the settling bus over `metrics`)."""

    def end(audit: Audit) -> tuple[Audit, AuditEnded] | None:
        return None if audit.status.ended else audit.fail(reason, now=clock.now())

    return _end_audit(audit_id, end, team=None, uow=uow, metrics=metrics, bus=bus)


def get_audit(audit_id: AuditId, caller: Caller, *, uow: UnitOfWork, clock: Clock) -> AuditDetail:
    """The team's audit, and whether its work stalled (`siteaudit.domain.lease.is_stalled`) now."""
    with uow:
        # The audit and its lease in one read: the hot REST path stays at two round trips with the key's.
        audit, lease = uow.audits.get_with_lease(audit_id, team=caller.team_id)
        return AuditDetail(audit, stalled=is_stalled(audit, lease, clock.now()))


def begin_audit(audit_id: AuditId, *, uow: UnitOfWork, clock: Clock) -> Audit:
    """A crawl slice claims a queued audit (queued -> running); a running audit is returned as it is."""
    with uow:
        audit = uow.audits.get_any(audit_id)
        if audit.status is AuditStatus.QUEUED:
            audit = audit.start(now=clock.now())
            uow.audits.save(audit)
            uow.commit()
    return audit


def record_progress(
    audit_id: AuditId, *, pages_crawled: int, pages_not_modified: int, uow: UnitOfWork, clock: Clock
) -> Audit:
    with uow:
        audit = uow.audits.get_any(audit_id)
        audit = audit.record_progress(
            pages_crawled=pages_crawled, pages_not_modified=pages_not_modified, now=clock.now()
        )
        uow.audits.save(audit)
        uow.commit()
    return audit


def stop_crawling(audit_id: AuditId, *, partial: bool, uow: UnitOfWork, clock: Clock) -> Audit:
    with uow:
        audit = uow.audits.get_any(audit_id).stop_crawling(partial=partial, now=clock.now())
        uow.audits.save(audit)
        uow.commit()
    return audit


def publish_report(
    audit_id: AuditId,
    *,
    health_score: int | None,
    uow: UnitOfWork,
    clock: Clock,
    metrics: Metrics = NO_METRICS,
    bus: MessageBus | None = None,
) -> Audit:
    """Finalising -> done, settling credits in the same transaction (`AuditEnded` goes to `bus`, by
    default the settling bus over `metrics`)."""

    def end(audit: Audit) -> tuple[Audit, AuditEnded]:
        return audit.publish_report(health_score=health_score, now=clock.now())

    return _end_audit(audit_id, end, team=None, uow=uow, metrics=metrics, bus=bus)


def audits_by_status(*, uow: UnitOfWork) -> Mapping[AuditStatus, int]:
    """Every team's audits counted by status, every status present (0 when none is in it)."""
    with uow:
        counts = uow.audits.count_by_status()
    return {status: counts.get(status, 0) for status in AuditStatus}


def list_audits(caller: Caller, query: AuditQuery, *, uow: UnitOfWork) -> tuple[Sequence[Audit], int]:
    """The team's audits the query asks for, newest first, plus the caller's own audits from before teams
    existed.

    Another team's `site_id` answers NotFound."""
    with uow:
        if query.site_id is not None:
            uow.sites.get(query.site_id, team=caller.team_id)
        return uow.audits.list(
            copy_named(TeamAuditQuery, query, team=caller.team_id, user=caller.user_id, site=query.site_id)
        )
