"""API judges over httpx: OpenAI-compatible servers (OpenAI, vLLM, llama-server, Ollama, gateways)
and Anthropic's Messages API. Nothing is sent unless the user allowed network use for this host, a
server on this computer included: a local port can be a tunnel to anywhere."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from models.backends.base import Generation, LabelScores
from models.errors import JudgeOutputInvalid, JudgeUnavailable, NetworkNotAllowed
from models.prompts import Prompt

RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504, 529}


def api_key(host: str) -> str | None:
    """The key for a host: ASSAY_API_KEY, else the OS keyring (service 'assay', user = host)."""
    if key := os.environ.get("ASSAY_API_KEY"):
        return key
    try:
        import keyring

        return keyring.get_password("assay", host)
    except Exception:  # no keyring backend on this machine: same as no key
        return None


def is_loopback(host: str) -> bool:
    """A server addressed on this computer (127.0.0.1, ::1, localhost): named so, yet asked for like any
    other host, since what listens on a local port may forward the texts elsewhere."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _HttpJudge:
    """Retries with back-off on 429/5xx and network errors; at most `concurrency` requests at once."""

    backend_name = "http"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        allow_network: bool,
        key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        concurrency: int = 4,
        context_tokens: int = 32_000,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.host = urlsplit(self.base_url).netloc or self.base_url
        if not allow_network:
            raise NetworkNotAllowed(
                f"this judge would send document and answer text to {self.host}; "
                "allow network use for the project (--allow-network) to proceed"
            )
        self.model = model
        self.key = key if key is not None else api_key(self.host)
        self.max_retries = max_retries
        self.backoff = backoff
        self.context_tokens = context_tokens
        self._slots = threading.BoundedSemaphore(concurrency)
        self.client = httpx.Client(base_url=self.base_url, timeout=timeout, headers=self._headers())

    def _headers(self) -> dict[str, str]:
        return {}

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend_name, "model": self.model, "base_url": self.base_url, "host": self.host}

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / 3.5)  # no tokenizer for a remote model: a cautious estimate

    def reset_cache(self) -> None:
        """A server keeps its own cache; there is nothing to reset from here."""

    def continuation_logprob(self, prompt: Prompt, continuation: str) -> float | None:
        return None  # a chat API does not score text it did not write

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        problem = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, problem))
            try:
                with self._slots:
                    response = self.client.post(path, json=body)
            except httpx.TimeoutException:
                problem = f"{self.host} did not answer in time"
                continue
            except httpx.TransportError as exc:
                problem = f"cannot reach {self.host} ({exc.__class__.__name__})"
                continue
            if response.status_code in RETRYABLE:
                problem = f"{self.host} answered {response.status_code}"
                self._retry_after = response.headers.get("retry-after")
                continue
            if response.status_code >= 400:
                raise JudgeUnavailable(
                    f"{self.host} refused the request ({response.status_code}: {response.text[:200]})"
                )
            try:
                reply: dict[str, Any] = response.json()
                return reply
            except json.JSONDecodeError as exc:
                raise JudgeOutputInvalid(f"{self.host} sent a reply that is not JSON", response.text[:2000]) from exc
        raise JudgeUnavailable(f"{problem}; gave up after {self.max_retries + 1} tries")

    _retry_after: str | None = None

    def _delay(self, attempt: int, _problem: str) -> float:
        hinted, self._retry_after = self._retry_after, None
        if hinted and hinted.replace(".", "", 1).isdigit():
            return min(float(hinted), 60.0)
        return float(self.backoff * 2 ** (attempt - 1))

    def close(self) -> None:
        self.client.close()


class OpenAIBackend(_HttpJudge):
    """POST /chat/completions. `structured`: 'json_schema' (OpenAI, vLLM), 'json_object' (llama-cpp
    server, which ignores json_schema), or 'none'."""

    backend_name = "openai"

    def __init__(self, base_url: str, model: str, *, structured: str = "json_schema", **kwargs: Any) -> None:
        super().__init__(base_url, model, **kwargs)
        self.structured = structured

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "structured": self.structured}

    def _messages(self, prompt: Prompt) -> list[dict[str, str]]:
        messages = [{"role": m.role, "content": m.text} for m in prompt.messages]
        if prompt.assistant_prefix:
            messages[-1]["content"] += f"\nReply with one word after '{prompt.assistant_prefix}'."
        return messages

    def generate(
        self, prompt: Prompt, *, schema: dict[str, Any], max_tokens: int, temperature: float, seed: int
    ) -> Generation:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(prompt),
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
        }
        if self.structured == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
        elif self.structured == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        reply = self.post("/chat/completions", body)
        try:
            text = reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as exc:
            raise JudgeOutputInvalid(f"{self.host} sent no completion", json.dumps(reply)[:2000]) from exc
        usage = reply.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        return Generation(text, prompt_tokens, prompt_tokens, int(usage.get("completion_tokens", 0)))

    def label_scores(self, prompt: Prompt, labels: Sequence[str]) -> LabelScores | None:
        """The first reply token's top log-probabilities; None when the server gives none."""
        body = {
            "model": self.model,
            "messages": self._messages(prompt),
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": 20,
        }
        reply = self.post("/chat/completions", body)
        try:
            top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        except (KeyError, IndexError, TypeError):
            return None
        found: dict[str, float] = {}
        for entry in top:
            word = str(entry.get("token", "")).strip().lower()
            for label in labels:
                if word and label.startswith(word) and label not in found:
                    found[label] = float(entry["logprob"])
        if not found:
            return None
        floor = min(found.values()) - 5.0  # a label outside the top list is far less likely
        raw = {label: found.get(label, floor) for label in labels}
        norm = math.log(sum(math.exp(v) for v in raw.values()))
        usage = reply.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        return LabelScores({k: v - norm for k, v in raw.items()}, prompt_tokens, prompt_tokens)


class AnthropicBackend(_HttpJudge):
    """POST /v1/messages; structured output through a forced tool call."""

    backend_name = "anthropic"
    VERSION = "2023-06-01"

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.VERSION}
        if self.key:
            headers["x-api-key"] = self.key
        return headers

    def generate(
        self, prompt: Prompt, *, schema: dict[str, Any], max_tokens: int, temperature: float, seed: int
    ) -> Generation:
        system = "\n\n".join(m.text for m in prompt.messages if m.role == "system")
        user = "\n\n".join(m.text for m in prompt.messages if m.role != "system")
        body = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": min(temperature, 1.0),
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "tools": [{"name": "record_verdict", "description": "Record the evaluation.", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": "record_verdict"},
        }
        reply = self.post("/v1/messages", body)
        blocks = reply.get("content") or []
        calls = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if not calls:
            raise JudgeOutputInvalid(f"{self.host} did not call the verdict tool", json.dumps(reply)[:2000])
        usage = reply.get("usage") or {}
        prompt_tokens = int(usage.get("input_tokens", 0))
        return Generation(
            json.dumps(calls[0].get("input")), prompt_tokens, prompt_tokens, int(usage.get("output_tokens", 0))
        )

    def label_scores(self, prompt: Prompt, labels: Sequence[str]) -> LabelScores | None:
        return None  # the Messages API gives no log-probabilities
