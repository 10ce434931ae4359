"""Local judges side by side on human-marked real errors: the embedded SmolLM2-135M, the installable
Qwen2.5-Coder-0.5B and -1.5B (app/judging/model_install.py), each as a LeMAJ judge, beside
the claim checker (held out, as bench/real_errors.py trains it) and the flag-everything floor, on the
same answers of ../shared/datasets/real_errors.

    .venv/bin/python bench/local_judges.py [--sets contractnli-dev,ragtruth-qa,ragtruth-summary]
        [--models embedded,qwen2.5-coder-0.5b,qwen2.5-coder-1.5b] [--documents 4] [--per-document 5]
        [--mode tags|one-pass] [--threads 2] [--context 8192] [--checker held-out|none] [--out FILE.json]

Answers are drawn with a fixed seed, `--per-document` answers of each of `--documents` documents per
set, so that a judge reads each document once for several answers (as a run does). Each judge runs
through `assay judge` in its own process, by default tagging as the app does (`--mode two-stage
--tagging one-pass`: every point's tag read from one evaluation; no search for omissions, which never
flags an answer), or with `--mode one-pass` writing its points as JSON (far slower on a CPU); seconds
an answer are its wall time (model load included) over the answers, RSS its peak resident memory. An
answer counts as flagged when the judge tags any point `incorrect`, as
../shared/checks/score_real_errors.py counts it. The models must be installed first (`assay models
--install NAME`); a missing one is skipped and named. The defaults are the run in the README
(2026-11-28: 60 answers a model, about 50 minutes on 2 busy cores).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from real_errors import DATA, held_out_checkers, score, verify  # noqa: E402

ASSAY = str(Path(sys.executable).parent / "assay")
SETS = {  # name: (folder, the answer ids it takes)
    "contractnli-dev": ("contractnli-dev", "cnli-"),
    "ragtruth-qa": ("ragtruth-dev", "rt-qa-"),
    "ragtruth-summary": ("ragtruth-dev", "rt-summary-"),
}


def sample(folder: Path, prefix: str, documents: int, per_document: int, seed: int) -> list[dict]:
    """`per_document` answers of each of `documents` documents, drawn with `seed`."""
    rows = [json.loads(line) for line in (folder / "qa.jsonl").read_text().splitlines() if line.strip()]
    by_document: dict[str, list[dict]] = {}
    for row in rows:
        if row["id"].startswith(prefix):
            by_document.setdefault(row["document"], []).append(row)
    draw = random.Random(seed)
    chosen = draw.sample(sorted(by_document), min(documents, len(by_document)))
    return [r for d in chosen for r in draw.sample(by_document[d], min(per_document, len(by_document[d])))]


def import_sample(folder: Path, rows: list[dict], work: Path) -> Path:
    source = work / "dataset"
    source.mkdir()
    (source / "documents").symlink_to(folder / "documents")
    (source / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    project = work / "p.assay"
    subprocess.run([ASSAY, "--project", str(project), "import", str(source)], check=True, capture_output=True)
    return project


def model_path(name: str) -> Path | None:
    from app.judging.model_install import CATALOGUE, installed_path
    from models.backends.llama_local import embedded_model_path

    return embedded_model_path() if name == "embedded" else installed_path(CATALOGUE[name])


def run_judge(project: Path, ids: list[str], model: Path, name: str, threads: int, context: int, mode: str) -> dict:
    """One `assay judge` process: its points, wall seconds and peak RSS."""
    command = [ASSAY, "--project", str(project), "judge", "--model", str(model)]
    # the app's default tagging: every point's tag read from one evaluation (label slots); no search
    # for omissions, which never makes an answer flagged; `one-pass`: the judge writes its points as JSON
    command += ["--mode", "two-stage", "--tagging", "one-pass", "--no-missing"] if mode == "tags" else ["--mode", mode]
    command += ["--threads", str(threads), "--context", str(context), "--name", name, "--answers", ",".join(ids)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    stderr = process.stderr.read() if process.stderr else ""
    if status != 0:
        raise SystemExit(f"assay judge failed with {model.name}: {stderr[-2000:]}")
    out = project.with_name(f"{name.replace(':', '_')}.jsonl")
    subprocess.run(
        [ASSAY, "--project", str(project), "export", "--format", "jsonl", str(out)], check=True, capture_output=True
    )
    points: dict[str, list[dict]] = {a: [] for a in ids}
    for record in map(json.loads, out.read_text().splitlines()):
        if record["rater"] != name or record["answer_id"] not in points:
            continue
        for p in record["data_points"]:
            if p.get("span"):
                verdict = "incorrect" if p["tag"] == "incorrect" else "other"
                points[record["answer_id"]].append({"start": p["span"][0], "end": p["span"][1], "verdict": verdict})
    failed = sum(not found for found in points.values())  # no tagged point: the judge's output was refused
    return {"points": points, "seconds": seconds, "rss_mb": usage.ru_maxrss / 1024, "failed": failed}


def checker_points(data: dict, folder: str, project: Path, ids: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    points: dict[str, list[dict]] = {}
    for checker, mine in held_out_checkers(data, folder):
        chosen = [a for a in ids if mine is None or a in mine]
        if chosen:
            points.update(verify(project, chosen, checker, False))
    return points, time.perf_counter() - started


def row(set_name: str, rater: str, figures: dict, seconds: float | None, rss: float | None) -> dict:
    [part] = figures["parts"].values()
    return {
        "set": set_name,
        "rater": rater,
        "answers": part["answers"],
        "with_error": part["with_error"],
        "f1": part["f1"],
        "precision": part["precision"],
        "recall": part["recall"],
        "false_alarms": part["false_alarms"],
        "floor_f1": part["floor_f1"],
        "s_per_answer": seconds,
        "rss_mb": rss,
    }


def table(rows: list[dict]) -> str:
    head = f"{'set':17} {'rater':26} {'n':>3} {'err':>3} {'F1':>5} {'P':>5} {'R':>5} {'alarms':>6} {'flag-all':>8}"
    lines = [head + f" {'s/answer':>8} {'RSS MB':>7}"]
    for r in rows:
        alarms = "—" if r["false_alarms"] is None else f"{r['false_alarms']:.2f}"
        speed = "—" if r["s_per_answer"] is None else f"{r['s_per_answer']:.1f}"
        rss = "—" if r["rss_mb"] is None else f"{r['rss_mb']:.0f}"
        lines.append(
            f"{r['set']:17} {r['rater']:26} {r['answers']:>3} {r['with_error']:>3} {r['f1']:>5.2f} "
            f"{r['precision']:>5.2f} {r['recall']:>5.2f} {alarms:>6} {r['floor_f1']:>8.2f} {speed:>8} {rss:>7}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--models", default="embedded,qwen2.5-coder-0.5b,qwen2.5-coder-1.5b")
    parser.add_argument("--documents", type=int, default=4)
    parser.add_argument("--per-document", type=int, default=5)
    parser.add_argument("--seed", type=int, default=58)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--mode", choices=["tags", "one-pass"], default="tags")
    parser.add_argument("--checker", choices=["held-out", "none"], default="held-out")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("ASSAY_JUDGE_STATE_DIR", tempfile.mkdtemp(prefix="local-judges-state-"))  # cold, every run
    models = {}
    for name in args.models.split(","):
        if (path := model_path(name)) is None:
            print(f"{name}: not installed (`assay models --install {name}`): skipped", flush=True)
        else:
            models[name] = path
    data = None
    if args.checker == "held-out":
        import train_claim_checker as training

        started = time.perf_counter()
        data = training.load_all(DATA)
        print(f"claim checker: features of all labelled points in {time.perf_counter() - started:.0f} s", flush=True)
    print(
        f"{args.documents} documents x {args.per_document} answers a set (seed {args.seed}); judges: {args.mode}, "
        f"{args.threads} threads, context {args.context}; load average {os.getloadavg()[0]:.1f} at the start",
        flush=True,
    )
    rows: list[dict] = []
    for set_name in args.sets.split(","):
        folder_name, prefix = SETS[set_name]
        folder = DATA / folder_name
        chosen = sample(folder, prefix, args.documents, args.per_document, args.seed)
        ids = [r["id"] for r in chosen]
        work = Path(tempfile.mkdtemp(prefix=f"local-judges-{set_name}-"))
        project = import_sample(folder, chosen, work)
        if data is not None:
            points, seconds = checker_points(data, folder_name, project, ids)
            rows.append(row(set_name, "claim checker (held out)", score(folder, points), seconds / len(ids), None))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
        for name, path in models.items():
            judged = run_judge(project, ids, path, f"judge:{name}", args.threads, args.context, args.mode)
            figures = score(folder, judged["points"])
            rows.append(row(set_name, name, figures, judged["seconds"] / len(ids), judged["rss_mb"]))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end\n" + table(rows))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
