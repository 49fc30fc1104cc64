"""What the IndexNow use cases say at the doors beyond their answers: the summaries a tool's caller reads
first. They read the answer as every door shows it (its JSON)."""

from collections.abc import Mapping
from typing import Any

A = Mapping[str, Any]


def indexnow_text(a: A) -> str:
    key = "verified" if a["key_verified"] else f"not verified: publish {a['key_file_url']} holding the key"
    return (
        f"IndexNow key {key}; auto-submit {'on' if a['auto'] else 'off'}; {a['today']['used']} of "
        f"{a['today']['limit']} URLs submitted today. "
        + ("Call submit_to_indexnow." if a["key_verified"] else "Then call check_indexnow_key.")
    )


def key_check_text(a: A) -> str:
    if a["result"] == "verified":
        return f"The key file {a['key_file_url']} holds the key: verified. Call submit_to_indexnow."
    return (
        f"The key file {a['key_file_url']} did not verify ({a['reason']}). Publish it with the key as its "
        "only content (see agent_prompt), then call check_indexnow_key again."
    )


def detect_text(a: A) -> str:
    found = a["detection"]
    if found is not None and found["status"] == "found":
        return (
            f"An existing key is served at {found['key_file_url']}. To use it call set_indexnow_key with "
            "that key (a suggestion: nothing changed yet)."
        )
    return "No existing key found. Publish the generated key file, then call check_indexnow_key."


def submit_text(a: A) -> str:
    return (
        f"Submitted {a['submitted']} URLs in {a['requests']} requests ({a['status']}); {a['skipped']} "
        f"skipped (other hosts), {a['capped']} over today's allowance."
    )
