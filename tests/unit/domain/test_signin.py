"""Sign-in values: password rules, when a session ends or needs the password again, one-time links."""

from datetime import UTC, datetime, timedelta

import pytest

from siteaudit.domain.error import ValidationFailed
from siteaudit.domain.ids import UserId
from siteaudit.domain.signin import (
    AppSession,
    LinkPurpose,
    OneTimeLink,
    SignInTerms,
    check_password,
    token_hash,
)

T0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
TERMS = SignInTerms()


def session() -> AppSession:
    return AppSession(
        id_hash=token_hash("a" * 64),
        user_id=UserId(1),
        team_id=None,
        csrf="c" * 64,
        created_at=T0,
        last_seen_at=T0,
        authenticated_at=T0,
    )


def test_a_password_has_12_to_1024_characters() -> None:
    assert check_password("x" * 12) == "x" * 12
    for bad in ("x" * 11, "x" * 1025, ""):
        with pytest.raises(ValidationFailed) as refused:
            check_password(bad)
        assert set(refused.value.fields) == {"password"}


def test_a_session_ends_when_idle_or_too_old_whichever_comes_first() -> None:
    s = session()
    assert not s.ended(T0 + TERMS.idle - timedelta(seconds=1), TERMS)
    assert s.ended(T0 + TERMS.idle, TERMS)
    kept_busy = s
    moment = T0
    while moment < T0 + TERMS.lifetime - TERMS.idle:
        moment += TERMS.idle / 2
        kept_busy = kept_busy.seen(moment)
    assert not kept_busy.ended(moment, TERMS)
    assert kept_busy.ended(T0 + TERMS.lifetime, TERMS)


def test_secrets_need_a_password_given_within_the_reauth_window() -> None:
    s = session()
    assert s.recently_authenticated(T0 + TERMS.reauth - timedelta(seconds=1), TERMS)
    assert not s.recently_authenticated(T0 + TERMS.reauth, TERMS)
    later = T0 + timedelta(hours=1)
    assert s.reauthenticated(later).recently_authenticated(later, TERMS)


def test_a_sessions_use_is_recorded_at_most_once_a_minute_and_never_backwards() -> None:
    s = session().seen(T0 + timedelta(minutes=5))
    assert s.last_seen_at == T0 + timedelta(minutes=5)
    assert s.seen(T0) is s
    assert s.seen(T0 + timedelta(minutes=5, seconds=59)) is s


def test_links_live_an_hour_for_a_reset_and_a_week_for_an_invitation() -> None:
    reset = OneTimeLink.issue(token="1" * 64, user=UserId(1), purpose=LinkPurpose.RESET, now=T0, terms=TERMS)
    invite = OneTimeLink.issue(
        token="2" * 64, user=UserId(1), purpose=LinkPurpose.INVITE, now=T0, terms=TERMS
    )
    assert reset.token_hash == token_hash("1" * 64) != "1" * 64
    assert reset.usable(T0 + timedelta(minutes=59)) and not reset.usable(T0 + timedelta(hours=1))
    assert invite.usable(T0 + timedelta(days=6)) and not invite.usable(T0 + timedelta(days=7))
