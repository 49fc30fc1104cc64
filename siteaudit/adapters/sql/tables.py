# Over 500 lines: the one SQLAlchemy metadata of every table the migrations create.
"""SQLAlchemy Core tables of every aggregate and of the bulk crawl data: the one schema both databases share.

Every table lives here, on the same `metadata`, and every change comes with a migration in
`migrations/versions`; the drift test keeps the two in step.
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
)


class UtcDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out, on both databases.

    PostgreSQL keeps `timestamptz`; SQLite has no time zones, so values are stored as naive UTC and given
    their zone back on the way out. Naive values are refused: they would be silently misread.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: pass an aware (UTC) datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# SQLite gives INTEGER PRIMARY KEY columns their rowid (and so autoincrement); BIGINT would not.
BigId = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# --- the column shapes many tables share ------------------------------------------------------------------


def serial_id() -> Column[int]:
    """The id the database numbers (an aggregate's id, or a row's writing order)."""
    return Column("id", Integer, primary_key=True, autoincrement=True)


def version() -> Column[int]:
    """The optimistic-concurrency counter of an aggregate's row (`ConcurrentUpdate` when it moved)."""
    return Column("version", Integer, nullable=False)


def created_at() -> Column[datetime]:
    return Column("created_at", UtcDateTime, nullable=False)


def crawl_audit_id() -> Column[int]:
    """The audit of a bulk crawl row, without a foreign key (why: the note above `crawl_urls`)."""
    return Column("audit_id", Integer, nullable=False)


def crawl_url_id() -> Column[int]:
    """The URL of a bulk crawl row: its id in the audit's `crawl_urls`, numbered by the store."""
    return Column("url_id", Integer, nullable=False, autoincrement=False)


def owner_id(*, primary_key: bool = False) -> Column[int]:
    """The person a row belongs to, deleted with them: indexed, or the row's key (one row per person)."""
    owner = ForeignKey("users.id", ondelete="CASCADE")
    if primary_key:
        return Column("user_id", Integer, owner, primary_key=True)
    return Column("user_id", Integer, owner, nullable=False, index=True)


def audit_part() -> Column[int]:
    """The key of a table holding one row of an audit's own, deleted with it."""
    return Column("audit_id", Integer, ForeignKey("audits.id", ondelete="CASCADE"), primary_key=True)


# --- accounts ------------------------------------------------------------------------------------------

users = Table(
    "users",
    metadata,
    serial_id(),
    Column("email", String(254), nullable=False, unique=True),
    Column("plan", String(50), nullable=False),
    Column("name", String(200), nullable=False),
    created_at(),
)

teams = Table(
    "teams",
    metadata,
    serial_id(),
    Column("name", String(100), nullable=False, unique=True),
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=False, index=True),
    created_at(),
)

