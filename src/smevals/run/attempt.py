"""One attempt: a fresh workspace in the store's staging area, the runner, then the Run record."""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.evaldef.model import Config, Eval
from smevals.files.canonical import loads
from smevals.files.regular import (
    REGULAR,
    USAGE_LIMIT_SETTING,
    NotRegular,
    TooLarge,
    read_capped,
    usage_limit,
)
from smevals.files.workspace import is_regular, open_dir, remove, write_new
from smevals.phases import phase
from smevals.proc.env import clean_base, scalar_vars, to_json
from smevals.proc.launch import DEFAULT_OUTPUT_CAP, Finished, ProcessGroups, launch
from smevals.run.plan import Job, Runner
from smevals.run.text import normalise
from smevals.store.folders import named
from smevals.store.read import Store
from smevals.store.records import Failure, Ignored, RunFields, Truncation, Usage
from smevals.store.write import RECORD_NAMES, Sealed, Written

if TYPE_CHECKING:
    from smevals.evaldef.workspace import Stamps, Starting

USAGE_FILE = "smevals-usage.json"


@dataclass(frozen=True)
class Session:
    """What every attempt of one `smevals run` shares."""

    ev: Eval
    config: Config
    runner: Runner
    store: Store
    timeout: float | None
    provenance: dict[str, Any]
    groups: ProcessGroups
    environ: dict[str, str]


@dataclass(frozen=True)
class Attempt:
    job: Job
    written: Written
    record: RunFields
    sealed: Sealed | None = field(default=None, compare=False)   # not placed yet
    copy: Path | None = None        # a private copy of the sealed Run, to grade it from

    @property
    def ok(self) -> bool:
        return self.record["status"] == "ok"

    def placed(self, written: Written) -> Attempt:
        """This attempt once its sealed Run is in place (as `written`)."""
        return Attempt(self.job, written, self.record)


def attempt(session: Session, job: Job) -> Attempt | None:
    """Run `job` and store its Run; None when the session was cancelled meanwhile."""
    made = attempt_sealed(session, job)
    return None if made is None or made.sealed is None else made.placed(made.sealed.place())


def attempt_sealed(session: Session, job: Job, keep: bool = False) -> Attempt | None:
    """Run `job` and seal its Run, not yet placed in the store (`Attempt.sealed`; placing
    or aborting it is the caller's); None when the session was cancelled meanwhile. With
    `keep`, an ok Run is also copied, as it is sealed, into a private folder (`Attempt.copy`,
    the caller removes it): what its checkers read."""
    with phase("run staging"):
        staging = session.store.stage("run")
    try:
        started = datetime.now(UTC)
        with phase("run workspace"):
            start, stamps, refused = _copy_in(session.ev, job, staging.dir)
        with phase("runner"):
            finished = _reclaimed(refused or _execute(session, job, staging.dir), staging.dir)
        if session.groups.cancelled.is_set():
            staging.abort()
            return None
        rules, gone = _pruned(job, session, staging.dir)    # noise first: it is not kept
        over = _bounded(staging.dir, stamps)
        with phase("run outputs"):
            record = _record(session, job, staging.dir, finished, started, over)
        if gone is not None:
            record["ignored"] = gone
        if start is not None:
            with phase("run workspace"):
                _settle(record, start, stamps, staging.dir, rules)
        copy = private_folder() if keep and record["status"] == "ok" else None
        try:
            sealed = staging.seal(record, [job.task.name, session.config.name, job.model],
                                  copy)
        except BaseException:
            if copy is not None:
                shutil.rmtree(copy, ignore_errors=True)
            raise
    except BaseException:
        staging.abort()
        raise
    written = Written(sealed.id, sealed.rel, session.store.root / sealed.rel, existed=False)
    return Attempt(job, written, record, sealed, copy)


