"""Compare what a door serves with its pin: a checked-in JSON file under `pins/` (docs/architecture.md,
"Pinned behaviour").

A pin is written by `json.dumps(value, indent=2, ensure_ascii=False)`; with `sort_keys` where the order of
keys carries no meaning (the OpenAPI document, the tool list), in the served order where it does (REST
answers, whose order of keys is part of the byte-for-byte contract). On a mismatch the test fails with a
unified diff. After a reviewed, intentional change rewrite the pins with `SITEAUDIT_REPIN=1` and review
`git diff tests/unit/pinned/pins`.
"""

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any, Final

import pytest

PINS: Final = Path(__file__).with_name("pins")
REPIN: Final = "SITEAUDIT_REPIN"


def pinned_text(value: Any, *, sort_keys: bool) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys) + "\n"


def assert_pinned(name: str, value: Any, *, sort_keys: bool) -> None:
    """`value` equals the pin `pins/<name>.json` (rewritten first when SITEAUDIT_REPIN=1)."""
    path = PINS / f"{name}.json"
    served = pinned_text(value, sort_keys=sort_keys)
    if os.environ.get(REPIN) == "1":
        path.write_text(served, encoding="utf-8")
    how = f"After a reviewed, intentional change: {REPIN}=1 pytest tests/unit/pinned, then review git diff."
    if not path.exists():
        pytest.fail(f"no pin {path.name}. {how}")
    pinned = path.read_text(encoding="utf-8")
    if served != pinned:
        diff = difflib.unified_diff(
            pinned.splitlines(keepends=True),
            served.splitlines(keepends=True),
            fromfile=f"pinned {path.name}",
            tofile="served now",
            n=3,
        )
        pytest.fail(f"{path.name} differs from what is served now:\n{''.join(diff)}\n{how}", pytrace=False)


# --- normalising volatile values ---------------------------------------------------------------------------

PORT: Final = "<port>"
MEASURED: Final = "<measured>"
SECRET: Final = "<secret>"
_PORT_IN_URL: Final = re.compile(r"(//(?:[\w.-]+)|127\.0\.0\.1):\d{2,5}\b")


def normalised(value: Any, *, volatile: frozenset[str] = frozenset(), secrets: tuple[str, ...] = ()) -> Any:
    """`value` with what differs between runs of the same scenario replaced by a placeholder, and nothing
    else touched (the order of keys kept):

    - the port of a local server in a URL (`//host:12345` -> `//host:<port>`), in any string;
    - each string in `secrets` (keys, tokens generated at random) -> `<secret>`, wherever it appears;
    - the value of any key named in `volatile` (durations measured on the wall clock) -> `<measured>`,
      unless it is null (so a null that becomes a value still shows in the diff).

    Times are not replaced: the service under test runs on a FixedClock, so they are part of the pin.
    """
    if isinstance(value, dict):
        return {
            key: (
                MEASURED
                if key in volatile and item is not None
                else normalised(item, volatile=volatile, secrets=secrets)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [normalised(item, volatile=volatile, secrets=secrets) for item in value]
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, SECRET)
        return _PORT_IN_URL.sub(rf"\1:{PORT}", value)
    return value
