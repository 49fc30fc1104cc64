# Over 500 lines: the IndexNow use cases share one key, allowance and submission flow; status, key checks and submit are one job, and their declared handlers with the answers they build sit beside them.
"""IndexNow use cases (docs/rest-api.md "IndexNow"): a site's key (generated on first use, or an existing
one), key checks and key detection through the SSRF-guarded proof reader, auto-submit, and submissions within
the site's daily URL allowance, also automatically after each audit of a site with auto-submit on.

The allowance is counted once per URL per site per UTC day: a URL is counted (in the same transaction
that reserves it, so concurrent requests cannot overspend) before it is sent, and a retry of a request
(whatever the caller's reason: a timeout, a lost answer, a 5xx) finds its URLs already counted: URLs the
endpoint accepted earlier that day are not sent again and are reported as submitted, URLs it did not
accept are sent again without being counted again.
"""

import hashlib
import logging
from collections.abc import Callable, Sequence
from datetime import date
from itertools import islice
from typing import Any, TypeVar

from attrs import evolve, frozen

from siteaudit.domain.account import Caller
from siteaudit.domain.audit import AuditEnded, AuditStatus
from siteaudit.domain.error import ConcurrentUpdate, DomainError, NotFound
from siteaudit.domain.facts import PageFacts
from siteaudit.domain.ids import AuditId, SiteId, TeamId
from siteaudit.domain.indexnow import (
    BATCH_URLS,
    DAILY_URL_LIMIT,
    DETECT_MAX_REQUESTS,
    ENGINES,
    GENERATED_KEY_LENGTH,
    KEY_ALPHABET,
    NOTE,
    RECENT_SUBMISSIONS,
    BatchResult,
    Detection,
    DetectionStatus,
    IndexNowCap,
    IndexNowKeyUnverified,
    IndexNowRejected,
    IndexNowSite,
    IndexNowUrlNotInSite,
    KeyCheck,
    Submission,
    SubmitStatus,
    SubmitTrigger,
    agent_prompt,
    batches,
    default_key_file_url,
    detection_candidates,
    judge_key_file,
    platform_signal,
    require_key,
    require_key_location,
    root_key_files,
    split_by_host,
    submit_status,
)
from siteaudit.domain.site import Site, VerifiedOnly
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.crawl import CrawlStore
from siteaudit.ports.indexnow import IndexNowClient
from siteaudit.ports.repository import TeamAuditQuery, UnitOfWork
from siteaudit.ports.site import ProofReader
from siteaudit.ports.usecases import copy_named
from siteaudit.services.indexnow import answers
from siteaudit.services.indexnow.usecases import (
    CheckIndexNowKey,
    DetectIndexNowKey,
    GetIndexNowStatus,
    SetIndexNowAuto,
    SetIndexNowKey,
    SubmitToIndexNow,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


@frozen
class IndexNowStatus:
    """A site's IndexNow status: the site, its IndexNow state, its latest submissions (newest first) and
    today's (UTC) use of the daily URL allowance."""

    site: Site
    state: IndexNowSite
    recent: Sequence[Submission]
    used_today: int
    limit: int


@frozen
class IndexNowKeyChecked:
    """What fetching the key file found, and the status after."""

    check: KeyCheck
    status: IndexNowStatus


# --- the answers --------------------------------------------------------------------------------------


def _status_fields(status: IndexNowStatus) -> dict[str, Any]:
    state, site = status.state, status.site
    key_file_url = state.key_file_url(site.origin)
    detection = state.detection
    return {
        "key": state.key,
        "key_source": state.key_source,
        "key_location": state.key_location,
        "key_file_url": key_file_url,
        "key_file_content": state.key,
        "key_verified": state.key_verified,
        "key_verified_at": state.key_verified_at,
        "auto": state.auto,
        "last_submit_at": state.last_submit_at,
        "today": answers.IndexNowToday(used=status.used_today, limit=status.limit),
        "recent": tuple(
            copy_named(answers.IndexNowSubmission, s, trigger=s.trigger.value, crawl_id=s.audit_id)
            for s in status.recent
        ),
        "agent_prompt": agent_prompt(state.key, key_file_url),
        "detection": None if detection is None else copy_named(answers.IndexNowDetection, detection),
        "engines": ENGINES,
        "google_supported": False,
        "sengine_supported": False,
        "note": NOTE,
    }


def status_answer(status: IndexNowStatus) -> answers.IndexNowStatus:
    return answers.IndexNowStatus(**_status_fields(status))


def key_check_answer(checked: IndexNowKeyChecked) -> answers.IndexNowKeyCheck:
    check = checked.check
    return answers.IndexNowKeyCheck(
        **_status_fields(checked.status), result=check.result, reason=check.reason, detail=check.detail
    )


_ATTEMPTS = 3


def url_hash(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8", errors="surrogatepass")).hexdigest()


def _retrying(work: Callable[[], T]) -> T:
    """`work` (one unit of work) again when another one changed or made the same state first (two
    first uses of a site at once; a save racing another)."""
    for attempt in range(_ATTEMPTS):
        try:
            return work()
        except ConcurrentUpdate:
            if attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def fetch_key_file(site: Site, key: str, url: str, *, reader: ProofReader, clock: Clock) -> KeyCheck:
    page = reader.read(url, origin=site.origin)
    return judge_key_file(key, url, status=page.status, body=page.text, error=page.error, at=clock.now())


@frozen
class _Ports:
    """What every IndexNow step uses, made once per handler call from its injected ports: the call's unit
    of work (each step opens it again), the clock and the key generator."""

    uow: UnitOfWork
    clock: Clock
    secrets: Secrets

    def today(self) -> date:
        return self.clock.now().date()  # the clock is UTC: the allowance's day is the UTC day

    def load_new(
        self, site_id: SiteId, team: TeamId, *, lock: bool = False
    ) -> tuple[Site, IndexNowSite, bool]:
        """Inside the unit of work: the team's site, its IndexNow state (its row held with `lock`), and
        whether that was made (and staged) now, on first use, with a generated key."""
        site = self.uow.sites.get(site_id, team=team)
        state = self.uow.indexnow.get(site.id, lock=lock)
        if state is not None:
            return site, state, False
        key = self.secrets.token(GENERATED_KEY_LENGTH, KEY_ALPHABET)
        state = IndexNowSite.generated(site.id, site.team_id, key)
        self.uow.indexnow.add(state)
        return site, state, True

    def load(self, site_id: SiteId, team: TeamId, *, lock: bool = False) -> tuple[Site, IndexNowSite]:
        site, state, _ = self.load_new(site_id, team, lock=lock)
        return site, state

    def change(
        self, site_id: SiteId, caller: Caller, move: Callable[[Site, IndexNowSite], IndexNowSite]
    ) -> None:
        """Apply `move` to the site's state (its row held) and commit."""

        def work() -> None:
            with self.uow:
                site, state = self.load(site_id, caller.team_id, lock=True)
                changed = move(site, state)
                if changed is not state:
                    self.uow.indexnow.save(changed)
                self.uow.commit()

        _retrying(work)

    def status(self, site_id: SiteId, caller: Caller) -> IndexNowStatus:
        def work() -> IndexNowStatus:
            with self.uow:
                site, state, created = self.load_new(site_id, caller.team_id)
                recent = self.uow.indexnow.recent(site.id, limit=RECENT_SUBMISSIONS)
                if created:
                    self.uow.commit()  # the generated key is kept from its first showing on
            return IndexNowStatus(site, state, tuple(recent), state.used_on(self.today()), DAILY_URL_LIMIT)

        return _retrying(work)

    def status_answer(self, site_id: SiteId, caller: Caller) -> answers.IndexNowStatus:
        return status_answer(self.status(site_id, caller))

    def check_key(self, site_id: SiteId, caller: Caller, reader: ProofReader) -> answers.IndexNowKeyCheck:
        """Fetch the key file now, outside any transaction, and keep what it showed."""
        status = self.status(site_id, caller)
        key, url = status.state.key, status.state.key_file_url(status.site.origin)
        check = fetch_key_file(status.site, key, url, reader=reader, clock=self.clock)

        def checked(_site: Site, state: IndexNowSite) -> IndexNowSite:
            # The key may have changed while its file was fetched: a check of another key keeps nothing.
            return (
                state.checked(check)
                if state.key == key and state.key_file_url(_site.origin) == url
                else state
            )

        self.change(site_id, caller, checked)
        return key_check_answer(IndexNowKeyChecked(check, self.status(site_id, caller)))

    # --- submitting -----------------------------------------------------------------------------------

    def reserve(self, site: Site, urls: Sequence[str]) -> tuple[IndexNowSite, list[str], int, int, int]:
        """Count the URLs not yet counted today against the allowance, in one transaction. Returns the
        state, the URLs to send, how many were accepted earlier today (not sent again), how many the
        allowance left out, and today's use after."""
        uow = self.uow

        def work() -> tuple[IndexNowSite, list[str], int, int, int]:
            with uow:
                _, state = self.load(site.id, site.team_id, lock=True)  # reservations queue up
                day = self.today()
                hashes = [url_hash(u) for u in urls]
                known = uow.indexnow.ledger(site.id, day, set(hashes))
                new = [h for h in dict.fromkeys(hashes) if h not in known]
                reserved, granted = state.reserve(len(new), day=day)
                counted = set(new[:granted])
                send = [u for u, h in zip(urls, hashes, strict=True) if h in counted or known.get(h) is False]
                earlier = sum(1 for h in hashes if known.get(h) is True)
                if counted:
                    uow.indexnow.count_urls(site.id, day, counted)
                if reserved is not state:
                    uow.indexnow.save(reserved)
                uow.commit()
            return reserved, send, earlier, len(new) - granted, reserved.used_on(day)

        return _retrying(work)

    def record(
        self, site: Site, sent: Sequence[tuple[Sequence[str], BatchResult]], submission: Submission
    ) -> bool:
        """Keep what the endpoint accepted and the submission; False when this audit's was kept already."""
        uow, day = self.uow, self.today()
        accepted = {url_hash(u) for urls, result in sent if result.accepted for u in urls}

        def work() -> bool:
            with uow:
                _, state = self.load(site.id, site.team_id, lock=True)
                if not uow.indexnow.add_submission(submission):
                    return False
                if accepted:
                    uow.indexnow.mark_accepted(site.id, day, accepted)
                if sent:
                    uow.indexnow.save(state.submitted(submission.at))
                uow.commit()
            return True

        return _retrying(work)

    def submit_urls(
        self,
        site_id: SiteId,
        team: TeamId,
        urls: Sequence[str],
        *,
        client: IndexNowClient,
        trigger: SubmitTrigger = SubmitTrigger.API,
        audit_id: AuditId | None = None,
        batch_size: int = BATCH_URLS,
    ) -> answers.IndexNowSubmitResult:
        """Send the site's URLs, in batches of at most 10,000, within the daily allowance: URLs accepted
        earlier the same UTC day are not sent again and count as submitted."""

        # Read only: a submission refused for want of a key makes none (a refused request writes nothing,
        # docs/security.md); reading the site's IndexNow status makes its key.
        with self.uow:
            site = self.uow.sites.get(site_id, team=team)
            found = self.uow.indexnow.get(site.id)
        site.require_verified(VerifiedOnly.INDEXNOW_SUBMIT)
        if found is None:
            raise IndexNowKeyUnverified(None)
        state = found
        if not state.key_verified:
            raise IndexNowKeyUnverified(state.key_file_url(site.origin))
        on_host, skipped = split_by_host(urls, site.host)
        if not on_host:
            raise IndexNowUrlNotInSite(site.host, skipped)
        state, send, earlier, capped, used = self.reserve(site, on_host)
        if not send and not earlier:
            raise IndexNowCap(DAILY_URL_LIMIT, capped)
        key_file_url = state.key_file_url(site.origin)
        sent: list[tuple[Sequence[str], BatchResult]] = []
        for batch in batches(send, batch_size):
            sent.append(
                (batch, client.submit(host=site.host, key=state.key, key_location=key_file_url, urls=batch))
            )
        results = [result for _, result in sent]
        accepted_now = sum(r.urls for r in results if r.accepted)
        try:
            status = submit_status(results) if results else SubmitStatus.OK
            rejected = None
        except DomainError as exc:
            status, rejected = None, exc
        submission = Submission(
            site_id=site.id,
            at=self.clock.now(),
            trigger=trigger,
            urls=len(send),
            submitted=accepted_now,
            requests=len(results),
            status="rejected" if status is None else status.value,
            status_code=results[-1].status_code if results else None,
            audit_id=audit_id,
        )
        self.record(site, sent, submission)
        if rejected is not None:
            raise rejected
        assert status is not None
        failing = next((r for r in results if not r.accepted), None)
        reasons = []
        if earlier:
            reasons.append(f"{earlier:,} URLs were accepted earlier today and were not sent again")
        if capped:
            reasons.append(
                f"{capped:,} URLs were left out: the daily allowance of {DAILY_URL_LIMIT:,} is used up"
            )
        if failing is not None:
            reasons.append(f"a request answered {failing.status_code or 'nothing'} ({failing.error_code})")
        return answers.IndexNowSubmitResult(
            submitted=accepted_now + earlier,
            requests=len(results),
            status=status,
            status_code=(failing or (results[-1] if results else None) or BatchResult(0, None)).status_code,
            error_code=None if failing is None else failing.error_code,
            skipped=skipped,
            capped=capped,
            batches=tuple(
                answers.IndexNowBatch(
                    urls=r.urls, status_code=r.status_code, error_code=r.error_code, accepted=r.accepted
                )
                for r in results
            ),
            reason="; ".join(reasons) or None,
            today=answers.IndexNowToday(used=used, limit=DAILY_URL_LIMIT),
        )


def _team_keys(uow: UnitOfWork, site: Site) -> list[str]:
    """Keys verified on the team's other verified sites."""
    keys: list[str] = []
    for other in uow.sites.list(team=site.team_id):
        if other.id != site.id and other.verified:
            state = uow.indexnow.get(other.id)
            if state is not None and state.key_verified:
                keys.append(state.key)
    return keys


def _latest_done_audit(uow: UnitOfWork, site: Site, caller: Caller) -> AuditId | None:
    audits, _ = uow.audits.list(
        TeamAuditQuery(team=site.team_id, user=caller.user_id, site=site.id, offset=0, limit=50)
    )
    return next((a.id for a in audits if a.status is AuditStatus.DONE), None)


# --- the declared use cases' handlers ------------------------------------------------------------------


def get_indexnow_status(
    asked: GetIndexNowStatus, caller: Caller, *, uow: UnitOfWork, clock: Clock, secrets: Secrets
) -> answers.IndexNowStatus:
    return _Ports(uow, clock, secrets).status_answer(asked.site_id, caller)


def set_indexnow_auto(
    asked: SetIndexNowAuto, caller: Caller, *, uow: UnitOfWork, clock: Clock, secrets: Secrets
) -> answers.IndexNowStatus:
    ports = _Ports(uow, clock, secrets)
    ports.change(asked.site_id, caller, lambda _, state: state.with_auto(asked.auto, clock.now()))
    return ports.status_answer(asked.site_id, caller)


def check_indexnow_key(
    asked: CheckIndexNowKey,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    reader: ProofReader,
) -> answers.IndexNowKeyCheck:
    return _Ports(uow, clock, secrets).check_key(asked.site_id, caller, reader)


def detect_indexnow_key(
    asked: DetectIndexNowKey,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    reader: ProofReader,
    crawl: CrawlStore,
) -> answers.IndexNowStatus:
    """Whether the site's platform submits for it, then a key the site already serves: at most
    DETECT_MAX_REQUESTS fetches in all, the home page first (its platform, docs/indexnow.md), then
    `<origin>/<key>.txt` of each candidate. A platform that submits by itself answers `managed` at once;
    otherwise a served key is a suggestion in `detection` (with the platform seen, if any, in
    `platform`). The site's key does not change."""
    ports = _Ports(uow, clock, secrets)
    status = ports.status(asked.site_id, caller)
    site = status.site
    with uow:
        team_keys = _team_keys(uow, site)
        latest = _latest_done_audit(uow, site, caller)
    audit_keys: list[str] = []
    if latest is not None:
        stream = crawl.stream_urls(latest)
        try:
            found_files = root_key_files((url for _, url in stream), site.origin)
            audit_keys = list(islice(found_files, DETECT_MAX_REQUESTS))
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # a store's stream may hold a database connection until closed
    home = reader.read(site.origin + "/", origin=site.origin)
    requests = 1
    signal = None
    if home.error is None:
        signal = platform_signal(home.headers, home.metas, home.text, host=site.host)
    platform = None if signal is None else signal.platform.value
    detection = Detection(DetectionStatus.NONE, None, None, None, platform, clock.now())
    if signal is not None and signal.managed:
        detection = Detection(DetectionStatus.MANAGED, None, None, None, platform, clock.now())
    else:
        candidates = detection_candidates(
            status.state.key, team_keys, audit_keys, limit=DETECT_MAX_REQUESTS - requests
        )
        for candidate in candidates:
            url = default_key_file_url(site.origin, candidate.key)
            requests += 1
            if fetch_key_file(site, candidate.key, url, reader=reader, clock=clock).verified:
                detection = Detection(
                    DetectionStatus.FOUND, candidate.key, url, candidate.source, platform, clock.now()
                )
                break
    found = evolve(detection, checked_at=clock.now(), requests=requests)
    ports.change(asked.site_id, caller, lambda _site, state: state.detected(found))
    return ports.status_answer(asked.site_id, caller)


def set_indexnow_key(
    asked: SetIndexNowKey,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    reader: ProofReader,
) -> answers.IndexNowKeyCheck:
    """Use an existing key: checked for form (422), then the site must be verified (409), then its file
    is fetched at once."""
    with uow:
        site = uow.sites.get(asked.site_id, team=caller.team_id)
    require_key(asked.key)
    location = None
    if asked.key_location is not None:
        location = require_key_location(asked.key_location, origin=site.origin, host=site.host)
        if location == default_key_file_url(site.origin, asked.key):
            location = None  # the default place: nothing to remember
    site.require_verified(VerifiedOnly.INDEXNOW_KEY)
    ports = _Ports(uow, clock, secrets)
    ports.change(asked.site_id, caller, lambda _site, state: state.with_key(asked.key, location))
    return ports.check_key(asked.site_id, caller, reader)


def submit_to_indexnow(
    asked: SubmitToIndexNow,
    caller: Caller,
    *,
    uow: UnitOfWork,
    clock: Clock,
    secrets: Secrets,
    indexnow_client: IndexNowClient | None,
    indexnow_batch_urls: int = BATCH_URLS,
) -> answers.IndexNowSubmitResult:
    """Raises IndexNowRejected when the service has no IndexNow client (none is configured)."""
    if indexnow_client is None:
        raise IndexNowRejected("no IndexNow client is configured")
    return _Ports(uow, clock, secrets).submit_urls(
        asked.site_id, caller.team_id, asked.urls, client=indexnow_client, batch_size=indexnow_batch_urls
    )


# --- after an audit -----------------------------------------------------------------------------------


def _submittable(facts: PageFacts) -> bool:
    """A page worth notifying: an HTML page that answered 2xx at its own address, crawled (not
    disallowed), not marked noindex by header."""
    return (
        facts.status_code is not None
        and 200 <= facts.status_code < 300
        and facts.html is not None
        and not facts.redirects
        and not facts.disallowed
        and facts.fetch_error is None
        and not any("noindex" in value.lower() for value in facts.x_robots_tag)
    )


def changed_pages(audit_id: AuditId, previous: AuditId | None, crawl: CrawlStore) -> list[str]:
    """The new and changed pages of an audit: pages the previous audit of the site did not have, and
    pages whose visible text changed (a different fingerprint); pages that answered 304 did not change.
    Without a previous audit every page is new."""
    before: dict[str, str] = {}
    if previous is not None:
        for stored in crawl.stream_pages(previous):
            if stored.facts.html is not None:
                before[stored.facts.url] = stored.facts.html.fingerprint
    found: list[str] = []
    for stored in crawl.stream_pages(audit_id):
        facts = stored.facts
        if not _submittable(facts) or facts.not_modified:
            continue
        assert facts.html is not None
        if before.get(facts.url) != facts.html.fingerprint:
            found.append(facts.url)
    return found


def auto_submit_indexnow(
    event: AuditEnded,
    *,
    uow: UnitOfWork,
    crawl: CrawlStore,
    clock: Clock,
    secrets: Secrets,
    indexnow_client: IndexNowClient,
    indexnow_batch_urls: int = BATCH_URLS,
) -> None:
    """The event handler (`services/events.py`) of a done site audit: with auto-submit on, its new and
    changed pages, within the allowance, once per audit. Costs a site without auto one read, a plain-URL
    audit none. Never raises: what went wrong is logged and kept in `recent` (status `not_verified`,
    `key_unverified`, `no_changes`, `capped` or `rejected`). Idempotent: one submission is kept per audit,
    and a site that has one is not submitted again; the daily allowance counts each URL once a day."""
    audit = event.audit
    if audit.site_id is None or audit.status is not AuditStatus.DONE:
        return None
    site_id, team = audit.site_id, TeamId(audit.team_id)
    with uow:
        state = uow.indexnow.get(site_id)
        if (
            state is None
            or not state.submits_after(audit.finished_at)
            or uow.indexnow.has_audit_submission(site_id, audit.id)
        ):
            return None
        try:
            site = uow.sites.get(site_id, team=team)
        except NotFound:
            return None
        previous = uow.audits.latest_done(team=team, origin=audit.origin, site=site_id, before=audit.id)
    skipped_because = None
    urls: list[str] = []
    if not site.verified:
        skipped_because = "not_verified"
    elif not state.key_verified:
        skipped_because = "key_unverified"
    else:
        urls = changed_pages(audit.id, None if previous is None else previous.id, crawl)
        if not urls:
            skipped_because = "no_changes"
    if skipped_because is None:
        try:
            submitted = _Ports(uow, clock, secrets).submit_urls(
                site_id,
                team,
                urls,
                client=indexnow_client,
                trigger=SubmitTrigger.AUTO,
                audit_id=audit.id,
                batch_size=indexnow_batch_urls,
            )
        except DomainError as exc:
            log.warning("IndexNow auto-submit after audit %s of site %s: %s", audit.id, site_id, exc.message)
            if isinstance(exc, IndexNowRejected):
                return None  # kept in `recent` by submit_urls
            skipped_because = "capped" if isinstance(exc, IndexNowCap) else exc.code.value
        else:
            log.info(
                "IndexNow auto-submit after audit %s of site %s: %s of %s URLs (%s)",
                audit.id,
                site_id,
                submitted.submitted,
                len(urls),
                submitted.status.value,
            )
            return None
    with uow:
        uow.indexnow.add_submission(
            Submission(
                site_id=site_id,
                at=clock.now(),
                trigger=SubmitTrigger.AUTO,
                urls=0,
                submitted=0,
                requests=0,
                status=skipped_because,
                status_code=None,
                audit_id=audit.id,
            )
        )
        uow.commit()
    return None
