"""What the report's tests share: the sections in order, the reviewer's words, a project rendered as
HTML and PDF, and the command line's figures to compare with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.cli import main
from app.export.formats import export
from app.project import Project
from storage.db import url_for_path

SECTIONS = [
    "Summary",
    "Contents",
    "Method",
    "Scores",
    "Agreement between raters",
    "How far the judges can be trusted",
    "The answers with errors",
    "Sign-offs",
    "Appendix: full tables",
    "References",
]
REVIEWER = "Ana Lima"
COMMENT = "The NDA says the opposite in its second clause; call Jane Doe at jane.doe@fulucai.com or 403-689-3901."
OMISSION = "The agreement survives for three years after disclosure."


class Rendered:
    """A project's report as HTML and as a PDF, with its pages' text."""

    def __init__(self, file: Path, out: Path, redact: Any = None) -> None:
        import pypdf

        self.url = url_for_path(file)
        project = Project.open(self.url)
        kwargs = {} if redact is None else {"redact": redact}
        self.html = export(project, "report", out / "report.html", **kwargs).read_text(encoding="utf-8")
        self.pdf_path = export(project, "pdf", out / "report.pdf", **kwargs)
        project.close()
        self.pages = [page.extract_text() for page in pypdf.PdfReader(self.pdf_path).pages]
        self.text = "\n".join(self.pages)


def cli_json(url: str, command: str, capsys) -> Any:
    capsys.readouterr()
    assert main(["--db", url, *command.split(), "--json"]) == 0
    return json.loads(capsys.readouterr().out)
