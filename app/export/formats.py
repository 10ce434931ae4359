"""Reviewed sets, shared: CSV, XLSX, JSONL (re-importable with `assay import-labels`), fine-tuning
JSONL, and a self-contained HTML (or PDF) report with plots."""

from __future__ import annotations

import base64
import html
import io
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.errors import AssayError
from app.export.redaction import keep_everything
from app.figures import analytics as stats
from app.figures.plots import report_figures
from app.project import Project
from models.prompts import EvidencePassage, Strictness, one_pass_prompt
from storage import analytics, rubric_results, signoffs

FORMATS = ("csv", "xlsx", "jsonl", "finetune", "report", "pdf")
Redact = Callable[[Any], Any]  # a `Redaction`, or keep_everything


def export(project: Project, fmt: str, out: Path, redact: Redact = keep_everything) -> Path:
    """Write the reviewed set; `redact` (a `Redaction`) hides personal data in every text written."""
    if fmt not in FORMATS:
        raise AssayError(f"export format is one of {', '.join(FORMATS)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    {
        "csv": export_csv,
        "xlsx": export_xlsx,
        "jsonl": export_jsonl,
        "finetune": export_finetune,
        "report": export_report,
        "pdf": export_pdf,
    }[fmt](project, out, redact)
    return out


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
        from app.judging.verification import with_verifier_columns

        points = with_verifier_columns(project.sessions, points)
    return redact(points)