memberships = Table(
    "memberships",
    metadata,
    Column("team_id", Integer, ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
    owner_id(),
    Column("role", String(10), nullable=False),
    PrimaryKeyConstraint("team_id", "user_id"),
)

# --- credits -------------------------------------------------------------------------------------------

credit_accounts = Table(
    "credit_accounts",
    metadata,
    Column("user_id", Integer, ForeignKey("users.id"), primary_key=True, autoincrement=False),
    Column("balance", BigInteger, nullable=False),
    version(),
    CheckConstraint("balance >= 0", name="balance_not_negative"),
)

credit_entries = Table(
    "credit_entries",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("key", String(200), nullable=False, unique=True),  # the idempotency key
    Column("account", Integer, ForeignKey("users.id"), nullable=False),
    Column("kind", String(10), nullable=False),
    Column("amount", BigInteger, nullable=False),
    Column("at", UtcDateTime, nullable=False),
    Column("reference", String(200), nullable=False),
    Column("team_id", Integer, nullable=True),
    Index(None, "account", "at"),
    Index(None, "reference"),
)

# --- audits --------------------------------------------------------------------------------------------

audits = Table(
    "audits",
    metadata,
    serial_id(),
    Column("team_id", Integer, nullable=False),  # 0: a personal audit outside any team
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False, index=True),
    Column("payer_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("url", Text, nullable=False),
    Column("origin", String(300), nullable=False),
    created_at(),
    Column("max_pages", Integer, nullable=False),
    Column("concurrency", Integer, nullable=False),
    Column("max_rps", Float, nullable=False),
    # No foreign key to sites: a deleted site keeps its audits' history.
    Column("site_id", Integer, nullable=True, index=True),
    Column("trigger", String(20), nullable=False),
    Column("status", String(20), nullable=False),
    Column("credits_reserved", BigInteger, nullable=False),
    Column("verify_token_set", Boolean, nullable=False),
    Column("webhook_url", Text, nullable=True),
    Column("started_at", UtcDateTime, nullable=True),
    Column("finished_at", UtcDateTime, nullable=True),
    Column("archived_at", UtcDateTime, nullable=True),
    # Last batch recorded, lease renewed or state move (GET /crawls/{id}); null before the first slice.
    Column("last_progress_at", UtcDateTime, nullable=True),
    Column("failure_reason", String(500), nullable=True),
    Column("pages_crawled", Integer, nullable=False),
    Column("pages_not_modified", Integer, nullable=False),
    Column("health_score", SmallInteger, nullable=True),
    Column("partial", Boolean, nullable=False),
    version(),
    Column("render", Boolean, nullable=False, server_default=false()),  # 0018: docs/rendering.md
    Column("extract", JSON, nullable=True),  # 0021: the extraction rules (docs/extraction.md); NULL: none
    Column("scope", JSON, nullable=True),  # 0022: what it covers (docs/audits.md); NULL: the whole site
    Index(None, "team_id", "created_at"),
    Index(None, "team_id", "status", "origin"),
)

# Who works on an audit now, until when (siteaudit.domain.lease): one row per audit that started moving.
audit_leases = Table(
    "audit_leases",
    metadata,
    audit_part(),
    Column("holder", String(200), nullable=True),  # null: free, waiting for the next message
    Column("expires_at", UtcDateTime, nullable=False, index=True),
    Column("attempts", Integer, nullable=False),
    version(),
)

# --- bulk crawl data (siteaudit.ports.crawl) -------------------------------------------------------------
# Rows refer to URLs by (audit_id, url id). Only crawl_urls, reports and checkpoints carry a foreign key to
# the audit: page, link, issue and frontier rows are written by the hundred thousand, and a per-row key
# check would cost more than it protects (they are only ever written through the store, after interning).

crawl_urls = Table(
    "crawl_urls",
    metadata,
    Column("audit_id", Integer, ForeignKey("audits.id", ondelete="CASCADE"), nullable=False),
    Column("id", Integer, nullable=False, autoincrement=False),
    Column("key", BigInteger, nullable=False),  # 64 bits of the URL's BLAKE2b digest: a small unique index
    Column("url", Text, nullable=False),
    PrimaryKeyConstraint("audit_id", "id"),
    UniqueConstraint("audit_id", "key"),
)

crawl_pages = Table(
    "crawl_pages",
    metadata,
    crawl_audit_id(),
    crawl_url_id(),
    Column("status_code", SmallInteger, nullable=True),
    Column("depth", Integer, nullable=False),
    Column("title", Text, nullable=True),
    Column("meta_description", Text, nullable=True),
    Column("word_count", Integer, nullable=False),
    Column("blocked_by", String(100), nullable=True),
    Column("fetch_error", String(30), nullable=True),
    Column("content_type", String(200), nullable=True),
    Column("template", Text, nullable=False),
    Column("in_sitemap", Boolean, nullable=False),
    Column("facts", JSON, nullable=False),  # the facts that are not columns (siteaudit.adapters.sql.page)
    # What the site checks read besides the columns, apart from `facts` so that finalisation reads a narrow
    # projection (NULL on rows written before: `facts` holds everything there), and the similarity sketch
    # as little-endian unsigned 64-bit values (NULL when the page has none, or one that does not fit).
    Column("site", JSON, nullable=True),
    Column("sketch", LargeBinary, nullable=True),
    PrimaryKeyConstraint("audit_id", "url_id"),
    Index(None, "audit_id", "status_code", "url_id"),
    Index(None, "audit_id", "template"),
)

# What each extraction rule read on each page (docs/extraction.md): a row per value in document order
# (`position`), rules in the audit's order (`rule`); a rule that read nothing has one row, value NULL.
crawl_extracts = Table(
    "crawl_extracts",
    metadata,
    crawl_audit_id(),
    crawl_url_id(),
    Column("rule", SmallInteger, nullable=False),
    Column("position", SmallInteger, nullable=False),
    Column("name", String(40), nullable=False),
    Column("value", Text, nullable=True),  # at most 500 characters
    PrimaryKeyConstraint("audit_id", "url_id", "rule", "position"),
    Index(None, "audit_id", "name", "value"),
)

crawl_links = Table(
    "crawl_links",
    metadata,
    crawl_audit_id(),
    Column("source_id", Integer, nullable=False),
    Column("target_id", Integer, nullable=False),
    Column("kind", SmallInteger, nullable=False),
    Column("nofollow", Boolean, nullable=False),
    Column("internal", Boolean, nullable=False),
    Index(None, "audit_id", "source_id"),
)

crawl_issues = Table(
    "crawl_issues",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),  # writing order: the stable tie-breaker
    crawl_audit_id(),
    Column("url_id", Integer, nullable=False),
    Column("check_code", String(100), nullable=False),
    Column("severity", SmallInteger, nullable=False),  # Severity.rank: sorts errors first
    Column("template", Text, nullable=False),
    Column("details", JSON, nullable=False),
    # The issues list's order, unfiltered or by severity, then by check; `template` rides along (PostgreSQL)
    # so that a template filter, too, walks the index alone (migration 0015).
    Index(None, "audit_id", "severity", "check_code", "url_id", "id", postgresql_include=["template"]),
    Index(None, "audit_id", "check_code", "severity", "url_id", "id", postgresql_include=["template"]),
    Index(None, "audit_id", "template"),
    Index(None, "audit_id", "url_id"),
)

