"""Two generators compared (issue 33): a second answer file joins the questions already there; a
pairwise preference is stored, audited and travels through export, import-labels and team bundles;
the win rate and its interval are the Wilson interval of the same counts; aligned points are the ones
the identity rule matches; the sample's regression list as `assay compare` prints it."""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path

import pytest

from app.cli import main
from app.export.formats import export
from app.figures.scores import Scores
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.judging.sample_tour import SAMPLE_SECOND_GENERATOR
from app.project import SAMPLE_DATASET, Project
from app.review.pairwise import PairwiseReview, set_blind
from app.review.service import ReviewService
from app.review.team import export_bundle, import_bundle
from models.identity import same_point
from models.point_alignment import align, content
from models.segmentation import segment_answer
from models.vocabulary import Tag
from storage.audit import audit_entries
from storage.comparison import shared_questions
from storage.preferences import preferences

pytestmark = pytest.mark.every_store

A, B = "long-form", "short-form"


def _short_ids() -> list[str]:
    return [json.loads(line)["id"] for line in SAMPLE_SECOND_GENERATOR.read_text(encoding="utf-8").splitlines()]


def with_second_generator(project: Project) -> None:
    import_dataset(project.sessions, SAMPLE_SECOND_GENERATOR)


def test_a_second_answer_file_adds_answers_to_the_questions_already_there(sample_project: Project) -> None:
    before = sample_project.counts()
    summary = import_dataset(sample_project.sessions, SAMPLE_SECOND_GENERATOR)
    after = sample_project.counts()
    assert summary.answers_added == 15 and after["answers"] == before["answers"] + 15
    assert after["questions"] == before["questions"]  # no new question: the same questions, answered again
    with sample_project.sessions() as session:
        shared = shared_questions(session)
    assert len(shared) == 15
    for q in shared:
        assert set(q.answers) == {A, B} and q.answers[B] == f"{q.answers[A]}-short"


def _open_first(project: Project, reviewer: str):
    pairwise = PairwiseReview(ReviewService(project, reviewer))
    return pairwise, pairwise.open(pairwise.questions()[0])


def test_a_preference_is_stored_audited_and_travels(sample_project: Project, new_project_url, tmp_path: Path) -> None:
    with_second_generator(sample_project)
    pairwise, view = _open_first(sample_project, "ana")
    assert (view.left.label, view.right.label) == (A, B)  # not blind: the generators are named
    view = pairwise.prefer(view, "right", "  says the same in one sentence ")
    view = pairwise.prefer(view, "left", "the long one gives the renewal")  # decided again: replaced
    left, right = view.answer_ids
    assert view.preference is not None and view.preference.preferred == left
    with sample_project.sessions() as session:
        (stored,) = preferences(session)
        entries = [e for e in audit_entries(session) if e.action == "preference.recorded"]
    assert (stored.rater, stored.first, stored.second, stored.preferred) == ("ana", left, right, left)
    assert stored.reason == "the long one gives the renewal" and not stored.blind and stored.seed is None
    assert [e.payload["preferred"] for e in entries] == [right, left]  # the history stays in the log
    assert entries[0].payload["reason"] == "says the same in one sentence" and entries[-1].actor == "ana"

    # A tie from another reviewer, blind: the order was drawn with the project's seed and recorded.
    seed = set_blind(sample_project, True, "lead")
    pairwise_ben, blind_view = _open_first(sample_project, "ben")
    assert (blind_view.left.label, blind_view.right.label) == ("Answer A", "Answer B") and blind_view.seed == seed
    assert _open_first(sample_project, "ben")[1].answer_ids == blind_view.answer_ids  # the same draw again
    pairwise_ben.prefer(blind_view, "tie")
    with sample_project.sessions() as session:
        mine = {p.rater: p for p in preferences(session)}
    assert mine["ben"].preferred is None and mine["ben"].blind and mine["ben"].seed == seed
    assert mine["ben"].first == blind_view.answer_ids[0]  # the answer shown on the left

    # export → import-labels into another project made from the same data
    out = export(sample_project, "jsonl", tmp_path / "labels.jsonl")
    other = Project.open(new_project_url("other"))
    try:
        import_dataset(other.sessions, SAMPLE_DATASET)
        with_second_generator(other)
        summary = import_labels(other, out)
        assert summary.preferences == 2
        with other.sessions() as session:
            assert {p.rater: p for p in preferences(session)} == mine
            assert sum(e.action == "preference.recorded" for e in audit_entries(session)) == 2
    finally:
        other.close()

    # a team bundle of ana's work → the lead's project
    bundle = tmp_path / "ana.json"
    export_bundle(sample_project, "ana", bundle)
    lead = Project.open(new_project_url("lead"))
    try:
        import_dataset(lead.sessions, SAMPLE_DATASET)
        with_second_generator(lead)
        import_bundle(lead, bundle)
        with lead.sessions() as session:
            assert preferences(session) == [mine["ana"]]
    finally:
        lead.close()


