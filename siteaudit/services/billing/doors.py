"""What the billing use cases say at the doors beyond their answers: the summary a tool's caller reads
first (its JSON)."""

from collections.abc import Mapping
from typing import Any


def link_text(a: Mapping[str, Any]) -> str:
    return f"Give the user this link to open in a browser: {a['url']} (nothing is charged until they pay)."
