"""The one cattrs converter every declared use case's answer goes through (each its result class,
`services/*/answers.py`), with the enums shown by value. The OpenAPI components are generated from the
answers' classes (`openapi.py`)."""

from typing import Final

from siteaudit.adapters.answers import converter as answers_converter
from siteaudit.domain.audit import AuditStatus
from siteaudit.domain.console import SyncStatus
from siteaudit.domain.site import Monitoring, ProofOutcome, VerifyMethod
from siteaudit.domain.triage import ValueClass

converter: Final = answers_converter
converter.register_unstructure_hook(AuditStatus, lambda member: member.value)
for _site_enum in (Monitoring, VerifyMethod, ProofOutcome):
    converter.register_unstructure_hook(_site_enum, lambda member: member.value)


# --- the search-console integration (docs/rest-api.md "Search console") ------------------------------
# The answers are the domain's values (`domain/console_answers.py`, `domain/triage.py`) as they are, and
# the console package's (`services/console/answers.py`), through the one converter: their enums by value.

converter.register_unstructure_hook(SyncStatus, lambda member: member.value)
converter.register_unstructure_hook(ValueClass, lambda member: member.value)