# The templates finalisation infers, one narrow row per page: they override the `template` of the URL's
# page and issue rows, which are then never rewritten (a million-row UPDATE of wide rows). Read by primary
# key only, and on purpose without a second index: the table fills up all at once, so its statistics are
# often stale (an audit's rows estimated at one), and a planner offered an (audit_id, ...) index would
# probe it by audit alone and filter every template of the audit for every row.
crawl_templates = Table(
    "crawl_templates",
    metadata,
    crawl_audit_id(),
    crawl_url_id(),
    Column("template", Text, nullable=False),
    PrimaryKeyConstraint("audit_id", "url_id"),
)

# The totals the lists answer, counted once when finalisation sealed the audit's rows (they no longer
# change then): a page of a list costs its rows, not a count of every row of the audit (165,000 issues:
# 25 ms a page). Marker rows say an audit was counted, so an audit with nothing to count is told apart
# from one never counted: check_code "" for issues, status_code 0 for pages.
crawl_issue_counts = Table(
    "crawl_issue_counts",
    metadata,
    crawl_audit_id(),
    Column("check_code", String(100), nullable=False),
    Column("severity", SmallInteger, nullable=False),
    Column("template", Text, nullable=False),
    Column("count", Integer, nullable=False),
    Index(None, "audit_id"),
)


def issue_mark() -> list[Column[Any]]:
    """A mark's place in its (severity, check) group and the issue it stands at."""
    return [
        Column("severity", SmallInteger, nullable=False),
        Column("check_code", String(100), nullable=False),
        Column("ordinal", Integer, nullable=False),
        Column("url_id", Integer, nullable=False),
        Column("issue_id", BigInteger, nullable=False),
    ]


