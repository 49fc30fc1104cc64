"""The report as JSON, both ways: the one conversion the SQL store, REST and the CLI each apply at their edge.

Field names and order are the attrs classes' (`domain/report.py`); tuples become lists, enums their
values, and `stats.diff_basis` is left out when None (a first audit), as the stored reports always had it.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

import cattrs
from cattrs.gen import make_dict_unstructure_fn, override

from siteaudit.domain.diff import DiffBasis
from siteaudit.domain.issue import Severity
from siteaudit.domain.report import Report, Stats

converter: Final = cattrs.Converter(unstruct_collection_overrides={Sequence: list})
for _kind in (Severity, DiffBasis):  # string enums would otherwise pass through as members
    converter.register_unstructure_hook(_kind, lambda member: member.value)
converter.register_structure_hook(int | float, lambda value, _: value)
converter.register_unstructure_hook(
    Stats, make_dict_unstructure_fn(Stats, converter, diff_basis=override(omit_if_default=True))
)


def report_json(report: Report) -> dict[str, Any]:
    """The report as plain JSON values, in the field order of the REST contract."""
    document: dict[str, Any] = converter.unstructure(report, Report)
    return document


def report_from_json(document: Mapping[str, Any]) -> Report:
    """A stored report read back (keys this code does not know are ignored)."""
    return converter.structure(document, Report)
