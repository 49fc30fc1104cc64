"""API key use cases: create, rotate, revoke, list, and authenticate a request's bearer key."""

from collections.abc import Callable, Sequence
from datetime import datetime

from attrs import field, frozen

from siteaudit.domain.account import Caller, normalise_email
from siteaudit.domain.apikey import (
    KEY_ALPHABET,
    KEY_MARK,
    KEY_RANDOM_LENGTH,
    LAST_USED_EVERY,
    PREFIX_LENGTH,
    ApiKey,
    ApiKeyKind,
    KeyMaterial,
    connect_cli_key,
    hash_for_lookup,
    is_well_formed,
    new_key_material,
    new_settings_key,
)
from siteaudit.domain.device import KeyGrant, client_identity
from siteaudit.domain.error import Conflict, DomainError, ErrorCode, NotFound, Unauthenticated
from siteaudit.domain.ids import ApiKeyId, AuditId, TeamId, UserId
from siteaudit.domain.lease import is_stalled
from siteaudit.ports.application import Admission, AuditDetail, IssuedKey, KeyHolder
from siteaudit.ports.clock import Clock, Secrets
from siteaudit.ports.keys import KeyGate, KeyRequest
from siteaudit.ports.ratelimit import Limit, RateLimiter
from siteaudit.ports.repository import UnitOfWork


def _material(secrets: Secrets) -> KeyMaterial:
    return new_key_material(secrets.token(KEY_RANDOM_LENGTH, KEY_ALPHABET))


def _require_member(uow: UnitOfWork, team: TeamId, user: UserId) -> None:
    if uow.teams.membership(team, user) is None:
        raise NotFound("team membership", f"{user}@{team}")


def create_settings_key(
    email: str, team_name: str, *, uow: UnitOfWork, clock: Clock, secrets: Secrets
) -> IssuedKey:
    """The holder's Settings key for a team they belong to. Raises SettingsKeyExists (409) when one is
    active: rotate it instead."""
    material = _material(secrets)
    with uow:
        user = uow.users.by_email(normalise_email(email))
        team = uow.teams.by_name(team_name)
        _require_member(uow, team.id, user.id)
        key, _ = new_settings_key(
            uow.keys.of_user(user.id),
            key_id=ApiKeyId(0),
            user=user.id,
            team=team.id,
            material=material,
            now=clock.now(),
        )
        key = uow.keys.add(key)
        uow.commit()
    return IssuedKey(key, material.raw)


def rotate_settings_key(
    email: str, team_name: str, *, uow: UnitOfWork, clock: Clock, secrets: Secrets
) -> IssuedKey:
    """Revoke the holder's active Settings key for the team at once and issue its successor (or a first
    one when there is none). CLI keys are untouched."""
    material = _material(secrets)
    now = clock.now()
    with uow:
        user = uow.users.by_email(normalise_email(email))
        team = uow.teams.by_name(team_name)
        _require_member(uow, team.id, user.id)
        current = [
            k
            for k in uow.keys.of_user(user.id)
            if k.active and k.kind is ApiKeyKind.SETTINGS and k.team_id == team.id
        ]
        if current:
            old, new, _ = current[0].rotate(by=user.id, new_key_id=ApiKeyId(0), material=material, now=now)
            uow.keys.save(old)
        else:
            new, _ = new_settings_key(
                [], key_id=ApiKeyId(0), user=user.id, team=team.id, material=material, now=now
            )
        new = uow.keys.add(new)
        uow.commit()
    return IssuedKey(new, material.raw)


@frozen
class CliKeys:
    """What issuing a CLI key needs besides the open transaction, given once by name (`cli_keys`)."""

    clock: Clock
    secrets: Secrets = field(repr=False)

    def issue(self, grant: KeyGrant, *, uow: UnitOfWork) -> IssuedKey:
        """Inside the caller's transaction: a CLI key for the grant's (machine, agents, team), replacing
        the previous one."""
        material = _material(self.secrets)
        machine, agents = client_identity(grant.client_name)
        key, replaced, _ = connect_cli_key(
            uow.keys.of_user(grant.user_id),
            key_id=ApiKeyId(0),
            user=grant.user_id,
            team=grant.team_id,
            machine=machine,
            agents=agents,
            material=material,
            now=self.clock.now(),
        )
        for old in replaced:
            uow.keys.save(old)
        key = uow.keys.add(key)
        return IssuedKey(key, material.raw)