# Every `ISSUE_MARK_EVERY`th issue of each (severity, check) group of a sealed audit, in the issues list's
# order, with its ordinal in the group: a deep page of the list starts its index walk at the mark before
# it instead of at its group's first issue (migration 0015).
crawl_issue_marks = Table(
    "crawl_issue_marks",
    metadata,
    crawl_audit_id(),
    *issue_mark(),
    PrimaryKeyConstraint("audit_id", "severity", "check_code", "ordinal"),
)

# The same marks for the issues list filtered by template: every `TEMPLATE_MARK_EVERY`th issue of each
# (template, severity, check) group of a sealed audit, with its ordinal among the issues of that template
# in the group (migration 0023).
crawl_issue_template_marks = Table(
    "crawl_issue_template_marks",
    metadata,
    crawl_audit_id(),
    Column("template", Text, nullable=False),
    *issue_mark(),
    PrimaryKeyConstraint("audit_id", "template", "severity", "check_code", "ordinal"),
)

crawl_page_counts = Table(
    "crawl_page_counts",
    metadata,
    crawl_audit_id(),
    Column("status_code", SmallInteger, nullable=True),  # NULL: pages that got no answer
    Column("count", Integer, nullable=False),
    Index(None, "audit_id"),
)

crawl_frontier = Table(
    "crawl_frontier",
    metadata,
    crawl_audit_id(),
    crawl_url_id(),
    Column("depth", Integer, nullable=False),
    Column("state", SmallInteger, nullable=False),
    PrimaryKeyConstraint("audit_id", "url_id"),
    Index(None, "audit_id", "state", "depth", "url_id"),
)

crawl_checkpoints = Table(
    "crawl_checkpoints",
    metadata,
    audit_part(),
    Column("state", JSON, nullable=False),
)

crawl_reports = Table(
    "crawl_reports",
    metadata,
    audit_part(),
    Column("report", JSON, nullable=False),
    # The audit's issue identities, kept at archival for later diffs (`ArchivedIdentities.as_json`).
    Column("archived_identities", JSON, nullable=True),
)

# --- API keys (the SHA-256 hash and the 12-character prefix, never the key: docs/security.md) -------

api_keys = Table(
    "api_keys",
    metadata,
    serial_id(),
    owner_id(),
    Column("team_id", Integer, nullable=False),
    Column("kind", String(10), nullable=False),
    Column("prefix", String(12), nullable=False),
    Column("hash", String(64), nullable=False, unique=True),
    Column("machine", String(255), nullable=False),
    Column("agents", JSON, nullable=False),  # sorted list of agent names
    Column("label", Text, nullable=False),
    created_at(),
    Column("last_used_at", UtcDateTime, nullable=True),
    Column("revoked_at", UtcDateTime, nullable=True),
    Column("status", String(10), nullable=False),
    version(),
)

# --- registered sites, fix tasks, rechecks -------------------------------------------------------------

sites = Table(
    "sites",
    metadata,
    serial_id(),
    Column("team_id", Integer, nullable=False),
    Column("url", Text, nullable=False),
    Column("host", String(300), nullable=False),
    Column("origin", String(300), nullable=False),
    created_at(),
    Column("verify_token", String(128), nullable=False),
    Column("crawler_secret_ref", Text, nullable=False),
    Column("status", String(12), nullable=False),
    Column("verified_at", UtcDateTime, nullable=True),
    Column("verified_via", String(10), nullable=True),
    Column("checked_at", UtcDateTime, nullable=True),
    Column("lost_at", UtcDateTime, nullable=True),
    Column("monitoring", String(10), nullable=False),
    Column("next_crawl_at", UtcDateTime, nullable=True, index=True),
    Column("last_dispatched_at", UtcDateTime, nullable=True),
    Column("last_skip_reason", Text, nullable=True),
    Column("max_pages", Integer, nullable=False),
    Column("max_rps", Float, nullable=False),
    Column("alert_email", Boolean, nullable=False),
    version(),
    Column("render", Boolean, nullable=False, server_default=false()),  # 0018: docs/rendering.md
    Column("scope", JSON, nullable=True),  # 0022: its audits' scope rules (docs/audits.md); NULL: none
    Column("extract", JSON, nullable=True),  # 0022: its audits' extraction rules; NULL: none
    UniqueConstraint("team_id", "origin"),
)

