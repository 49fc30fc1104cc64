"""The per-target-host limit's terms: the default rate, the operator's overrides, the burst."""

import pytest

from siteaudit.domain.hostlimit import BUCKET_PREFIX, HostLimits, HostRate, bucket_key, parse_host_limits
from siteaudit.settings import Settings


def test_every_host_gets_the_default_rate_and_chosen_hosts_their_own() -> None:
    limits = HostLimits(10.0, 5, (("Shop.Example.", 2.0), ("partner.example", 40.0)))
    assert limits.rate_of("retro-clock.example") == 10.0
    assert limits.rate_of("shop.example") == 2.0  # names compared in lower case, without the root dot
    assert limits.rate_of("SHOP.example.") == 2.0
    assert limits.rate_of("www.shop.example") == 10.0  # exact names only
    assert limits.bucket_of("retro-clock.example") == HostRate(5, 0.5)  # 5 at once, then one per 0.1 s
    assert limits.bucket_of("partner.example") == HostRate(5, 5 / 40)
    assert limits.bucket_of("shop.example") == HostRate(2, 1.0)  # never more than a second's worth


def test_a_host_slower_than_one_request_a_second_gets_one_at_a_time() -> None:
    assert HostLimits(0.5, 5).bucket_of("slow.example") == HostRate(1, 2.0)


@pytest.mark.parametrize(
    "terms",
    [
        {"requests_per_s": 0.0},
        {"burst": 0},
        {"overrides": (("shop.example", 0.0),)},
        {"overrides": (("", 3.0),)},
    ],
)
def test_limits_that_would_stop_a_host_for_good_are_refused(terms: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        HostLimits(**terms)  # type: ignore[arg-type]


def test_the_setting_names_hosts_and_rates() -> None:
    assert parse_host_limits("shop.example=2, partner.example=40.5;") == (
        ("shop.example", 2.0),
        ("partner.example", 40.5),
    )
    assert parse_host_limits("") == ()
    for bad in ("shop.example", "shop.example=", "shop.example=fast", "=3", "shop.example=0", "a=inf"):
        with pytest.raises(ValueError, match="SITEAUDIT_HOST_LIMITS"):
            parse_host_limits(bad)


def test_the_settings_carry_the_terms() -> None:
    settings = Settings.from_env(
        {"SITEAUDIT_HOST_RPS": "4", "SITEAUDIT_HOST_BURST": "2", "SITEAUDIT_HOST_LIMITS": "shop.example=1"}
    )
    assert settings.host_limits_terms == HostLimits(4.0, 2, (("shop.example", 1.0),))
    assert Settings.from_env({}).host_limits_terms == HostLimits(10.0, 5, ())


def test_bucket_keys_fit_the_key_column() -> None:
    assert bucket_key("Retro-Clock.example.") == f"{BUCKET_PREFIX}retro-clock.example"
    long = "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "example"
    assert len(bucket_key(long)) <= 200 and bucket_key(long).startswith(BUCKET_PREFIX)
    assert bucket_key(long) != bucket_key(long.replace("a", "d"))
