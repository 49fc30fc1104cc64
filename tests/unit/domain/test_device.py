"""Device login: codes, the status table, every poll answer, the approval guard and the state machine."""

from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from siteaudit.domain.device import (
    DEVICE_MOVES,
    USER_CODE_ALPHABET,
    AccessDenied,
    AuthorizationPending,
    DeviceLogin,
    DeviceLoginStatus,
    DeviceMove,
    DevicePollRefused,
    ExpiredToken,
    FailedAttempts,
    InvalidGrant,
    KeyGrant,
    PollAnswer,
    PollOutcome,
    SlowDown,
    device_code_hash,
    format_user_code,
    new_user_code,
    normalise_user_code,
)
from siteaudit.domain.error import ErrorCode, InvalidTransition, ValidationFailed
from siteaudit.domain.ids import DeviceLoginId, TeamId, UserId
from siteaudit.domain.lifecycle import ended_states, reachable

T0 = datetime(2025, 3, 14, 9, 26, 53, tzinfo=UTC)
ADA = UserId(7)
TEA_ROOM = TeamId(101)
DEVICE_CODE = "kettle-whistles-at-dawn-0123456789abcdef"
USER_CODE = "BCDFGHJK"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def started(login_id: int = 1, *, device_code: str = DEVICE_CODE, user_code: str = USER_CODE) -> DeviceLogin:
    return DeviceLogin.start(
        login_id=DeviceLoginId(login_id),
        device_code=device_code,
        user_code=user_code,
        client_name="siteaudit connect on tea-kettle.local",
        requested_ip="203.0.113.9",
        now=T0,
    )


def approved(seconds: float = 10) -> DeviceLogin:
    login, _ = started().approve(user=ADA, team=TEA_ROOM, now=at(seconds))
    return login


# The status table


def test_every_device_login_status_is_reachable_from_pending() -> None:
    assert reachable(DEVICE_MOVES, DeviceLoginStatus.PENDING) == frozenset(DeviceLoginStatus)


def test_denied_expired_and_exchanged_logins_have_no_way_out() -> None:
    ended = ended_states(DEVICE_MOVES, DeviceLoginStatus)
    assert ended == {DeviceLoginStatus.DENIED, DeviceLoginStatus.EXPIRED, DeviceLoginStatus.EXCHANGED}
    assert not [move for move in DEVICE_MOVES if move[0] in ended]


def test_every_device_move_appears_in_the_table() -> None:
    assert {move for _, move in DEVICE_MOVES} == set(DeviceMove)


def test_only_an_approved_login_can_be_exchanged() -> None:
    assert [source for source, move in DEVICE_MOVES if move is DeviceMove.EXCHANGE] == [
        DeviceLoginStatus.APPROVED
    ]


def test_a_cancelled_login_can_no_longer_be_approved_and_its_poll_is_denied() -> None:
    for login in (started(), approved()):
        cancelled = login.cancel(at(20))
        assert (cancelled.status, cancelled.version) == (DeviceLoginStatus.DENIED, login.version + 1)
        with pytest.raises(InvalidTransition):
            cancelled.approve(user=ADA, team=TEA_ROOM, now=at(21))
        _, outcome = cancelled.poll(at(30), approver_in_team=True)
        assert outcome.answer is PollAnswer.ACCESS_DENIED
        assert cancelled.cancel(at(31)) is cancelled  # twice is harmless
    assert started().cancel(at(600)).status is DeviceLoginStatus.EXPIRED
    exchanged, _ = approved().poll(at(20), approver_in_team=True)
    with pytest.raises(InvalidGrant):
        exchanged.cancel(at(21))


# Codes


def test_the_user_code_alphabet_has_twenty_unambiguous_letters() -> None:
    assert len(USER_CODE_ALPHABET) == len(set(USER_CODE_ALPHABET)) == 20
    assert USER_CODE_ALPHABET.isupper()
    assert not set(USER_CODE_ALPHABET) & set("AEIOUY01")


def test_a_user_code_is_shown_as_two_groups_of_four() -> None:
    assert format_user_code("BCDFGHJK") == "BCDF-GHJK"
    assert started().display_user_code == "BCDF-GHJK"


