"""Which Runs to make: every Task x model, topped up to N successful Runs with the same inputs."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError
from smevals.spec.model import Config, Eval, Task
from smevals.spec.programs import ProgramError, resolve_program
from smevals.store.canonical import dumps, sha256_bytes
from smevals.store.store import Store

BUILTIN_PREFIX = "smevals:"


@dataclass(frozen=True)
class Runner:
    builtin: str | None        # "replay" / "openai", or None for a program
    program: Path | None
    display: str
    digest: str                # sha256 of the program (or of the built-in's identity)


@dataclass(frozen=True)
class Job:
    task: Task
    model: str
    config: dict[str, Any]     # the resolved config
    inputs: dict[str, str]
    sample: int                # index among the pair's Runs with these inputs


@dataclass(frozen=True)
class PairPlan:
    task: str
    model: str
    existing: int
    wanted: int


def resolve_runner(config: Config) -> Runner:
    from smevals.runners import builtin_name

    name = builtin_name(config.runner)
    if name is not None:
        return Runner(name, None, config.runner, _builtin_digest(name, config))
    try:
        path = resolve_program(config.runner, config.path.parent)
    except ProgramError as exc:
        raise SmevalsError(f"{config.path}: runner {exc}") from None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Runner(None, path, str(path), digest)


def _builtin_digest(name: str, config: Config) -> str:
    """A built-in is identified by its name, plus the content of a replay responses file."""
    parts = [BUILTIN_PREFIX + name]
    responses = config.doc.get("responses")
    if name == "replay" and isinstance(responses, str):
        path = config.path.parent / responses
        parts.append(hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "")
    return sha256_bytes("\n".join(parts).encode())


def resolved_config(config: Config, runner: Runner, model: str) -> dict[str, Any]:
    return {**config.doc, "name": config.name, "runner": runner.display, "model": model}


def inputs_of(task: Task, config: Config, runner: Runner, model: str) -> dict[str, str]:
    """Hashes of what determines a Run: the task (without grading), the config as written
    (with its model), and the runner's content. Paths on this machine are left out."""
    parts = {
        "task": sha256_bytes(dumps(task.doc)),
        "config": sha256_bytes(dumps({**config.doc, "name": config.name, "model": model})),
        "runner": runner.digest,
    }
    return {"hash": sha256_bytes(dumps(parts)), **parts}


def plan_jobs(ev: Eval, config: Config, runner: Runner, tasks: list[Task], models: list[str],
              repeat: int | None, store: Store) -> tuple[list[Job], list[PairPlan]]:
    """Jobs in passes (repeat index, then task, then model) so an interruption leaves balance."""
    have = Counter(_ok_inputs(store))
    pairs, needs = [], {}
    for task in tasks:
        for model in models:
            inputs = inputs_of(task, config, runner, model)
            existing = have[inputs["hash"]]
            wanted = 1 if repeat is None else max(0, repeat - existing)
            needs[(task.name, model)] = (inputs, existing, wanted)
            pairs.append(PairPlan(task.name, model, existing, wanted))
    jobs = []
    for index in range(max((p.wanted for p in pairs), default=0)):
        for task in tasks:
            for model in models:
                inputs, existing, wanted = needs[(task.name, model)]
                if index < wanted:
                    cfg = resolved_config(config, runner, model)
                    jobs.append(Job(task, model, cfg, inputs, existing + index))
    return jobs, pairs


def _ok_inputs(store: Store) -> list[str]:
    return [str(o.record.get("inputs", {}).get("hash")) for o in store.runs(brief=True)
            if o.record.get("status") == "ok"]
