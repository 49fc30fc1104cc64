"""Settings come from SITEAUDIT_* environment variables, each with the default README documents."""

import re
from pathlib import Path

from siteaudit.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_is_read_from_its_environment_variable() -> None:
    settings = Settings.from_env(
        {
            "SITEAUDIT_DATABASE_URL": "memory://",
            "SITEAUDIT_PORT": "9000",
            "SITEAUDIT_ALLOW_NETWORKS": "127.0.0.0/8, 10.0.0.0/8",
            "SITEAUDIT_LOG_JSON": "true",
            "SITEAUDIT_CHECK_EXTERNAL_LINKS": "yes",
            "SITEAUDIT_SLICE_SECONDS": "30.5",
            "SITEAUDIT_CA_BUNDLE": "/etc/siteaudit/extra-authorities.pem",
            "SITEAUDIT_METRICS": "off",
        }
    )
    assert settings.database_url == "memory://"
    assert settings.port == 9000
    assert settings.allow_networks == ("127.0.0.0/8", "10.0.0.0/8")
    assert settings.log_json is True
    assert settings.check_external_links is True
    assert settings.slice_seconds == 30.5
    assert settings.ca_bundle == "/etc/siteaudit/extra-authorities.pem"
    assert settings.metrics is False
    assert Settings.from_env({}).ca_bundle == ""  # the default authorities only
    assert Settings.from_env({}).metrics is True


def test_readme_documents_every_setting() -> None:
    documented = set(re.findall(r"`SITEAUDIT_([A-Z_]+)`", README.read_text()))
    fields = {attribute.name.upper() for attribute in Settings.__attrs_attrs__}
    assert fields <= documented, fields - documented