# One row per scheduled audit whose alert mail went out: a mail is sent once per audit (SITEAUDIT_SMTP_*).
site_alerts = Table(
    "site_alerts",
    metadata,
    Column("audit_id", Integer, primary_key=True, autoincrement=False),
    Column("site_id", Integer, nullable=False),
    created_at(),
)

# Tasks and rechecks refer to their site without a foreign key, like audits: the memory store keeps
# them when a site goes, and so does this one.
fix_tasks = Table(
    "fix_tasks",
    metadata,
    Column("site_id", Integer, nullable=False),
    Column("key", String(16), nullable=False),
    Column("code", String(100), nullable=False),
    Column("template", Text, nullable=False),
    Column("severity", String(10), nullable=False),
    Column("pages", Integer, nullable=False),
    Column("crawl_id", Integer, nullable=False),
    created_at(),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("sample_urls", JSON, nullable=False),
    Column("clicks_28d", Integer, nullable=True),
    Column("impressions_28d", Integer, nullable=True),
    Column("status", String(12), nullable=False),
    Column("status_before_verifying", String(12), nullable=True),
    Column("recheck_id", Integer, nullable=True),
    Column("fixed_at", UtcDateTime, nullable=True),
    version(),
    Column("fixed_by", String(10), nullable=True),  # `recheck` or `audit` while fixed
    Column("previous_template", Text, nullable=True),  # 0017: before an audit regrouped the task's URLs
    PrimaryKeyConstraint("site_id", "key"),
)

rechecks = Table(
    "rechecks",
    metadata,
    serial_id(),
    Column("site_id", Integer, nullable=False, index=True),
    Column("team_id", Integer, nullable=False),
    Column("parent_crawl_id", Integer, nullable=False),
    created_at(),
    Column("task_key", String(16), nullable=True),
    Column("codes", JSON, nullable=True),  # sorted list, or null for every check
    Column("sampled", Boolean, nullable=False),
    Column("duplicate_baseline", Boolean, nullable=False),
    Column("status", String(12), nullable=False, index=True),
    Column("started_at", UtcDateTime, nullable=True),
    Column("finished_at", UtcDateTime, nullable=True),
    Column("time_capped", Boolean, nullable=False),
    Column("failure_reason", Text, nullable=True),
    # The nested values, by the row converter of siteaudit.adapters.sql.recheck.
    Column("urls", JSON, nullable=False),
    Column("targets", JSON, nullable=False),
    Column("observations", JSON, nullable=False),
    Column("url_results", JSON, nullable=True),
    Column("task_results", JSON, nullable=True),
    version(),
    # The worker lease (siteaudit.domain.recheck.Recheck.claim): who runs it, until when, how often taken.
    Column("lease_holder", String(200), nullable=True),
    Column("lease_until", UtcDateTime, nullable=True),
    Column("attempts", Integer, nullable=False, server_default="0"),
)

# --- device logins (the device code is kept as its hash: docs/security.md) -----------------------------

device_logins = Table(
    "device_logins",
    metadata,
    serial_id(),
    Column("device_code_hash", String(64), nullable=False, unique=True),
    Column("user_code", String(8), nullable=False, index=True),
    Column("client_name", String(64), nullable=False),
    Column("requested_ip", String(64), nullable=False),
    created_at(),
    Column("expires_at", UtcDateTime, nullable=False),
    Column("interval_s", Float, nullable=False),
    Column("last_polled_at", UtcDateTime, nullable=True),
    Column("status", String(10), nullable=False),
    Column("approved_by", Integer, nullable=True),
    Column("team_id", Integer, nullable=True),
    version(),
)

