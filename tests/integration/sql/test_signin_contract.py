"""The app's sign-in state on memory, SQLite and PostgreSQL: password hashes, sessions by the hash of
their id, and one-time links used exactly once."""

import threading
from datetime import timedelta

from attrs import evolve
from sql_backend import T0, Backend, people

from siteaudit.domain.signin import AppSession, LinkPurpose, OneTimeLink, SignInTerms, token_hash


def _session(user: int, token: str = "a" * 64) -> AppSession:
    return AppSession(
        id_hash=token_hash(token),
        user_id=user,  # type: ignore[arg-type]
        team_id=None,
        csrf="c" * 64,
        created_at=T0,
        last_seen_at=T0,
        authenticated_at=T0,
    )


def test_a_password_hash_is_set_and_replaced(backend: Backend) -> None:
    owner, member, _ = people(backend)
    with backend.uow() as uow:
        assert uow.signins.password_hash(owner.id) is None
        uow.signins.set_password_hash(owner.id, "$argon2id$first", at=T0)
        uow.commit()
    with backend.uow() as uow:
        uow.signins.set_password_hash(owner.id, "$argon2id$second", at=T0 + timedelta(hours=1))
        uow.commit()
    with backend.uow() as uow:
        assert uow.signins.password_hash(owner.id) == "$argon2id$second"
        assert uow.signins.password_hash(member.id) is None


def test_sessions_are_found_by_hash_updated_and_ended_per_person(backend: Backend) -> None:
    owner, member, team = people(backend)
    with backend.uow() as uow:
        uow.signins.add_session(_session(owner.id, "a" * 64))
        uow.signins.add_session(_session(owner.id, "b" * 64))
        uow.signins.add_session(_session(member.id, "c" * 64))
        uow.commit()
    later = T0 + timedelta(minutes=3)
    with backend.uow() as uow:
        found = uow.signins.session(token_hash("a" * 64))
        assert found == _session(owner.id, "a" * 64)
        uow.signins.save_session(evolve(found, team_id=team.id, last_seen_at=later, authenticated_at=later))
        uow.commit()
    with backend.uow() as uow:
        saved = uow.signins.session(token_hash("a" * 64))
        assert saved is not None and (saved.team_id, saved.last_seen_at) == (team.id, later)
        uow.signins.delete_session(token_hash("b" * 64))
        uow.commit()
    with backend.uow() as uow:
        assert uow.signins.session(token_hash("b" * 64)) is None
        uow.signins.delete_sessions_of(owner.id)
        uow.commit()
    with backend.uow() as uow:
        assert uow.signins.session(token_hash("a" * 64)) is None
        assert uow.signins.session(token_hash("c" * 64)) is not None


def test_a_link_is_used_once_and_never_after_it_expires(backend: Backend) -> None:
    owner, _, _ = people(backend)
    terms = SignInTerms()
    with backend.uow() as uow:
        for token in ("1" * 64, "2" * 64):
            uow.signins.add_link(
                OneTimeLink.issue(token=token, user=owner.id, purpose=LinkPurpose.RESET, now=T0, terms=terms)
            )
        uow.commit()
    with backend.uow() as uow:
        used = uow.signins.use_link(token_hash("1" * 64), T0 + timedelta(minutes=5))
        assert used is not None and used.user_id == owner.id and used.purpose is LinkPurpose.RESET
        uow.commit()
    with backend.uow() as uow:
        assert uow.signins.use_link(token_hash("1" * 64), T0 + timedelta(minutes=6)) is None
        assert uow.signins.use_link(token_hash("2" * 64), T0 + terms.reset_lifetime) is None
        assert uow.signins.use_link(token_hash("9" * 64), T0) is None


def test_of_racing_uses_of_one_link_exactly_one_wins(backend: Backend) -> None:
    owner, _, _ = people(backend)
    with backend.uow() as uow:
        uow.signins.add_link(
            OneTimeLink.issue(
                token="3" * 64, user=owner.id, purpose=LinkPurpose.INVITE, now=T0, terms=SignInTerms()
            )
        )
        uow.commit()
    wins: list[bool] = []
    barrier = threading.Barrier(6)

    def racer() -> None:
        barrier.wait()
        try:
            with backend.uow() as uow:
                won = uow.signins.use_link(token_hash("3" * 64), T0 + timedelta(minutes=1)) is not None
                uow.commit()
        except Exception:
            won = False  # SQLite's single writer may refuse a racer outright: it did not win either
        wins.append(won)

    threads = [threading.Thread(target=racer) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wins.count(True) == 1
