"""Two-stage judging on a laptop CPU: judge 10 answers about one real contract four ways, side by side
in one run: per-point tagging with the cache reset before each answer, per-point tagging reusing the
contract's KV cache across answers, one-pass tagging (every point's label slot in one evaluation)
reusing it too, and one-pass tagging in the next run about the contract, which loads the model's state
after reading it from disk (kept there by the run before) instead of reading it again.

    nice .venv/bin/python bench/judge_throughput.py [--document Keep.txt] [--answers 10] [--missing]

Prints per mode the wall time, s/answer, prompt tokens evaluated, the unique-token floor (the size of
the token trie of that mode's prompts: what any cache must evaluate at least once) and the speed-up
against the cache reset; then how often the two taggings agree.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from app.ingest.datasets import import_dataset
from app.judging.cases import is_whole_document, select_evidence
from app.project import SAMPLE_DATASET, Project
from models.backends.llama_local import LlamaBackend
from models.judge import JudgeCase, LemajJudge, Mode, Tagging
from models.prompts import Strictness
from storage.db import url_for_path


class RecordingBackend(LlamaBackend):
    """The real backend, remembering every prompt's tokens to compute the floor."""

    prompts: list[list[int]]

    def layout(self, prompt):  # type: ignore[override]
        layout = super().layout(prompt)
        self.prompts.append(layout.tokens)
        return layout


def trie_size(sequences: list[list[int]]) -> int:
    root: dict = {}
    size = 0
    for sequence in sequences:
        node = root
        for token in sequence:
            if token not in node:
                node[token] = {}
                size += 1
            node = node[token]
    return size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--document", default="Keep.txt")
    parser.add_argument("--answers", type=int, default=10)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--missing", action="store_true", help="include the missing-point generation step")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--reset-answers",
        type=int,
        help="answers for the cache-reset arm (default: all); its s/answer does not depend on how many",
    )
    args = parser.parse_args()

    project = Project.open(url_for_path(Path(tempfile.mkdtemp()) / "bench.assay"))
    import_dataset(project.sessions, SAMPLE_DATASET)
    answers = [a.id for a in project.answers() if a.document == args.document][: args.answers]
    backend = RecordingBackend(context_tokens=args.context, threads=args.threads)
    backend.prompts = []
    cases = []
    with project.sessions() as session:
        for answer_id in answers:
            answer = project.answer(answer_id)
            passages = project.passages(answer.document_id)
            evidence = select_evidence(session, backend, passages, answer.question, answer.text, Strictness.STANDARD)
            whole = is_whole_document(evidence, passages)
            cases.append(JudgeCase(answer_id, answer.question, answer.text, evidence, frozenset(), None, whole))
    document_tokens = backend.count_tokens("\n".join(p.text for p in cases[0].evidence))
    print(
        f"{args.document}: {len(cases)} answers, evidence {len(cases[0].evidence)} passages, ~{document_tokens} tokens"
    )

    kept = Path(tempfile.mkdtemp(prefix="judge-state-"))  # empty: the first one-pass run reads the contract
    arms = {  # tagging, cache reset before each answer, folder of kept document states
        "cache reset, per-point": (Tagging.PER_POINT, True, None),
        "prefix reused, per-point": (Tagging.PER_POINT, False, None),
        "one-pass tagging": (Tagging.ONE_PASS, False, kept),
        "one-pass, next run": (Tagging.ONE_PASS, False, kept),
    }
    results, tags = {}, {}
    for arm, (tagging, reset, folder) in arms.items():
        judge = LemajJudge(backend, Mode.TWO_STAGE, find_missing=args.missing, tagging=tagging)
        backend.state_folder = folder
        backend.reset_cache()
        backend.prompts = []
        evaluated = points = 0
        tags[arm] = []
        arm_cases = cases[: args.reset_answers] if reset else cases
        started = time.perf_counter()
        for case in arm_cases:
            if reset:
                backend.reset_cache()
            verdict = judge.evaluate(case)
            evaluated += verdict.evaluated_tokens
            points += len(verdict.points)
            tags[arm] += [p.tag for p in verdict.points if p.start is not None]
        wall = time.perf_counter() - started
        floor = trie_size(backend.prompts)
        results[arm] = (wall / len(arm_cases), evaluated / len(arm_cases))  # per answer
        baseline = results["cache reset, per-point"]
        print(
            f"{arm:25} {wall:7.1f} s  {wall / len(arm_cases):5.2f} s/answer ({len(arm_cases)} answers, "
            f"{points} data points)  tokens evaluated {evaluated:7d}  floor {floor:7d}  "
            f"evaluated/floor {evaluated / floor:5.2f}  "
            f"speed-up vs cache reset {baseline[0] * len(arm_cases) / wall:4.1f}x wall, "
            f"{baseline[1] * len(arm_cases) / evaluated:4.1f}x tokens",
            flush=True,
        )
    reset, reused, one, next_run = (results[arm] for arm in arms)
    print(f"speed-up of prefix reuse: {reset[0] / reused[0]:.1f}x wall, {reset[1] / reused[1]:.1f}x tokens evaluated")
    print(f"speed-up of one-pass tagging: {reset[0] / one[0]:.1f}x wall, {reset[1] / one[1]:.1f}x tokens evaluated")
    print(
        f"speed-up of one-pass tagging, contract state from disk: {reset[0] / next_run[0]:.1f}x wall, "
        f"{reset[1] / next_run[1]:.1f}x tokens evaluated"
    )
    if tags["one-pass tagging"] != tags["one-pass, next run"]:
        raise SystemExit("the state loaded from disk changed a tag")
    same = sum(a == b for a, b in zip(tags["prefix reused, per-point"], tags["one-pass tagging"], strict=True))
    # (per answer: the arms may judge different numbers of answers)
    print(f"one-pass tags equal to per-point tags: {same}/{len(tags['one-pass tagging'])}")


if __name__ == "__main__":
    main()
