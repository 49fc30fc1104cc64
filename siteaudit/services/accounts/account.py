"""The handler of the account use case (`usecases.py`): a plain function over ports."""

from datetime import timedelta

from siteaudit.domain.account import Caller
from siteaudit.domain.credit import as_number
from siteaudit.ports.clock import Clock
from siteaudit.ports.repository import UnitOfWork
from siteaudit.services.accounts.answers import Account
from siteaudit.services.accounts.usecases import GetAccount


def get_account(asked: GetAccount, caller: Caller, *, uow: UnitOfWork, clock: Clock) -> Account:
    since = clock.now() - timedelta(days=30)
    with uow:
        team = uow.teams.get(caller.team_id)
        return Account(
            balance=as_number(uow.credits.balance(caller.user_id)),
            team_id=team.id,
            team_credits=as_number(uow.credits.balance(team.owner_id)),
            crawls_total=uow.audits.count_started_by(caller.user_id),
            credits_spent_30d=as_number(uow.credits.spent_since(caller.user_id, since)),
            team_credits_spent_30d=as_number(uow.credits.spent_since(team.owner_id, since, team=team.id)),
            api_key_prefix=caller.key_prefix,
        )
