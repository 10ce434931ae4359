"""Import a dataset of questions and answers about documents: all of it, or nothing.

Accepted: a folder with ``documents/`` and ``qa.jsonl``, or a ``.csv`` / ``.xlsx`` file with the same
columns (documents looked up in a ``documents/`` folder beside it, or beside it). Re-importing is
idempotent by answer id.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app import limits
from app.errors import InvalidInput, file_problem
from app.ingest.documents import PARSER_VERSION, PageProgress, ParsedDocument, parse_document
from storage import answers, audit
from storage.documents import add_document, document_by_name

REQUIRED = ("id", "document", "question", "answer")
GOLD = ("gold_answer", "gold_required", "gold_helpful", "gold_spans")
# An LLM answer is a few paragraphs; a field far longer than these is a broken export, and would
# make the review pane unusable, so it is refused with its line rather than imported.
MAX_CHARS = {"id": 200, "document": 1_000, "question": 20_000}
MAX_TEXT_CHARS = 200_000  # answers and gold answers


@dataclass(frozen=True)
class DatasetRow:
    place: str  # "qa.jsonl line 7", "answers.xlsx row 3": where to point the user
    id: str
    document: str
    question: str
    answer: str
    generator: str | None
    gold_answer: str | None
    gold_required: str | None
    gold_helpful: str | None
    gold_spans: list[dict[str, Any]] | None
    meta: dict[str, Any]


@dataclass
class ImportSummary:
    documents_added: int = 0
    answers_added: int = 0
    answers_updated: int = 0
    answers_unchanged: int = 0
    warnings: list[str] = field(default_factory=list)


def import_dataset(
    sessions: sessionmaker[Session],
    path: Path,
    actor: str = "import",
    passwords: Mapping[str, str] | None = None,
    on_progress: Callable[[PageProgress], None] | None = None,
) -> ImportSummary:
    """Validate the whole dataset first, then write it in one transaction. `passwords` opens
    encrypted PDFs by file name (one without its password raises PasswordRequired naming it);
    `on_progress` hears each page read (a scan's OCR takes seconds a page)."""
    rows, documents_dir = read_dataset(path)
    documents = _parse_documents(rows, documents_dir, passwords or {}, on_progress)
    summary = ImportSummary()
    with sessions.begin() as session:
        document_ids = {name: _store_document(session, doc, actor, summary) for name, doc in documents.items()}
        position = answers.last_answer_position(session)
        for row in rows:
            position += _store_answer(session, row, document_ids[row.document], actor, summary, position + 1)
    return summary


def read_dataset(path: Path) -> tuple[list[DatasetRow], Path]:
    """Rows of a dataset and the folder its documents are in; InvalidInput names the bad line."""
    if path.is_dir():
        qa = path / "qa.jsonl"
        if not qa.is_file():
            raise InvalidInput(str(path), "a dataset folder needs a qa.jsonl file")
        records: Iterator[tuple[str, dict[str, Any]]] = jsonl_objects(qa)
        documents_dir = path / "documents"
    elif path.suffix.lower() == ".jsonl":
        records, documents_dir = jsonl_objects(path), path.parent / "documents"
    elif path.suffix.lower() == ".csv":
        records, documents_dir = _csv_records(path), path.parent / "documents"
    elif path.suffix.lower() == ".xlsx":
        records, documents_dir = _xlsx_records(path), path.parent / "documents"
    elif not path.exists():
        raise InvalidInput(str(path), "no such file or folder")
    else:
        raise InvalidInput(str(path), "expected a folder with qa.jsonl, or a .jsonl, .csv or .xlsx file")
    if not documents_dir.is_dir():
        documents_dir = path if path.is_dir() else path.parent
    rows: list[DatasetRow] = []
    seen: dict[str, str] = {}
    for place, record in records:
        row = _row(place, record)
        if row.id in seen:
            raise InvalidInput(place, f"id {row.id!r} is used twice (first at {seen[row.id]})")
        _check_document_path(place, documents_dir, row.document)
        seen[row.id] = place
        rows.append(row)
    if not rows:
        raise InvalidInput(str(path), "the dataset holds no answers")
    return rows, documents_dir


def _check_document_path(place: str, documents_dir: Path, name: str) -> None:
    """A dataset's document is a file inside its documents folder: an absolute path, a `..` or a link
    that leads out of it would import any file on the disk, so they are refused with the line."""
    if PureWindowsPath(name).anchor or Path(name).is_absolute() or ".." in PureWindowsPath(name).parts:
        raise InvalidInput(place, f"field 'document': {name!r} is not a file name inside {documents_dir}")
    if "\x00" in name:  # no file name holds one; the system refuses it with an exception, not a sentence
        raise InvalidInput(place, f"field 'document': {name[:60]!r} holds a NUL character, which no file name can")
    try:
        there = (documents_dir / name).is_file()
        inside = (documents_dir / name).resolve().is_relative_to(documents_dir.resolve())
    except (OSError, RuntimeError) as exc:  # a name longer than the system allows, a folder it may not enter, a loop
        problem = file_problem(exc) if isinstance(exc, OSError) else "a link that loops"
        raise InvalidInput(place, f"field 'document': not a file it can open ({problem})") from exc
    if not there:
        raise InvalidInput(place, f"field 'document': no file {name!r} in {documents_dir}")
    if not inside:
        raise InvalidInput(place, f"field 'document': {name!r} is a link to a file outside {documents_dir}")


def jsonl_objects(
    path: Path, limit: int = limits.DATASET, what: str = "a JSONL file"
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(place, object) for each non-empty line; InvalidInput names the line that is not a JSON object.
    The file is read a line at a time, within `limit` bytes (app/limits.py)."""
    for number, raw in limits.lines(path, limit, what):
        place = f"{path.name} line {number}"
        try:
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(place, f"not UTF-8 text (byte {exc.start + 1} of the line)") from exc
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(place, f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
        except RecursionError as exc:  # thousands of nested brackets
            raise InvalidInput(place, "not valid JSON (nested too deeply)") from exc
        if not isinstance(record, dict):
            raise InvalidInput(place, "expected a JSON object")
        if _ESCAPED_SURROGATE.search(line):
            refuse_lone_surrogates(place, record)
        yield place, record


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # JSON's escape of half a character (an emoji is two)


def refuse_lone_surrogates(place: str, value: Any) -> None:
    """InvalidInput when JSON text held half of a character ("\\ud800" alone): nothing can store,
    print or export it as UTF-8. A pair (an emoji written escaped) is one character, and passes."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            place, "its JSON holds half of a character (a lone \\ud800-\\udfff escape): not text"
        ) from exc


def _check_header(path: Path, header: list[str]) -> None:
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InvalidInput(f"{path.name} header", f"missing column(s) {', '.join(missing)}; found {header}")


def _csv_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    data = limits.read_bounded(path, limits.DATASET, "a CSV dataset")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"{path.name} line {line}", "not UTF-8 text (save the file as UTF-8 CSV)") from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        _check_header(path, list(reader.fieldnames or []))
        for record in reader:
            if None in record:
                raise InvalidInput(f"{path.name} line {reader.line_num}", "more cells than the header has columns")
            yield f"{path.name} line {reader.line_num}", _decode_json_cells(record)
    except csv.Error as exc:
        raise InvalidInput(f"{path.name} line {reader.line_num}", f"not valid CSV ({exc})") from exc