def revoke_key(email: str, prefix: str, *, uow: UnitOfWork, clock: Clock) -> ApiKey:
    """Revoke the holder's active key with this prefix. Raises NotFound for anyone else's key."""
    with uow:
        user = uow.users.by_email(normalise_email(email))
        for key in uow.keys.of_user(user.id):
            if key.prefix == prefix and key.active:
                revoked, _ = key.revoke(by=user.id, now=clock.now())
                uow.keys.save(revoked)
                uow.commit()
                return revoked
        raise NotFound("API key", prefix)


def list_keys(email: str, *, uow: UnitOfWork) -> Sequence[ApiKey]:
    with uow:
        user = uow.users.by_email(normalise_email(email))
        return uow.keys.of_user(user.id)


def authenticate(raw: str, *, uow: UnitOfWork, clock: Clock) -> Caller:
    """Who a bearer key acts for. A malformed key raises Unauthenticated before any query; unknown,
    revoked and replaced keys raise the same Unauthenticated (401); a holder no longer in the key's team
    raises TeamAccessRevoked (403). `last_used_at` is written at most once a minute per key.

    Every request runs this: one read (the key with its holder's membership), and a write only when the
    minute is up."""
    digest = hash_for_lookup(raw)
    now = clock.now()
    with uow:
        found = uow.keys.by_hash_for_request(digest)
        if found is None:
            raise Unauthenticated()
        key, in_team = found
        touched = key.authorise(holder_in_team=in_team, now=now)
        if touched is not key:
            uow.keys.touch(key.id, now)
            uow.commit()
        return Caller(key.user_id, key.team_id, key.prefix)


def authenticate_and_hit(
    raw: str,
    *,
    bucket: str,
    limit: Limit,
    uow: Callable[[], UnitOfWork],
    clock: Clock,
    gate: KeyGate | None,
    limiter: RateLimiter,
    audit: AuditId | None = None,
) -> Admission:
    """`authenticate`, then one request counted against `bucket` (only for a key let in). With a gate
    (PostgreSQL) the key, the membership, the count, the use and the `audit` asked for are one round
    trip, and no unit of work is made; without one (SQLite, memory) `authenticate` in a unit of work from
    `uow`, then `limiter.hit`, and the audit is left to the handler. Nothing is cached either way:
    revocation is immediate."""
    if gate is None:
        caller = authenticate(raw, uow=uow(), clock=clock)
        return Admission(caller, limiter.hit(bucket, limit, now=clock.now()))
    digest = hash_for_lookup(raw)
    now = clock.now()
    found = gate.admit(KeyRequest(digest, bucket, limit, now, _touch_before(now), audit))
    if found is None:
        raise Unauthenticated()
    key = found.key
    key.authorise(holder_in_team=found.in_team, now=now)  # 401 or 403; the gate recorded the use
    decision = found.decision
    if decision is None:  # the gate counts every request of an active key whose holder is a member
        raise AssertionError("the key gate let a key in without counting the request")
    read = None
    if found.audit is not None:
        read = AuditDetail(found.audit[0], stalled=is_stalled(*found.audit, now))
    return Admission(Caller(key.user_id, key.team_id, key.prefix), decision, read)


def _touch_before(now: datetime) -> datetime:
    """A key last used at or before this moment has its use recorded now (`ApiKey.should_touch`)."""
    return now - LAST_USED_EVERY


# A prefix names a key only when it has some of the key's random characters.
_SHORTEST_PREFIX = len(KEY_MARK) + 4


def key_holder(key_or_prefix: str, *, uow: UnitOfWork) -> KeyHolder:
    """Whose a key is, given the key or the start of its prefix. Raises NotFound or, for a prefix that
    fits several keys, Conflict."""
    given = key_or_prefix.strip()
    if not is_well_formed(given) and len(given) < _SHORTEST_PREFIX:
        raise DomainError(
            f"give the key or at least its first {_SHORTEST_PREFIX} characters",
            code=ErrorCode.VALIDATION_FAILED,
        )
    with uow:
        if is_well_formed(given):
            found = uow.keys.by_hash(hash_for_lookup(given))
            keys = [] if found is None else [found]
        else:
            keys = list(uow.keys.with_prefix(given[:PREFIX_LENGTH]))
        if not keys:
            raise NotFound("API key", given[:12])
        if len(keys) > 1:
            raise Conflict(f"{len(keys)} keys start with {given!r}: {', '.join(k.prefix for k in keys)}")
        key = keys[0]
        return KeyHolder(key, uow.users.get(key.user_id).email, uow.teams.get(key.team_id).name)