@pytest.mark.parametrize(
    "typed", ["BCDF-GHJK", "bcdf-ghjk", " bcdf ghjk ", "bcdfghjk", "Bc-Df-Gh-Jk", "BCDF‐GHJK"]
)
def test_case_spaces_and_dashes_do_not_matter_in_a_typed_user_code(typed: str) -> None:
    assert normalise_user_code(typed) == "BCDFGHJK"


@pytest.mark.parametrize("typed", ["", "BCDF-GHJ", "BCDF-GHJKL", "BCDF-GHJA", "BCDF_GHJK", "BCDF-GHJ1"])
def test_a_typed_user_code_that_cannot_be_one_answers_validation_failed(typed: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        normalise_user_code(typed)
    assert refused.value.code is ErrorCode.VALIDATION_FAILED
    assert set(refused.value.fields) == {"user_code"}


@given(st.text(alphabet=USER_CODE_ALPHABET, min_size=8, max_size=8))
def test_every_shown_user_code_normalises_back_to_itself(letters: str) -> None:
    code = new_user_code(letters)
    assert normalise_user_code(format_user_code(code)) == code
    assert normalise_user_code(format_user_code(code).lower()) == code


@pytest.mark.parametrize("letters", ["BCDFGHJ", "BCDFGHJKL", "BCDFGHJA", "bcdfghjk"])
def test_new_user_code_refuses_letters_a_secure_source_would_not_give(letters: str) -> None:
    with pytest.raises(ValueError, match="8 letters"):
        new_user_code(letters)


def test_a_started_login_keeps_only_the_device_codes_hash_and_lives_600_seconds() -> None:
    login = started()
    assert login.status is DeviceLoginStatus.PENDING
    assert login.device_code_hash == device_code_hash(DEVICE_CODE) != DEVICE_CODE
    assert DEVICE_CODE not in repr(login)
    assert login.expires_at == at(600)
    assert login.interval == timedelta(seconds=5)
    assert login.seconds_left(T0) == 600
    assert (login.approved_by, login.team_id, login.last_polled_at, login.version) == (None, None, None, 0)


def test_a_client_name_over_64_characters_answers_validation_failed() -> None:
    DeviceLogin.start(
        login_id=DeviceLoginId(1),
        device_code=DEVICE_CODE,
        user_code=USER_CODE,
        client_name="x" * 64,
        requested_ip="203.0.113.9",
        now=T0,
    )
    with pytest.raises(ValidationFailed) as refused:
        DeviceLogin.start(
            login_id=DeviceLoginId(1),
            device_code=DEVICE_CODE,
            user_code=USER_CODE,
            client_name="x" * 65,
            requested_ip="203.0.113.9",
            now=T0,
        )
    assert set(refused.value.fields) == {"client_name"}


def test_a_device_code_shorter_than_128_bits_of_urlsafe_text_is_refused() -> None:
    with pytest.raises(ValueError, match="device code"):
        started(device_code="x" * 21)


def test_a_user_code_not_in_stored_form_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="stored form"):
        started(user_code="BCDF-GHJK")


# Approval and denial


def test_approving_records_the_approver_and_the_team() -> None:
    login, decided = started().approve(user=ADA, team=TEA_ROOM, now=at(30))
    assert (login.status, login.approved_by, login.team_id, login.version) == (
        DeviceLoginStatus.APPROVED,
        ADA,
        TEA_ROOM,
        1,
    )
    assert (decided.status, decided.by, decided.team_id, decided.at) == (
        DeviceLoginStatus.APPROVED,
        ADA,
        TEA_ROOM,
        at(30),
    )


def test_approving_twice_answers_conflict() -> None:
    with pytest.raises(InvalidTransition) as refused:
        approved().approve(user=ADA, team=TEA_ROOM, now=at(20))
    assert refused.value.code is ErrorCode.CONFLICT
    assert refused.value.status == 409


def test_denying_an_approved_login_answers_conflict() -> None:
    with pytest.raises(InvalidTransition):
        approved().deny(now=at(20))


def test_approving_at_exactly_600_seconds_answers_expired_token() -> None:
    with pytest.raises(ExpiredToken) as refused:
        started().approve(user=ADA, team=TEA_ROOM, now=at(600))
    assert refused.value.code is ErrorCode.EXPIRED_TOKEN
    assert refused.value.status == 400


