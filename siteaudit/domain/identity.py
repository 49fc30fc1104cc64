"""How the auditor shows itself to the sites it audits and to webhook receivers: one definition each."""

from typing import Final

USER_AGENT: Final = "siteaudit/0.1 (+https://github.com/siteaudit/siteaudit)"
# Carries an audit's verify token, or a verified site's crawler secret, to the audited origin only, so
# a firewall can let the crawler through.
VERIFY_HEADER: Final = "X-Service-Verify"
