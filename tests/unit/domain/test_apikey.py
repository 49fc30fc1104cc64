"""API keys: format, the status table, the one-key rules, authorisation and the lifecycle state machine."""

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from siteaudit.domain.apikey import (
    API_KEY_MOVES,
    KEY_ALPHABET,
    ApiKey,
    ApiKeyKind,
    ApiKeyMove,
    ApiKeyStatus,
    KeyMaterial,
    SettingsKeyExists,
    connect_cli_key,
    hash_for_lookup,
    is_well_formed,
    key_hash,
    key_prefix,
    listing_label,
    new_key_material,
    new_settings_key,
)
from siteaudit.domain.error import (
    ErrorCode,
    InvalidTransition,
    NotFound,
    TeamAccessRevoked,
    Unauthenticated,
    ValidationFailed,
)
from siteaudit.domain.ids import ApiKeyId, TeamId, UserId
from siteaudit.domain.lifecycle import ended_states, reachable

T0 = datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)
ADA = UserId(7)
GRACE = UserId(8)
TEA_ROOM = TeamId(101)
CLOCK_SHOP = TeamId(202)
KETTLE = "tea-kettle.local"
CUCKOO = "cuckoo-clock.local"

RAW_A = "sk_" + "RetroClock0" * 3 + "Tick123"
RAW_B = "sk_" + "Cuckoo9" * 5 + "Bells"


def material(serial: int) -> KeyMaterial:
    return new_key_material(f"Key{serial:037d}")


def settings_key(key_id: int = 1, *, user: UserId = ADA, team: TeamId = TEA_ROOM) -> ApiKey:
    key, _ = new_settings_key(
        [], key_id=ApiKeyId(key_id), user=user, team=team, material=material(key_id), now=T0
    )
    return key


def cli_key(
    key_id: int = 1,
    *,
    existing: tuple[ApiKey, ...] = (),
    machine: str = KETTLE,
    agents: frozenset[str] = frozenset({"claude-code"}),
    team: TeamId = TEA_ROOM,
) -> tuple[ApiKey, tuple[ApiKey, ...]]:
    key, replaced, _ = connect_cli_key(
        existing,
        key_id=ApiKeyId(key_id),
        user=ADA,
        team=team,
        machine=machine,
        agents=agents,
        material=material(key_id),
        now=T0,
    )
    return key, replaced


# The status table


def test_every_key_status_is_reachable_from_active() -> None:
    assert reachable(API_KEY_MOVES, ApiKeyStatus.ACTIVE) == frozenset(ApiKeyStatus)


def test_revoked_and_replaced_keys_have_no_way_out() -> None:
    ended = ended_states(API_KEY_MOVES, ApiKeyStatus)
    assert ended == {ApiKeyStatus.REVOKED, ApiKeyStatus.REPLACED}
    assert not [move for move in API_KEY_MOVES if move[0] in ended]


def test_every_key_move_appears_in_the_table() -> None:
    assert {move for _, move in API_KEY_MOVES} == set(ApiKeyMove)


# Format, hash and prefix


def test_a_key_of_sk_and_forty_alphanumerics_is_well_formed() -> None:
    assert is_well_formed(RAW_A)
    assert is_well_formed(RAW_B)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "sk_",
        RAW_A[:-1],
        RAW_A + "x",
        RAW_A + "\n",
        " " + RAW_A,
        "SK_" + RAW_A[3:],
        "pk_" + RAW_A[3:],
        RAW_A[:-1] + "-",
        RAW_A[:-1] + "é",
        RAW_A[:-1] + "٣",  # an Arabic-Indic digit: str.isalnum() would accept it
        "Bearer " + RAW_A,
    ],
)
def test_anything_else_is_malformed(raw: str) -> None:
    assert not is_well_formed(raw)


def test_the_stored_hash_is_lowercase_sha256_hex() -> None:
    assert key_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_the_prefix_is_the_first_twelve_characters() -> None:
    assert key_prefix(RAW_A) == "sk_RetroCloc"


@given(st.text(alphabet=KEY_ALPHABET, min_size=40, max_size=40))
def test_new_key_material_is_well_formed_and_stores_only_prefix_and_hash(chars: str) -> None:
    made = new_key_material(chars)
    assert made.raw == "sk_" + chars
    assert is_well_formed(made.raw)
    assert made.prefix == made.raw[:12]
    assert made.hash == hashlib.sha256(made.raw.encode()).hexdigest()
    assert made.raw not in repr(made)