def test_approving_a_microsecond_before_expiry_still_works() -> None:
    login, _ = started().approve(user=ADA, team=TEA_ROOM, now=at(599.999999))
    assert login.status is DeviceLoginStatus.APPROVED


def test_denying_an_expired_login_answers_expired_token() -> None:
    with pytest.raises(ExpiredToken):
        started().deny(now=at(601))


def test_a_login_is_live_only_while_pending_and_unexpired() -> None:
    login = started()
    assert login.is_live(at(599.999999))
    assert not login.is_live(at(600))
    assert not approved().is_live(at(20))


# Polls: one test per answer


def test_a_poll_before_approval_answers_authorization_pending_428() -> None:
    login, outcome = started().poll(at(5), approver_in_team=True)
    assert outcome.answer is PollAnswer.AUTHORIZATION_PENDING
    assert login.last_polled_at == at(5)
    assert login.version == 0
    with pytest.raises(AuthorizationPending) as refused:
        outcome.raise_if_refused()
    assert (refused.value.code, refused.value.status) == (ErrorCode.AUTHORIZATION_PENDING, 428)


def test_a_poll_two_seconds_early_answers_slow_down_429() -> None:
    login, _ = started().poll(at(5), approver_in_team=True)
    _, outcome = login.poll(at(8), approver_in_team=True)
    assert outcome.answer is PollAnswer.SLOW_DOWN
    with pytest.raises(SlowDown) as refused:
        outcome.raise_if_refused()
    assert (refused.value.code, refused.value.status) == (ErrorCode.SLOW_DOWN, 429)
    assert refused.value.interval_seconds == 5


def test_a_poll_exactly_five_seconds_after_the_last_is_not_too_fast() -> None:
    login, _ = started().poll(at(5), approver_in_team=True)
    _, outcome = login.poll(at(10), approver_in_team=True)
    assert outcome.answer is PollAnswer.AUTHORIZATION_PENDING


def test_a_slow_poll_still_counts_as_the_latest_poll() -> None:
    login, _ = started().poll(at(0), approver_in_team=True)
    login, first = login.poll(at(4), approver_in_team=True)
    login, second = login.poll(at(8), approver_in_team=True)
    login, third = login.poll(at(13), approver_in_team=True)
    assert [first.answer, second.answer, third.answer] == [
        PollAnswer.SLOW_DOWN,
        PollAnswer.SLOW_DOWN,
        PollAnswer.AUTHORIZATION_PENDING,
    ]
    assert login.last_polled_at == at(13)


def test_the_first_poll_after_approval_grants_a_key_once_for_the_approver_and_team() -> None:
    login, outcome = approved().poll(at(15), approver_in_team=True)
    assert outcome.answer is PollAnswer.GRANTED
    assert outcome.raise_if_refused() == KeyGrant(
        login_id=DeviceLoginId(1),
        user_id=ADA,
        team_id=TEA_ROOM,
        client_name="siteaudit connect on tea-kettle.local",
    )
    assert (login.status, login.version) == (DeviceLoginStatus.EXCHANGED, 2)
    _, again = login.poll(at(60), approver_in_team=True)
    assert again.answer is PollAnswer.INVALID_GRANT


def test_a_poll_of_a_used_code_answers_invalid_grant_400_and_changes_nothing() -> None:
    used, _ = approved().poll(at(15), approver_in_team=True)
    unchanged, outcome = used.poll(at(16), approver_in_team=True)
    assert unchanged is used
    with pytest.raises(InvalidGrant) as refused:
        outcome.raise_if_refused()
    assert (refused.value.code, refused.value.status) == (ErrorCode.INVALID_GRANT, 400)


def test_a_used_code_answers_invalid_grant_even_after_expiry() -> None:
    used, _ = approved().poll(at(15), approver_in_team=True)
    _, outcome = used.poll(at(900), approver_in_team=True)
    assert outcome.answer is PollAnswer.INVALID_GRANT


