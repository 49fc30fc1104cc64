"""The one converter of the answers every door shows: the report's (`report_json.py`) with times as `/v1`
writes them (ISO 8601, `Z` for UTC). REST unstructures a result with it, the HTTP client structures the
JSON back into the result class with it, the tools answer what REST does. `rest/views.py` adds the hooks
of its own views to this same converter."""

from datetime import datetime
from typing import Final

from siteaudit.adapters.report_json import converter as report_converter

converter: Final = report_converter.copy()
converter.register_unstructure_hook(datetime, lambda moment: moment.isoformat().replace("+00:00", "Z"))
converter.register_structure_hook(datetime, lambda text, _: datetime.fromisoformat(text))
# The report's numbers that are whole or not (`int | float`): a copy does not keep the report
# converter's hook for the union, so it is given again.
converter.register_structure_hook(int | float, lambda value, _: value)
