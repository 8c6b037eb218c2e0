"""Reading a store: every Run and Grade with its record, by id prefix, from disk or git."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar, overload

from smevals.store import damage, folders, index
from smevals.store.base import Entry, Source
from smevals.store.fssource import FsSource
from smevals.store.gitsource import GitSource
from smevals.store.layout import KINDS, slug
from smevals.store.records import GradeBrief, GradeRecord, RunBrief, RunRecord
from smevals.store.write import Staging

if TYPE_CHECKING:
    from typing_extensions import TypeIs

MIN_PREFIX = 6
MAX_CANDIDATES = 20


R = TypeVar("R", covariant=True)


class Obj(NamedTuple, Generic[R]):
    """One Run or Grade (immutable; a NamedTuple because 200,000 are made in a blink).
    `Obj[RunRecord]` is a Run with its full record, `Obj[RunBrief]` one that may be in the
    brief view (store/records.py)."""

    kind: str
    id: str
    rel: str                   # object folder relative to the store root
    record: R


AnyObj = Obj[RunRecord] | Obj[GradeRecord]


def is_run(obj: AnyObj) -> TypeIs[Obj[RunRecord]]:
    """Whether `obj` (of either kind) is a Run (for the type checker, which cannot tell
    from `obj.kind`)."""
    return obj.kind == "run"


class AmbiguousId(Exception):
    def __init__(self, prefix: str, candidates: list[AnyObj]):
        self.prefix = prefix
        self.candidates = candidates
        lines = [f"  {o.kind} {o.id}  {o.rel}" for o in candidates[:MAX_CANDIDATES]]
        if len(candidates) > MAX_CANDIDATES:
            lines.append(f"  ... and {len(candidates) - MAX_CANDIDATES} more")
        super().__init__(f"id prefix '{prefix}' is ambiguous; candidates:\n" + "\n".join(lines))


class UnknownId(Exception):
    pass


class PrefixTooShort(UnknownId):
    pass


def store_root(eval_dir: Path, eval_name: str, store: str | None) -> Path:
    """`<eval>/results` by default; with --store, one sub-folder per Eval name."""
    if store:
        return Path(store) / slug(eval_name)
    return eval_dir / "results"


class Store:
    """One Eval's results: write through `stage`, read through `runs()` and `grades()`.

    With `rev`, the store is read as committed at that git revision (read-only)."""

    def __init__(self, root: Path, rev: str | None = None):
        self.root = root
        self.rev = rev
        self.source: Source = GitSource(root, rev) if rev else FsSource(root)
        self.broken: list[tuple[str, str]] = []     # (rel, why) of damaged objects (left out)
        self._objs: dict[tuple[str, bool], list[Obj[Any]]] = {}
        self._checked = False           # the top folders looked at (`stage`)

    def stage(self, kind: str) -> Staging:
        if not self.source.writable:
            raise ValueError("cannot write to a store read at a git revision")
        if not self._checked:           # once: every write after enters each folder itself,
            folders.refuse_links(self.root)     # never following a link (store.folders)
            self._checked = True
        return Staging(self.root, kind)

    @overload
    def runs(self, brief: Literal[False] = False) -> list[Obj[RunRecord]]: ...
    @overload
    def runs(self, brief: bool) -> list[Obj[RunBrief]]: ...

    def runs(self, brief: bool = False) -> list[Obj[Any]]:
        """Every readable Run; with `brief`, records in the brief view (store/brief.py)."""
        return self._all("run", brief)

    @overload
    def grades(self, brief: Literal[False] = False) -> list[Obj[GradeRecord]]: ...
    @overload
    def grades(self, brief: bool) -> list[Obj[GradeBrief]]: ...

    def grades(self, brief: bool = False) -> list[Obj[Any]]:
        """Every readable Grade; with `brief`, records in the brief view."""
        return self._all("grade", brief)

    def forget(self) -> None:
        """Drop what was read, so the next call sees objects written since."""
        self._objs.clear()
        self.broken.clear()
        self.source = self.source.afresh()

    def _all(self, kind: str, brief: bool = False) -> list[Obj[Any]]:
        key = (kind, brief)
        if key not in self._objs:
            self._objs[key] = self._load(kind, brief)
        return self._objs[key]

    def _load(self, kind: str, brief: bool) -> list[Obj[Any]]:
        rels, records = self.source.records(kind, brief)
        ids = [rel[rel.rfind("/") + 1:] for rel in rels]
        with index.gc_paused():
            new = tuple.__new__
            out = [new(Obj, (kind, oid, rel, rec)) for oid, rel, rec in zip(ids, rels, records,
                                                                             strict=True)
                   if rec.__class__ is dict]
        if len(out) != len(rels):
            known = {rel for rel, _reason in self.broken}
            self.broken.extend((rel, rec) for rel, rec in zip(rels, records, strict=True)
                               if not isinstance(rec, dict) and rel not in known)
            for rel, why in self.broken:
                damage.note(self.source.label, rel, str(why))
        return out

    def note_damaged(self, rel: str, why: str) -> None:
        """Leave out an object found damaged after it was read (e.g. by a full check before
        grading): it is named with the others, and read no more."""
        for key in self._objs:
            self._objs[key] = [o for o in self._objs[key] if o.rel != rel]
        if all(known != rel for known, _why in self.broken):
            self.broken.append((rel, why))
        damage.note(self.source.label, rel, why)

    def note_orphans(self, brief: bool = False) -> None:
        """Leave out, and name, each Grade whose Run is missing from the store (neither read
        nor damaged), in the words of `verify`."""
        runs = {run.rel for run in self.runs(brief)} | {rel for rel, _why in self.broken}
        for grade in list(self.grades(brief)):
            run = grade.record.get("run")
            rel = str(run.get("rel")) if isinstance(run, dict) else ""
            if rel not in runs:
                self.note_damaged(grade.rel, f"the Run it grades is missing: {rel}")

    @overload
    def fresh(self, kind: Literal["run"], parent: str,
              known: AbstractSet[str] = frozenset()) -> list[Obj[RunRecord]]: ...
    @overload
    def fresh(self, kind: Literal["grade"], parent: str,
              known: AbstractSet[str] = frozenset()) -> list[Obj[GradeRecord]]: ...

    def fresh(self, kind: str, parent: str,
              known: AbstractSet[str] = frozenset()) -> list[Obj[Any]]:
        """The sound objects of one folder (`runs/<task>/<config>/<model>`), read from disk
        now, past any cache: what a claim holder counts before it adds to the folder.
        Objects whose id is in `known` are left out (the caller has seen them)."""
        return [Obj(kind, oid, f"{parent}/{oid}", record)
                for oid, record in self.source.fresh(kind, parent, known)
                if isinstance(record, dict)]

    def resolve(self, prefix: str) -> AnyObj:
        """The one object whose id (or the hash part of it) starts with `prefix`, git-style:
        at least MIN_PREFIX characters, case-insensitive; ambiguity lists the candidates."""
        want = prefix.strip().lower()
        if len(want) < MIN_PREFIX:
            raise PrefixTooShort(f"an id prefix needs at least {MIN_PREFIX} characters: "
                                 f"'{prefix}'")
        found = [o for kind in KINDS for o in self._all(kind) if id_matches(o.id, want)]
        if not found:
            damaged = [(rel, why) for rel, why in self.broken
                       if id_matches(rel[rel.rfind("/") + 1:], want)]
            if damaged:
                raise UnknownId(f"{damaged[0][0]} in {self.source.label} is damaged: "
                                f"{damaged[0][1]} (run `smevals verify`)")
            raise UnknownId(f"no Run or Grade with id '{prefix}' in {self.source.label}")
        if len(found) > 1:
            raise AmbiguousId(prefix, found)
        return found[0]

    def read_file(self, obj: Obj[Any], name: str) -> bytes:
        return self.source.read(f"{obj.rel}/{name}")

    def listing(self, obj: Obj[Any]) -> list[Entry]:
        """The files of `obj` as they are (not as recorded), record excluded."""
        return self.source.listing(obj.rel)

    def path_of(self, obj: Obj[Any]) -> Path:
        return self.root / obj.rel


def id_matches(oid: str, prefix: str) -> bool:
    """Whether `prefix` (any case) starts the id or the hash part of it."""
    want = prefix.strip().lower()
    low = oid.lower()
    return low.startswith(want) or low[low.find("-") + 1:].startswith(want)
