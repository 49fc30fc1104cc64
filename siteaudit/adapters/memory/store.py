# Over 500 lines: the memory implementation of every repository port, each a few lines over one Table.
"""The in-memory store and unit of work: one writer at a time, staged changes applied on commit."""

import collections
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Self, TypeVar

from attrs import evolve

from siteaudit.adapters.memory.access import MemorySiteAccessRepository
from siteaudit.adapters.memory.billing import MemoryBillingRepository, MemoryBillingStore
from siteaudit.adapters.memory.console import MemoryConsoleStore, MemoryConsoleTables
from siteaudit.adapters.memory.impact import MemoryFixImpactRepository
from siteaudit.adapters.memory.indexnow import MemoryIndexNowRepository, MemoryIndexNowTables
from siteaudit.adapters.memory.lease import MemoryLeaseRepository
from siteaudit.adapters.memory.signin import MemorySignInRepository
from siteaudit.adapters.memory.table import Table
from siteaudit.adapters.memory.transaction import MemoryTransaction
from siteaudit.adapters.memory.webhook import (
    MemoryWebhookRepository,
    MemoryWebhookSecrets,
    MemoryWebhookStore,
)
from siteaudit.domain.access import StoredAccess
from siteaudit.domain.account import Membership, Role, Team, User
from siteaudit.domain.apikey import ApiKey
from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.credit import CreditAccount, LedgerEntry, reservation_key, spent
from siteaudit.domain.device import DeviceLogin
from siteaudit.domain.error import ConcurrentUpdate, Conflict, NotFound
from siteaudit.domain.ids import ApiKeyId, AuditId, DeviceLoginId, RecheckId, SiteId, TaskKey, TeamId, UserId
from siteaudit.domain.impact import FixImpact
from siteaudit.domain.lease import Lease
from siteaudit.domain.recheck import Recheck
from siteaudit.domain.signin import AppSession, OneTimeLink
from siteaudit.domain.site import Site, SiteExists
from siteaudit.domain.task import FixTask
from siteaudit.ports.access import SiteAccessRepository
from siteaudit.ports.device import DeviceLoginRepository
from siteaudit.ports.impact import FixImpactRepository
from siteaudit.ports.indexnow import IndexNowRepository
from siteaudit.ports.keys import ApiKeyRepository
from siteaudit.ports.lease import LeaseRepository
from siteaudit.ports.payment import BillingRepository
from siteaudit.ports.repository import (
    AuditRepository,
    CreditLedger,
    TeamAuditQuery,
    TeamRepository,
    UserRepository,
    VersionedAggregate,
)
from siteaudit.ports.searchconsole import ConsoleStore
from siteaudit.ports.signin import SignInRepository
from siteaudit.ports.site import FixTaskRepository, RecheckRepository, SiteRepository
from siteaudit.ports.webhook import WebhookRepository, WebhookSecrets