def test_a_poll_of_a_denied_login_answers_access_denied_403() -> None:
    denied, _ = started().deny(now=at(10))
    _, outcome = denied.poll(at(15), approver_in_team=True)
    with pytest.raises(AccessDenied) as refused:
        outcome.raise_if_refused()
    assert (refused.value.code, refused.value.status) == (ErrorCode.ACCESS_DENIED, 403)


def test_an_approver_who_left_the_team_gets_access_denied_and_the_login_is_denied_for_good() -> None:
    login, outcome = approved().poll(at(15), approver_in_team=False)
    assert outcome.answer is PollAnswer.ACCESS_DENIED
    assert (login.status, login.version) == (DeviceLoginStatus.DENIED, 2)
    _, later = login.poll(at(30), approver_in_team=True)
    assert later.answer is PollAnswer.ACCESS_DENIED


def test_a_poll_at_exactly_600_seconds_answers_expired_token_400() -> None:
    login, outcome = started().poll(at(600), approver_in_team=True)
    assert login.status is DeviceLoginStatus.EXPIRED
    with pytest.raises(ExpiredToken) as refused:
        outcome.raise_if_refused()
    assert (refused.value.code, refused.value.status) == (ErrorCode.EXPIRED_TOKEN, 400)


def test_an_approved_login_polled_a_microsecond_before_expiry_still_gets_its_key() -> None:
    _, outcome = approved().poll(at(599.999999), approver_in_team=True)
    assert outcome.answer is PollAnswer.GRANTED


def test_an_approved_login_polled_at_600_seconds_expires_without_a_key() -> None:
    login, outcome = approved().poll(at(600), approver_in_team=True)
    assert outcome.answer is PollAnswer.EXPIRED_TOKEN
    assert login.status is DeviceLoginStatus.EXPIRED


def test_a_denied_login_polled_after_expiry_answers_expired_token() -> None:
    denied, _ = started().deny(now=at(10))
    unchanged, outcome = denied.poll(at(700), approver_in_team=True)
    assert outcome.answer is PollAnswer.EXPIRED_TOKEN
    assert unchanged is denied


def test_an_expired_code_outranks_slow_down() -> None:
    login, _ = started().poll(at(598), approver_in_team=True)
    _, outcome = login.poll(at(600), approver_in_team=True)
    assert outcome.answer is PollAnswer.EXPIRED_TOKEN


def test_an_approved_login_polled_too_fast_answers_slow_down_and_stays_approved() -> None:
    login, _ = started().poll(at(5), approver_in_team=True)
    login, _ = login.approve(user=ADA, team=TEA_ROOM, now=at(6))
    login, outcome = login.poll(at(7), approver_in_team=True)
    assert outcome.answer is PollAnswer.SLOW_DOWN
    assert login.status is DeviceLoginStatus.APPROVED
    _, outcome = login.poll(at(12), approver_in_team=True)
    assert outcome.answer is PollAnswer.GRANTED


def test_every_refusal_carries_its_spec_code_and_status() -> None:
    expected = {
        PollAnswer.AUTHORIZATION_PENDING: (ErrorCode.AUTHORIZATION_PENDING, 428),
        PollAnswer.SLOW_DOWN: (ErrorCode.SLOW_DOWN, 429),
        PollAnswer.ACCESS_DENIED: (ErrorCode.ACCESS_DENIED, 403),
        PollAnswer.EXPIRED_TOKEN: (ErrorCode.EXPIRED_TOKEN, 400),
        PollAnswer.INVALID_GRANT: (ErrorCode.INVALID_GRANT, 400),
    }
    for answer, (code, status) in expected.items():
        refusal = PollOutcome(answer).refusal()
        assert isinstance(refusal, DevicePollRefused)
        assert (refusal.code, refusal.status) == (code, status)
        assert refusal.code.value == answer.value


def test_an_outcome_carries_a_grant_exactly_when_granted() -> None:
    grant = KeyGrant(login_id=DeviceLoginId(1), user_id=ADA, team_id=TEA_ROOM, client_name="")
    with pytest.raises(ValueError, match="grant"):
        PollOutcome(PollAnswer.GRANTED)
    with pytest.raises(ValueError, match="grant"):
        PollOutcome(PollAnswer.SLOW_DOWN, grant)
    with pytest.raises(ValueError, match="refusal"):
        PollOutcome(PollAnswer.GRANTED, grant).refusal()


