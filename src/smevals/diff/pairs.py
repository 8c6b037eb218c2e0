"""Compare two sides of each Eval (two revisions of its store, or two grader versions on the
same Runs), reading every side straight from git without a checkout: what `smevals diff`
prints and what the site's diff pages show."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from smevals.diff import regraded
from smevals.diff.compare import (
    EvalDiff,
    compare,
    incomplete_reasons,
    regression_reasons,
    shown,
)
from smevals.diff.render import Outputs, SideInfo, markdown, to_json
from smevals.errors import SmevalsError
from smevals.evaldef.committed import evals_at, resolve
from smevals.evaldef.discover import evals_under, find_evals
from smevals.files.gitcat import SourceError
from smevals.report import taskpass
from smevals.sides.read import (
    NoStore,
    Opened,
    Side,
    SideSpec,
    absent,
    check_versions,
    keep,
    open_side,
    report_side,
)
from smevals.sides.reuse import Reuse
from smevals.store.read import Obj
from smevals.store.records import RunBrief

WORKTREE = "working tree"


@dataclass(frozen=True)
class DiffOptions:
    args: tuple[str, ...] = ()
    side: SideSpec = SideSpec()
    grader_versions: tuple[str, str] | None = None
    alpha: float = 0.05
    fmt: str = "markdown"
    fail_on: str | None = None
    show_output: bool = False
    allow_incomplete: bool = False
    task_pass: str = taskpass.DEFAULT


@dataclass
class DiffResult:
    text: str
    reasons: list[str]                  # why the gate trips: incomplete evidence first
    incomplete: list[str] = field(default_factory=list)


def split_args(args: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Existing folders are Evals or Suites; every other argument is a revision (at most 2)."""
    paths = [a for a in args if os.path.isdir(a)]
    revs = [a for a in args if not os.path.isdir(a)]
    if len(revs) > 2:
        raise SmevalsError(f"diff compares at most two revisions, got {len(revs)}: "
                           f"{', '.join(revs)} (an argument that is not a folder is a revision)")
    return paths or ["."], revs


def diff(opts: DiffOptions, paths: list[str], revs: list[str],
         reuse: Reuse | None = None) -> DiffResult:
    """Both sides of every Eval under `paths` (revisions `revs`, as `split_args` gives
    them), compared and rendered in `opts.fmt`; with `reuse`, what an earlier diff read
    (the Evals, the sides) is used again where it is the same (sides/reuse.py)."""
    with tempfile.TemporaryDirectory(prefix="smevals-diff-") as tmp:
        pairs = _pairs(paths, opts, revs, Path(tmp), reuse)
    keep(pairs)
    diffs = [compare(a.report, b.report, opts.alpha, opts.task_pass) for a, b in pairs]
    for one, (side_a, side_b) in zip(diffs, pairs, strict=True):
        regraded.attach(one, side_a, side_b)
    info_a, info_b = _infos(opts, revs, pairs)
    outputs = _outputs(diffs, pairs) if opts.show_output else None
    incomplete = incomplete_reasons(diffs) if opts.fail_on and not opts.allow_incomplete else []
    reasons = incomplete + (regression_reasons(diffs, opts.fail_on) if opts.fail_on else [])
    if opts.fmt == "json":
        mode = "grader_versions" if opts.grader_versions else "revisions"
        regression = {"mode": opts.fail_on, "tripped": bool(reasons), "reasons": reasons,
                      "incomplete": incomplete, "allow_incomplete": opts.allow_incomplete}
        text = to_json(diffs, info_a, info_b, opts.alpha, mode, regression, opts.task_pass)
    else:
        text = markdown(diffs, info_a, info_b, opts.alpha, outputs, opts.task_pass)
    return DiffResult(text, reasons, incomplete)


def eval_diff(folder: Path, rev_a: str, rev_b: str, spec: SideSpec,
              alpha: float = 0.05) -> EvalDiff | None:
    """One Eval compared between two revisions, each change split into the grader's part
    and the evidence's (what `log` says where the grader version changed); None when a side
    has no Runs."""
    with tempfile.TemporaryDirectory(prefix="smevals-diff-") as tmp:
        side_a = _side(folder, rev_a, spec, Path(tmp))
        side_b = _side(folder, rev_b, spec, Path(tmp))
    if side_a is None or side_b is None:
        return None
    found = compare(side_a.report, side_b.report, alpha)
    regraded.attach(found, side_a, side_b)
    return found


