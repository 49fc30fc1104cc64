"""Credit units, cost rules and the account aggregate."""

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from siteaudit.domain.credit import (
    CreditAccount,
    EntryKind,
    as_number,
    audit_cost,
    balance_of,
    credits,
    recheck_cost,
    spent,
)
from siteaudit.domain.error import ErrorCode, InsufficientCredits
from siteaudit.domain.ids import TeamId, UserId

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def test_a_page_costs_one_credit_and_a_304_page_a_fifth() -> None:
    assert audit_cost(pages_fetched=3, pages_not_modified=0, reserved=credits(500)) == credits(3)
    assert audit_cost(pages_fetched=0, pages_not_modified=5, reserved=credits(500)) == credits(1)


def test_the_total_is_rounded_up_once_per_audit() -> None:
    # 2 full pages + 3 pages answering 304 = 2.6 credits, rounded up once to 3.
    assert audit_cost(pages_fetched=2, pages_not_modified=3, reserved=credits(500)) == credits(3)


def test_the_cost_never_exceeds_the_reservation() -> None:
    assert audit_cost(pages_fetched=10, pages_not_modified=0, reserved=credits(4)) == credits(4)
    assert recheck_cost(urls_fetched=10, reserved=credits(7)) == credits(7)


@given(st.integers(0, 600_000), st.integers(0, 600_000), st.integers(0, 5_000_000))
def test_costs_are_whole_credits_within_the_reservation(full: int, not_modified: int, reserved: int) -> None:
    cost = audit_cost(pages_fetched=full, pages_not_modified=not_modified, reserved=reserved)
    assert 0 <= cost <= reserved
    assert cost == reserved or cost % 10 == 0


def test_numbers_show_as_integers_when_whole() -> None:
    assert as_number(50) == 5 and isinstance(as_number(50), int)
    assert as_number(52) == 5.2


def test_reserving_more_than_the_balance_answers_insufficient_credits() -> None:
    account, _ = CreditAccount(UserId(1)).grant(credits(10), key="g", at=NOW)
    with pytest.raises(InsufficientCredits) as caught:
        account.reserve(credits(11), reference="audit:1", at=NOW)
    assert (caught.value.code, caught.value.status) == (ErrorCode.INSUFFICIENT_CREDITS, 402)


def test_settling_returns_the_hold_and_takes_the_cost() -> None:
    account, grant = CreditAccount(UserId(1)).grant(credits(100), key="g", at=NOW)
    account, hold = account.reserve(credits(50), reference="audit:1", at=NOW, team_id=TeamId(4))
    assert account.balance == credits(50)
    account, (release, charge) = account.settle(
        reserved=credits(50), cost=credits(12), reference="audit:1", at=NOW, team_id=TeamId(4)
    )
    assert account.balance == credits(88) == balance_of([grant, hold, release, charge])
    assert (release.kind, charge.kind, charge.amount) == (EntryKind.RELEASE, EntryKind.CHARGE, -credits(12))
    assert spent([grant, hold, release, charge], since=NOW) == credits(12)
    assert spent([grant, hold, release, charge], since=NOW, team_id=TeamId(5)) == 0


def test_a_grant_must_be_positive() -> None:
    with pytest.raises(Exception) as caught:
        CreditAccount(UserId(1)).grant(0, key="g", at=NOW)
    assert getattr(caught.value, "code", None) is ErrorCode.VALIDATION_FAILED


def test_a_rendered_page_costs_five_credits_and_a_304_still_a_fifth_of_one() -> None:
    from siteaudit.domain.credit import page_cost

    assert page_cost(render=False) == 10
    assert page_cost(render=True) == 50
    assert audit_cost(pages_fetched=3, pages_not_modified=2, reserved=10_000, render=True) == 160
    assert audit_cost(pages_fetched=3, pages_not_modified=2, reserved=10_000) == 40
    assert audit_cost(pages_fetched=300, pages_not_modified=0, reserved=1_000, render=True) == 1_000
