"""Users, teams and memberships in SQL, with explicit row conversion."""

from collections.abc import Sequence
from typing import Final

from attrs import evolve
from sqlalchemy import delete, func, insert, select, update

from siteaudit.adapters.sql.dialect import insert_ignoring_conflicts
from siteaudit.adapters.sql.rows import SqlRepository, found, inserted_id, reader, row_values
from siteaudit.adapters.sql.tables import memberships, teams, users
from siteaudit.domain.account import Membership, Role, Team, User
from siteaudit.domain.error import Conflict, NotFound
from siteaudit.domain.ids import TeamId, UserId

user_from_row: Final = reader(User)


team_from_row: Final = reader(Team)


membership_from_row: Final = reader(Membership)


class SqlUserRepository(SqlRepository):
    def add(self, user: User) -> User:
        values = row_values(user, leave_out=("id",))
        taken = Conflict(f"a user with email {user.email} exists")
        return evolve(user, id=UserId(inserted_id(self._c(), users, values, id=user.id, taken=taken)))

    def get(self, user_id: UserId) -> User:
        return user_from_row(found(self._c(), users, users.c.id == user_id, entity="user", key=user_id))

    def by_email(self, email: str) -> User:
        return user_from_row(found(self._c(), users, users.c.email == email, entity="user", key=email))

    def save(self, user: User) -> None:
        result = self._c().execute(
            update(users).where(users.c.id == user.id).values(row_values(user, leave_out=("id",)))
        )
        if result.rowcount == 0:
            raise NotFound("user", user.id)

    def count(self) -> int:
        return int(self._c().execute(select(func.count()).select_from(users)).scalar_one())

    def all(self) -> Sequence[User]:
        return [user_from_row(r) for r in self._c().execute(select(users).order_by(users.c.id))]


class SqlTeamRepository(SqlRepository):
    def add(self, team: Team) -> Team:
        values = row_values(team, leave_out=("id",))
        conn, taken = self._c(), Conflict(f"a team named {team.name!r} exists")
        team = evolve(team, id=TeamId(inserted_id(conn, teams, values, id=team.id, taken=taken)))
        conn.execute(
            insert(memberships).values(team_id=team.id, user_id=team.owner_id, role=Role.OWNER.value)
        )
        return team

    def get(self, team_id: TeamId) -> Team:
        return team_from_row(found(self._c(), teams, teams.c.id == team_id, entity="team", key=team_id))

    def by_name(self, name: str) -> Team:
        return team_from_row(found(self._c(), teams, teams.c.name == name, entity="team", key=name))

    def membership(self, team_id: TeamId, user_id: UserId) -> Membership | None:
        row = (
            self._c()
            .execute(
                select(memberships).where(memberships.c.team_id == team_id, memberships.c.user_id == user_id)
            )
            .one_or_none()
        )
        return None if row is None else membership_from_row(row)

    def add_member(self, membership: Membership) -> None:
        conn = self._c()
        conn.execute(
            insert_ignoring_conflicts(conn, memberships).values(
                team_id=membership.team_id, user_id=membership.user_id, role=membership.role.value
            )
        )

    def remove_member(self, team_id: TeamId, user_id: UserId) -> None:
        self._c().execute(
            delete(memberships).where(memberships.c.team_id == team_id, memberships.c.user_id == user_id)
        )

    def members(self, team_id: TeamId) -> Sequence[Membership]:
        rows = self._c().execute(
            select(memberships).where(memberships.c.team_id == team_id).order_by(memberships.c.user_id)
        )
        return [membership_from_row(r) for r in rows]

    def of_user(self, user_id: UserId) -> Sequence[Team]:
        rows = self._c().execute(
            select(teams)
            .join(memberships, memberships.c.team_id == teams.c.id)
            .where(memberships.c.user_id == user_id)
            .order_by(teams.c.id)
        )
        return [team_from_row(r) for r in rows]

    def all(self) -> Sequence[Team]:
        return [team_from_row(r) for r in self._c().execute(select(teams).order_by(teams.c.id))]
