"""What the site use cases say at the doors beyond their answers: the summaries a tool's caller reads
first. They read the answer as every door shows it (its JSON)."""

from collections.abc import Mapping
from typing import Any

A = Mapping[str, Any]


def site_line(site: A) -> str:
    state = "verified" if site["verified"] else "not verified"
    return f"site {site['id']} {site['url']} ({state}, monitoring {site['monitoring']})"


def sites_text(a: A) -> str:
    return "; ".join(site_line(s) for s in a["data"]) or "No registered sites. Call register_site to add one."


def registered_text(a: A) -> str:
    return (
        f"Registered {site_line(a)}. Publish {a['verify']['url']} containing the token, or another "
        "method from get_site_verification, then call verify_site."
    )


def site_text(a: A) -> str:
    return f"{site_line(a)}; health trend {a['trend'] or 'none yet'}."


def updated_text(a: A) -> str:
    return f"Updated {site_line(a)}."


def deleted_text(a: A) -> str:
    return f"Site {a['site_id']} is deleted; its audits are kept."


def verification_text(a: A) -> str:
    return (
        "The site is verified."
        if a["verified"]
        else "Not verified yet: publish one method, then verify_site."
    )


def verified_text(a: A) -> str:
    return f"Verified {site_line(a)}."
