"""The one converter of the answers every door shows: the report's (`report_json.py`) with times as `/v1`
writes them (ISO 8601, `Z` for UTC). REST unstructures a result with it, the HTTP client structures the
JSON back into the result class with it, the tools answer what REST does; enums are shown by their
values."""

from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

import attrs
from cattrs.gen import make_dict_unstructure_fn, override

from siteaudit.adapters.report_json import converter as report_converter
from siteaudit.ports.usecases import OMITTED_WHEN_NONE

converter: Final = report_converter.copy()
converter.register_unstructure_hook(datetime, lambda moment: moment.isoformat().replace("+00:00", "Z"))
converter.register_structure_hook(datetime, lambda text, _: datetime.fromisoformat(text))
# The report's numbers that are whole or not (`int | float`): a copy does not keep the report
# converter's hook for the union, so it is given again.
converter.register_structure_hook(int | float, lambda value, _: value)


def _omits(kind: Any) -> bool:
    return attrs.has(kind) and any(f.metadata.get(OMITTED_WHEN_NONE) for f in attrs.fields(kind))


def _omitting(kind: Any) -> Callable[[Any], dict[str, Any]]:
    """A result class with fields marked `omitted_when_none` (`ports/usecases.py`): those fields are left
    out of its JSON when None."""
    omitted: dict[str, Any] = {
        f.name: override(omit_if_default=True)
        for f in attrs.fields(kind)
        if f.metadata.get(OMITTED_WHEN_NONE)
    }
    return make_dict_unstructure_fn(kind, converter, **omitted)


converter.register_unstructure_hook_factory(_omits, _omitting)
