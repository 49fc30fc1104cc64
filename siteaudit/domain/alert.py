"""The monitoring alert mail: a scheduled audit of a site that ended worse than the one before."""

from collections.abc import Mapping
from types import MappingProxyType

from attrs import frozen

from siteaudit.domain.audit import Audit, AuditStatus, AuditTrigger
from siteaudit.domain.ids import AuditId, SiteId
from siteaudit.domain.issue import Severity
from siteaudit.domain.report import Report
from siteaudit.domain.template import infer_templates


@frozen
class SiteAlert:
    """What the team owner is told: the score change and the new errors, by URL template then check,
    with sample URLs, and a link to the report."""

    site_id: SiteId
    site_url: str
    audit_id: AuditId
    score_before: int | None
    score_after: int | None  # None: the audit audited no HTML page (`coverage`, `docs/scoring.md`)
    new_errors: int
    samples: Mapping[str, Mapping[str, tuple[str, ...]]]  # template -> check code -> sample URLs
    link: str
    coverage: str = ""  # the report's coverage warning message when there is no score

    @property
    def subject(self) -> str:
        change = []
        if self.score_after is None:
            change.append("no health score (no HTML page could be audited)")
        elif self.score_before is not None and self.score_after < self.score_before:
            change.append(f"health {self.score_before} -> {self.score_after}")
        if self.new_errors:
            change.append(f"{self.new_errors} new error{'s' if self.new_errors != 1 else ''}")
        return f"siteaudit: {self.site_url}: {', '.join(change)}"

    @property
    def text(self) -> str:
        lines = [
            f"The scheduled audit {self.audit_id} of {self.site_url} ended worse than the one before.",
            "",
        ]
        if self.score_after is None:
            lines.append("Health score: none, no HTML page could be audited.")
            if self.coverage:
                lines.append(self.coverage)
        elif self.score_before is not None:
            lines.append(f"Health score: {self.score_before} -> {self.score_after}")
        else:
            lines.append(f"Health score: {self.score_after}")
        lines.append(f"New errors: {self.new_errors}")
        for template, checks in self.samples.items():
            lines += ["", f"Pages like {template}:"]
            for check, urls in checks.items():
                lines.append(f"  {check}:")
                lines += [f"    {url}" for url in urls]
        lines += [
            "",
            f"The report: {self.link}",
            "",
            "Turn these mails off with PATCH /v1/sites/{id} alert_email false.",
        ]
        return "\n".join(lines).replace("{id}", str(self.site_id)) + "\n"


def site_alert(
    audit: Audit, report: Report, *, site_url: str, alert_email: bool, public_url: str
) -> SiteAlert | None:
    """The alert for a done scheduled audit with a lower health score or new errors than the previous
    audit, or None (not scheduled, alerts off, a first audit, nothing worse)."""
    if audit.trigger != AuditTrigger.SCHEDULE or audit.status != AuditStatus.DONE or not alert_email:
        return None
    if audit.site_id is None or report.diff is None:
        return None
    diff = report.diff
    lower = diff.health_delta is not None and diff.health_delta < 0
    if not lower and diff.new_errors <= 0 and report.health_score is not None:
        return None
    errors = [s for s in diff.new_samples if s.severity is Severity.ERROR]
    templates = infer_templates(s.url for s in errors)
    grouped: dict[str, dict[str, list[str]]] = {}
    for sample in errors:
        grouped.setdefault(templates.template_of(sample.url), {}).setdefault(sample.check_code, []).append(
            sample.url
        )
    after = report.health_score
    before = after - diff.health_delta if after is not None and diff.health_delta is not None else None
    return SiteAlert(
        site_id=audit.site_id,
        site_url=site_url,
        audit_id=audit.id,
        score_before=before,
        score_after=after,
        new_errors=diff.new_errors,
        samples=MappingProxyType(
            {t: MappingProxyType({c: tuple(u) for c, u in checks.items()}) for t, checks in grouped.items()}
        ),
        link=f"{public_url.rstrip('/')}/app/audits/{audit.id}",
        coverage="" if report.coverage_warning is None else report.coverage_warning.message,
    )
