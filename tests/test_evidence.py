"""Evidence for every judge tag, one-pass tagging on the real model, and judge points that may not be
invented from the prompt."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.judging.evidence import DocumentEvidence
from app.judging.runs import run_judge
from app.project import Project
from models.backends.llama_local import LlamaBackend
from models.evidence import echoes_prompt, is_evidence
from models.judge import LemajJudge, Mode, Tagging
from models.prompts import LABELS, EvidencePassage, Prompt, Strictness, tag_all_prompt
from models.segmentation import segment_answer
from models.vocabulary import Tag
from storage import judgements, raters

from .test_judge import NDA, ScriptedBackendStandIn

MICHAELS = "The Michaels Companies, Inc._Apollo Global Management, LLC.txt"  # a MAUD merger agreement


@pytest.fixture(scope="module")
def backend() -> LlamaBackend:
    return LlamaBackend(context_tokens=2048, threads=2)


def _michaels(project: Project):
    answer = next(a for a in project.answers() if a.document == MICHAELS)
    return project.answer(answer.id)


# ---------------------------------------------------------------- one-pass tagging


def test_each_slot_reads_the_labels_the_prompt_cut_at_that_slot_would_give(backend: LlamaBackend) -> None:
    """Causal attention: one evaluation of the laid-out answer gives, at every slot, what a prompt ending
    at that slot gives alone; and only the answer's tokens are evaluated once the document is cached."""
    evidence = [
        EvidencePassage("par_1", None, "The Recipient shall keep the Confidential Information secret for 5 years."),
        EvidencePassage("par_2", None, "This Agreement is governed by the laws of Germany."),
    ]
    points = [
        ("", "The information stays secret for 5 years."),
        ("The Agreement:", "is governed by German law."),
        ("The Agreement:", "has no term."),
    ]
    prompt = tag_all_prompt(evidence, "How long is information kept secret?", points, Strictness.STANDARD)
    backend.reset_cache()
    together = backend.slot_label_scores(prompt, LABELS)
    assert len(together.logprobs) == len(points)
    assert together.evaluated_tokens == together.prompt_tokens

    slots = [i for i, part in enumerate(prompt.assistant_parts) if part.slot]
    for k, slot in enumerate(slots):
        backend.reset_cache()
        cut = Prompt(prompt.messages, assistant_parts=prompt.assistant_parts[: slot + 1])
        alone = backend.label_scores(cut, LABELS).logprobs
        for label in LABELS:
            assert together.logprobs[k][label] == pytest.approx(alone[label], abs=0.05)

    # Another answer about the same document: the cached document is not read again.
    again = backend.slot_label_scores(
        tag_all_prompt(evidence, "Which law governs?", points[1:], Strictness.STANDARD), LABELS
    )
    assert again.evaluated_tokens < again.prompt_tokens / 2


def test_one_pass_lays_out_a_list_s_lead_in_once_before_its_items() -> None:
    """Items are read after their lead-in, as in the answer; repeating it before each item cost tokens."""
    answer = "The Agreement provides:\n- a term of five years;\n- that German law governs.\n\nIt has no exclusivity."
    segments = segment_answer(answer)
    assert [bool(s.context) for s in segments] == [True, True, False]
    prompt = tag_all_prompt([], "What does it provide?", [(s.context, s.text) for s in segments], Strictness.STANDARD)
    reply = "".join(part.text for part in prompt.assistant_parts)
    assert reply.count("The Agreement provides:") == 1
    positions = [reply.index(s.text) for s in segments]
    assert reply.index("The Agreement provides:") < positions[0] < positions[1] < positions[2]
    slots = [i for i, part in enumerate(prompt.assistant_parts) if part.slot]
    assert len(slots) == len(segments)  # one label slot a point, none for the lead-in


# ---------------------------------------------------------------- evidence of each tag