def _xlsx_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    import openpyxl

    limits.check_regular(path, limits.SPREADSHEET, "an .xlsx dataset")
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:
        raise InvalidInput(str(path), f"cannot read this spreadsheet ({exc})") from exc
    sheet = book.worksheets[0]
    cells = sheet.iter_rows(values_only=True)
    header = [str(c).strip() if c is not None else "" for c in next(cells, ())]
    _check_header(path, header)
    for number, values in enumerate(cells, start=2):
        if all(v is None for v in values):
            continue
        record = {name: value for name, value in zip(header, values, strict=False) if name}
        yield f"{path.name} row {number}", _decode_json_cells(record)
    book.close()


def _decode_json_cells(record: dict[str, Any]) -> dict[str, Any]:
    """Spreadsheet cells hold text; gold spans are JSON inside a cell, empty cells are absent."""
    decoded = {}
    for key, value in record.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if key == "gold_spans" and isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"column {key}", f"not valid JSON ({exc.msg})") from exc
        decoded[key] = value
    return decoded


def _text_field(place: str, record: dict[str, Any], name: str, *, required: bool) -> str | None:
    value = record.get(name)
    if value is None or value == "":
        if required:
            raise InvalidInput(place, f"field {name!r} is missing or empty")
        return None
    if isinstance(value, list) and name in ("gold_required", "gold_helpful"):
        if not all(isinstance(v, str) for v in value):
            raise InvalidInput(place, f"field {name!r} must be text or a list of texts")
        return "\n".join(value)  # DeCE lists one piece of information a line
    if isinstance(value, int | float) and not isinstance(value, bool) and name in ("id", "gold_answer"):
        return str(value)
    if not isinstance(value, str):
        raise InvalidInput(place, f"field {name!r} must be text, not {type(value).__name__}")
    limit = MAX_CHARS.get(name, MAX_TEXT_CHARS)
    if len(value) > limit:
        raise InvalidInput(place, f"field {name!r} has {len(value):,} characters; at most {limit:,} are taken")
    return value