def private_folder() -> Path:
    """A fresh private folder (removed by whoever asked for it)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="smevals-run-"))


def _copy_in(ev: Eval, job: Job, workspace: Path
             ) -> tuple[Starting | None, Stamps, Finished | None]:
    """Copy the Task's starting files (from the Eval folder of this session: a Dask worker
    has its own copy) into the Run's workspace; a Finished that fails the Run (the runner
    never starts) when they cannot be copied as planned."""
    from smevals.evaldef.workspace import (
        KEY,
        CopyError,
        WorkspaceError,
        copy_in,
        past_tick,
        tree_of,
    )

    spec = job.task.doc.get(KEY)
    if spec is None:
        return None, {}, None
    try:
        start = tree_of(ev.path, spec)
        if start.digest != job.inputs.get("workspace"):
            raise CopyError("the starting files changed since the Run was planned")
        fd = open_dir(workspace)
        try:
            stamps = copy_in(start, fd)
            past_tick(fd, stamps)
        except CopyError:
            for name in os.listdir(fd):         # what was copied before it failed
                remove(fd, name)
            raise
        finally:
            os.close(fd)
    except (WorkspaceError, CopyError) as exc:
        return None, {}, Finished(b"", b"", None, "launch", f"workspace: {exc}", 0.0, {})
    return start, stamps, None


def _pruned(job: Job, session: Session,
            workspace: Path) -> tuple[tuple[str, ...], Ignored | None]:
    """Remove the generated noise `workspace_ignore` names (run/ignore.py), by name, before
    the Run's limits are applied to what is kept: its rules, and what went (for the record's
    `ignored`)."""
    from smevals.run.ignore import prune, rules_of

    rules = rules_of(job.task.doc, session.config.doc)
    fd = open_dir(workspace)
    try:
        with named(workspace):
            gone = prune(fd, rules)
    finally:
        os.close(fd)
    return rules, gone


def _settle(record: RunFields, start: Starting, stamps: Stamps, workspace: Path,
            rules: tuple[str, ...] = ()) -> None:
    """Keep only the agent's work and `workspace.diff`; say in the record what changed."""
    from smevals.run.workspace import settle

    fd = open_dir(workspace)
    try:
        with named(workspace):
            done = settle(start, fd, stamps, rules)
    finally:
        os.close(fd)
    record["workspace"] = done.record()
    if done.truncated is not None:
        record.setdefault("truncated", {})["workspace.diff"] = done.truncated


def runner_env(session: Session, job: Job, workspace: Path) -> dict[str, str]:
    env = clean_base(session.environ)
    env.update(scalar_vars("SMEVALS_TASK_", job.task.doc))
    env.update(scalar_vars("SMEVALS_CONFIG_", job.config))
    env.update({
        "SMEVALS_CONFIG": to_json(job.config),
        "SMEVALS_CONFIG_DIR": str(session.config.path.parent.absolute()),
        "SMEVALS_EVAL_DIR": str(session.ev.path.absolute()),
        "SMEVALS_MODEL": job.model,
        "SMEVALS_TASK": job.task.name,
        "SMEVALS_RUN_DIR": str(workspace.absolute()),
        "SMEVALS_USAGE_FILE": str((workspace / USAGE_FILE).absolute()),
        "SMEVALS_SAMPLE": str(job.sample),
    })
    if "prompt" in job.task.doc:
        env["SMEVALS_PROMPT"] = str(job.task.doc["prompt"])
    if isinstance(job.config.get("system"), str):
        env["SMEVALS_SYSTEM"] = job.config["system"]
    return env


def _execute(session: Session, job: Job, workspace: Path) -> Finished:
    if session.runner.builtin:
        return _builtin(session, job, workspace)
    assert session.runner.program is not None
    env = runner_env(session, job, workspace)
    return launch([str(session.runner.program)], workspace, env, session.timeout, session.groups,
                  cap=output_cap(session.config))


def output_cap(config: Config) -> int:
    """Bytes kept of a runner's stdout and of its stderr: `max_output_bytes`, else 10 MiB."""
    value = config.doc.get("max_output_bytes")
    return value if isinstance(value, int) and value > 0 else DEFAULT_OUTPUT_CAP