def test_both_taggings_store_ranked_evidence_for_every_point_and_show_lists_it(
    sample_project: Project, backend: LlamaBackend, capsys
) -> None:
    answer_id = min(
        (a.id for a in sample_project.answers() if a.document == NDA),
        key=lambda a: len(sample_project.answer(a).text),
    )
    for tagging in Tagging:
        judge = LemajJudge(backend, Mode.TWO_STAGE, find_missing=False, tagging=tagging)
        assert run_judge(sample_project.sessions, judge, tagging.value, answer_ids=[answer_id]).judged == 1

    answer = sample_project.answer(answer_id)
    passages = {p.citation_id: p for p in sample_project.passages(answer.document_id)}
    segments = [(s.start, s.end) for s in segment_answer(answer.text)]
    assert len(segments) >= 2  # more than one slot: the layout, not a single prompt, is under test
    with sample_project.sessions() as session:
        for tagging in Tagging:
            rater = raters.rater_named(session, tagging.value)
            assert rater.config["tagging"] == tagging.value
            seen = set(judgements.judge_outcomes(session, rater.id)[answer_id].passages_seen)
            points = judgements.data_points_of(session, answer_id, rater.id)
            # The same points either way: one per segment, in order, each stored once with one tag.
            assert [(p.span_start, p.span_end) for p in points] == segments
            assert len({p.id for p in points}) == len(points)
            for point in points:
                assert point.tag in (Tag.CORRECT, Tag.INCORRECT, Tag.IRRELEVANT)
                assert point.evidence, point.text  # every tag carries the passages it relied on
                assert [e["rank"] for e in point.evidence if e["basis"] == "shown"] == list(range(len(point.evidence)))
                assert {e["citation_id"] for e in point.evidence} <= seen  # what the tagging prompt showed
                assert all(is_evidence(passages[c].text) for c in point.citations)

    path = sample_project.url.removeprefix("sqlite:///")
    assert main(["--project", path, "show", answer_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["raters"]["one-pass"]
    assert all(p["evidence"] and p["evidence"][0]["basis"] == "shown" for p in shown)


def test_a_clause_the_document_does_not_split_out_falls_back_to_its_sections_best_passages(
    sample_project: Project,
) -> None:
    passages = sample_project.passages(_michaels(sample_project).document_id)
    evidence = DocumentEvidence(passages)
    by_id = {p.citation_id: p for p in passages}
    form_lines = [p.citation_id for p in passages if set(p.text.strip()) == {"_"}]
    assert len(form_lines) > 20  # the agreement's page-break rules, numbered as passages

    cited = evidence.resolve(["Section 7.3(i)"], "Parent shall use commercially reasonable efforts to waive")
    assert cited.fallback and cited.passages and not cited.unverified
    assert all(by_id[c].section.startswith("7.03") for c in cited.passages)
    assert by_id[cited.passages[0]].section == "7.03(c)"  # the clause that says so, ranked first
    assert not set(cited.passages) & set(form_lines)

    exact = evidence.resolve(["7.03(b)", "par_99999"], "benefit plans")
    assert exact.passages == ("par_388",) and not exact.fallback and exact.unverified == ("par_99999",)
    # A form line is not evidence even when cited by its id.
    assert evidence.resolve([form_lines[0]], "anything").passages == ()
    assert not any(is_evidence(t) for t in ("________________", "ii", "- 12 -", "Page 3 of 40", "Governing Law 88"))


# ---------------------------------------------------------------- points the judge may not invent


def test_prompt_echoes_and_uncited_points_are_refused_counted_and_never_stored(sample_project: Project) -> None:
    answer = _michaels(sample_project)
    first, second = [line.strip()[:120] for line in answer.text.splitlines() if len(line.split()) > 8][:2]
    items = [
        {"text": first, "tag": "correct", "citations": ["Section 7.3(i)"], "rationale": "Section 7.03."},
        {"text": "The question and the answer to evaluate follow.", "tag": "correct", "citations": ["par_3"]},
        {"text": second, "tag": "incorrect", "citations": ["par_99999", "Section 99.9"]},
        {"text": "Tag each data point: correct, incorrect or irrelevant.", "tag": "missing", "citations": ["par_5"]},
        {"text": "The outside date for closing is not mentioned.", "tag": "missing", "citations": []},
        {"text": "Employees keep their benefit plans for a year.", "tag": "missing", "citations": ["par_388"]},
    ]
    items = [{"rationale": "", **item} for item in items]
    judge = LemajJudge(ScriptedBackendStandIn([json.dumps({"data_points": items})]), Mode.ONE_PASS)
    summary = run_judge(sample_project.sessions, judge, "scripted-one-pass", answer_ids=[answer.id])

    assert summary.judged == 1
    assert summary.rejected == {"prompt echo": 2, "cites no passage": 2}
    with sample_project.sessions() as session:
        rater = raters.rater_named(session, "scripted-one-pass")
        assert judgements.judge_outcomes(session, rater.id)[answer.id].rejected == summary.rejected
        points = judgements.data_points_of(session, answer.id, rater.id)
    texts = " ".join(p.text for p in points)
    assert "evaluate follow" not in texts and "Tag each data point" not in texts and "outside date" not in texts
    tagged = [p for p in points if p.tag is not None]
    assert [p.tag for p in tagged] == [Tag.CORRECT, Tag.MISSING]
    bases = [e["basis"] for e in tagged[0].evidence]  # where no passage of 7.03 holds the point, one that
    assert bases[1:] == ["section"] * (len(bases) - 1) and bases[0] in ("found", "section")  # does comes first
    assert all(e["section"].startswith("7.03") for e in tagged[0].evidence if e["basis"] == "section")
    assert tagged[1].citations == ("par_388",)
    assert all(p.evidence for p in points)  # the untagged rest too: ranked among what the judge saw


def test_echo_check_spares_the_answers_own_words() -> None:
    assert echoes_prompt("Reply with JSON only")
    assert echoes_prompt("citations")
    assert echoes_prompt("the data point contains a factual error or a hallucination")
    assert not echoes_prompt("The Receiving Party shall return all Confidential Information within 30 days.")
    said = "Reply with JSON only, the vendor's form says."
    assert not echoes_prompt("Reply with JSON only", answer=said)
