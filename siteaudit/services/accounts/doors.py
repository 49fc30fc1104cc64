"""What the account use case says at the doors beyond its answer: the summary a tool's caller reads first
(its JSON)."""

from collections.abc import Mapping
from typing import Any


def account_text(a: Mapping[str, Any]) -> str:
    return (
        f"Balance {a['balance']:g} credits; team {a['team_id']} owner has {a['team_credits']:g}; "
        f"{a['crawls_total']} audits started."
    )
