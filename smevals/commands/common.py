"""Helpers shared by commands: loading Evals strictly, picking configs, tasks and graders."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from smevals.errors import SmevalsError, SpecError
from smevals.spec.discover import find_evals
from smevals.spec.load import display_path, load_eval
from smevals.spec.model import Config, Eval, Grader, Task


def load_evals(paths: list[str] | tuple[str, ...]) -> list[Eval]:
    """Every Eval under `paths`, schema-valid, or a SpecError listing every problem."""
    evals, problems = [], []
    for path in find_evals(list(paths)):
        try:
            evals.append(load_eval(path))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    return evals


def pick_config(ev: Eval, name: str) -> Config:
    if name not in ev.configs:
        have = ", ".join(sorted(ev.configs)) or "(none)"
        raise SmevalsError(f"{ev.name}: no config named '{name}' - available configs: {have}")
    return ev.configs[name]


def pick_grader(ev: Eval, name: str) -> Grader:
    if name not in ev.graders:
        have = ", ".join(sorted(ev.graders)) or "(none)"
        raise SmevalsError(f"{ev.name}: no grader named '{name}' - available graders: {have}")
    return ev.graders[name]


def pick_tasks(ev: Eval, names: tuple[str, ...] | list[str]) -> list[Task]:
    if not ev.tasks:
        raise SmevalsError(f"no tasks found in {Path(ev.path) / 'tasks'}")
    if not names:
        return list(ev.tasks)
    known = {t.name: t for t in ev.tasks}
    missing = [n for n in names if n not in known]
    if missing:
        raise SmevalsError(f"{ev.name}: no such task(s): {', '.join(missing)} - "
                           + _available(sorted(known), missing))
    return [known[n] for n in dict.fromkeys(names)]


SHOWN_TASKS = 20


def _available(names: list[str], missing: list[str]) -> str:
    """Every Task name, or (for an Eval of data-file rows) the first few and the closest."""
    if len(names) <= SHOWN_TASKS:
        return f"available tasks: {', '.join(names)}"
    import difflib

    close = list(dict.fromkeys(c for name in missing[:5]
                               for c in difflib.get_close_matches(name, names, 3)))
    hint = f"; the closest: {', '.join(close)}" if close else ""
    return (f"{len(names)} tasks, the first {SHOWN_TASKS} by name: {', '.join(names[:SHOWN_TASKS])}"
            f"{hint} (smevals run --dry-run lists them all)")


# OS reasons that say the store cannot take more: an environment problem (exit 2), not a bug
_FULL_OR_READ_ONLY = {"ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EFBIG", "EIO"}


@contextmanager
def writing_to(root: Path) -> Iterator[None]:
    """Turn a write that the disk refuses (full, read-only, over a quota or size limit) into
    `cannot write to <store>/: <reason>` (exit 2). What was being staged is thrown away by
    the writer itself, so no partial object is left and the next run tops up."""
    from smevals.store.durable import sync_pending

    try:
        yield
        sync_pending()              # what the command wrote is on disk when it ends
    except OSError as exc:
        import errno

        if errno.errorcode.get(exc.errno or 0) not in _FULL_OR_READ_ONLY:
            raise
        where = display_path(root)
        inside = exc.filename is None or os.path.abspath(str(exc.filename)).startswith(
            os.path.abspath(root))
        target = f"{where}/" if inside else str(exc.filename)
        raise SmevalsError(f"cannot write to {target}: {exc.strerror or exc}") from None


def new_eval_folder(target: Path, hint: str = "") -> None:
    """An importer's target must be missing or an empty folder (exit 2 otherwise)."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise SmevalsError(f"{target} already exists and is not empty; choose another "
                           f"folder{hint}")


@contextmanager
def staged_folder(target: Path) -> Iterator[Path]:
    """A temporary sibling of `target` to write a new Eval into; moved into place when the
    block ends, removed when it raises (an import never leaves half an Eval)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield staging
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
