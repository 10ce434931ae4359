"""Importing a dataset is all or nothing, idempotent by id, and names the line that is wrong."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from app.cli import main
from app.errors import InvalidInput
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project


def _info(project_file: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    assert main(["--project", str(project_file), "info", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_sample_imports_once_whatever_the_number_of_runs(tmp_path: Path, capsys) -> None:
    project_file = tmp_path / "p.assay"
    assert main(["--project", str(project_file), "import", str(SAMPLE_DATASET)]) == 0
    capsys.readouterr()
    first = _info(project_file, capsys)
    assert first["documents"] == 12 and first["answers"] == 153
    assert first["questions"] >= 100 and first["passages"] > 1000
    assert first["data_points"] == first["labels"] == first["raters"] == 0
    assert main(["--project", str(project_file), "import", str(SAMPLE_DATASET)]) == 0
    assert "0 new documents, 0 new answers, 0 updated, 153 unchanged" in capsys.readouterr().out
    assert _info(project_file, capsys) == first


def test_broken_line_is_named_and_nothing_is_written(dataset_copy: Path, tmp_path: Path, capsys) -> None:
    qa = dataset_copy / "qa.jsonl"
    lines = qa.read_text().splitlines()
    lines[6] = lines[6][: len(lines[6]) // 2]  # line 7 cut in the middle
    qa.write_text("\n".join(lines) + "\n")
    project_file = tmp_path / "p.assay"
    assert main(["--project", str(project_file), "init"]) == 0  # only init and import make a project
    capsys.readouterr()
    before = _info(project_file, capsys)

    assert main(["--project", str(project_file), "import", str(dataset_copy)]) == 2
    error = capsys.readouterr().err
    assert "qa.jsonl line 7" in error and "not valid JSON" in error
    assert _info(project_file, capsys) == before


def test_later_bad_row_leaves_an_earlier_import_untouched(sample_project: Project, dataset_copy: Path) -> None:
    before = sample_project.counts()
    qa = dataset_copy / "qa.jsonl"
    rows = [json.loads(line) for line in qa.read_text().splitlines()]
    rows.append({**rows[0], "id": "new-1", "answer": "A new answer."})
    rows.append({**rows[0], "id": "new-2", "document": "missing.txt"})
    qa.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InvalidInput, match=r"qa\.jsonl line 155: field 'document': no file 'missing\.txt'"):
        import_dataset(sample_project.sessions, dataset_copy)
    assert sample_project.counts() == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("answer"), r"line 3: field 'answer' is missing or empty"),
        (lambda r: r.update(question=42), r"line 3: field 'question' must be text"),
        (lambda r: r.update(id="cuad-000"), r"line 3: id 'cuad-000' is used twice \(first at qa\.jsonl line 1\)"),
        (lambda r: r.update(gold_spans=[{"start": 5}]), r"line 3: field 'gold_spans' must be a list"),
        (lambda r: r.update(gold_spans=[{"start": 0, "end": 4, "text": "nope"}]), r"line 3: gold span 0-4 does not"),
    ],
)
def test_each_kind_of_bad_row_is_refused(dataset_copy: Path, project: Project, change, message: str) -> None:
    qa = dataset_copy / "qa.jsonl"
    rows = [json.loads(line) for line in qa.read_text().splitlines()]
    change(rows[2])
    qa.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InvalidInput, match=message):
        import_dataset(project.sessions, dataset_copy)
    assert project.counts()["answers"] == 0


def _sample_rows(n: int) -> list[dict]:
    rows = [json.loads(line) for line in (SAMPLE_DATASET / "qa.jsonl").read_text().splitlines()]
    keep = ("id", "document", "question", "answer", "source", "gold_answer")
    return [{k: r[k] for k in keep} for r in rows if r["document"].startswith("DoiT")][:n]


def test_csv_and_xlsx_import_the_same_columns(dataset_copy: Path, project: Project) -> None:
    import openpyxl

    rows = _sample_rows(4)
    with (dataset_copy / "answers.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows[:2])
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(list(rows[0]))
    for row in rows[2:]:
        sheet.append([row[k] for k in rows[0]])
    book.save(dataset_copy / "answers.xlsx")

    import_dataset(project.sessions, dataset_copy / "answers.csv")
    import_dataset(project.sessions, dataset_copy / "answers.xlsx")
    answers = {a.id: a for a in project.answers()}
    assert sorted(answers) == sorted(r["id"] for r in rows)
    assert {a.source for a in answers.values()} == {"contractnli"}  # extra columns become metadata
    assert project.counts()["documents"] == 1


def test_csv_with_a_wrong_header_names_the_missing_column(dataset_copy: Path, project: Project) -> None:
    (dataset_copy / "bad.csv").write_text("id,doc,question,answer\nx,DoiT-ICN-NonDisclosure-Agreement.txt,q,a\n")
    with pytest.raises(InvalidInput, match=r"bad\.csv header: missing column\(s\) document"):
        import_dataset(project.sessions, dataset_copy / "bad.csv")


def test_a_document_never_changes_under_its_citations(dataset_copy: Path, sample_project: Project) -> None:
    document = dataset_copy / "documents" / "Keep.txt"
    document.write_text(document.read_text().replace("Privacy Policy", "Privacy Notice", 1))
    with pytest.raises(InvalidInput, match=r"Keep\.txt: differs from the document of that name"):
        import_dataset(sample_project.sessions, dataset_copy)


def test_reimport_updates_changed_gold_and_keeps_the_rest(dataset_copy: Path, sample_project: Project) -> None:
    qa = dataset_copy / "qa.jsonl"
    rows = [json.loads(line) for line in qa.read_text().splitlines()]
    rows[0]["gold_answer"] = "12/31/2015"
    qa.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = import_dataset(sample_project.sessions, dataset_copy)
    assert (summary.answers_updated, summary.answers_unchanged, summary.answers_added) == (1, 152, 0)
    assert sample_project.answer(rows[0]["id"]).gold_answer == "12/31/2015"


def test_installed_assay_command_runs(tmp_path: Path) -> None:
    """The console script a user types, not just the function behind it."""
    import subprocess
    import sys

    assay = Path(sys.executable).with_name("assay")
    made = subprocess.run([str(assay), "--project", str(tmp_path / "p.assay"), "init"], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    result = subprocess.run(
        [str(assay), "--project", str(tmp_path / "p.assay"), "info", "--json"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answers"] == 0