def _valid_spans(spans: object) -> bool:
    return isinstance(spans, list) and all(
        isinstance(s, dict)
        and isinstance(s.get("start"), int)
        and isinstance(s.get("end"), int)
        and 0 <= s["start"] <= s["end"]
        for s in spans
    )


def _row(place: str, record: dict[str, Any]) -> DatasetRow:
    texts = {name: _text_field(place, record, name, required=name in REQUIRED) for name in REQUIRED}
    gold = {name: _text_field(place, record, name, required=False) for name in GOLD[:3]}
    spans = record.get("gold_spans")
    if spans is not None and not _valid_spans(spans):
        raise InvalidInput(place, "field 'gold_spans' must be a list of {start, end} with 0 <= start <= end")
    generator = record.get("generator") or record.get("model")
    known = {*REQUIRED, *GOLD, "generator", "model"}
    return DatasetRow(
        place=place,
        id=str(texts["id"]),
        document=str(texts["document"]),
        question=str(texts["question"]),
        answer=str(texts["answer"]),
        generator=str(generator) if generator else None,
        gold_spans=spans,
        meta={k: v for k, v in record.items() if k not in known},
        **gold,
    )


def _parse_documents(
    rows: list[DatasetRow],
    documents_dir: Path,
    passwords: Mapping[str, str],
    on_progress: Callable[[PageProgress], None] | None = None,
) -> dict[str, ParsedDocument]:
    documents = {
        name: parse_document(documents_dir / name, passwords.get(Path(name).name), on_progress)
        for name in dict.fromkeys(r.document for r in rows)
    }
    for row in rows:
        text = documents[row.document].text
        for span in row.gold_spans or ():
            if span["end"] > len(text):
                raise InvalidInput(row.place, f"gold span {span['start']}-{span['end']} is past the document's end")
            if "text" in span and text[span["start"] : span["end"]] != span["text"]:
                raise InvalidInput(row.place, f"gold span {span['start']}-{span['end']} does not match its text")
    return documents


def _store_document(session: Session, parsed: ParsedDocument, actor: str, summary: ImportSummary) -> int:
    existing = document_by_name(session, parsed.name)
    if existing is not None:
        if existing.sha256 != parsed.sha256:
            # Citation ids must keep pointing at the same words, so a document never changes in place.
            raise InvalidInput(parsed.name, "differs from the document of that name already in the project")
        return existing.id
    document_id = add_document(
        session,
        name=parsed.name,
        format=parsed.format,
        sha256=parsed.sha256,
        parser_version=PARSER_VERSION,
        text=parsed.text,
        passages=[{**asdict(p), "kind": p.kind.value} for p in parsed.passages],
    )
    audit.append_audit(
        session,
        actor,
        "document.imported",
        "document",
        str(document_id),
        {"name": parsed.name, "sha256": parsed.sha256},
    )
    summary.documents_added += 1
    return document_id


def _store_answer(
    session: Session, row: DatasetRow, document_id: int, actor: str, summary: ImportSummary, position: int
) -> int:
    """Add or update one answer; 1 when it is new (it takes `position`, its place in dataset order)."""
    question_id = answers.question_id(session, document_id, row.question)
    values = {
        "question_id": question_id,
        "text": row.answer,
        "generator": row.generator,
        "gold_answer": row.gold_answer,
        "gold_required": row.gold_required,
        "gold_helpful": row.gold_helpful,
        "gold_spans": row.gold_spans,
        "meta": row.meta,
    }
    existing = answers.answer_fields(session, row.id, values)
    if existing is None:
        answers.add_answer(session, row.id, position, values)
        audit.append_audit(session, actor, "answer.imported", "answer", row.id, {"place": row.place})
        summary.answers_added += 1
        return 1
    changed = {k: v for k, v in values.items() if existing[k] != v}
    if not changed:
        summary.answers_unchanged += 1
        return 0
    if "text" in changed and answers.has_data_points(session, row.id):
        raise InvalidInput(row.place, f"answer {row.id!r} has review data, so its text cannot change on re-import")
    answers.update_answer(session, row.id, changed)
    audit.append_audit(session, actor, "answer.updated", "answer", row.id, {"fields": sorted(changed)})
    summary.answers_updated += 1
    return 0
