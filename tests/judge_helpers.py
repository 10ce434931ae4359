"""Servers and stand-ins for the judge tests, all on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def llama_cpp_server(model_path: str, alias: str = "smollm2") -> Iterator[str]:
    """A real OpenAI-compatible server (llama_cpp.server) serving the embedded model."""
    port = free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 - not a pipe: the server logs more than a pipe holds
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            model_path,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--logits_all",
            "true",
            "--model_alias",
            alias,
            "--n_threads",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"llama_cpp.server exited: {log.read().decode()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        else:
            raise RuntimeError("llama_cpp.server did not start within 60 s")
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


@contextmanager
def scripted_http_server(
    replies: list[tuple[int, dict[str, Any]]], delay: float = 0.0
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real HTTP server on loopback that answers each POST with the next scripted (status, body),
    `delay` seconds later, and records the requests with when each began and was answered. Stands in
    for servers that cannot run here (Anthropic's, a flaky gateway, a batching inference server)."""
    received: list[dict[str, Any]] = []
    pending = list(replies)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            request = {"path": self.path, "headers": dict(self.headers), "body": json.loads(self.rfile.read(length))}
            request["began"] = time.monotonic()
            with lock:
                received.append(request)
                status, body = pending.pop(0) if pending else (500, {"error": "script exhausted"})
            time.sleep(delay)
            request["answered"] = time.monotonic()
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            if status == 429:
                self.send_header("retry-after", "0")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def chat_reply(content: str) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False
