"""Settings come from SITEAUDIT_* environment variables, each with the default docs/configuration.md
documents."""

import re
from pathlib import Path

import attrs

from siteaudit.settings import Settings

CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
# Settings whose empty value stands for a default computed from the others (the page says which).
COMPUTED_DEFAULTS = {"DATABASE_URL", "PUBLIC_URL", "PAYMENT_PROVIDER", "CONSOLE_DEMO"}


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


def configuration_table() -> dict[str, str]:
    """The service settings table of docs/configuration.md: variable (without SITEAUDIT_) to its default column."""
    service = CONFIGURATION.read_text().split("## Service settings", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `SITEAUDIT_([A-Z_]+)` \| ([^|]*) \|", service, flags=re.MULTILINE)
    return {name: default.strip() for name, default in rows}


def written(value: object) -> str:
    """A default as the page writes it: `true`/`false`, whole numbers without `.0`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_the_configuration_page_documents_every_setting() -> None:
    fields = {attribute.name.upper() for attribute in attrs.fields(Settings)}
    documented = set(configuration_table())
    assert fields <= documented, fields - documented
    assert documented <= fields, documented - fields


def test_the_configuration_page_gives_every_default_as_the_code_has_it() -> None:
    table = configuration_table()
    defaults = Settings(database_url="memory://")
    for attribute in attrs.fields(Settings):
        name = attribute.name.upper()
        value = getattr(defaults, attribute.name)
        if name in COMPUTED_DEFAULTS:
            continue
        if value in ("", (), None):
            assert table[name].startswith(("empty", "(none)", "unset", "(system)")), (name, table[name])
        else:
            assert table[name] == f"`{written(value)}`", (name, table[name], value)


def test_chromiums_sandbox_is_on_unless_the_process_runs_as_root_or_the_setting_says() -> None:
    import os

    assert Settings(database_url="memory://").chromium_sandbox is (os.geteuid() != 0)
    assert Settings.from_env({"SITEAUDIT_RENDER_SANDBOX": "true"}).chromium_sandbox is True
    assert Settings.from_env({"SITEAUDIT_RENDER_SANDBOX": "off"}).chromium_sandbox is False