def export_csv(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    """Every data point with every rater's tag, comment, citations, who and when."""
    import pandas as pd

    frame = pd.DataFrame(_points(project, redact, verifier=True))
    if not frame.empty:
        frame["citations"] = frame["citations"].map(" ".join)
    frame.to_csv(out, index=False)


def _safe(compute) -> dict[str, Any]:
    try:
        return compute()
    except AssayError as exc:
        return {"note": str(exc)}


def export_xlsx(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    """One sheet each: answers (scores), data points, agreement, triage."""
    import pandas as pd

    points = pd.DataFrame(_points(project, redact, verifier=True))
    if not points.empty:
        points["citations"] = points["citations"].map(" ".join)
    agreement = redact(_safe(lambda: stats.agreement(project)))
    triage = redact(stats.triage(project))
    agreement_rows = [{"measure": k, "value": v} for k, v in agreement.items() if not isinstance(v, dict | list)]
    triage_rows = [{"measure": k, "value": v} for k, v in triage.items() if not isinstance(v, dict | list)]
    with pd.ExcelWriter(out, engine="openpyxl") as writer:
        pd.DataFrame(redact(stats.scores(project))).to_excel(writer, sheet_name="answers", index=False)
        points.to_excel(writer, sheet_name="data_points", index=False)
        pd.DataFrame(agreement_rows).to_excel(writer, sheet_name="agreement", index=False)
        sheet = pd.DataFrame(triage_rows)
        sheet.to_excel(writer, sheet_name="triage", index=False)
        pd.DataFrame(triage["sweep"]).to_excel(writer, sheet_name="triage", index=False, startrow=len(sheet) + 2)
        rubric_rows = _rubric_rows(project, redact)
        if rubric_rows:  # a fifth sheet only when other rubrics ran
            pd.DataFrame(rubric_rows).to_excel(writer, sheet_name="rubrics", index=False)


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


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return base64.b64encode(buffer.getvalue()).decode()


def export_report(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    """One HTML file, plots embedded: it opens anywhere, offline."""
    agreement = redact(_safe(lambda: stats.agreement(project)))
    triage = redact(stats.triage(project))
    summary_rows = redact(stats.scores(project, by="rater"))
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Assay report</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{border:1px solid #ccc;"
        "padding:2px 6px}table{border-collapse:collapse}</style></head><body>",
        f"<h1>Assay report</h1><p>{html.escape(project.url.rsplit('/', 1)[-1])} · "
        f"{project.counts()['answers']} answers · {project.counts()['labels']} labels</p>",
        "<h2>Scores by rater</h2>",
        _table(summary_rows),
        *_judge_sections(project),
        "<h2>Agreement</h2>",
        _table([{k: v for k, v in agreement.items() if not isinstance(v, dict | list)}]),
        "<h2>Triage</h2>",
        _table([{k: v for k, v in triage.items() if not isinstance(v, dict | list)}]),
        *_statistics_sections(project, redact),
    ]
    rubric_rows = _rubric_rows(project, redact)
    if rubric_rows:
        parts += [
            "<h2>Other rubrics</h2>",
            _table([{k: v for k, v in r.items() if k != "details"} for r in rubric_rows]),
        ]
    for title, fig in report_figures(project, redact):
        parts.append(
            f"<h2>{html.escape(title)}</h2><img alt='{html.escape(title)}' src='data:image/png;base64,{_png(fig)}'>"
        )
    parts.append("</body></html>")
    out.write_text("\n".join(parts), encoding="utf-8")


def _judge_sections(project: Project) -> list[str]:
    """How good each judge is: against human labels first, where people labelled answers it judged,
    then its latest paired stress test (planted errors); a near-chance model named as such."""
    from app.judging.standing import judge_standings, real_label_note

    def share(r: dict[str, Any], k: str, n: str, rate: str, ci: str) -> str:
        if not r.get(n):
            return ""
        lo, hi = r[ci]
        return f"{r[k]}/{r[n]} ({r[rate]:.0%} [{lo:.0%}–{hi:.0%}])"

    standings = judge_standings(project.sessions)
    if not standings:
        return []
    labelled = any(s.real for s in standings)
    planted = "planted " if labelled else ""
    kinds = dict.fromkeys(k for s in standings for k, t in (s.figures or {}).get("by_type", {}).items() if t["trials"])
    rows = []
    for s in standings:  # every row the same columns: the table's head is the first row's
        f, r = s.figures or {}, s.real or {}
        row: dict[str, Any] = {"judge run": s.run, "standing": s.text}
        if labelled:
            row["human-labelled answers"] = r.get("answers", "")
            row["wrong answers caught"] = share(r, "caught", "with_errors", "recall", "recall_ci")
            row["false alarms on correct answers"] = share(
                r, "false_alarms", "correct", "false_alarm_rate", "false_alarm_ci"
            )
        for kind in kinds:
            trials = f.get("by_type", {}).get(kind)
            row[planted + kind] = _recall(trials) if trials and trials["trials"] else ""
        row[planted + "false alarms"] = f"{f['false_alarms']}/{f['unperturbed']}" if f.get("unperturbed") else ""
        rows.append(row)
    demo = [s.run for s in standings if s.demonstration]
    names = html.escape(", ".join(str(d) for d in demo))
    command = html.escape(",".join(str(d) for d in demo))
    advice = (
        f"<p><b>{names}: demonstration model.</b> Its tags are close to chance or were never measured; do not "
        "rely on them. In Assay, <i>Project ▸ Run the judge…</i> (Ctrl+J) opens the model picker: choose a GGUF "
        f"file or an API judge, then measure it with <code>assay stress-test --raters {command}</code>.</p>"
        if demo
        else ""
    )
    note = (
        "<p>Errors planted in points the document supports that each judge flagged, by kind of error (latest "
        "paired stress test; 95 % Wilson interval in brackets), and its flags on the same points unchanged.</p>"
    )
    if labelled:
        who = " ".join(dict.fromkeys(real_label_note(s.real) or "" for s in standings if s.real))
        note = (
            "<p>First, against human labels, on the answers both the judge judged and people reviewed: the answers "
            "a person found wrong (a point tagged incorrect, or a missing point added) that the judge flagged (a point "
            "tagged incorrect), and the answers found correct that it flagged (95 % Wilson interval in brackets). "
            f"{html.escape(who)}</p>" + note.replace("<p>Errors planted", "<p>Then planted errors: errors planted")
        )
    return ["<h2>How good each judge is</h2>", note, advice, _table(rows)]


def _recall(t: dict[str, Any]) -> str:
    lo, hi = t["ci"]
    return f"{t['caught']}/{t['trials']} ({t['recall']:.0%} [{lo:.0%}–{hi:.0%}])"


def _statistics_sections(project: Project, redact: Redact) -> list[str]:
    """Estimates with 95 % intervals per generator, and the judge's calibration with its diagram."""
    from app.figures import calibration, estimates

    rows = []
    for group in redact(estimates.estimate(project, "generator"))["groups"]:
        for metric, figures in group["metrics"].items():
            rows.append(
                {
                    "generator": group["group"],
                    "figure": metric,
                    "reviewed (random)": figures["reviewed"],
                    "PPI [95 % CI]": _interval(figures["ppi"]),
                    "judge only": _interval(figures["judge_only"]),
                    "human only": _interval(figures["human_only"]),
                }
            )
    report = calibration.reliability(project)
    parts = ["<h2>Estimates (prediction-powered, 95 % intervals)</h2>", _table(rows)]
    paired = [
        {
            "difference": pair["difference"],
            "figure": metric,
            "questions": figures["questions"],
            "reviewed (random)": " and ".join(map(str, figures["reviewed"])),
            "PPI [95 % CI]": _interval(figures["ppi"]),
            "judge only": _interval(figures["judge_only"]),
            "human only": _interval(figures["human_only"]),
        }
        for pair in redact(estimates.comparisons(project))
        for metric, figures in pair["metrics"].items()
    ]
    if paired:
        parts += ["<h2>Paired comparison of generators on the same questions (95 % intervals)</h2>", _table(paired)]
    if report["overall"]["points"]:
        overall = report["overall"]
        parts += [
            "<h2>Calibration of the judge's confidence</h2>",
            f"<p>Expected calibration error {_cell(overall['ece_raw'])} as given, "
            f"{_cell(overall['ece_calibrated'])} calibrated (isotonic, cross-fitted), "
            f"on {overall['points']} reviewed data points.</p>",
            f"<img alt='Reliability diagram' src='data:image/png;base64,"
            f"{_png(calibration.reliability_figure(report))}'>",
        ]
    return parts


def _interval(figures: dict[str, Any] | None) -> str:
    if not figures:
        return "—"
    return f"{figures['estimate']:.3f} [{figures['ci'][0]:.3f}, {figures['ci'][1]:.3f}]"


def export_pdf(project: Project, out: Path, redact: Redact = keep_everything) -> None:
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    with PdfPages(out) as pdf:
        cover = Figure(figsize=(8.27, 11.69))
        rows = redact(stats.scores(project, by="rater"))
        lines = [
            "Assay report",
            "",
            *[
                f"{r['rater'][:40]:40}  answers {r['answers']:4}  correctness {stats_fmt(r['correctness'])}  "
                f"F1 {stats_fmt(r['f1'])}"
                for r in rows
            ],
        ]
        cover.text(0.05, 0.95, "\n".join(lines), va="top", family="monospace", fontsize=8)
        pdf.savefig(cover)
        for _title, fig in report_figures(project, redact):
            pdf.savefig(fig)


def stats_fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>—</p>"
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row.values()) + "</tr>" for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
