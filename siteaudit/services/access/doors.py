"""What the staging-access use cases say at the doors beyond their answers: the summary a tool's caller
reads first. It reads the answer as every door shows it (its JSON)."""

from collections.abc import Mapping
from typing import Any


def access_text(a: Mapping[str, Any]) -> str:
    if not a["kinds"]:
        return f"No staging access is set: audits reach {a['sent_to']} without credentials."
    return (
        f"Staging access set ({', '.join(a['kinds'])}; {a['headers']} headers, {a['cookies']} cookies), "
        f"sent only to {a['sent_to']}. The values are never shown; people replace or remove them in the API."
    )
