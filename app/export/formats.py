"""Reviewed sets, shared: CSV, XLSX, JSONL (re-importable with `assay import-labels`), fine-tuning
JSONL, and a self-contained HTML (or PDF) report with plots."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from app.destinations import refuse_protected
from app.errors import AssayError, InvalidInput
from app.export.redaction import keep_everything
from app.figures import analytics as stats
from app.figures.rater_names import VERIFIER, checks_in_words, rater_name, rationale_words
from app.figures.triage import triage as lemaj_triage
from app.project import Project
from app.spreadsheets import texts_as_text, write_csv
from models.prompts import EvidencePassage, Strictness, one_pass_prompt
from storage import analytics, preferences, rubric_results, signoffs

FORMATS = ("csv", "xlsx", "jsonl", "finetune", "report", "pdf")
# The file names each format is written to; a name ending as the format is called (x.report) agrees too.
SUFFIXES = {
    "csv": (".csv",),
    "xlsx": (".xlsx",),
    "jsonl": (".jsonl", ".json", ".ndjson"),
    "finetune": (".jsonl", ".json"),
    "report": (".html", ".htm"),
    "pdf": (".pdf",),
}
KINDS = {"xlsx": "zip", "pdf": "pdf"}  # what each format's file is (app/destinations.py): the others are text
Redact = Callable[[Any], Any]  # a `Redaction`, or keep_everything


def export(
    project: Project,
    fmt: str,
    out: Path,
    redact: Redact = keep_everything,
    paper: str = "a4",
    on_step: Callable[[int, int, str], None] | None = None,
) -> Path:
    """Write the reviewed set; `redact` (a `Redaction`) hides personal data in every text written;
    `paper` (a4 or letter) is the report's page size; `on_step` hears the report's steps."""
    if fmt not in FORMATS:
        raise AssayError(f"export format is one of {', '.join(FORMATS)}")
    refuse_protected(out, project.url, kind_of_format(fmt))  # never over a project, its logs or backups, or a device
    refuse_wrong_suffix(out, fmt)
    out.parent.mkdir(parents=True, exist_ok=True)
    writers: dict[str, Callable[[Project, Path, Redact], None]] = {
        "csv": export_csv,
        "xlsx": export_xlsx,
        "jsonl": export_jsonl,
        "finetune": export_finetune,
        "report": partial(export_report, paper=paper, on_step=on_step),
        "pdf": partial(export_pdf, paper=paper, on_step=on_step),
    }
    writers[fmt](project, out, redact)
    return out


def kind_of_format(fmt: str) -> str:
    """What a file of the export format `fmt` is, as app/destinations.py names it."""
    return KINDS.get(fmt, "text")


def refuse_wrong_suffix(out: Path, fmt: str) -> None:
    """InvalidInput when the file's name says another format than `fmt` (a PDF named x.txt); no suffix is fine."""
    suffix = out.suffix.lower()
    if suffix and suffix not in (*SUFFIXES[fmt], f".{fmt}"):
        wanted = f"a {' or '.join(SUFFIXES[fmt])} file, not {suffix}"
        raise InvalidInput(str(out), f"a {fmt} export is written to {wanted}: change the name or the format")


def _points(project: Project, redact: Redact, verifier: bool = False) -> list[dict[str, Any]]:
    """Every label on every point; with `verifier`, the verifier's verdict and reasons on the point too."""
    with project.sessions() as session:
        points = analytics.labelled_points(session)
        signed = signoffs.signoffs_in_force(session)
    for point in points:  # the rater's sign-off of their review of the answer: when, and its digest
        signoff = signed.get((point["answer_id"], point["rater"]))
        point["signed_at"] = signoff.signed_at.isoformat() if signoff else None
        point["signoff_sha256"] = signoff.digest if signoff else None
    if verifier:
        _with_checker_columns(project, points)
    return redact(points)


