"""Team members through the application: only the owner invites and removes; the owner cannot leave."""

import pytest

from siteaudit.adapters.memory.queue import MemoryTaskQueue
from siteaudit.bootstrap import App, bootstrap
from siteaudit.domain.account import Caller, Role
from siteaudit.domain.error import DomainError, ErrorCode
from siteaudit.domain.ids import TeamId, UserId
from siteaudit.settings import Settings

OWNER = Caller(UserId(1), TeamId(1))
MEMBER = Caller(UserId(2), TeamId(1))


class SentMail:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    delivers = True

    def send(self, *, to: str, subject: str, text: str) -> None:
        self.sent.append((to, text))


@pytest.fixture
def app() -> tuple[App, SentMail]:
    mail = SentMail()
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue(), mailer=mail)
    app.application.create_user("owner@retro-clock.example")
    app.application.create_user("member@retro-clock.example")
    app.application.create_team("Retro Clock", owner_email="owner@retro-clock.example")
    app.application.add_member("Retro Clock", "member@retro-clock.example")
    return app, mail


def code(error: pytest.ExceptionInfo[DomainError]) -> ErrorCode:
    return error.value.code


def test_members_are_listed_owner_first(app: tuple[App, SentMail]) -> None:
    members = app[0].application.team_members(MEMBER)
    assert [(m.user.email, m.role) for m in members] == [
        ("owner@retro-clock.example", Role.OWNER),
        ("member@retro-clock.example", Role.MEMBER),
    ]


def test_only_the_owner_invites_and_removes(app: tuple[App, SentMail]) -> None:
    application = app[0].application
    with pytest.raises(DomainError) as invited:
        application.invite_member(MEMBER, "friend@retro-clock.example")
    assert code(invited) is ErrorCode.NOT_TEAM_OWNER
    with pytest.raises(DomainError) as removed:
        application.remove_team_member(MEMBER, UserId(1))
    assert code(removed) is ErrorCode.NOT_TEAM_OWNER
    with pytest.raises(DomainError) as leaving:
        application.remove_team_member(OWNER, UserId(1))
    assert code(leaving) is ErrorCode.CONFLICT
    with pytest.raises(DomainError) as stranger:
        application.remove_team_member(OWNER, UserId(99))
    assert code(stranger) is ErrorCode.NOT_FOUND


def test_inviting_someone_known_adds_them_and_says_so_without_a_link(app: tuple[App, SentMail]) -> None:
    application, mail = app[0].application, app[1]
    application.create_user("known@retro-clock.example")
    application.invite_member(OWNER, "Known@Retro-Clock.example")
    assert "known@retro-clock.example" in [m.user.email for m in application.team_members(OWNER)]
    ((to, text),) = mail.sent
    assert to == "known@retro-clock.example" and "token=" not in text and "Retro Clock" in text


def test_inviting_someone_new_makes_their_account_with_a_webhook_secret_and_a_link(
    app: tuple[App, SentMail],
) -> None:
    application, mail = app[0].application, app[1]
    application.invite_member(OWNER, "new@retro-clock.example")
    assert application.webhook_secret("new@retro-clock.example").startswith("whsec_")
    ((to, text),) = mail.sent
    assert to == "new@retro-clock.example" and "/app/password?token=" in text


def test_without_smtp_the_invitation_is_not_claimed_mailed_and_its_link_comes_back() -> None:
    app = bootstrap(Settings(database_url="memory://"), queue=MemoryTaskQueue())  # no SMTP: the log mailer
    app.application.create_user("owner@retro-clock.example")
    app.application.create_team("Retro Clock", owner_email="owner@retro-clock.example")
    invitation = app.application.invite_member(OWNER, "new@retro-clock.example")
    assert not invitation.mailed and invitation.link is not None and "/app/password?token=" in invitation.link
    assert "token" not in repr(invitation)  # the link is not in the logs through a repr
    (owner, new) = app.application.team_members(OWNER)
    assert (owner.pending, new.pending) == (True, True)  # neither has chosen a password yet
    app.application.set_password("new@retro-clock.example", "correct horse battery staple")
    assert [m.pending for m in app.application.team_members(OWNER)] == [True, False]


def test_with_a_mail_server_the_invitation_is_mailed_and_no_link_comes_back(
    app: tuple[App, SentMail],
) -> None:
    invitation = app[0].application.invite_member(OWNER, "new@retro-clock.example")
    assert invitation.mailed and invitation.link is None and len(app[1].sent) == 1
