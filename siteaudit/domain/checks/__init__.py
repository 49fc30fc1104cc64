"""The checks of the catalogue: `check_page` per fetched URL, `check_site` once per audit at finalisation."""

from siteaudit.domain.checks.page import PageContext, check_page
from siteaudit.domain.checks.site import AuditFacts, check_site, supersede

__all__ = ["AuditFacts", "PageContext", "check_page", "check_site", "supersede"]