def _pairs(paths: list[str], opts: DiffOptions, revs: list[str], tmp: Path,
           reuse: Reuse | None = None) -> list[tuple[Side, Side]]:
    if opts.grader_versions:
        return [_versions(Path(f), opts, revs, tmp) for f in find_evals(paths)]
    rev_a = revs[0] if revs else "HEAD"
    rev_b = revs[1] if len(revs) == 2 else None
    pairs = []
    for folder, on_a, on_b in _folders(paths, rev_a, rev_b):
        side_a = _side(folder, rev_a, opts.side, tmp, reuse) if on_a else None
        side_b = _side(folder, rev_b, opts.side, tmp, reuse) if on_b else None
        if side_a is None and side_b is None:
            raise SmevalsError(f"{folder}: no Runs in {_where(rev_a)} nor in {_where(rev_b)}")
        pairs.append((side_a or absent(side_b, folder, rev_a, on_a),
                      side_b or absent(side_a, folder, rev_b, on_b)))
    return pairs


def _folders(paths: list[str], rev_a: str, rev_b: str | None) -> list[tuple[Path, bool, bool]]:
    """Every Eval under `paths` on either side: (folder, on side A, on side B). An Eval on
    one side only is an added or removed Eval."""
    out: dict[Path, tuple[Path, bool, bool]] = {}
    for arg in paths:
        on_a, on_b = _evals_on(Path(arg), rev_a), _evals_on(Path(arg), rev_b)
        if not on_a and not on_b:
            find_evals([arg])               # says why there is no Eval here
            raise SmevalsError(f"{arg}: no Eval in {_where(rev_a)} nor in {_where(rev_b)}")
        for folder in sorted(set(on_a) | set(on_b)):
            out.setdefault(folder, (folder, folder in on_a, folder in on_b))
    return list(out.values())


def _where(rev: str | None) -> str:
    return f"revision {rev}" if rev else "the working tree"


def _evals_on(path: Path, rev: str | None) -> list[Path]:
    if rev is None:
        return evals_under(path)
    return evals_at(resolve(path, rev), path)


def _versions(folder: Path, opts: DiffOptions, revs: list[str],
              tmp: Path) -> tuple[Side, Side]:
    old, new = opts.grader_versions or ("", "")
    opened = _open(folder, revs[0] if revs else None, opts.side, tmp)
    if opened is None:
        raise SmevalsError(f"{folder}: no Runs in {_where(revs[0] if revs else None)}")
    pair = (report_side(opened, replace(opts.side, version=old)),
            report_side(opened, replace(opts.side, version=new)))
    check_versions(pair, old, new)
    return pair


def _side(folder: Path, rev: str | None, spec: SideSpec, tmp: Path,
          reuse: Reuse | None = None) -> Side | None:
    def read() -> Side | None:
        opened = _open(folder, rev, spec, tmp, reuse)
        return None if opened is None else report_side(opened, spec)

    return read() if reuse is None else reuse.side(folder, rev, spec, read)


def _open(folder: Path, rev: str | None, spec: SideSpec, tmp: Path,
          reuse: Reuse | None = None) -> Opened | None:
    """The Eval and its store on one side; None when that side has no Runs yet."""
    try:
        opened = reuse.open(folder, rev, spec.store) if reuse is not None else \
            open_side(folder, rev, spec.store, tmp)
    except NoStore:
        return None
    try:
        has_runs = bool(opened.store.runs(brief=True))
    except SourceError as exc:
        raise SmevalsError(f"cannot read {opened.store.source.label}: {exc}") from None
    return opened if has_runs else None


def _infos(opts: DiffOptions, revs: list[str],
           pairs: list[tuple[Side, Side]]) -> tuple[SideInfo, SideInfo]:
    first_a, first_b = pairs[0][0].report, pairs[0][1].report
    if opts.grader_versions:
        old, new = opts.grader_versions
        where = f" at {revs[0]}" if revs else ""
        return (SideInfo(f"grader version {old}{where}", first_a.rev, first_a.commit),
                SideInfo(f"grader version {new}{where}", first_b.rev, first_b.commit))
    return (SideInfo(first_a.rev or WORKTREE, first_a.rev, first_a.commit),
            SideInfo(first_b.rev or WORKTREE, first_b.rev, first_b.commit))


def _outputs(diffs: list[EvalDiff], pairs: list[tuple[Side, Side]]) -> Outputs:
    """output.txt of the Runs shown for each flip, read through each side's store."""
    out: dict[tuple[str, str], str] = {}
    for diff, (side_a, side_b) in zip(diffs, pairs, strict=True):
        for flip in diff.flips:
            row_a, row_b = shown(flip)
            out[("a", row_a.run.rel)] = _read(side_a, row_a.run)
            out[("b", row_b.run.rel)] = _read(side_b, row_b.run)
    return out


def _read(side: Side, run: Obj[RunBrief]) -> str:
    if side.store is None:
        return "(no output.txt)"
    try:
        return side.store.read_file(run, "output.txt").decode("utf-8", "replace")
    except (OSError, SourceError, KeyError):
        return "(no output.txt)"