def test_a_preference_between_answers_to_different_questions_is_refused(sample_project: Project, tmp_path) -> None:
    with_second_generator(sample_project)
    line = {"rater": "ana", "preference": {"answers": ["cuad-000", "cuad-001-short"], "preferred": None}}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 2
    line["preference"]["preferred"] = "maud-000"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 2
    with sample_project.sessions() as session:
        assert preferences(session) == []


def _wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval, written out (E. B. Wilson, 1927)."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_the_win_rate_and_its_interval_are_wilsons_on_the_same_counts(
    sample_project: Project, tmp_path: Path, capsys
) -> None:
    """Random judge tags on both generators' answers, reviewers' preferences on a few questions:
    the outcome of each question, the counts and the interval computed here, directly."""
    with_second_generator(sample_project)
    rng = random.Random(33)
    with sample_project.sessions() as session:
        shared = shared_questions(session)
    lines, tags = [], {}
    for q in shared:
        for answer_id in q.answers.values():
            answer = sample_project.answer(answer_id)
            assert answer is not None
            points = [s.text for s in segment_answer(answer.text)]
            tags[answer_id] = [rng.choice(["correct", "correct", "incorrect", "missing"]) for _ in points]
            lines.append(
                {
                    "answer_id": answer_id,
                    "rater": "judge-x",
                    "kind": "judge",
                    "data_points": [{"text": p, "tag": t} for p, t in zip(points, tags[answer_id], strict=True)],
                }
            )
    preferred = {}
    for q in shared[:4]:  # reviewers decide these four, whatever the tags say
        preferred[q.question_id] = rng.choice([q.answers[A], q.answers[B], None])
        lines.append(
            {
                "rater": "ana",
                "preference": {"answers": [q.answers[A], q.answers[B]], "preferred": preferred[q.question_id]},
            }
        )
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 0
    capsys.readouterr()

    wins = ties = losses = 0
    for q in shared:
        if q.question_id in preferred:
            choice = preferred[q.question_id]
            outcome = "tie" if choice is None else "win" if choice == q.answers[B] else "loss"
        else:
            sa, sb = (Scores.of(Tag(t) for t in tags[q.answers[g]]) for g in (A, B))
            outcome = "tie"
            for x, y in ((sa.correctness, sb.correctness), (sa.f_beta(), sb.f_beta())):
                if x is not None and y is not None and x != y:
                    outcome = "win" if y > x else "loss"
                    break
        wins, ties, losses = wins + (outcome == "win"), ties + (outcome == "tie"), losses + (outcome == "loss")

    assert main(["--db", sample_project.url, "compare", A, B, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["questions"], result["wins"], result["ties"], result["losses"]) == (15, wins, ties, losses)
    assert result["decided_by"] == {"preferences": 4, "scores": 11}
    rate = result["win_rate"]
    assert rate["estimate"] == pytest.approx(wins / (wins + losses))
    assert rate["interval"] == pytest.approx(list(_wilson(wins, wins + losses)), abs=1e-12)
    for metric in ("correctness", "precision", "recall", "f1"):  # the paired PPI comparison's, B minus A
        assert set(result["scores"][metric]) >= {"difference", "interval"}
    correctness = {a: Scores.of(Tag(t) for t in tags[a]).correctness for a in tags}
    judged = [q for q in shared if all(correctness[q.answers[g]] is not None for g in (A, B))]
    direct = sum(correctness[q.answers[B]] - correctness[q.answers[A]] for q in judged) / len(judged)
    assert result["scores"]["correctness"]["difference"] == pytest.approx(direct)
    assert result["scores"]["correctness"]["from"] == "judge only"  # no random sample reviewed


def test_aligned_points_are_the_ones_the_identity_rule_matches() -> None:
    left = [
        content("The term ends on December 31, 2014.", ["par_3"]),
        content("Either party may terminate on 30 days' notice.", ["par_9"]),
        content("Renewal is automatic for one-year periods.", ["par_3"]),
        content("Payment is due within 45 days.", ["par_12"]),
    ]
    right = [
        content("the term ends on december 31 2014", ["par_3"]),  # case and punctuation: the same point
        content("Payment is due within 60 days.", ["par_12"]),  # another number: another point
        content("Renewal is automatic for one-year periods.", ["par_40"]),  # the same words, another clause
        content("Either party may terminate on 30 days notice.", []),  # no passage: the words decide
        content("Governing law is New York.", []),
    ]
    rows = align(left, right)
    pairs = {(r.left, r.right) for r in rows if r.aligned}
    assert pairs == {(0, 0), (1, 3)}
    # shown beside each other to read, not one point: another clause, another number
    assert {(r.left, r.right) for r in rows if not r.same} == {(2, 2), (3, 1)}
    assert sorted(r.left for r in rows if r.left is not None) == [0, 1, 2, 3]  # every point, once
    assert sorted(r.right for r in rows if r.right is not None) == [0, 1, 2, 3, 4]

    # On real answers: aligned pairs are identity matches, and no point left alone matches one left alone.
    rows_of = [json.loads(line) for line in (SAMPLE_DATASET / "qa.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows_of:
        if not row.get("alt_answer_short"):
            continue
        a = [content(s.text) for s in segment_answer(row["answer"])]
        b = [content(s.text) for s in segment_answer(row["alt_answer_short"]) + segment_answer(row["answer"])[:2]]
        found = align(a, b)
        for r in found:
            if r.aligned:
                assert same_point(a[r.left], b[r.right])
        alone_a = [r.left for r in found if r.left is not None and not r.aligned]
        alone_b = [r.right for r in found if r.right is not None and not r.aligned]
        assert not any(same_point(a[i], b[j]) for i in alone_a for j in alone_b)
        assert sum(r.aligned for r in found) >= min(2, len(a))  # the copies


def verifier_labels(project: Project, answer_ids: list[str], capsys) -> list[dict]:
    """The claim checker's verdicts on these answers as a judge's labels, tagged as the checker tags them
    (models.checker.report.tag_of: a claim it confirms or quotes word for word is correct, one it flags
    incorrect); one it cannot settle stays untagged."""
    from models.checker.report import PointReport, tag_of

    assert main(["--db", project.url, "verify", "--answers", ",".join(answer_ids), "--json"]) == 0
    checked = json.loads(capsys.readouterr().out)["answers"]
    labels = []
    for answer in checked:
        tags = [(p, tag_of(PointReport.from_dict(p))) for p in answer["points"]]
        points = [{"text": p["text"], "span": [p["start"], p["end"]], "tag": t.value} for p, t in tags if t]
        if points:
            labels.append(
                {"answer_id": answer["answer_id"], "rater": "verifier-verdicts", "kind": "judge", "data_points": points}
            )
    return labels


def test_the_sample_regression_list(sample_project: Project, tmp_path: Path, capsys) -> None:
    """The sample's two generators tagged by the verifier's verdicts: `assay compare` lists the questions
    where the short answers are worse, most severe first, each for a reason the tags show, and exports
    them."""
    with_second_generator(sample_project)
    ids = [i for b in _short_ids() for i in (b.removesuffix("-short"), b)]
    lines = verifier_labels(sample_project, ids, capsys)
    path = tmp_path / "verdicts.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 0
    capsys.readouterr()
    tagged = {line["answer_id"]: line["data_points"] for line in lines}

    assert main(["--db", sample_project.url, "compare", A, B, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["questions"] == 15 and result["wins"] + result["ties"] + result["losses"] == result["compared"]
    regressions = result["regressions"]
    assert regressions, "the short answers leave out claims the long ones make and the document supports"
    keys = [(-r["wrong_in_b"], -r["left_out_in_b"]) for r in regressions]
    assert keys == sorted(keys)  # most severe first
    for r in regressions:
        a_points, b_points = tagged.get(r["answer_a"], []), tagged.get(r["answer_b"], [])
        lower = any((r[k] or 0) < 0 for k in ("correctness_change", "f1_change"))
        assert r["wrong_in_b"] + r["left_out_in_b"] > 0 or lower
        for lost in r["lost"]:  # a point correct in A, and in B incorrect, missing, or not made at all
            assert any(p["text"] == lost["a_text"] and p["tag"] == "correct" for p in a_points), (lost, a_points)
            if lost["b_tag"] is None:
                assert not any(
                    p["tag"] == "correct" and same_point(content(lost["a_text"]), content(p["text"])) for p in b_points
                )
            else:
                assert lost["b_tag"] in ("incorrect", "missing")
    listed = {r["answer_a"] for r in regressions}
    for q in result["per_question"]:  # every question with a lower score, or a correct point lost, is listed
        if any((q["change"].get(k) or 0) < 0 for k in ("correctness", "f1")) or q["lost"]:
            assert q["answer_a"] in listed

    assert main(["--db", sample_project.url, "compare", A, B, "--export", str(tmp_path / "r.csv")]) == 0
    printed = capsys.readouterr().out
    assert f"{len(regressions)} regressions (B worse than A), most severe first:" in printed
    assert f"  1. {regressions[0]['answer_a']} → {regressions[0]['answer_b']}:" in printed
    with (tmp_path / "r.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["answer (long-form)"] for row in rows] == [r["answer_a"] for r in regressions]
    assert main(["--db", sample_project.url, "compare", A, B, "--export", str(tmp_path / "r.xlsx")]) == 0
    import openpyxl

    sheet = openpyxl.load_workbook(tmp_path / "r.xlsx").active
    assert sheet.max_row == len(regressions) + 1


def test_compare_refuses_bad_input_in_one_sentence(sample_project: Project, capsys) -> None:
    with_second_generator(sample_project)
    assert main(["--db", sample_project.url, "compare"]) == 2
    assert "pairs here: long-form short-form" in capsys.readouterr().err
    assert main(["--db", sample_project.url, "compare", A, "gpt-9"]) == 2
    assert "'gpt-9': no answers of this generator" in capsys.readouterr().err
    assert main(["--db", sample_project.url, "compare", A, A]) == 2
    assert main(["--db", sample_project.url, "compare", A, B, "--export", "out.txt"]) == 2
    assert ".csv or .xlsx" in capsys.readouterr().err


def test_three_generators_are_compared_two_at_a_time(sample_project: Project, tmp_path: Path) -> None:
    from app.figures.comparison import generator_pairs

    with_second_generator(sample_project)
    third = tmp_path / "third.jsonl"
    (tmp_path / "documents").symlink_to(SAMPLE_DATASET / "documents")
    rows = [json.loads(line) for line in SAMPLE_SECOND_GENERATOR.read_text(encoding="utf-8").splitlines()][:3]
    third.write_text(
        "\n".join(json.dumps({**r, "id": r["id"].replace("-short", "-v3"), "generator": "v3"}) for r in rows) + "\n",
        encoding="utf-8",
    )
    import_dataset(sample_project.sessions, third)
    assert generator_pairs(sample_project) == [(A, B), (A, "v3"), (B, "v3")]
    pairwise = PairwiseReview(ReviewService(sample_project, "ana"))
    question = pairwise.question_of("cuad-000")
    assert question is not None and set(question.answers) == {A, B, "v3"}
    view = pairwise.open(question, ("v3", A))  # the pair asked for, in that order
    assert view.answer_ids == ("cuad-000-v3", "cuad-000") and len(view.pairs) == 3