# --- the audit-ended webhook (docs/rest-api.md) ----------------------------------------------------------

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    serial_id(),
    Column("audit_id", Integer, ForeignKey("audits.id", ondelete="CASCADE"), nullable=False, unique=True),
    Column("user_id", Integer, nullable=False),
    Column("url", Text, nullable=False),
    Column("body", LargeBinary, nullable=False),  # the very bytes signed and sent
    created_at(),
    Column("status", String(12), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UtcDateTime, nullable=True),
    Column("last_status_code", SmallInteger, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("lease_until", UtcDateTime, nullable=True),
    Column("finished_at", UtcDateTime, nullable=True),
    version(),
    Index(None, "status", "next_attempt_at"),
)

webhook_attempts = Table(
    "webhook_attempts",
    metadata,
    Column("delivery_id", Integer, ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), nullable=False),
    Column("number", SmallInteger, nullable=False),
    Column("audit_id", Integer, nullable=False, index=True),
    Column("at", UtcDateTime, nullable=False),
    Column("status_code", SmallInteger, nullable=True),
    Column("error", Text, nullable=True),
    Column("detail", Text, nullable=True),
    Column("duration_ms", Integer, nullable=False),
    Column("move", String(10), nullable=False),
    PrimaryKeyConstraint("delivery_id", "number"),
)

webhook_secrets = Table(
    "webhook_secrets",
    metadata,
    owner_id(primary_key=True),
    Column("sealed", Text, nullable=False),  # SecretBox token (Fernet): never the secret itself
)

# --- rate limits (docs/security.md): one GCRA theoretical arrival time per bucket
# ------------------------------

rate_buckets = Table(
    "rate_buckets",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("tat", Float(precision=53), nullable=False),  # seconds since the epoch
)

# --- billing: one billing account per person, the checkouts opened, payment events seen ------

billing_accounts = Table(
    "billing_accounts",
    metadata,
    owner_id(primary_key=True),
    Column("provider", String(20), nullable=False),
    Column("customer_id", String(255), nullable=False),
    Column("subscription_id", String(255), nullable=True),
    Column("subscription_status", String(30), nullable=True),
    Column("subscription_as_of", UtcDateTime, nullable=True),
    Column("subscription_choice", String(40), nullable=True),  # plan:tier:interval
    Column("purchased_at", UtcDateTime, nullable=True),
    version(),
    # The latest period a subscription paid for: its months grant the tier's credits.
    Column("paid_subscription_id", String(255), nullable=True),
    Column("paid_choice", String(40), nullable=True),  # plan:tier:interval
    Column("paid_from", UtcDateTime, nullable=True),
    Column("paid_until", UtcDateTime, nullable=True, index=True),
    Column("paid_months", Integer, nullable=False, server_default="0"),
    UniqueConstraint("provider", "customer_id"),
)

checkout_sessions = Table(
    "checkout_sessions",
    metadata,
    Column("id", String(255), primary_key=True),
    Column("provider", String(20), nullable=False),
    owner_id(),
    Column("kind", String(20), nullable=False),
    Column("url", Text, nullable=False),
    created_at(),
    Column("pack", String(10), nullable=True),
    Column("choice", String(40), nullable=True),  # plan:tier:interval
    Column("form_token_hash", String(64), nullable=False),
    Column("completed_at", UtcDateTime, nullable=True),
)

payment_events = Table(
    "payment_events",
    metadata,
    Column("event_id", String(255), primary_key=True),  # provider:event id
    Column("received_at", UtcDateTime, nullable=False),
)


# --- IndexNow --------------------------------------------------------------------------------------------
# Like fix tasks, no foreign key to sites: the memory store keeps these rows when a site goes, and so does
# this one (a site registered again gets a new id and a new key).