def test_an_unknown_code_is_answered_with_invalid_grant_by_the_caller() -> None:
    refused = InvalidGrant()
    assert (refused.code, refused.status) == (ErrorCode.INVALID_GRANT, 400)


# The approval page's failed-attempt guard


def test_the_guard_allows_up_to_the_limit_of_failures_in_the_window() -> None:
    guard = FailedAttempts(limit=3, window=timedelta(minutes=15))
    for second in range(3):
        assert guard.allowed(at(second))
        guard = guard.register_failure(at(second))
    assert not guard.allowed(at(3))
    assert guard.retry_after(at(3)) == 15 * 60 - 3


def test_the_guard_allows_again_once_the_oldest_failure_leaves_the_window() -> None:
    guard = FailedAttempts(limit=2, window=timedelta(seconds=60))
    guard = guard.register_failure(at(0)).register_failure(at(30))
    assert not guard.allowed(at(59.999999))
    assert guard.allowed(at(60))
    assert guard.retry_after(at(60)) == 0


def test_the_guard_keeps_no_more_than_its_limit_of_failures() -> None:
    guard = FailedAttempts(limit=4)
    for second in range(50):
        guard = guard.register_failure(at(second))
    assert len(guard.recent) == 4


def test_a_guard_with_no_allowance_is_refused() -> None:
    with pytest.raises(ValueError):
        FailedAttempts(limit=0)


@given(
    limit=st.integers(min_value=1, max_value=6),
    window=st.integers(min_value=1, max_value=120),
    gaps=st.lists(st.integers(min_value=0, max_value=90), max_size=30),
    probe=st.integers(min_value=0, max_value=200),
)
def test_the_guard_agrees_with_counting_every_failure_in_the_window(
    limit: int, window: int, gaps: list[int], probe: int
) -> None:
    guard = FailedAttempts(limit=limit, window=timedelta(seconds=window))
    times: list[datetime] = []
    now = T0
    for gap in gaps:
        now += timedelta(seconds=gap)
        times.append(now)
        guard = guard.register_failure(now)
    when = now + timedelta(seconds=probe)
    counted = sum(1 for t in times if when - t < timedelta(seconds=window))
    assert guard.allowed(when) == (counted < limit)
    wait = guard.retry_after(when)
    assert (wait == 0) == guard.allowed(when)
    assert guard.allowed(when + timedelta(seconds=wait))
    if wait:
        assert not guard.allowed(when + timedelta(seconds=wait - 1))


# The lifecycle as a state machine

STEPS = [0, 1, 2, 4.999999, 5, 5.000001, 7, 10, 60, 299]  # the exact expiry has its own rule
POLL_WAITS = [0, 2, 4.999999, 5, 5.000001, 6]


@attrs.define
class Expected:
    """What the test believes about one login, kept apart from the domain's value."""

    status: DeviceLoginStatus = DeviceLoginStatus.PENDING
    last_poll: datetime | None = None
    moves: int = 0
    grants: int = 0
    ever_denied_or_expired: bool = False


