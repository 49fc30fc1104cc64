"""What `/v1` shows beyond the declared use cases' answers (each its result class, `services/*/answers.py`):
the one cattrs converter with the enums shown by value, and the answer of an audit started (not declared
yet). The OpenAPI components are generated from the answers' classes (`openapi.py`)."""

from typing import Any, Final

from siteaudit.adapters.answers import converter as answers_converter
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.console import SyncStatus
from siteaudit.domain.credit import as_number
from siteaudit.domain.site import Monitoring, ProofOutcome, VerifyMethod
from siteaudit.domain.triage import ValueClass
from siteaudit.ports.application import (
    AuditStarted,
)

converter: Final = answers_converter
converter.register_unstructure_hook(AuditStatus, lambda member: member.value)
for _site_enum in (Monitoring, VerifyMethod, ProofOutcome):
    converter.register_unstructure_hook(_site_enum, lambda member: member.value)


def _json(value: object) -> dict[str, Any]:
    document: dict[str, Any] = converter.unstructure(value)
    return document


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
