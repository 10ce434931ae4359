"""`assay models`: the models used before, and the models already on
this computer (--found), the servers running (--servers), folders and servers added once and
remembered (--add-folder, --add-server), a check of a model on this project (--check), and the
larger local judges Assay can install (--install NAME; alone, the list)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.cli.output import JudgeBar
from app.errors import AssayError, InvalidInput
from app.judging.model_check import check_model
from app.judging.model_discovery import OLLAMA_PREFIX, detect_servers, find_models, resolve_model, server_url
from app.judging.model_files import describe, read_model_info, recent_models
from app.judging.runs import JudgeSettings, destination, permitted
from app.project import Project
from app.settings import load_settings, save_settings
from models.vocabulary import BackendKind


def without_project(args: argparse.Namespace) -> int:
    """`assay models` without --check is about this computer's models: it opens no project, nor makes one."""
    if args.install is not None:
        return install(args)
    return _models(None, args)


def _models(project: Project | None, args: argparse.Namespace) -> int:
    if args.add_folder is not None or args.add_server is not None:
        _remember(args)
    if args.check:
        assert project is not None, "--check measures a model on a project: main opens it"
        return _check(project, args)
    if not (args.found or args.servers):
        return _recent(args)
    settings = load_settings()
    payload: dict[str, Any] = {}
    if args.found:
        payload["models"] = [asdict(m) | {"judge_with": m.choice_name} for m in find_models(settings.model_folders)]
    if args.servers:
        servers = detect_servers(settings.model_servers)
        payload["servers"] = [asdict(s) | {"on_this_computer": s.on_this_computer} for s in servers]
    if args.json:
        print(json.dumps(payload))
        return 0
    for found in payload.get("models", []):
        print(f"{found['judge_with']}\n    {_line(found)}")
    if args.found and not payload["models"]:
        print("no GGUF models found in the folders of Ollama, LM Studio, GPT4All, Jan or the Hugging Face cache")
    for server in payload.get("servers", []):
        print(_server_line(server))
    return 0


def _recent(args: argparse.Namespace) -> int:
    """The GGUF files judged with before: what each is, and its last measured speed."""
    rows = []
    for recent in recent_models():
        try:
            info: str | dict[str, Any] = describe(read_model_info(Path(recent["path"])))
        except InvalidInput as exc:
            info = exc.problem
        speed = recent.get("tokens_per_second")
        rows.append({**recent, "about": info})
        if not args.json:
            measured = f"{speed:.1f} tokens/s (judge run of {recent['measured_at'][:10]})" if speed else "not run yet"
            print(f"{recent['path']}\n    {info}\n    {measured}")
    if args.json:
        print(json.dumps(rows))
    elif not rows:
        print("no models used yet: choose one in the judge dialog or run `assay judge --model FILE.gguf`")
    return 0