indexnow_sites = Table(
    "indexnow_sites",
    metadata,
    Column("site_id", Integer, primary_key=True, autoincrement=False),
    Column("team_id", Integer, nullable=False),
    Column("key", String(128), nullable=False),
    Column("key_source", String(10), nullable=False),
    Column("key_location", Text, nullable=True),
    Column("key_verified_at", UtcDateTime, nullable=True),
    Column("last_check", JSON, nullable=True),
    Column("auto", Boolean, nullable=False),
    Column("auto_since", UtcDateTime, nullable=True),  # 0016: audits ending before it submit nothing
    Column("last_submit_at", UtcDateTime, nullable=True),
    Column("day", Date, nullable=True),  # the UTC day `used` counts
    Column("used", Integer, nullable=False),
    Column("detection", JSON, nullable=True),
    version(),
)

# Every URL counted against a site's daily allowance, by SHA-256 of the URL: counted once a day however
# often it is sent again. Rows of earlier days are deleted as a new day's are written.
indexnow_urls = Table(
    "indexnow_urls",
    metadata,
    Column("site_id", Integer, nullable=False),
    Column("day", Date, nullable=False),
    Column("url_hash", String(64), nullable=False),
    Column("accepted", Boolean, nullable=False),
    PrimaryKeyConstraint("site_id", "day", "url_hash"),
)

indexnow_submissions = Table(
    "indexnow_submissions",
    metadata,
    serial_id(),
    Column("site_id", Integer, nullable=False),
    Column("at", UtcDateTime, nullable=False),
    Column("trigger", String(10), nullable=False),
    Column("urls", Integer, nullable=False),
    Column("submitted", Integer, nullable=False),
    Column("requests", Integer, nullable=False),
    Column("status", String(20), nullable=False),
    Column("status_code", SmallInteger, nullable=True),
    Column("audit_id", Integer, nullable=True),  # the audit behind an automatic submission: one each
    Index(None, "site_id", "at"),
    UniqueConstraint("site_id", "audit_id"),
)

# --- frontier counters, moved in the same transaction as the frontier rows ---------------------

crawl_frontier_counts = Table(
    "crawl_frontier_counts",
    metadata,
    crawl_audit_id(),
    Column("state", SmallInteger, nullable=False),  # a `FrontierState`
    Column("count", Integer, nullable=False),
    PrimaryKeyConstraint("audit_id", "state"),
)

# --- the search-console integration: connections, daily figures, inspections, budget ----------
# Keyed by site or team without foreign keys, like tasks: the rows of a deleted site are removed by the
# site use case through the console store.

console_connections = Table(
    "console_connections",
    metadata,
    Column("team_id", Integer, primary_key=True, autoincrement=False),
    Column("sealed_refresh_token", Text, nullable=False),  # SecretBox token: never the token itself
    Column("account", String(320), nullable=False),
    Column("connected_at", UtcDateTime, nullable=False),
)

console_page_days = Table(
    "console_page_days",
    metadata,
    Column("site_id", Integer, nullable=False),
    Column("day", Date, nullable=False),
    Column("url", Text, nullable=False),
    Column("clicks", Integer, nullable=False),
    Column("impressions", Integer, nullable=False),
    Column("position", Float, nullable=True),
    PrimaryKeyConstraint("site_id", "day", "url"),
)

console_inspections = Table(
    "console_inspections",
    metadata,
    Column("site_id", Integer, nullable=False),
    Column("url", Text, nullable=False),
    Column("inspected_at", UtcDateTime, nullable=False),
    Column("verdict", String(40), nullable=False),
    Column("coverage_state", Text, nullable=False),
    Column("indexing_state", String(60), nullable=True),
    Column("robots_txt_state", String(60), nullable=True),
    Column("page_fetch_state", String(60), nullable=True),
    Column("last_crawled", UtcDateTime, nullable=True),
    Column("google_canonical", Text, nullable=True),
    Column("user_canonical", Text, nullable=True),
    Column("sitemaps", JSON, nullable=False),
    Column("demo", Boolean, nullable=False),
    PrimaryKeyConstraint("site_id", "url"),
)