class MemoryStore:
    """All committed state. Share one store between the unit-of-work instances of one application."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: Table[UserId, User] = Table()
        self.teams: Table[TeamId, Team] = Table()
        self.memberships: Table[tuple[TeamId, UserId], Membership] = Table()
        self.accounts: Table[UserId, CreditAccount] = Table()
        self.entries: Table[str, LedgerEntry] = Table()
        self.audits: Table[AuditId, Audit] = Table()
        self.keys: Table[ApiKeyId, ApiKey] = Table()
        self.sites: Table[SiteId, Site] = Table()
        self.site_alerts: Table[AuditId, SiteId] = Table()
        self.tasks: Table[tuple[SiteId, TaskKey], FixTask] = Table()
        self.rechecks: Table[RecheckId, Recheck] = Table()
        self.devices: Table[DeviceLoginId, DeviceLogin] = Table()
        self.leases: Table[AuditId, Lease] = Table()
        self.webhooks = MemoryWebhookStore(lock=self.lock)
        self.billing = MemoryBillingStore()  # billing
        # IndexNow
        self.indexnow = MemoryIndexNowTables()
        # The search-console integration.
        self.console = MemoryConsoleTables(lock=self.lock)
        # The app's sign-in state (docs/app.md).
        self.app_passwords: Table[UserId, str] = Table()
        self.app_sessions: Table[str, AppSession] = Table()
        self.app_links: Table[str, OneTimeLink] = Table()
        # Fix-impact events.
        self.fix_impacts: Table[int, FixImpact] = Table()
        # Sites' staging access, sealed (docs/security.md).
        self.site_access: Table[SiteId, StoredAccess] = Table()

    def tables(self) -> Sequence[Table]:  # type: ignore[type-arg]
        own = [value for value in vars(self).values() if isinstance(value, Table)]
        return [
            *own,
            *self.webhooks.tables(),
            *self.billing.tables(),
            *self.indexnow.tables(),
            *self.console.tables(),
        ]


class MemoryUserRepository:
    def __init__(self, store: MemoryStore) -> None:
        self._t = store.users

    def add(self, user: User) -> User:
        if any(u.email == user.email for u in self._t.values()):
            raise Conflict(f"a user with email {user.email} exists")
        return self._t.add(user)

    def get(self, user_id: UserId) -> User:
        return self._t.found(user_id, "user")

    def by_email(self, email: str) -> User:
        return self._t.found_by(lambda user: user.email == email, "user", email)

    def save(self, user: User) -> None:
        self.get(user.id)
        self._t.put(user.id, user)

    def count(self) -> int:
        return sum(1 for _ in self._t.values())

    def all(self) -> Sequence[User]:
        return sorted(self._t.values(), key=lambda u: u.id)


class MemoryTeamRepository:
    def __init__(self, store: MemoryStore) -> None:
        self._t = store.teams
        self._m = store.memberships

    def add(self, team: Team) -> Team:
        if any(t.name == team.name for t in self._t.values()):
            raise Conflict(f"a team named {team.name!r} exists")
        team = self._t.add(team)
        self._m.put((team.id, team.owner_id), Membership(team.id, team.owner_id, Role.OWNER))
        return team

    def get(self, team_id: TeamId) -> Team:
        return self._t.found(team_id, "team")

    def by_name(self, name: str) -> Team:
        return self._t.found_by(lambda team: team.name == name, "team", name)

    def membership(self, team_id: TeamId, user_id: UserId) -> Membership | None:
        return self._m.get((team_id, user_id))

    def add_member(self, membership: Membership) -> None:
        if self._m.get((membership.team_id, membership.user_id)) is None:
            self._m.put((membership.team_id, membership.user_id), membership)

    def remove_member(self, team_id: TeamId, user_id: UserId) -> None:
        self._m.delete((team_id, user_id))

    def members(self, team_id: TeamId) -> Sequence[Membership]:
        return sorted(self._m.find(lambda m: m.team_id == team_id), key=lambda m: m.user_id)

    def of_user(self, user_id: UserId) -> Sequence[Team]:
        ids = sorted(m.team_id for m in self._m.find(lambda m: m.user_id == user_id))
        return [self.get(i) for i in ids]

    def all(self) -> Sequence[Team]:
        return sorted(self._t.values(), key=lambda t: t.id)


class MemoryCreditLedger:
    def __init__(self, store: MemoryStore) -> None:
        self._accounts = store.accounts
        self._entries = store.entries

    def _account(self, user_id: UserId) -> CreditAccount:
        return self._accounts.get(user_id) or CreditAccount(user_id)

    def _write(self, account: CreditAccount, *entries: LedgerEntry) -> None:
        for entry in entries:
            self._entries.put(entry.key, entry)
        self._accounts.put(account.user_id, account)

    def balance(self, user_id: UserId) -> int:
        return self._account(user_id).balance

    def grant(
        self, user_id: UserId, amount: int, *, key: str, at: datetime, reference: str = "grant"
    ) -> bool:
        if self._entries.get(key) is not None:
            return False
        account, entry = self._account(user_id).grant(amount, key=key, at=at, reference=reference)
        self._write(account, entry)
        return True

    def reserve(
        self, user_id: UserId, amount: int, *, reference: str, at: datetime, team: TeamId | None = None
    ) -> bool:
        if self._entries.get(reservation_key(reference)) is not None:
            return False
        account, entry = self._account(user_id).reserve(amount, reference=reference, at=at, team_id=team)
        self._write(account, entry)
        return True

    def settle(self, reference: str, *, cost: int, at: datetime) -> bool:
        hold = self._entries.found(reservation_key(reference), "reservation", reference)
        if self._entries.get(f"{reference}:release") is not None:
            return False
        account, entries = self._account(hold.account).settle(
            reserved=-hold.amount,
            cost=min(cost, -hold.amount),
            reference=reference,
            at=at,
            team_id=hold.team_id,
        )
        self._write(account, *entries)
        return True

    def reserved(self, reference: str) -> int | None:
        hold = self._entries.get(reservation_key(reference))
        return None if hold is None else -hold.amount

    def is_settled(self, reference: str) -> bool:
        return self._entries.get(f"{reference}:release") is not None

    def entries(self, user_id: UserId) -> Sequence[LedgerEntry]:
        return sorted(self._entries.find(lambda e: e.account == user_id), key=lambda e: (e.at, e.key))

    def spent_since(self, user_id: UserId, since: datetime, *, team: TeamId | None = None) -> int:
        return spent(self.entries(user_id), since=since, team_id=team)


class MemoryAuditRepository:
    def __init__(self, store: MemoryStore, seen: dict[object, int]) -> None:
        self._t = store.audits
        self._leases = store.leases
        self._seen = seen

    def add(self, audit: Audit) -> Audit:
        audit = self._t.add(audit)
        self._seen[("audit", audit.id)] = audit.version
        return audit

    def get_any(self, audit_id: AuditId) -> Audit:
        audit = self._t.found(audit_id, "audit")
        self._seen[("audit", audit.id)] = audit.version
        return audit

    def get(self, audit_id: AuditId, *, team: TeamId) -> Audit:
        audit = self._t.get(audit_id)
        if audit is None or audit.team_id != team:
            raise NotFound("audit", audit_id)
        self._seen[("audit", audit.id)] = audit.version
        return audit

    def get_with_lease(self, audit_id: AuditId, *, team: TeamId) -> tuple[Audit, Lease | None]:
        return self.get(audit_id, team=team), self._leases.get(audit_id)

    def save(self, audit: Audit) -> None:
        stored = self._t.found(audit.id, "audit")
        expected = self._seen.get(("audit", audit.id))
        if expected is None or stored.version != expected or audit.version < stored.version:
            raise ConcurrentUpdate("audit", audit.id)
        self._t.put(audit.id, audit)
        self._seen[("audit", audit.id)] = audit.version

    def note_progress(self, audit_id: AuditId, *, at: datetime) -> None:
        audit = self._t.get(audit_id)
        if audit is None or audit.status.ended:
            return
        if audit.last_progress_at is None or audit.last_progress_at < at:
            self._t.put(audit_id, evolve(audit, last_progress_at=at))

    def list(self, query: TeamAuditQuery) -> tuple[Sequence[Audit], int]:
        user = query.user
        rows = [
            a
            for a in self._t.values()
            if (a.team_id == query.team or (user is not None and a.user_id == user and a.team_id == 0))
            and (query.site is None or a.site_id == query.site)
            and (not query.statuses or a.status in query.statuses)
        ]
        rows.sort(key=lambda a: (a.created_at, a.id), reverse=True)
        return rows[query.offset : query.offset + query.limit], len(rows)

    def count_started_by(self, user_id: UserId) -> int:
        return sum(1 for a in self._t.values() if a.user_id == user_id)

    def count_by_status(self) -> Mapping[AuditStatus, int]:
        return collections.Counter(a.status for a in self._t.values())

    def ended(self) -> Sequence[Audit]:
        found = [a for a in self._t.values() if a.status.ended]
        return sorted(found, key=lambda a: (a.finished_at or a.created_at, a.id))

    def latest_done(
        self, *, team: TeamId, origin: str, site: SiteId | None, before: AuditId, scored: bool = False
    ) -> Audit | None:
        candidates = [
            a
            for a in self._t.values()
            if a.status is AuditStatus.DONE
            and a.id != before
            and a.team_id == team
            and (a.site_id == site if site is not None else (a.site_id is None and a.origin == origin))
            and a.id < before
            and (a.health_score is not None or not scored)
        ]
        return max(candidates, key=lambda a: a.id, default=None)


class MemoryApiKeyRepository:
    def __init__(self, store: MemoryStore, seen: dict[object, int]) -> None:
        self._t = store.keys
        self._memberships = store.memberships
        self._seen = seen

    def add(self, key: ApiKey) -> ApiKey:
        if self.by_hash(key.hash) is not None:
            raise Conflict("an API key with this hash exists")
        key = self._t.add(key)
        self._seen[("key", key.id)] = key.version
        return key

    def get(self, key_id: ApiKeyId) -> ApiKey:
        key = self._t.found(key_id, "API key")
        self._seen[("key", key.id)] = key.version
        return key

    def by_hash(self, key_hash: str) -> ApiKey | None:
        key = self._t.first(lambda key: key.hash == key_hash)
        if key is not None:
            self._seen[("key", key.id)] = key.version
        return key

    def by_hash_for_request(self, key_hash: str) -> tuple[ApiKey, bool] | None:
        key = self.by_hash(key_hash)
        return None if key is None else (key, self._memberships.get((key.team_id, key.user_id)) is not None)

    def of_user(self, user_id: UserId) -> Sequence[ApiKey]:
        keys = sorted(self._t.find(lambda k: k.user_id == user_id), key=lambda k: k.id)
        for key in keys:
            self._seen[("key", key.id)] = key.version
        return keys

    def with_prefix(self, start: str) -> Sequence[ApiKey]:
        keys = sorted(self._t.find(lambda k: k.prefix.startswith(start)), key=lambda k: k.id)
        for key in keys:
            self._seen[("key", key.id)] = key.version
        return keys

    def save(self, key: ApiKey) -> None:
        stored = self._t.found(key.id, "API key")
        if self._seen.get(("key", key.id)) != stored.version:
            raise ConcurrentUpdate("API key", key.id)
        self._t.put(key.id, evolve(key, last_used_at=max_time(stored.last_used_at, key.last_used_at)))
        self._seen[("key", key.id)] = key.version

    def touch(self, key_id: ApiKeyId, at: datetime) -> None:
        stored = self._t.get(key_id)
        if stored is not None:
            self._t.put(key_id, evolve(stored, last_used_at=max_time(stored.last_used_at, at)))


_V = TypeVar("_V", bound=VersionedAggregate)


class _Versioned:
    """Optimistic checks shared by the versioned repositories: save only what this unit of work loaded."""

    kind = ""

    def __init__(self, seen: dict[object, int]) -> None:
        self._seen = seen

    def _saw(self, key: object, version: int) -> None:
        self._seen[(self.kind, key)] = version

    def _seen_as(self, aggregate: _V) -> _V:
        """`aggregate` as loaded or written: its version, under its id, is the one this unit of work saw."""
        self._saw(aggregate.id, aggregate.version)
        return aggregate

    def _check(self, key: object, stored_version: int) -> None:
        if self._seen.get((self.kind, key)) != stored_version:
            raise ConcurrentUpdate(self.kind, key)


class MemorySiteRepository(_Versioned):
    kind = "site"

    def __init__(self, store: MemoryStore, seen: dict[object, int]) -> None:
        super().__init__(seen)
        self._t = store.sites
        self._alerts = store.site_alerts
        self._access = store.site_access

    def add(self, site: Site) -> Site:
        if any(s.team_id == site.team_id and s.origin == site.origin for s in self._t.values()):
            raise SiteExists(site.url)
        return self._seen_as(self._t.add(site))

    def get(self, site_id: SiteId, *, team: TeamId) -> Site:
        site = self._t.get(site_id)
        if site is None or site.team_id != team:
            raise NotFound("site", site_id)
        return self._seen_as(site)

    def list(self, *, team: TeamId) -> Sequence[Site]:
        sites = sorted(self._t.find(lambda s: s.team_id == team), key=lambda s: s.id)
        for site in sites:
            self._saw(site.id, site.version)
        return sites

    def count(self, *, team: TeamId) -> int:
        return sum(1 for _ in self._t.find(lambda s: s.team_id == team))

    def save(self, site: Site) -> None:
        stored = self._t.found(site.id, "site")
        self._check(site.id, stored.version)
        self._t.put(site.id, site)
        self._saw(site.id, site.version)

    def delete(self, site_id: SiteId, *, team: TeamId) -> None:
        self.get(site_id, team=team)
        self._t.delete(site_id)
        self._access.delete(site_id)  # as the SQL row's ON DELETE CASCADE

    def verified_for_origin(self, *, team: TeamId, origin: str) -> Site | None:
        return self._t.first(lambda site: site.team_id == team and site.origin == origin and site.verified)

    def due(self, now: datetime, *, limit: int) -> Sequence[Site]:
        due = [s for s in self._t.values() if s.next_crawl_at is not None and s.next_crawl_at <= now]
        due.sort(key=lambda s: (s.next_crawl_at, s.id))
        for site in due[:limit]:
            self._saw(site.id, site.version)
        return due[:limit]

    def get_any(self, site_id: SiteId) -> Site:
        return self._seen_as(self._t.found(site_id, "site"))

    def claim_alert(self, audit_id: AuditId, *, site_id: SiteId, at: datetime) -> bool:
        if self._alerts.get(audit_id) is not None:
            return False
        self._alerts.put(audit_id, site_id)
        return True

    def verified(self, *, limit: int, checked_before: datetime) -> Sequence[Site]:
        found = [
            s
            for s in self._t.values()
            if s.verified and (s.checked_at is None or s.checked_at <= checked_before)
        ]
        found.sort(key=lambda s: (s.checked_at is not None, s.checked_at or checked_before, s.id))
        for site in found[:limit]:
            self._saw(site.id, site.version)
        return found[:limit]


class MemoryFixTaskRepository(_Versioned):
    kind = "task"

    def __init__(self, store: MemoryStore, seen: dict[object, int]) -> None:
        super().__init__(seen)
        self._t = store.tasks

    def of_site(self, site_id: SiteId) -> Sequence[FixTask]:
        tasks = sorted(self._t.find(lambda t: t.site_id == site_id), key=lambda t: t.key)
        for task in tasks:
            self._saw((task.site_id, task.key), task.version)
        return tasks

    def get(self, site_id: SiteId, key: TaskKey) -> FixTask:
        task = self._t.found((site_id, key), "task", key)
        self._saw((site_id, key), task.version)
        return task

    def save(self, task: FixTask) -> None:
        stored = self._t.get((task.site_id, task.key))
        if stored is not None:
            self._check((task.site_id, task.key), stored.version)
        self._t.put((task.site_id, task.key), task)
        self._saw((task.site_id, task.key), task.version)

    def delete(self, site_id: SiteId, key: TaskKey) -> None:
        self._t.delete((site_id, key))


class MemoryRecheckRepository(_Versioned):
    kind = "recheck"

    def __init__(self, store: MemoryStore, seen: dict[object, int]) -> None:
        super().__init__(seen)
        self._t = store.rechecks

    def add(self, recheck: Recheck) -> Recheck:
        return self._seen_as(self._t.add(recheck))

    def get(self, recheck_id: RecheckId, *, team: TeamId) -> Recheck:
        recheck = self._t.get(recheck_id)
        if recheck is None or recheck.team_id != team:
            raise NotFound("recheck", recheck_id)
        return self._seen_as(recheck)

    def get_any(self, recheck_id: RecheckId) -> Recheck:
        return self._seen_as(self._t.found(recheck_id, "recheck"))

    def unfinished(self, *, limit: int) -> Sequence[Recheck]:
        found = sorted(self._t.find(lambda r: not r.ended), key=lambda r: r.id)[:limit]
        for recheck in found:
            self._saw(recheck.id, recheck.version)
        return found

    def save(self, recheck: Recheck) -> None:
        stored = self._t.found(recheck.id, "recheck")
        self._check(recheck.id, stored.version)
        self._t.put(recheck.id, recheck)
        self._saw(recheck.id, recheck.version)


class MemoryDeviceLoginRepository(_Versioned):
    kind = "device login"

    def __init__(self, store: MemoryStore, seen: dict[object, int]) -> None:
        super().__init__(seen)
        self._t = store.devices

    def add(self, login: DeviceLogin) -> DeviceLogin:
        if self.live_by_user_code(login.user_code, login.created_at) is not None:
            raise Conflict("this user code belongs to a live login")
        return self._seen_as(self._t.add(login))

    def by_device_code_hash(self, code_hash: str) -> DeviceLogin | None:
        login = self._t.first(lambda login: login.device_code_hash == code_hash)
        return None if login is None else self._seen_as(login)

    def live_by_user_code(self, user_code: str, now: datetime) -> DeviceLogin | None:
        login = self._t.first(lambda login: login.user_code == user_code and login.is_live(now))
        return None if login is None else self._seen_as(login)

    def save(self, login: DeviceLogin) -> None:
        stored = self._t.found(login.id, "device login")
        self._check(login.id, stored.version)
        self._t.put(login.id, login)
        self._saw(login.id, login.version)


def max_time(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return max(a, b)


class MemoryUnitOfWork(MemoryTransaction):
    """A transaction over a MemoryStore: holds the store's lock from enter to exit (one writer).
    Repositories, `commit` and `rollback` raise RuntimeError outside `with`, as SqlUnitOfWork's do."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store.lock)
        self.store = store
        self._seen: dict[object, int] = {}
        g = self._guard
        # Typed as the ports: the protocol's attributes are mutable, so they must match exactly.
        self.users: UserRepository = g(MemoryUserRepository(store))
        self.teams: TeamRepository = g(MemoryTeamRepository(store))
        self.credits: CreditLedger = g(MemoryCreditLedger(store))
        self.audits: AuditRepository = g(MemoryAuditRepository(store, self._seen))
        self.keys: ApiKeyRepository = g(MemoryApiKeyRepository(store, self._seen))
        self.sites: SiteRepository = g(MemorySiteRepository(store, self._seen))
        self.tasks: FixTaskRepository = g(MemoryFixTaskRepository(store, self._seen))
        self.rechecks: RecheckRepository = g(MemoryRecheckRepository(store, self._seen))
        self.devices: DeviceLoginRepository = g(MemoryDeviceLoginRepository(store, self._seen))
        self.webhooks: WebhookRepository = g(MemoryWebhookRepository(store.webhooks))
        self.webhook_secrets: WebhookSecrets = g(MemoryWebhookSecrets(store.webhooks))
        self.leases: LeaseRepository = g(MemoryLeaseRepository(store.leases, store.audits.values))
        self.billing: BillingRepository = g(MemoryBillingRepository(store.billing))
        # IndexNow
        self.indexnow: IndexNowRepository = g(MemoryIndexNowRepository(store.indexnow, self._seen))
        self.console: ConsoleStore = g(MemoryConsoleStore(store.console, store.sites))
        self.signins: SignInRepository = g(
            MemorySignInRepository(store.app_passwords, store.app_sessions, store.app_links)
        )
        self.fix_impacts: FixImpactRepository = g(MemoryFixImpactRepository(store.fix_impacts))
        self.site_access: SiteAccessRepository = g(MemorySiteAccessRepository(store.site_access))

    def _tables(self) -> Sequence[Table]:  # type: ignore[type-arg]
        return self.store.tables()

    def __enter__(self) -> Self:
        super().__enter__()
        self._seen.clear()
        return self
