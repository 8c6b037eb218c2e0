"""Which Runs to make: every Task x model, topped up to N successful Runs with the same inputs."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from smevals.errors import SmevalsError
from smevals.evaldef.load import printable
from smevals.evaldef.model import Config, Eval, Task
from smevals.evaldef.programs import ProgramError, resolve_program
from smevals.files.canonical import dumps, sha256_bytes
from smevals.store.read import Store
from smevals.store.records import Inputs

BUILTIN_PREFIX = "smevals:"


@dataclass(frozen=True)
class Runner:
    builtin: str | None        # "replay" / "openai", or None for a program
    program: Path | None
    display: str
    digest: str                # sha256 of the program (or of the built-in's identity)


@dataclass(frozen=True)
class Job:
    task: Task                 # as the runner sees it (a Config's prompt_template filled in)
    model: str
    config: dict[str, Any]     # the resolved config
    inputs: Inputs
    sample: int                # index among the pair's Runs with these inputs


@dataclass(frozen=True)
class PairPlan:
    task: str
    model: str
    existing: int
    wanted: int
    stale: int = 0                 # successful Runs of this pair made from other inputs
    why: tuple[str, ...] = ()      # what differs: task edited, config changed, runner changed


REASONS = ("task edited", "config changed", "runner changed", "workspace changed")
_PARTS = ("task", "config", "runner", "workspace")


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
    return Runner(None, path, printable(str(path)), digest)     # a record is UTF-8


def check_runnable(runner: Runner, config: Config) -> None:
    """A built-in that cannot run here (a harness not installed) stops `run` before any Run
    (SmevalsError, exit 2). Not part of `resolve_runner`: `report` and `diff` tell stale Runs
    on machines that will never run them."""
    import os

    from smevals.runners import preflight

    why = preflight(runner.builtin, config.doc, config.path.parent, os.environ) \
        if runner.builtin else None
    if why is not None:
        raise SmevalsError(f"{config.path}: {why}")


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


_UNKNOWN = "?"


def inputs_of(task: Task, config: Config, runner: Runner, model: str,
              config_digest: str | None = None, files: str | None = _UNKNOWN,
              task_digest: str | None = None) -> Inputs:
    """Hashes of what determines a Run: the task (without grading), the config as written
    (with its model), the runner's content, and the Task's starting files when it has some.
    Paths on this machine are left out. `config_digest` is `digest_of_config(config,
    model)`, `files` is `workspace_digest(task)` and `task_digest` is `digest_of_task(task)`,
    when the caller already has them."""
    parts = {
        "task": task_digest or digest_of_task(task),
        "config": config_digest or digest_of_config(config, model),
        "runner": runner.digest,
    }
    if files == _UNKNOWN:
        files = workspace_digest(task)
    if files is not None:
        parts["workspace"] = files
    return cast(Inputs, {"hash": sha256_bytes(dumps(parts)), **parts})


def workspace_digest(task: Task) -> str | None:
    """The digest of the Task's starting files (names and bytes); None without `workspace:`.
    One that cannot be read (a file removed meanwhile) gives a digest no Run has."""
    from smevals.evaldef.workspace import WorkspaceError, has_workspace, starting

    if not has_workspace(task):
        return None
    try:
        found = starting(task)
    except WorkspaceError as exc:
        return f"unreadable: {exc}"
    return found.digest if found else None


def digest_of_task(task: Task) -> str:
    return sha256_bytes(dumps(task.doc))


def digest_of_config(config: Config, model: str) -> str:
    return sha256_bytes(dumps({**config.doc, "name": config.name, "model": model}))


def plan_jobs(ev: Eval, config: Config, runner: Runner, tasks: list[Task], models: list[str],
              repeat: int | None, store: Store) -> tuple[JobPlan, list[PairPlan]]:
    """Jobs in passes (repeat index, then task, then model) so an interruption leaves balance."""
    earlier = _ok_inputs(store)
    have = Counter(str(one.get("hash")) for runs in earlier.values() for one in runs)
    pairs: list[PairPlan] = []
    needs: dict[tuple[str, str], tuple[Inputs, int, int]] = {}
    digests = {model: digest_of_config(config, model) for model in models}
    for task in tasks:
        files = workspace_digest(task)          # once per Task: it walks the files
        task_digest = digest_of_task(task)
        for model in models:
            inputs = inputs_of(task, config, runner, model, digests[model], files, task_digest)
            existing = have[inputs["hash"]]
            wanted = 1 if repeat is None else max(0, repeat - existing)
            needs[(task.name, model)] = (inputs, existing, wanted)
            stale, why = _stale(earlier.get((task.name, config.name, model), []), inputs)
            pairs.append(PairPlan(task.name, model, existing, wanted, stale, why))
    return JobPlan(tasks, models, needs, config, runner), pairs


class JobPlan:
    """The Jobs of a plan in passes, made one at a time as they are taken: a plan of a
    million Runs is counted (`len`) without a million Jobs in memory."""

    def __init__(self, tasks: list[Task], models: list[str],
                 needs: dict[tuple[str, str], tuple[Inputs, int, int]], config: Config,
                 runner: Runner) -> None:
        self.slots = [(task, model, *needs[(task.name, model)])
                      for task in tasks for model in models]
        self.config, self.runner = config, runner

    def __len__(self) -> int:
        return sum(wanted for *_rest, wanted in self.slots)

    def __iter__(self) -> Iterator[Job]:
        given: dict[str, tuple[Task, dict[str, Any]]] = {}
        for index in range(max((wanted for *_rest, wanted in self.slots), default=0)):
            for task, model, inputs, existing, wanted in self.slots:
                if index < wanted:
                    seen, cfg = given.get(task.name) or given.setdefault(
                        task.name, _given(task, self.config, self.runner))
                    yield Job(seen, model, {**cfg, "model": model}, inputs, existing + index)


def _given(task: Task, config: Config, runner: Runner) -> tuple[Task, dict[str, Any]]:
    """The Task and the resolved config as a Run of `task` gets them: the Config's
    `prompt_template` and `system` filled in (run/prompts.py)."""
    from smevals.run.prompts import given_task, resolve_config

    cfg = resolved_config(config, runner, "")
    return given_task(task, config), resolve_config(cfg, config, task)


def _ok_inputs(store: Store) -> dict[tuple[str, str, str], list[Mapping[str, object]]]:
    """The inputs of every successful Run, by (task, config, model) name."""
    out: dict[tuple[str, str, str], list[Mapping[str, object]]] = {}
    for obj in store.runs(brief=True):
        rec = obj.record
        if rec.get("status") != "ok":
            continue
        key = (_name(rec.get("task")), _name(rec.get("config")), str(rec.get("model")))
        inputs = rec.get("inputs")
        out.setdefault(key, []).append(inputs if isinstance(inputs, dict) else {})
    return out


def _name(part: object) -> str:
    return str(part.get("name")) if isinstance(part, dict) else ""


def _stale(earlier: list[Mapping[str, object]], now: Inputs) -> tuple[int, tuple[str, ...]]:
    """How many earlier Runs of a pair were made from other inputs, and what differs."""
    found: set[str] = set()
    count = 0
    for inputs in earlier:
        if inputs.get("hash") == now["hash"]:
            continue
        count += 1
        found.update(differences(inputs, now))
    return count, tuple(reason for reason in REASONS if reason in found)


def differences(had: object, now: Mapping[str, object]) -> list[str]:
    """What differs between a Run's recorded inputs and `now` (REASONS, in order)."""
    had = had if isinstance(had, dict) else {}
    return [reason for reason, part in zip(REASONS, _PARTS, strict=True)
            if had.get(part) != now.get(part)]