def _builtin(session: Session, job: Job, workspace: Path) -> Finished:
    import time

    from smevals.runners import BuiltinContext, run_builtin

    ctx = BuiltinContext(config=job.config, config_dir=session.config.path.parent,
                         task=job.task.doc, model=job.model, sample_index=job.sample,
                         workspace=workspace, timeout=session.timeout,
                         environ=session.environ, cancel=_event(session),
                         children=session.groups)
    start = time.monotonic()
    out = run_builtin(session.runner.builtin or "", ctx)
    lost = reclaim(workspace)
    if lost is not None:
        out.exit_code, out.failure = out.exit_code or 1, "artifact"
        out.stderr += f"{lost}\n"
    if out.usage is not None:      # never through what a harness left under that name
        fd = open_dir(workspace)
        try:
            remove(fd, USAGE_FILE)
            write_new(fd, USAGE_FILE, to_json(out.usage).encode())
        finally:
            os.close(fd)
    failure = None if out.exit_code == 0 else (out.failure or "exit")
    detail = "" if failure is None else (out.stderr.strip().splitlines() or ["failed"])[-1]
    cap = output_cap(session.config)
    stdout, stderr = out.stdout.encode(), out.stderr.encode()
    written = {name: len(data) for name, data in (("stdout", stdout), ("stderr", stderr))
               if len(data) > cap}
    return Finished(stdout[:cap], stderr[:cap], out.exit_code, failure, detail,
                    time.monotonic() - start, written, dict(out.provenance or {}))


def reclaim(workspace: Path) -> str | None:
    """When the runner removed its own workspace folder (or put a link or a file in its
    place), an empty folder takes its place, never following what is there; why the Run
    fails, or None when the folder is still there."""
    try:
        os.close(open_dir(workspace))
        return None
    except OSError:
        pass
    from smevals.files.regular import describe

    now = ""
    if os.path.lexists(workspace):
        now = f" ({describe(str(workspace))} is in its place now)"
        os.unlink(workspace)
    os.mkdir(workspace)
    return f"the runner removed its workspace folder{now}; the Run counts as failed"


def _reclaimed(fin: Finished, workspace: Path) -> Finished:
    lost = reclaim(workspace)
    if lost is None:
        return fin
    return Finished(fin.stdout, fin.stderr, fin.exit_code, "artifact", lost, fin.seconds,
                    fin.written, fin.provenance)


def _event(session: Session) -> threading.Event:
    return session.groups.cancelled


def _bounded(workspace: Path, stamps: Stamps) -> Failure | None:
    """Remove what the runner left past the limits of a Run, before any of it is read
    (run/bounds.py); why the Run then fails."""
    from smevals.run.bounds import bound

    fd = open_dir(workspace)
    try:
        with named(workspace):
            return bound(fd, stamps)
    finally:
        os.close(fd)


def _record(session: Session, job: Job, workspace: Path, fin: Finished,
            started: datetime, over: Failure | None = None) -> RunFields:
    out_text, out_bad = normalise(_whole_chars(fin.stdout, "stdout" in fin.written))
    err_text, err_bad = normalise(_whole_chars(fin.stderr, "stderr" in fin.written))
    failure: Failure | None = {"kind": fin.failure, "detail": fin.detail} if fin.failure else None
    fd = open_dir(workspace)            # every name below is looked at relative to it
    try:
        with named(workspace):
            left = _write_texts(fd, out_text, err_text)
            usage, usage_error = _usage(fd)
            refused = [f for f in (left, over, _refuse_undecodable(fd), _refuse_reserved(fd))
                       if f]
        failure = refused[0] if refused else failure
    finally:
        os.close(fd)
    record: RunFields = {
        "eval": session.ev.name, "task": job.task.doc, "grading": job.task.grading,
        "config": job.config, "model": job.model, "inputs": job.inputs, "sample": job.sample,
        "started": started.isoformat().replace("+00:00", "Z"),
        "ended": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "duration_seconds": round(fin.seconds, 3), "exit_code": fin.exit_code,
        "status": "failed" if failure else "ok", "failure": failure,
        "text": {"output_bytes_replaced": out_bad, "stderr_bytes_replaced": err_bad},
        "usage": usage, "provenance": {**session.provenance, **fin.provenance},
    }
    if usage_error:
        record["usage_error"] = usage_error
    if fin.written:
        record["truncated"] = _truncated(fin)
    return record


def _truncated(fin: Finished) -> dict[str, Truncation]:
    """For each capped file: the bytes kept (the cap) and the bytes the runner wrote."""
    kept = {"stdout": len(fin.stdout), "stderr": len(fin.stderr)}
    files = {"stdout": "output.txt", "stderr": "stderr.txt"}
    return {files[name]: {"kept_bytes": kept[name], "written_bytes": total}
            for name, total in sorted(fin.written.items())}


