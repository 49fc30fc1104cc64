"""The API key repository contract on memory, SQLite and PostgreSQL: hashes unique, uses outside versions."""

from datetime import timedelta

import pytest
from attrs import evolve
from sql_backend import T0, Backend, people

from siteaudit.domain.apikey import ApiKey, ApiKeyStatus, connect_cli_key, new_key_material, new_settings_key
from siteaudit.domain.error import ConcurrentUpdate, Conflict, NotFound
from siteaudit.domain.ids import ApiKeyId, TeamId, UserId


def _settings_key(user: UserId, team: TeamId, fill: str = "a") -> ApiKey:
    key, _ = new_settings_key(
        (), key_id=ApiKeyId(0), user=user, team=team, material=new_key_material(fill * 40), now=T0
    )
    return key


def test_a_key_reads_back_equal_by_id_by_hash_and_among_its_holders_keys(backend: Backend) -> None:
    owner, member, team = people(backend)
    cli, _, _ = connect_cli_key(
        (),
        key_id=ApiKeyId(0),
        user=owner.id,
        team=team.id,
        machine="workshop-laptop",
        agents=["claude-code", "cursor"],
        material=new_key_material("b" * 40),
        now=T0 + timedelta(minutes=1),
    )
    with backend.uow() as uow:
        settings = uow.keys.add(_settings_key(owner.id, team.id))
        cli = uow.keys.add(cli)
        other = uow.keys.add(_settings_key(member.id, team.id, "c"))
        uow.commit()
    assert 0 < settings.id < cli.id
    with backend.uow() as uow:
        assert uow.keys.get(cli.id) == cli
        assert uow.keys.by_hash(settings.hash) == settings
        assert uow.keys.by_hash("0" * 64) is None
        assert list(uow.keys.of_user(owner.id)) == [settings, cli]
        assert list(uow.keys.of_user(member.id)) == [other]
        with pytest.raises(NotFound):
            uow.keys.get(ApiKeyId(999_999))


def test_keys_are_found_by_the_start_of_their_prefix_across_holders(backend: Backend) -> None:
    owner, member, team = people(backend)
    with backend.uow() as uow:
        mine = uow.keys.add(_settings_key(owner.id, team.id, "a"))
        theirs, _ = new_settings_key(
            (), key_id=ApiKeyId(0), user=member.id, team=team.id, material=new_key_material("ab" * 20), now=T0
        )
        theirs = uow.keys.add(theirs)  # sk_ababab...
        uow.commit()
    with backend.uow() as uow:
        assert list(uow.keys.with_prefix("sk_a")) == [mine, theirs]
        assert list(uow.keys.with_prefix("sk_aaaa")) == [mine]
        assert list(uow.keys.with_prefix(theirs.prefix)) == [theirs]
        assert list(uow.keys.with_prefix("sk_b")) == []
        assert list(uow.keys.with_prefix("sk_a%")) == []  # a LIKE wildcard is a plain character


def test_a_second_key_with_the_same_hash_is_a_conflict_and_leaves_the_first(backend: Backend) -> None:
    owner, member, team = people(backend)
    with backend.uow() as uow:
        first = uow.keys.add(_settings_key(owner.id, team.id))
        with pytest.raises(Conflict):
            uow.keys.add(_settings_key(member.id, team.id))
        uow.commit()
    with backend.uow() as uow:
        assert [k.id for k in uow.keys.of_user(owner.id)] == [first.id]
        assert uow.keys.of_user(member.id) == []


def test_revoking_is_saved_and_a_stale_copy_cannot_undo_it(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        key = uow.keys.add(_settings_key(owner.id, team.id))
        uow.commit()
    first, second = backend.uow(), backend.uow()
    with first:
        mine = first.keys.get(key.id)
    with second:
        revoked, _ = second.keys.get(key.id).revoke(by=owner.id, now=T0)
        second.keys.save(revoked)
        second.commit()
    with first:  # this unit of work never loaded the key it saves
        with pytest.raises(ConcurrentUpdate):
            first.keys.save(mine.revoke(by=owner.id, now=T0)[0])
        with pytest.raises(NotFound):
            first.keys.save(evolve(mine, id=ApiKeyId(999_999)))
    with backend.uow() as uow:
        stored = uow.keys.get(key.id)
        assert (stored.status, stored.version, stored.revoked_at) == (ApiKeyStatus.REVOKED, 1, T0)


def test_touch_records_the_latest_use_never_backwards_and_is_not_a_version(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        key = uow.keys.add(_settings_key(owner.id, team.id))
        uow.commit()
    later = T0 + timedelta(minutes=5)
    with backend.uow() as uow:
        uow.keys.touch(key.id, later)
        uow.keys.touch(key.id, T0 + timedelta(minutes=2))  # a slower request finishing last
        uow.keys.touch(ApiKeyId(999_999), later)  # an unknown key: nothing to record
        uow.commit()
    with backend.uow() as uow:
        stored = uow.keys.get(key.id)
        assert (stored.last_used_at, stored.version) == (later, 0)


def test_a_use_recorded_meanwhile_neither_blocks_nor_is_undone_by_a_revocation(backend: Backend) -> None:
    owner, _, team = people(backend)
    with backend.uow() as uow:
        key = uow.keys.add(_settings_key(owner.id, team.id))
        uow.commit()
    used = T0 + timedelta(minutes=3)
    with backend.uow() as uow:
        loaded = uow.keys.get(key.id)
        uow.commit()
        uow.keys.touch(key.id, used)  # as another request would, between loading and saving
        uow.commit()
        uow.keys.save(loaded.revoke(by=owner.id, now=T0 + timedelta(minutes=1))[0])
        uow.commit()
    with backend.uow() as uow:
        stored = uow.keys.get(key.id)
        assert (stored.status, stored.last_used_at) == (ApiKeyStatus.REVOKED, used)