def install(args: argparse.Namespace) -> int:
    """Install one model of the catalogue, its size said first; with no name, list the catalogue."""
    from app.cli.output import ProgressBar
    from app.judging.model_install import CATALOGUE, install_model, installable, installed_path, models_folder

    if not args.install:
        rows = [
            {
                "name": m.name,
                "title": m.title,
                "size_bytes": m.size,
                "path": str(p) if (p := installed_path(m)) else None,
            }
            for m in CATALOGUE.values()
        ]
        if args.json:
            print(json.dumps(rows))
        for row, model in zip(rows, CATALOGUE.values(), strict=True):
            if not args.json:
                state = f"installed: {row['path']}" if row["path"] else f"`assay models --install {model.name}`"
                print(f"{model.name}\n    {model.size_sentence()}\n    {state}")
        return 0
    model = installable(args.install)
    if (path := installed_path(model)) is None:
        print(f"assay: {model.size_sentence()}, into {models_folder()}", file=sys.stderr)
        try:
            with ProgressBar(f"installing {model.name}", "MB") as bar:
                path = install_model(
                    model, on_progress=lambda done, total, what: bar(done // 10**6, total // 10**6, step=what)
                )
        except KeyboardInterrupt:
            raise AssayError(f"the install of {model.name} was stopped: run it again to resume") from None
        print(f"assay: {model.title} installed and checked (SHA-256 {model.sha256})", file=sys.stderr)
    if args.json:
        print(json.dumps({"name": model.name, "path": str(path), "sha256": model.sha256}))
    else:
        print(f"{path}\n    judge with it: assay judge --model {model.name}")
    return 0


def _server_line(server: dict[str, Any]) -> str:
    from app.judging.model_discovery import FoundServer

    return FoundServer(**{k: v for k, v in server.items() if k != "on_this_computer"}).line()


def _line(found: dict[str, Any]) -> str:
    from app.judging.model_discovery import FoundModel

    return FoundModel(**{k: v for k, v in found.items() if k != "judge_with"}).line()


def _remember(args: argparse.Namespace) -> None:
    """A folder or a server, added once to the settings (the same one twice is kept once)."""
    settings = load_settings()
    if args.add_folder is not None:
        try:
            folder = args.add_folder.expanduser().resolve()
        except RuntimeError:  # Python 3.11's word for a symbolic link that loops
            raise InvalidInput(
                str(args.add_folder), "not a folder: a symbolic link in its path points to itself"
            ) from None
        if not folder.is_dir():
            raise InvalidInput(str(args.add_folder), "not a folder")
        if str(folder) not in settings.model_folders:
            settings.model_folders.append(str(folder))
        print(f"assay: GGUF models are also looked for in {folder}", file=sys.stderr)
    if args.add_server is not None:
        url = server_url(args.add_server)
        if url not in settings.model_servers:
            settings.model_servers.append(url)
        print(f"assay: the model server {url} is remembered", file=sys.stderr)
    save_settings(settings)


def _check(project: Project, args: argparse.Namespace) -> int:
    if args.base_url:
        settings = JudgeSettings(
            backend=BackendKind.OPENAI, model=args.check, base_url=server_url(args.base_url), structured=args.structured
        )
    elif args.check == "embedded":
        settings = JudgeSettings()
    else:
        settings = JudgeSettings(model=resolve_model(args.check))
    settings = permitted(settings, project.allowed_hosts(), False)
    if not settings.allow_network and settings.backend != BackendKind.LOCAL:  # a server here included: see http.py
        host = destination(settings)
        raise InvalidInput(
            "--base-url",
            f"the check would send document and answer text to {host}: allow it for "
            f"the project first (`assay network allow {host}`, audited)",
        )
    name = f"check:{args.check.removeprefix(OLLAMA_PREFIX)}" if args.check.startswith(OLLAMA_PREFIX) else None
    with JudgeBar("checking the model") as bar:
        result = check_model(project, settings, size=args.size, name=name, on_progress=bar.judged)
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print("\n".join(result.lines()))
    return 0


def with_found_model(args: argparse.Namespace) -> argparse.Namespace:
    """`assay judge --model ollama:NAME:TAG`: the blob Ollama keeps the model in, and a run named after
    the model rather than its blob's hash; `--model qwen2.5-coder-1.5b`: the file Assay installed."""
    from app.judging.model_install import CATALOGUE

    if args.model in CATALOGUE and args.backend == BackendKind.LOCAL.value:
        return argparse.Namespace(**(vars(args) | {"model": resolve_model(args.model)}))
    if not args.model or not args.model.startswith(OLLAMA_PREFIX):
        return args
    if args.backend != BackendKind.LOCAL.value:
        raise AssayError(f"{args.model} is a model file Ollama keeps: judge with it locally (leave --backend)")
    name = args.model.removeprefix(OLLAMA_PREFIX)
    if not args.name:
        rubric = getattr(args, "rubric", "lemaj")
        args.name = f"judge:{name}:{args.mode}:{args.strictness}" if rubric == "lemaj" else f"{rubric}:{name}"
    return argparse.Namespace(**(vars(args) | {"model": resolve_model(args.model)}))


COMMANDS = {"models": _models}