class DeviceLoginLifecycle(RuleBasedStateMachine):
    """Several logins under one clock; the table and SPEC 3.5 are the oracle for every answer."""

    def __init__(self) -> None:
        super().__init__()
        self.now = T0
        self.logins: dict[DeviceLoginId, DeviceLogin] = {}
        self.expected: dict[DeviceLoginId, Expected] = {}

    def _pick(self, data: st.DataObject) -> DeviceLoginId:
        return data.draw(st.sampled_from(sorted(self.logins)), label="login")

    def _move(self, login_id: DeviceLoginId, move: DeviceMove) -> None:
        model = self.expected[login_id]
        model.status = DEVICE_MOVES[(model.status, move)]
        model.moves += 1
        if model.status in (DeviceLoginStatus.DENIED, DeviceLoginStatus.EXPIRED):
            model.ever_denied_or_expired = True

    @initialize(letters=st.text(alphabet=USER_CODE_ALPHABET, min_size=8, max_size=8))
    def first_login(self, letters: str) -> None:
        self.start(letters)

    @rule(letters=st.text(alphabet=USER_CODE_ALPHABET, min_size=8, max_size=8))
    def start(self, letters: str) -> None:
        login_id = DeviceLoginId(len(self.logins) + 1)
        login = DeviceLogin.start(
            login_id=login_id,
            device_code=f"device-code-{login_id:022d}",
            user_code=new_user_code(letters),
            client_name="siteaudit connect",
            requested_ip="198.51.100.7",
            now=self.now,
        )
        assert login.expires_at - login.created_at == timedelta(seconds=600)
        self.logins[login_id] = login
        self.expected[login_id] = Expected()

    @rule(seconds=st.sampled_from(STEPS))
    def time_passes(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    @precondition(lambda self: self.logins)
    @rule(data=st.data(), offset_us=st.sampled_from([-1, 0, 1]))
    def clock_reaches_an_expiry(self, data: st.DataObject, offset_us: int) -> None:
        target = self.logins[self._pick(data)].expires_at + timedelta(microseconds=offset_us)
        self.now = max(self.now, target)

    @precondition(lambda self: self.logins)
    @rule(
        data=st.data(),
        user=st.sampled_from([UserId(7), UserId(8)]),
        team=st.sampled_from([TeamId(1), TeamId(2)]),
    )
    def approve(self, data: st.DataObject, user: UserId, team: TeamId) -> None:
        login_id = self._pick(data)
        login, model = self.logins[login_id], self.expected[login_id]
        if (model.status, DeviceMove.APPROVE) not in DEVICE_MOVES:
            with pytest.raises(InvalidTransition):
                login.approve(user=user, team=team, now=self.now)
        elif self.now - login.created_at >= timedelta(seconds=600):
            with pytest.raises(ExpiredToken):
                login.approve(user=user, team=team, now=self.now)
        else:
            login, _ = login.approve(user=user, team=team, now=self.now)
            assert (login.approved_by, login.team_id) == (user, team)
            self._move(login_id, DeviceMove.APPROVE)
            self.logins[login_id] = login

    @precondition(lambda self: self.logins)
    @rule(data=st.data())
    def deny(self, data: st.DataObject) -> None:
        login_id = self._pick(data)
        login, model = self.logins[login_id], self.expected[login_id]
        if (model.status, DeviceMove.DENY) not in DEVICE_MOVES:
            with pytest.raises(InvalidTransition):
                login.deny(now=self.now)
        elif self.now - login.created_at >= timedelta(seconds=600):
            with pytest.raises(ExpiredToken):
                login.deny(now=self.now)
        else:
            login, _ = login.deny(now=self.now)
            self._move(login_id, DeviceMove.DENY)
            self.logins[login_id] = login

    @precondition(lambda self: self.logins)
    @rule(data=st.data())
    def device_cancels(self, data: st.DataObject) -> None:
        """The device gives up (Ctrl-C): a live login ends denied, or expired past its lifetime."""
        login_id = self._pick(data)
        login, model = self.logins[login_id], self.expected[login_id]
        if model.status is DeviceLoginStatus.EXCHANGED:
            with pytest.raises(InvalidGrant):
                login.cancel(self.now)
            return
        cancelled = login.cancel(self.now)
        if model.status in (DeviceLoginStatus.DENIED, DeviceLoginStatus.EXPIRED):
            assert cancelled is login
        elif self.now - login.created_at >= timedelta(seconds=600):
            self._move(login_id, DeviceMove.EXPIRE)
        else:
            self._move(login_id, DeviceMove.CANCEL)
        self.logins[login_id] = cancelled

    @precondition(lambda self: self.logins)
    @rule(data=st.data(), approver_in_team=st.booleans(), wait=st.sampled_from(POLL_WAITS))
    def poll(self, data: st.DataObject, approver_in_team: bool, wait: float) -> None:
        """A client waits, then polls: most waits sit on either side of the 5 s interval."""
        self.now += timedelta(seconds=wait)
        login_id = self._pick(data)
        before, model = self.logins[login_id], self.expected[login_id]
        age = self.now - before.created_at
        too_fast = model.last_poll is not None and self.now - model.last_poll < timedelta(seconds=5)
        live = model.status in (DeviceLoginStatus.PENDING, DeviceLoginStatus.APPROVED)

        login, outcome = before.poll(self.now, approver_in_team=approver_in_team)

        if model.status is DeviceLoginStatus.EXCHANGED:
            assert outcome.answer is PollAnswer.INVALID_GRANT
        elif model.status is DeviceLoginStatus.EXPIRED or age >= timedelta(seconds=600):
            assert outcome.answer is PollAnswer.EXPIRED_TOKEN
            if live:
                self._move(login_id, DeviceMove.EXPIRE)
        elif model.status is DeviceLoginStatus.DENIED:
            assert outcome.answer is PollAnswer.ACCESS_DENIED
        elif too_fast:
            assert outcome.answer is PollAnswer.SLOW_DOWN
        elif model.status is DeviceLoginStatus.PENDING:
            assert outcome.answer is PollAnswer.AUTHORIZATION_PENDING
        elif not approver_in_team:
            assert outcome.answer is PollAnswer.ACCESS_DENIED
            self._move(login_id, DeviceMove.APPROVER_LEFT)
        else:
            assert outcome.answer is PollAnswer.GRANTED
            assert outcome.grant is not None
            assert (outcome.grant.user_id, outcome.grant.team_id) == (before.approved_by, before.team_id)
            assert not model.ever_denied_or_expired
            model.grants += 1
            self._move(login_id, DeviceMove.EXCHANGE)

        if live:
            model.last_poll = self.now
            assert login.last_polled_at == self.now
        else:
            assert login is before
        assert outcome.granted == (outcome.answer is PollAnswer.GRANTED)
        self.logins[login_id] = login

    @invariant()
    def status_follows_the_table(self) -> None:
        for login_id, login in self.logins.items():
            assert login.status is self.expected[login_id].status

    @invariant()
    def a_key_is_granted_at_most_once_and_never_for_a_denied_or_expired_login(self) -> None:
        for model in self.expected.values():
            assert model.grants <= 1
            assert model.grants == (1 if model.status is DeviceLoginStatus.EXCHANGED else 0)
            if model.ever_denied_or_expired:
                assert model.grants == 0

    @invariant()
    def version_counts_status_moves(self) -> None:
        for login_id, login in self.logins.items():
            assert login.version == self.expected[login_id].moves

    @invariant()
    def approver_and_team_are_set_exactly_when_approved(self) -> None:
        for login in self.logins.values():
            was_approved = login.status in (DeviceLoginStatus.APPROVED, DeviceLoginStatus.EXCHANGED)
            if was_approved:
                assert login.approved_by is not None
                assert login.team_id is not None
            if login.status is DeviceLoginStatus.PENDING:
                assert (login.approved_by, login.team_id) == (None, None)

    @invariant()
    def ended_logins_never_grant(self) -> None:
        for login in self.logins.values():
            if login.status in ended_states(DEVICE_MOVES, DeviceLoginStatus):
                _, outcome = login.poll(self.now, approver_in_team=True)
                assert not outcome.granted


TestDeviceLoginLifecycle = DeviceLoginLifecycle.TestCase


def test_the_client_name_names_the_machine_and_its_agents_as_the_connect_form_says() -> None:
    from siteaudit.domain.device import DEFAULT_AGENTS, UNNAMED_MACHINE, client_identity

    assert client_identity("connect on tea-kettle.local: codex, claude-code, codex") == (
        "tea-kettle.local",
        ("claude-code", "codex"),
    )
    assert client_identity("siteaudit connect on tea-kettle.local") == ("tea-kettle.local", DEFAULT_AGENTS)
    assert client_identity("Connect on tea-kettle.local:") == ("tea-kettle.local", DEFAULT_AGENTS)
    assert client_identity("laptop") == ("laptop", DEFAULT_AGENTS)
    # a project's place is the machine and its folder (a colon or a space in the folder is the folder's)
    assert client_identity("connect on tea-kettle in /src/my shop: codex, cursor") == (
        "tea-kettle in /src/my shop",
        ("codex", "cursor"),
    )
    assert client_identity("connect on pc in C:\\src\\shop: codex") == ("pc in C:\\src\\shop", ("codex",))
    assert client_identity("  ") == (UNNAMED_MACHINE, DEFAULT_AGENTS)