console_budget = Table(
    "console_budget",
    metadata,
    Column("property", String(2100), nullable=False),
    Column("window", String(40), nullable=False),  # day:2026-11-25 or minute:2026-11-25T16:40
    Column("used", Integer, nullable=False),
    PrimaryKeyConstraint("property", "window"),
)

console_syncs = Table(
    "console_syncs",
    metadata,
    Column("site_id", Integer, primary_key=True, autoincrement=False),
    Column("synced_at", UtcDateTime, nullable=False),
    Column("status", String(20), nullable=False),
    Column("property", String(2100), nullable=True),
    Column("demo", Boolean, nullable=False),
    Column("days", Integer, nullable=False),
    Column("inspected", Integer, nullable=False),
    Column("error", Text, nullable=True),
)

# --- the app's sign-in state (docs/app.md): password hashes, sessions and one-time links by their hash ----

app_passwords = Table(
    "app_passwords",
    metadata,
    owner_id(primary_key=True),
    Column("hash", String(255), nullable=False),  # argon2id, self-describing
    Column("changed_at", UtcDateTime, nullable=False),
)

app_sessions = Table(
    "app_sessions",
    metadata,
    Column("id_hash", String(64), primary_key=True),
    owner_id(),
    Column("team_id", Integer, nullable=True),
    Column("csrf", String(64), nullable=False),
    created_at(),
    Column("last_seen_at", UtcDateTime, nullable=False),
    Column("authenticated_at", UtcDateTime, nullable=False),
)

app_links = Table(
    "app_links",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    owner_id(),
    Column("purpose", String(10), nullable=False),
    created_at(),
    Column("expires_at", UtcDateTime, nullable=False),
    Column("used_at", UtcDateTime, nullable=True),
)

# Fix-impact events: one row per task fixed, measured by the scheduler.
fix_impacts = Table(
    "fix_impacts",
    metadata,
    serial_id(),
    Column("site_id", Integer, nullable=False, index=True),
    Column("task_key", String(16), nullable=False),
    Column("code", String(100), nullable=False),
    Column("template", Text, nullable=False),
    Column("source_crawl_id", Integer, nullable=False),
    Column("verified_at", UtcDateTime, nullable=False),
    Column("recheck_id", Integer, nullable=True),
    Column("sampled", Boolean, nullable=False),
    Column("urls", JSON, nullable=True),  # null until the measuring pass read the task's URLs
    Column("baseline_clicks_28d", Integer, nullable=True),
    Column("baseline_impressions_28d", Integer, nullable=True),
    Column("d7", Integer, nullable=True),
    Column("d7_at", UtcDateTime, nullable=True),
    Column("d14", Integer, nullable=True),
    Column("d14_at", UtcDateTime, nullable=True),
    Column("d28", Integer, nullable=True),
    Column("d28_at", UtcDateTime, nullable=True),
    Column("d28_impressions", Integer, nullable=True),
    Column("measured_at", UtcDateTime, nullable=True),
    Column("checked_at", UtcDateTime, nullable=True),
    Column("status", String(10), nullable=False, index=True),
    Column("demo", Boolean, nullable=False),
)

# Sites' staging access (docs/security.md "Staging access"): the values only sealed, in the clear which kinds
# are set and when. Deleting the site deletes it.
site_access = Table(
    "site_access",
    metadata,
    Column(
        "site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    ),
    Column("team_id", Integer, nullable=False),
    Column("sealed", Text, nullable=False),
    Column("kinds", String(40), nullable=False),  # comma-separated: basic_auth, headers, cookies
    Column("headers", Integer, nullable=False),
    Column("cookies", Integer, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)