@pytest.mark.parametrize("chars", ["a" * 39, "a" * 41, "a" * 39 + "_", "a" * 39 + "é"])
def test_new_key_material_refuses_characters_a_secure_source_would_not_give(chars: str) -> None:
    with pytest.raises(ValueError, match="40 characters"):
        new_key_material(chars)


def test_looking_up_a_malformed_key_answers_401_before_any_query() -> None:
    with pytest.raises(Unauthenticated) as refused:
        hash_for_lookup(RAW_A + "!")
    assert refused.value.code is ErrorCode.UNAUTHENTICATED
    assert refused.value.status == 401


def test_looking_up_a_well_formed_key_gives_its_hash() -> None:
    assert hash_for_lookup(RAW_A) == key_hash(RAW_A)


def test_malformed_and_revoked_keys_answer_the_same_401_message() -> None:
    revoked, _ = settings_key().revoke(by=ADA, now=T0)
    with pytest.raises(Unauthenticated) as malformed:
        hash_for_lookup("sk_short")
    with pytest.raises(Unauthenticated) as stopped:
        revoked.authorise(holder_in_team=True, now=T0)
    assert malformed.value.message == stopped.value.message


# Labels


def test_a_settings_key_is_labelled_as_such() -> None:
    assert settings_key().label == "Settings key" == listing_label(ApiKeyKind.SETTINGS)


def test_a_cli_key_is_labelled_with_its_hostname_and_sorted_agents() -> None:
    key, _ = cli_key(agents=frozenset({"cursor", "claude-code"}))
    assert key.label == "connect on tea-kettle.local: claude-code, cursor"


# Settings keys: one per holder and team, rotation


def test_a_second_settings_key_for_the_same_team_answers_conflict() -> None:
    first = settings_key()
    with pytest.raises(SettingsKeyExists) as refused:
        new_settings_key([first], key_id=ApiKeyId(2), user=ADA, team=TEA_ROOM, material=material(2), now=T0)
    assert refused.value.code is ErrorCode.CONFLICT
    assert refused.value.status == 409


def test_a_settings_key_for_another_team_or_after_revocation_is_allowed() -> None:
    first = settings_key()
    other_team, _ = new_settings_key(
        [first], key_id=ApiKeyId(2), user=ADA, team=CLOCK_SHOP, material=material(2), now=T0
    )
    revoked, _ = first.revoke(by=ADA, now=T0)
    again, issued = new_settings_key(
        [revoked, other_team], key_id=ApiKeyId(3), user=ADA, team=TEA_ROOM, material=material(3), now=T0
    )
    assert other_team.team_id == CLOCK_SHOP
    assert again.active
    assert issued.supersedes == ()


def test_rotating_revokes_the_old_settings_key_at_once_and_issues_one_for_the_same_team() -> None:
    old = settings_key()
    later = T0 + timedelta(days=3)
    stopped, new, issued = old.rotate(by=ADA, new_key_id=ApiKeyId(2), material=material(2), now=later)
    assert stopped.status is ApiKeyStatus.REVOKED
    assert stopped.revoked_at == later
    assert stopped.version == 1
    assert (new.id, new.user_id, new.team_id, new.kind, new.status) == (
        ApiKeyId(2),
        ADA,
        TEA_ROOM,
        ApiKeyKind.SETTINGS,
        ApiKeyStatus.ACTIVE,
    )
    assert new.hash == material(2).hash != old.hash
    assert issued.supersedes == (old.id,)
    with pytest.raises(Unauthenticated):
        stopped.authorise(holder_in_team=True, now=later)


def test_rotating_a_cli_key_answers_conflict() -> None:
    key, _ = cli_key()
    with pytest.raises(InvalidTransition) as refused:
        key.rotate(by=ADA, new_key_id=ApiKeyId(2), material=material(2), now=T0)
    assert refused.value.code is ErrorCode.CONFLICT


def test_rotating_the_settings_key_leaves_cli_keys_working() -> None:
    cli, _ = cli_key(1)
    settings = settings_key(2)
    settings.rotate(by=ADA, new_key_id=ApiKeyId(3), material=material(3), now=T0)
    assert cli.authorise(holder_in_team=True, now=T0).active


