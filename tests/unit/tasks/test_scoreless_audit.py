"""An audit without a score (no HTML page audited: the site was down) never proves an issue gone, so it
never marks a fix task fixed (`docs/scoring.md`)."""

from datetime import UTC, datetime

from attrs import evolve

from siteaudit.domain.audit import Audit, AuditStatus
from siteaudit.domain.ids import AuditId, SiteId, TeamId, UserId
from siteaudit.domain.task import proves_absence

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
DONE = Audit(
    id=AuditId(1),
    team_id=TeamId(1),
    user_id=UserId(1),
    payer_id=UserId(1),
    url="https://retro-clock.example/",
    origin="https://retro-clock.example",
    created_at=NOW,
    max_pages=100,
    site_id=SiteId(1),
    status=AuditStatus.DONE,
    health_score=80,
)


def test_a_complete_scored_audit_proves_absence() -> None:
    assert proves_absence(DONE)


def test_an_audit_without_a_score_proves_nothing() -> None:
    assert not proves_absence(evolve(DONE, health_score=None))
