# Over 400 lines: one attrs view per REST answer, from which the OpenAPI components are generated.
"""What the interface shows (docs/rest-api.md "Endpoints"): one attrs class per answer, converted with one
cattrs converter.

The OpenAPI document's `components.schemas` are generated from these classes and from the report's domain
values (`openapi.py`), so an answer and its schema cannot drift apart.
"""

from typing import Any, Final

from attrs import frozen

from siteaudit.adapters.answers import converter as answers_converter
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.console import SyncStatus
from siteaudit.domain.credit import as_number
from siteaudit.domain.site import Monitoring, ProofOutcome, VerifyMethod
from siteaudit.domain.triage import ValueClass
from siteaudit.ports.application import (
    AccountView,
    AuditStarted,
)

converter: Final = answers_converter
converter.register_unstructure_hook(AuditStatus, lambda member: member.value)
for _site_enum in (Monitoring, VerifyMethod, ProofOutcome):
    converter.register_unstructure_hook(_site_enum, lambda member: member.value)


@frozen
class Account:
    """Balances and usage."""

    balance: float
    team_id: int
    team_credits: float
    crawls_total: int
    credits_spent_30d: float
    team_credits_spent_30d: float
    api_key_prefix: str


def _json(value: object) -> dict[str, Any]:
    document: dict[str, Any] = converter.unstructure(value)
    return document


def account_answer(view: AccountView) -> dict[str, Any]:
    """The account as `Account` declares it (a field the use case adds must be declared there too)."""
    return _json(
        Account(
            balance=as_number(view.balance),
            team_id=view.team_id,
            team_credits=as_number(view.team_credits),
            crawls_total=view.crawls_total,
            credits_spent_30d=as_number(view.credits_spent_30d),
            team_credits_spent_30d=as_number(view.team_credits_spent_30d),
            api_key_prefix=view.api_key_prefix,
        )
    )


def started_answer(started: AuditStarted) -> dict[str, Any]:
    """The 202 of an audit started (docs/rest-api.md "Registered sites"), with `warnings`: why it runs slower
    than asked."""
    return {
        "crawl_id": started.audit.id,
        "estimated_credits": as_number(started.estimated_credits),
        "max_rps": started.audit.max_rps,
        "warnings": [_json(notice) for notice in started.notices],
    }


# --- the search-console integration (docs/rest-api.md "Search console") ------------------------------
# The answers are the domain's values (`domain/console_answers.py`, `domain/triage.py`) as they are, and
# the console package's (`services/console/answers.py`), through the one converter: their enums by value.

converter.register_unstructure_hook(SyncStatus, lambda member: member.value)
converter.register_unstructure_hook(ValueClass, lambda member: member.value)
