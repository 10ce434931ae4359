"""The windows go through doors (issue 66 §1): no ui/ module holds the project, opens a database session or
runs a use case of app/ itself. The review window takes a Workspace (app/workspace.py) and its panes and
dialogs the ReviewSession it makes; a judge run is app/judging/judge_run.py's, started through the workspace.

Read from the source with ast, as tests/test_import_cycles.py reads imports: nothing is imported or run."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parent.parent / "ui"

FORBIDDEN_MODULES = ("storage", "sqlalchemy")  # the database, below the doors
FORBIDDEN_NAMES = {
    "app.project": {"Project"},  # the open project: the workspace and the sessions hold it
    # the judge run's steps: app/judging/judge_run.py takes them, the window only starts it
    "app.judging.runs": {"run_judge", "make_backend", "device_sentence", "document_state_folder"},
    "app.judging.jury": {"default_jury"},
    "app.judging.model_files": {"record_speed"},
}
SESSION_FACTORIES = {"sessionmaker", "open_project", "Session"}
# `.project` is a door's own attribute (the workspace's, a session's) or Changes' flag that the project
# file was replaced: only `changes.project` may be read in ui/.
PROJECT_FLAG_HOLDERS = {"changes"}


def _problems(path: Path, root: Path = UI) -> list[str]:
    where = path.relative_to(root.parent)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES or alias.name == "app.project":
                    found.append(f"{line} imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"{line} imports from {node.module}")
            for alias in node.names:
                if alias.name in FORBIDDEN_NAMES.get(node.module, ()):
                    found.append(f"{line} imports {alias.name} from {node.module}")
        elif isinstance(node, ast.Attribute):
            if node.attr == "sessions":
                found.append(f"{line} reads .sessions, a session factory")
            elif node.attr in ("project", "_project") and not (
                isinstance(node.value, ast.Name) and node.value.id in PROJECT_FLAG_HOLDERS
            ):
                found.append(f"{line} reads .{node.attr} of {ast.unparse(node.value)}")
        elif isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in SESSION_FACTORIES:
                found.append(f"{line} calls {called}()")
    return found


def test_no_window_holds_the_project_or_a_database_session() -> None:
    modules = sorted(UI.rglob("*.py"))
    assert len(modules) > 30  # the walk found ui/
    problems = [problem for path in modules for problem in _problems(path)]
    assert problems == []


def test_the_walk_catches_each_way_in(tmp_path: Path) -> None:
    """Each way a widget could reach the project is caught (a check that passes everything proves nothing)."""
    sample = tmp_path / "ui" / "leaky.py"
    sample.parent.mkdir()
    sample.write_text(
        "from app.project import Project\n"
        "from sqlalchemy.orm import sessionmaker\n"
        "import storage.db\n"
        "from app.judging.runs import run_judge, JudgeSettings\n"
        "def f(window, changes):\n"
        "    changes.project\n"
        "    with window.session.project.sessions() as db:\n"
        "        sessionmaker()\n",
        encoding="utf-8",
    )
    found = sorted(problem.split(" ", 1)[1] for problem in _problems(sample, sample.parent))
    assert found == [
        "calls sessionmaker()",
        "imports Project from app.project",
        "imports from sqlalchemy.orm",
        "imports run_judge from app.judging.runs",
        "imports storage.db",
        "reads .project of window.session",
        "reads .sessions, a session factory",
    ]
