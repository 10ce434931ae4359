"""Who is who: on a database server the reviewer is the database login, and what a login may write is
the database's to enforce (the roles assay_reviewer, assay_adjudicator and assay_lead, granted in
migration 0018); on a single-user SQLite project the OS user is the default reviewer.

A lead gives a login its role once, in psql: `GRANT assay_adjudicator TO alice;`.
"""

from __future__ import annotations

import getpass

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.project import Project

ROLES = {"reviewer": "assay_reviewer", "adjudicator": "assay_adjudicator", "lead": "assay_lead"}
# What each table's refusal means: the role it takes.
_NEEDS = {"adjudications": "adjudicator", "guideline_versions": "lead", "settings": "lead"}


def _login(project: Project) -> tuple[str, bool] | None:
    """A PostgreSQL project's login (session_user) and whether it is a team member's (it holds one of
    the roles and is no superuser); None for a SQLite project."""
    bind = project.sessions.kw["bind"]
    if bind.dialect.name != "postgresql":
        return None
    with project.sessions() as session:
        login, member = session.execute(
            text(
                "SELECT session_user, NOT r.rolsuper "
                "AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'assay_reviewer') "
                "AND pg_has_role(session_user, 'assay_reviewer', 'MEMBER') "
                "FROM pg_roles r WHERE r.rolname = session_user"
            )
        ).one()
    return str(login), bool(member)


def database_login(project: Project) -> str | None:
    """The login of a team member on a server (one granted a role): who they are, whatever name is
    typed. None on SQLite, and for the database's superuser, who may act for anyone (it could
    rewrite any name anyway) and so names reviewers as a single user does."""
    found = _login(project)
    return found[0] if found is not None and found[1] else None


def default_reviewer(project: Project, typed: str | None = None) -> str:
    """The reviewer acting: a team member's login (whatever name was typed), else the name typed,
    else the login on a server, else the OS user."""
    found = _login(project)
    if found is not None and found[1]:
        return found[0]
    return (typed or "").strip() or (found[0] if found is not None else getpass.getuser())


def roles_of(project: Project) -> list[str]:
    """The team roles ('reviewer', 'adjudicator', 'lead') the login holds, directly or through another."""
    if database_login(project) is None:
        return list(ROLES)  # a single-user project: its user is everything
    with project.sessions() as session:
        return [
            name
            for name, role in ROLES.items()
            if session.execute(
                text(
                    "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :r) "
                    "AND pg_has_role(session_user, :r, 'MEMBER')"
                ),
                {"r": role},
            ).scalar()
        ]


def refusal(exc: BaseException, url: str | None = None) -> str | None:
    """One sentence for a write the database refused for want of a role; None for any other error."""
    from sqlalchemy import make_url

    login = make_url(url).username if url else None
    orig = getattr(exc, "orig", None)
    if not isinstance(exc, DBAPIError) or getattr(orig, "sqlstate", None) != "42501":  # insufficient_privilege
        return None
    message = str(orig).splitlines()[0]
    table = message.rsplit(" ", 1)[-1] if " table " in message else ""
    role = _NEEDS.get(table, "lead")
    who = f"the login {login}" if login else "this login"
    return (
        f"the database refused it: {who} does not have the {role} role ({message}); "
        f"a lead grants it with GRANT {ROLES[role]} TO {login or 'LOGIN'}"
    )
