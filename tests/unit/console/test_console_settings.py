"""The demo console is on in the embedded default and off in production unless a setting says so."""

from siteaudit.settings import Settings


def test_the_demo_follows_the_deployment_unless_set() -> None:
    assert Settings.from_env({}).console.demo is True  # a SQLite file, no broker
    assert Settings.from_env({"SITEAUDIT_DATABASE_URL": "memory://"}).console.demo is True
    production = {"SITEAUDIT_DATABASE_URL": "postgresql+psycopg://db/siteaudit"}
    assert Settings.from_env(production).console.demo is False
    assert Settings.from_env({"SITEAUDIT_BROKER_URL": "amqp://guest:guest@mq:5672/"}).console.demo is False
    assert Settings.from_env({**production, "SITEAUDIT_CONSOLE_DEMO": "true"}).console.demo is True
    assert Settings.from_env({"SITEAUDIT_CONSOLE_DEMO": "off"}).console.demo is False


def test_the_service_account_serves_the_named_teams_only() -> None:
    named = Settings.from_env({"SITEAUDIT_GSC_SERVICE_ACCOUNT_TEAMS": "Retro Clock, Other Shop"}).console
    assert named.service_account_serves("Retro Clock") and named.service_account_serves("Other Shop")
    assert not named.service_account_serves("Third")
    assert Settings.from_env({"SITEAUDIT_GSC_SERVICE_ACCOUNT_TEAMS": "*"}).console.service_account_serves(
        "Any"
    )
    assert not Settings.from_env({}).console.service_account_serves("Retro Clock")
    assert "shh" not in repr(Settings(gsc_client_secret="shh"))