# CLI keys: one per machine, agents and team


def test_connecting_again_with_the_same_agents_and_team_replaces_the_machines_key() -> None:
    first, _ = cli_key(1)
    second, replaced = cli_key(2, existing=(first,))
    assert [k.id for k in replaced] == [first.id]
    assert replaced[0].status is ApiKeyStatus.REPLACED
    assert replaced[0].version == 1
    assert second.active
    with pytest.raises(Unauthenticated):
        replaced[0].authorise(holder_in_team=True, now=T0)


@pytest.mark.parametrize(
    ("machine", "agents", "team"),
    [
        (CUCKOO, frozenset({"claude-code"}), TEA_ROOM),
        (KETTLE, frozenset({"claude-code", "cursor"}), TEA_ROOM),
        (KETTLE, frozenset({"claude-code"}), CLOCK_SHOP),
    ],
)
def test_connecting_with_another_machine_agent_set_or_team_keeps_the_first_key(
    machine: str, agents: frozenset[str], team: TeamId
) -> None:
    first, _ = cli_key(1)
    second, replaced = cli_key(2, existing=(first,), machine=machine, agents=agents, team=team)
    assert replaced == ()
    assert first.active
    assert second.active


def test_connecting_again_does_not_touch_the_settings_key() -> None:
    settings = settings_key(1)
    _, replaced = cli_key(2, existing=(settings,))
    assert replaced == ()


def test_connecting_without_a_machine_or_agents_answers_validation_failed() -> None:
    with pytest.raises(ValidationFailed) as refused:
        cli_key(machine="  ", agents=frozenset())
    assert refused.value.code is ErrorCode.VALIDATION_FAILED
    assert refused.value.status == 422
    assert set(refused.value.fields) == {"machine", "agents"}


def test_replacing_a_settings_key_answers_conflict() -> None:
    with pytest.raises(InvalidTransition):
        settings_key().replace(now=T0)


# Revocation and authorisation


def test_revoking_a_key_stops_it_with_401() -> None:
    revoked, stopped = settings_key().revoke(by=ADA, now=T0)
    assert revoked.status is ApiKeyStatus.REVOKED
    assert stopped.status is ApiKeyStatus.REVOKED
    with pytest.raises(Unauthenticated) as refused:
        revoked.authorise(holder_in_team=True, now=T0)
    assert refused.value.status == 401


def test_revoking_a_revoked_key_answers_conflict() -> None:
    revoked, _ = settings_key().revoke(by=ADA, now=T0)
    with pytest.raises(InvalidTransition) as refused:
        revoked.revoke(by=ADA, now=T0)
    assert refused.value.code is ErrorCode.CONFLICT
    assert refused.value.status == 409


def test_revoking_someone_elses_key_answers_not_found() -> None:
    with pytest.raises(NotFound) as refused:
        settings_key(user=ADA).revoke(by=GRACE, now=T0)
    assert refused.value.code is ErrorCode.NOT_FOUND
    assert refused.value.status == 404


def test_rotating_someone_elses_key_answers_not_found() -> None:
    with pytest.raises(NotFound):
        settings_key(user=ADA).rotate(by=GRACE, new_key_id=ApiKeyId(2), material=material(2), now=T0)


def test_a_holder_out_of_the_team_gets_403_and_the_key_stays_active() -> None:
    key = settings_key()
    with pytest.raises(TeamAccessRevoked) as refused:
        key.authorise(holder_in_team=False, now=T0)
    assert refused.value.code is ErrorCode.TEAM_ACCESS_REVOKED
    assert refused.value.status == 403
    assert key.active
    assert key.authorise(holder_in_team=True, now=T0).active


def test_a_revoked_key_of_a_holder_out_of_the_team_answers_401_not_403() -> None:
    revoked, _ = settings_key().revoke(by=ADA, now=T0)
    with pytest.raises(Unauthenticated):
        revoked.authorise(holder_in_team=False, now=T0)


def test_last_use_is_recorded_on_the_first_request_and_then_at_most_once_a_minute() -> None:
    key = settings_key()
    first = key.authorise(holder_in_team=True, now=T0)
    assert first.last_used_at == T0
    assert first.authorise(holder_in_team=True, now=T0 + timedelta(seconds=59.999999)) is first
    due = first.authorise(holder_in_team=True, now=T0 + timedelta(seconds=60))
    assert due.last_used_at == T0 + timedelta(seconds=60)
    assert due.version == key.version


