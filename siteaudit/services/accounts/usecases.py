"""The account use case (docs/rest-api.md "Credits"), declared once: how `/v1` and the tools offer it. Every
door is derived from it (docs/architecture.md, "Adding a use case"); the handler is in `account.py`."""

from typing import Final

from attrs import frozen

from siteaudit.ports.usecases import Http, Tool, UseCase
from siteaudit.services.accounts import doors
from siteaudit.services.accounts.answers import Account


@frozen
class GetAccount(UseCase[Account]):
    """The caller's and the team owner's credits and spending over the last 30 days, the audits the
    caller started and the key's prefix."""

    http = Http("GET", "/v1/account", "getAccount", "Balances and usage")
    tool = Tool(
        "get_account",
        "Credits and usage",
        "Your credits (plain-URL audits) and the team owner's (site audits, rechecks).",
        doors.account_text,
        after="ping",
    )


# In the order the doors list them.
USE_CASES: Final = (GetAccount,)