def _with_checker_columns(project: Project, points: list[dict[str, Any]]) -> None:
    """The claim checker's verdict on each point and its reasons (empty for a missing point)."""
    from app.judging.verification import all_findings
    from models.checker.report import finding_at, reasons_text, verdict_text

    reports = all_findings(project.sessions, [p["answer_id"] for p in points])
    for p in points:
        found = finding_at(reports.get(p["answer_id"]), p.get("span_start"), p.get("span_end"))
        p["verifier_verdict"] = found.verdict if found else ""
        p["verifier_probability"] = found.probability if found else None
        p["verifier_reasons"] = reasons_text(found) or (verdict_text(found) if found else "")


def _for_people(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A spreadsheet's rows: the claim checker by its one name (its columns and its rater), its checks in
    words; the JSONL, which machines read back, keeps the stored ids ("verifier", "value_mismatch")."""
    renamed = {"verifier_verdict": "claim_checker_verdict", "verifier_probability": "claim_checker_probability"}
    renamed["verifier_reasons"] = "claim_checker_reasons"
    out = []
    for p in points:
        row = {renamed.get(k, k): v for k, v in p.items()}
        for key in ("rater", "created_by"):
            if row.get(key) == VERIFIER:
                row[key] = rater_name(VERIFIER)
        if row.get("rationale"):
            row["rationale"] = rationale_words(row["rationale"])
        if row.get("claim_checker_reasons"):
            row["claim_checker_reasons"] = checks_in_words(row["claim_checker_reasons"])
        out.append(row)
    return out


def export_csv(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    """Every data point with every rater's tag, comment, citations, who and when."""
    import pandas as pd

    frame = pd.DataFrame(_for_people(_points(project, redact, verifier=True)))
    if not frame.empty:
        frame["citations"] = frame["citations"].map(" ".join)
    write_csv(frame, out)  # no cell a formula


def _safe(compute) -> dict[str, Any]:
    try:
        return compute()
    except AssayError as exc:
        return {"note": str(exc)}


def export_xlsx(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    """One sheet each: answers (scores), data points, agreement, triage."""
    import pandas as pd

    points = pd.DataFrame(_for_people(_points(project, redact, verifier=True)))
    if not points.empty:
        points["citations"] = points["citations"].map(" ".join)
    agreement = redact(_safe(lambda: stats.agreement(project)))
    triage = redact(lemaj_triage(project))
    agreement_rows = [{"measure": k, "value": v} for k, v in agreement.items() if not isinstance(v, dict | list)]
    triage["rater"] = rater_name(triage["rater"]) if triage.get("rater") else triage.get("rater")
    triage_rows = [{"measure": k, "value": v} for k, v in triage.items() if not isinstance(v, dict | list)]
    with pd.ExcelWriter(out, engine="openpyxl") as writer:
        pd.DataFrame(_scores_for_people(project, redact)).to_excel(writer, sheet_name="answers", index=False)
        points.to_excel(writer, sheet_name="data_points", index=False)
        pd.DataFrame(agreement_rows).to_excel(writer, sheet_name="agreement", index=False)
        sheet = pd.DataFrame(triage_rows)
        sheet.to_excel(writer, sheet_name="triage", index=False)
        pd.DataFrame(triage["sweep"]).to_excel(writer, sheet_name="triage", index=False, startrow=len(sheet) + 2)
        rubric_rows = _rubric_rows(project, redact)
        if rubric_rows:  # a fifth sheet only when other rubrics ran
            pd.DataFrame(rubric_rows).to_excel(writer, sheet_name="rubrics", index=False)
        texts_as_text(writer.book)


def _scores_for_people(project: Project, redact: Redact) -> list[dict[str, Any]]:
    """Each answer's scores by rater, the rater as the window names it ("Claim checker"), and no figure of
    tags a rater cannot give (the claim checker's relevance of 1.00 says only that it never tags a point
    irrelevant or missing): those cells are left empty."""
    from app.export.report.tables import correctness_only, without_untaggable

    only = correctness_only(project)
    rows = [without_untaggable(r) if r["rater"] in only else r for r in stats.scores(project)]
    return redact([r | {"rater": rater_name(r["rater"])} for r in rows])


def _rubric_rows(project: Project, redact: Redact) -> list[dict[str, Any]]:
    with project.sessions() as session:
        records = rubric_results.rubric_results(session)
    return redact(
        [
            {
                "answer_id": r.answer_id,
                "rater": r.rater,
                "rubric": r.rubric,
                "label": r.label,
                "score": r.score,
                "details": json.dumps(r.payload, ensure_ascii=False),
            }
            for r in records
        ]
    )


def labels_by_answer_and_rater(
    project: Project, redact: Redact, verifier: bool = False
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for p in _points(project, redact, verifier):
        grouped[(p["answer_id"], p["rater"])].append(p)
    return grouped


def export_jsonl(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    """One line per answer and rater, in the format `assay import-labels` reads: a round trip."""
    with project.sessions() as session:
        kinds = analytics.rater_kinds(session)
    with out.open("w", encoding="utf-8") as handle:
        for (answer_id, rater), points in labels_by_answer_and_rater(project, redact, verifier=True).items():
            record = {
                "answer_id": answer_id,
                "rater": rater,
                "kind": kinds.get(rater, "human"),
                "data_points": [
                    {
                        "text": p["text"],
                        "tag": p["tag"],
                        "span": None if p["span_start"] is None else [p["span_start"], p["span_end"]],
                        "citations": p["citations"],
                        "comment": p["comment"],
                        "confidence": p["confidence"],
                        "verifier_verdict": p["verifier_verdict"],
                        "verifier_reasons": p["verifier_reasons"],
                    }
                    for p in points
                ],
                "signoff": None
                if points[0]["signoff_sha256"] is None
                else {"reviewer": rater, "signed_at": points[0]["signed_at"], "sha256": points[0]["signoff_sha256"]},
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        with project.sessions() as session:  # pairwise preferences between two answers
            chosen = preferences.preferences(session)
        for p in chosen:
            line = {"rater": p.rater, "kind": "human", "preference": p.portable()}
            handle.write(json.dumps(redact(line), ensure_ascii=False) + "\n")


def export_finetune(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    """Chat examples to train a judge (LeMAJ appendix E): the one-pass judge prompt, and as the
    assistant's reply the data points and tags a human reviewer submitted."""
    with project.sessions() as session:
        submitted = {(r.answer_id, r.reviewer) for r in analytics.reviews(session) if r.status == "submitted"}
    written = 0
    with out.open("w", encoding="utf-8") as handle:
        for (answer_id, rater), points in labels_by_answer_and_rater(project, redact).items():
            if (answer_id, rater) not in submitted:
                continue
            answer = project.answer(answer_id)
            assert answer is not None
            passages = project.passages(answer.document_id)
            cited = {c for p in points for c in p["citations"]}
            hits = {h.passage.citation_id for h in project.search(answer.document, answer.question, limit=8)}
            evidence = [
                EvidencePassage(p.citation_id, p.section, p.text) for p in passages if p.citation_id in cited | hits
            ]
            prompt = one_pass_prompt(evidence, answer.question, answer.text, Strictness.STANDARD)
            reply = {
                "data_points": [
                    {"text": p["text"], "tag": p["tag"], "citations": p["citations"], "rationale": p["comment"] or ""}
                    for p in points
                ]
            }
            messages = [{"role": m.role, "content": m.text} for m in prompt.messages]
            messages.append({"role": "assistant", "content": json.dumps(reply, ensure_ascii=False)})
            handle.write(json.dumps({"messages": redact(messages)}, ensure_ascii=False) + "\n")
            written += 1
    if not written:
        out.unlink()
        raise AssayError("no submitted human review to learn from yet: submit reviews, then export")


# ---------------------------------------------------------------- the report


def export_report(
    project: Project, out: Path, redact: Redact = keep_everything, paper: str = "a4", on_step: Any = None
) -> None:
    """The report a partner reads, as one HTML file (figures inside): app/export/report/."""
    from app.export.report import write_html

    write_html(project, out, redact, paper, *([on_step] if on_step else []))


def export_pdf(
    project: Project, out: Path, redact: Redact = keep_everything, paper: str = "a4", on_step: Any = None
) -> None:
    """The same report as a paged PDF: page numbers, running heads, table of contents."""
    from app.export.report import write_pdf

    write_pdf(project, out, redact, paper, *([on_step] if on_step else []))