def _whole_chars(data: bytes, cut: bool) -> bytes:
    """`data` without a UTF-8 sequence the cap cut in half at its end."""
    if not cut:
        return data
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:            # a lead byte: is its sequence complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def _write_texts(fd: int, out_text: str, err_text: str) -> Failure | None:
    """Write `output.txt` (and `stderr.txt` when the runner printed to stderr) as new files
    in the workspace `fd`. What the runner left under those names is removed first, never
    written through (a hard link to a file elsewhere is only unlinked); one that is not a
    regular file (a symlink, a FIFO, a folder ...) is also never opened, and makes the Run
    failed, naming it."""
    found = []
    for name, text in (("output.txt", out_text), ("stderr.txt", err_text)):
        writes = name == "output.txt" or bool(text)
        if writes or is_regular(fd, name) is False:
            was = remove(fd, name)
            if was not in (None, REGULAR):
                found.append(f"{name} is {was}")
        if writes:
            try:
                write_new(fd, name, text.encode("utf-8"))
            except FileExistsError:             # made again meanwhile (a runner's child)
                found.append(f"{name} was made again while smevals wrote it")
                remove(fd, name)
    if not found:
        return None
    return {"kind": "artifact", "detail": f"{' and '.join(found)}: not a regular file, so "
            "smevals removed it without following or opening it; the Run counts as failed"}


def _refuse_undecodable(fd: int) -> Failure | None:
    """Remove what the runner wrote under a name that is not UTF-8 (a Run's file names are
    text in its record); the Run then counts as failed, saying which."""
    bad = []
    for top, dirs, files, here in os.fwalk(".", dir_fd=fd):
        for name in [*dirs, *files]:
            if _undecodable(name):
                bad.append(os.fsencode(os.path.normpath(os.path.join(top, name))))
                remove(here, name)
        dirs[:] = [d for d in dirs if not _undecodable(d)]
    if not bad:
        return None
    shown = ", ".join(repr(b)[1:] for b in sorted(bad)[:5]) + (" ..." if len(bad) > 5 else "")
    return {"kind": "artifact", "detail": f"the runner wrote {len(bad)} file(s) whose name is "
            f"not valid UTF-8 ({shown}); they were not kept and the Run counts as failed"}


def _undecodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _refuse_reserved(fd: int) -> Failure | None:
    name = RECORD_NAMES["run"]
    if remove(fd, name) is None:
        return None
    return {"kind": "artifact", "detail": f"the runner wrote '{name}', a name reserved for the "
            "Run record; that file was not kept and the Run counts as failed"}


def _usage(fd: int) -> tuple[Usage | None, str | None]:
    """Read and validate the runner's usage file; a malformed one is noted, not fatal. One
    that is not a regular file is never opened: it stays, recorded as what it is."""
    try:
        raw = read_capped(USAGE_FILE, usage_limit(), "a usage file", USAGE_LIMIT_SETTING,
                          fd)[1]
    except FileNotFoundError:
        return None, None
    except TooLarge as exc:         # not kept either: it would be an artifact of that size
        os.unlink(USAGE_FILE, dir_fd=fd)
        return None, f"{USAGE_FILE} is {exc}"
    except NotRegular as exc:
        return None, f"{USAGE_FILE} is {exc}; it was not read"
    except OSError as exc:
        return None, f"{USAGE_FILE} cannot be read: {exc.strerror or exc}"
    os.unlink(USAGE_FILE, dir_fd=fd)
    try:
        data = loads(raw)
    except ValueError as exc:
        return None, f"{USAGE_FILE} is not valid JSON: {exc}"
    from smevals.schemas import packaged

    error = packaged("usage").first(data)
    if error is not None:
        return None, (f"{USAGE_FILE} does not match usage.schema.json at {error.slashed}: "
                      f"{error.message}")
    if "total_tokens" not in data and {"input_tokens", "output_tokens"} <= data.keys():
        data["total_tokens"] = data["input_tokens"] + data["output_tokens"]
    usage: Usage = data             # it matched usage.schema.json
    return usage, None
