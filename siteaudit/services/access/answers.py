"""What the staging-access use cases answer (docs/security.md "Staging access"): which kinds are set, how many
headers and cookies, where they are sent and when they were set; never a value."""

from datetime import datetime

from attrs import frozen


@frozen
class SiteAccessStatus:
    """A site's staging access: `kinds` set (`basic_auth`, `headers`, `cookies`; empty: none), how many
    `headers` and `cookies`, the origin they are `sent_to` (only requests to it carry them) and when they
    were set (`updated_at`, null: none). The values are never answered."""

    site_id: int
    kinds: tuple[str, ...]
    headers: int
    cookies: int
    sent_to: str
    updated_at: datetime | None