def test_last_use_never_moves_backwards() -> None:
    used = settings_key().touched(T0)
    assert not used.should_touch(T0 - timedelta(minutes=5))
    assert used.touched(T0 - timedelta(minutes=5)) is used


# The lifecycle as a state machine

USERS = (ADA, GRACE)
TEAMS = (TEA_ROOM, CLOCK_SHOP)
MACHINES = (KETTLE, CUCKOO)
AGENT_SETS = (frozenset({"claude-code"}), frozenset({"claude-code", "cursor"}), frozenset({"codex"}))


class ApiKeyLifecycle(RuleBasedStateMachine):
    """Keys of two holders in two teams; the table is the oracle for every move."""

    def __init__(self) -> None:
        super().__init__()
        self.now = T0
        self.keys: dict[ApiKeyId, ApiKey] = {}
        self.moves: dict[ApiKeyId, int] = {}
        self.members: set[tuple[UserId, TeamId]] = {(u, t) for u in USERS for t in TEAMS}
        self.serial = 0

    def _fresh(self) -> tuple[ApiKeyId, KeyMaterial]:
        self.serial += 1
        return ApiKeyId(self.serial), material(self.serial)

    def _store(self, key: ApiKey, *, moved: bool) -> None:
        self.moves[key.id] = self.moves.get(key.id, 0) + (1 if moved else 0)
        self.keys[key.id] = key

    def _expect(self, key: ApiKey, move: ApiKeyMove) -> ApiKeyStatus | None:
        return API_KEY_MOVES.get((key.status, move))

    def _pick(self, data: st.DataObject) -> ApiKey:
        return self.keys[data.draw(st.sampled_from(sorted(self.keys)), label="key")]

    @rule(seconds=st.sampled_from([0, 1, 30, 59.999999, 60, 61, 3600]))
    def time_passes(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    @rule(user=st.sampled_from(USERS), team=st.sampled_from(TEAMS), member=st.booleans())
    def membership_changes(self, user: UserId, team: TeamId, member: bool) -> None:
        if member:
            self.members.add((user, team))
        else:
            self.members.discard((user, team))

    @initialize(user=st.sampled_from(USERS), team=st.sampled_from(TEAMS))
    def first_key(self, user: UserId, team: TeamId) -> None:
        self.create_settings_key(user, team)

    @rule(user=st.sampled_from(USERS), team=st.sampled_from(TEAMS))
    def create_settings_key(self, user: UserId, team: TeamId) -> None:
        exists = any(
            k.active and k.kind is ApiKeyKind.SETTINGS and (k.user_id, k.team_id) == (user, team)
            for k in self.keys.values()
        )
        key_id, made = self._fresh()
        if exists:
            with pytest.raises(SettingsKeyExists):
                new_settings_key(
                    self.keys.values(), key_id=key_id, user=user, team=team, material=made, now=self.now
                )
            return
        key, issued = new_settings_key(
            self.keys.values(), key_id=key_id, user=user, team=team, material=made, now=self.now
        )
        assert (key.status, key.version, key.user_id, key.team_id) == (ApiKeyStatus.ACTIVE, 0, user, team)
        assert issued.key_id == key.id
        self._store(key, moved=False)

    @precondition(lambda self: self.keys)
    @rule(data=st.data(), by_holder=st.booleans())
    def rotate(self, data: st.DataObject, by_holder: bool) -> None:
        old = self._pick(data)
        by = old.user_id if by_holder else next(u for u in USERS if u != old.user_id)
        expected = self._expect(old, ApiKeyMove.ROTATE)
        key_id, made = self._fresh()
        if not by_holder:
            with pytest.raises(NotFound):
                old.rotate(by=by, new_key_id=key_id, material=made, now=self.now)
        elif expected is None or old.kind is not ApiKeyKind.SETTINGS:
            with pytest.raises(InvalidTransition):
                old.rotate(by=by, new_key_id=key_id, material=made, now=self.now)
        else:
            stopped, new, issued = old.rotate(by=by, new_key_id=key_id, material=made, now=self.now)
            assert stopped.status is expected
            assert (new.user_id, new.team_id, new.kind) == (old.user_id, old.team_id, ApiKeyKind.SETTINGS)
            assert issued.supersedes == (old.id,)
            self._store(stopped, moved=True)
            self._store(new, moved=False)

    @rule(
        user=st.sampled_from(USERS),
        team=st.sampled_from(TEAMS),
        machine=st.sampled_from(MACHINES),
        agents=st.sampled_from(AGENT_SETS),
    )
    def connect(self, user: UserId, team: TeamId, machine: str, agents: frozenset[str]) -> None:
        slot = (user, machine, agents, team)
        expected_replaced = {
            k.id for k in self.keys.values() if k.active and k.kind is ApiKeyKind.CLI and k.cli_slot == slot
        }
        key_id, made = self._fresh()
        key, replaced, issued = connect_cli_key(
            self.keys.values(),
            key_id=key_id,
            user=user,
            team=team,
            machine=machine,
            agents=agents,
            material=made,
            now=self.now,
        )
        assert {k.id for k in replaced} == expected_replaced == set(issued.supersedes)
        for old in replaced:
            assert old.status is API_KEY_MOVES[(self.keys[old.id].status, ApiKeyMove.REPLACE)]
            self._store(old, moved=True)
        assert key.cli_slot == slot
        self._store(key, moved=False)

    @precondition(lambda self: self.keys)
    @rule(data=st.data(), by_holder=st.booleans())
    def revoke(self, data: st.DataObject, by_holder: bool) -> None:
        key = self._pick(data)
        by = key.user_id if by_holder else next(u for u in USERS if u != key.user_id)
        expected = self._expect(key, ApiKeyMove.REVOKE)
        if not by_holder:
            with pytest.raises(NotFound):
                key.revoke(by=by, now=self.now)
        elif expected is None:
            with pytest.raises(InvalidTransition):
                key.revoke(by=by, now=self.now)
        else:
            revoked, stopped = key.revoke(by=by, now=self.now)
            assert revoked.status is expected is stopped.status
            self._store(revoked, moved=True)

    @precondition(lambda self: self.keys)
    @rule(data=st.data(), wait=st.sampled_from([0, 1, 59.999999, 60, 60.000001]))
    def request(self, data: st.DataObject, wait: float) -> None:
        """A request some time after the previous step: the waits sit on either side of a minute."""
        self.now += timedelta(seconds=wait)
        key = self._pick(data)
        in_team = (key.user_id, key.team_id) in self.members
        if not key.active:
            with pytest.raises(Unauthenticated):
                key.authorise(holder_in_team=in_team, now=self.now)
        elif not in_team:
            with pytest.raises(TeamAccessRevoked):
                key.authorise(holder_in_team=in_team, now=self.now)
        else:
            used = key.authorise(holder_in_team=True, now=self.now)
            previous = key.last_used_at
            if previous is None or self.now - previous >= timedelta(minutes=1):
                assert used.last_used_at == self.now
            else:
                assert used.last_used_at == previous
            self._store(used, moved=False)

    @invariant()
    def at_most_one_active_settings_key_per_holder_and_team(self) -> None:
        holders = [
            (k.user_id, k.team_id) for k in self.keys.values() if k.active and k.kind is ApiKeyKind.SETTINGS
        ]
        assert len(holders) == len(set(holders))

    @invariant()
    def at_most_one_active_cli_key_per_machine_agents_and_team(self) -> None:
        slots = [k.cli_slot for k in self.keys.values() if k.active and k.kind is ApiKeyKind.CLI]
        assert len(slots) == len(set(slots))

    @invariant()
    def stopped_keys_are_always_refused(self) -> None:
        for key in self.keys.values():
            if not key.active:
                for in_team in (True, False):
                    with pytest.raises(Unauthenticated):
                        key.authorise(holder_in_team=in_team, now=self.now)

    @invariant()
    def version_counts_status_moves(self) -> None:
        for key in self.keys.values():
            assert key.version == self.moves[key.id]

    @invariant()
    def a_key_has_a_stop_time_exactly_when_it_stopped(self) -> None:
        for key in self.keys.values():
            assert (key.revoked_at is None) == key.active

    @invariant()
    def hashes_are_unique_and_labels_match_the_kind(self) -> None:
        assert len({k.hash for k in self.keys.values()}) == len(self.keys)
        for key in self.keys.values():
            assert key.label == listing_label(key.kind, key.machine, key.agents)


TestApiKeyLifecycle = ApiKeyLifecycle.TestCase
