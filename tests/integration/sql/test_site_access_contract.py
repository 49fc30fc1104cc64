"""Staging access storage: the same contract on memory, SQLite and PostgreSQL (round trip, replace, remove,
gone with its site), and on SQL no value of it in a dump of the database (docs/security.md "Staging
access")."""

from datetime import timedelta

from sql_backend import T0, Backend, people
from sqlalchemy import Text, select

from siteaudit.adapters.secretbox import SecretBox
from siteaudit.adapters.sql.tables import metadata
from siteaudit.domain.access import SiteAccess, StoredAccess, access_of
from siteaudit.domain.ids import SiteId, TeamId
from siteaudit.domain.site import Site

PASSWORD = "retro-clock-staging-password-7f3a"
SECRET_BOX = SecretBox(SecretBox.generate_key())


def _site(team: TeamId) -> Site:
    return Site.register(
        site_id=SiteId(0),
        team_id=team,
        url="https://staging.retro-clock.example/",
        verify_token="tok_retro_clock_0123456789",
        crawler_secret_ref="crawler-ref-1",
        plan_page_limit=10_000,
        now=T0,
    )


def _stored(site: Site, access: SiteAccess, *, minutes: int = 0) -> StoredAccess:
    return StoredAccess(
        site_id=site.id,
        team_id=site.team_id,
        sealed=SECRET_BOX.seal(access.as_json()),
        kinds=access.kinds,
        headers=len(access.headers),
        cookies=len(access.cookies),
        updated_at=T0 + timedelta(minutes=minutes),
    )


def test_an_access_reads_back_equal_is_replaced_whole_and_removed(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        assert uow.site_access.get(site.id) is None
        assert uow.site_access.remove(site.id) is False
        first = access_of(
            site.origin,
            basic_auth_user="preview",
            basic_auth_password=PASSWORD,
            headers=["X-Preview-Token: 7f3a"],
            cookies=["gate=open", "lang=en"],
        )
        uow.site_access.put(_stored(site, first))
        uow.commit()
    with backend.uow() as uow:
        stored = uow.site_access.get(site.id)
        assert stored is not None and (stored.site_id, stored.team_id) == (site.id, site.team_id)
        assert stored.kinds == ("basic_auth", "headers", "cookies")
        assert stored is not None and (stored.headers, stored.cookies, stored.updated_at) == (1, 2, T0)
        assert SiteAccess.from_json(site.origin, SECRET_BOX.unseal(stored.sealed)) == first
        second = access_of(
            site.origin, basic_auth_user=None, basic_auth_password=None, headers=None, cookies=["gate=b"]
        )
        uow.site_access.put(_stored(site, second, minutes=5))
        uow.commit()
    with backend.uow() as uow:
        stored = uow.site_access.get(site.id)
        assert stored is not None and stored.kinds == ("cookies",) and stored.headers == 0
        assert SiteAccess.from_json(site.origin, SECRET_BOX.unseal(stored.sealed)) == second
        assert stored.updated_at == T0 + timedelta(minutes=5)
        assert uow.site_access.remove(site.id) is True
        uow.commit()
    with backend.uow() as uow:
        assert uow.site_access.get(site.id) is None


def test_deleting_the_site_deletes_its_access(backend: Backend) -> None:
    _, _, team = people(backend)
    with backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        access = access_of(
            site.origin, basic_auth_user="preview", basic_auth_password=PASSWORD, headers=None, cookies=None
        )
        uow.site_access.put(_stored(site, access))
        uow.commit()
    with backend.uow() as uow:
        uow.sites.delete(site.id, team=team.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.site_access.get(site.id) is None


def test_a_database_dump_holds_no_value_of_an_access(sql_backend: Backend) -> None:
    assert sql_backend.engine is not None
    _, _, team = people(sql_backend)
    with sql_backend.uow() as uow:
        site = uow.sites.add(_site(team.id))
        access = access_of(
            site.origin,
            basic_auth_user="preview-user-4c1d",
            basic_auth_password=PASSWORD,
            headers=["X-Preview-Token: header-value-91be"],
            cookies=["gate=cookie-value-0d2e"],
        )
        uow.site_access.put(_stored(site, access))
        uow.commit()
    values: list[str] = []
    with sql_backend.engine.connect() as conn:
        for table in metadata.sorted_tables:
            columns = [c for c in table.columns if isinstance(c.type, Text) or c.type.python_type is str]
            if columns:
                values.extend(str(v) for row in conn.execute(select(*columns)) for v in row)
    dump = "\n".join(values)
    assert "basic_auth,headers,cookies" in dump  # the dump reads the row
    for secret in (
        "preview-user-4c1d",
        PASSWORD,
        "header-value-91be",
        "cookie-value-0d2e",
        "X-Preview-Token",
    ):
        assert secret not in dump
