"""A recheck of a site with staging access sends it to the site's origin, as its audits do (docs/security.md
"Staging access"); an access that no longer opens under the configured keys is not sent, and the line
logged about it holds no value."""

import logging

import pytest

from siteaudit.adapters.secretbox import SecretBox
from siteaudit.domain.access import StoredAccess
from siteaudit.domain.ids import RecheckId
from siteaudit.domain.recheck import RecheckStatus
from siteaudit.services.access.usecases import SetSiteAccess
from siteaudit.services.tasks.usecases import GetRecheck, RequestRecheck
from tests.unit.application.test_application_doors import owner
from tests.unit.tasks.shop import Shop, drain, shop_app, verified_site

COOKIE = "gate=recheck-cookie-3e8a"


def test_a_recheck_sends_the_sites_access_and_an_unopenable_one_is_left_out(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    app = shop_app()
    caller = owner(app)
    site = verified_site(app, shop, caller)
    app.application.handle(SetSiteAccess(site.id, cookies=(COOKIE,)), caller)

    accepted = app.application.handle(RequestRecheck(site.id, urls=(shop.url("/"),)), caller)
    assert drain(app) == ["run_recheck"]
    done = app.application.handle(GetRecheck(RecheckId(accepted.recheck_id)), caller)
    assert done.status is RecheckStatus.DONE
    sent = [request.headers.get("Cookie") for request, _ in shop.server.log]
    assert sent and set(sent) == {COOKIE}

    # Sealed under a key this deployment does not hold (the key changed, the old one not configured).
    with app.uow() as uow:
        stored = uow.site_access.get(site.id)
        assert stored is not None
        other = SecretBox(SecretBox.generate_key()).seal('{"basic_user": null}')
        uow.site_access.put(
            StoredAccess(site.id, stored.team_id, other, stored.kinds, 0, 1, stored.updated_at)
        )
        uow.commit()
    shop.server.clear_log()
    caplog.set_level(logging.DEBUG)
    again = app.application.handle(RequestRecheck(site.id, urls=(shop.url("/"),)), caller)
    assert drain(app) == ["run_recheck"]
    assert (
        app.application.handle(GetRecheck(RecheckId(again.recheck_id)), caller).status is RecheckStatus.DONE
    )
    assert shop.server.log and all(request.headers.get("Cookie") is None for request, _ in shop.server.log)
    assert "staging access does not open" in caplog.text
    assert "recheck-cookie" not in caplog.text
