"""Which commits a history lists, read from git as `git log -- PATHS` walks them.

`git rev-list` with the Eval folders (and stores) as paths: newest first, merges followed
as `git log` follows them (a merge that took one side's files unchanged is simplified
away), `--first-parent` optional. Each commit's author, date and subject come from the
commit object itself (`git cat-file --batch`), parsed here, so no byte a commit holds can
be taken for a separator."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.files.gitcat import SourceError, cat_many, commit_id, git, known_commits

MAX_TEXT = 200              # characters of an author or subject kept


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    date: str                   # ISO-8601 UTC
    subject: str


@dataclass(frozen=True)
class Range:
    """The commits of HEAD after `since` (all of them without it), walked as `git log` walks
    them (`--first-parent` optional)."""

    repo: Path
    limits: tuple[str, ...]         # HEAD's commit, and ^since
    options: tuple[str, ...]        # ("--first-parent",) or ()
    since: str | None               # the commit --since names

    def listed(self, paths: list[str], n: int | None = None) -> list[str]:
        """The commits of the range that changed `paths` (relative to the repository),
        newest first, at most `n`."""
        count = ["--max-count", str(n)] if n is not None else []
        specs = [f":(literal){p}" if p else ":/" for p in paths]
        listed = _git(self.repo, "rev-list", *self.options, *count, *self.limits, "--",
                      *specs).split()
        known_commits(self.repo, listed)        # reading each later asks git nothing more
        return listed

    def read(self) -> tuple[int, bool]:
        """How many commits of the range this clone holds, and whether it is shallow."""
        read = int(_git(self.repo, "rev-list", "--count", *self.options, *self.limits).strip()
                   or 0)
        shallow = _git(self.repo, "rev-parse", "--is-shallow-repository").strip() == "true"
        return read, shallow


def range_of(repo: Path, since: str | None, first_parent: bool) -> Range:
    """The range of HEAD after `since` (exit 2 for an unknown revision, or no commit)."""
    tip = _commit(repo, "HEAD", "HEAD")
    bottom = _commit(repo, since, "--since") if since else None
    return Range(repo, (tip,) + ((f"^{bottom}",) if bottom else ()),
                 ("--first-parent",) if first_parent else (), bottom)


@dataclass(frozen=True)
class Walk:
    """The commits of a range that a history lists, and what the clone holds of it."""

    commits: list[Commit]       # newest first
    read: int                   # commits in the range (path or not) this clone holds
    shallow: bool


def _commit(repo: Path, rev: str, option: str) -> str:
    """The commit `rev` names, or exit 2 naming the option."""
    try:
        return commit_id(repo, rev, what=f"{option}: unknown revision '{rev}'")
    except SourceError as exc:
        if option == "HEAD":
            raise SmevalsError(f"{repo} has no commits yet: commit the Eval and its results "
                               "first (git add, git commit)") from None
        raise SmevalsError(str(exc)) from None


def _git(repo: Path, *args: str) -> str:
    try:
        return git(repo, *args, what=f"git {args[0]}").decode("ascii", "replace")
    except SourceError as exc:
        raise SmevalsError(str(exc)) from None


def described(repo: Path, shas: list[str]) -> list[Commit]:
    """Each commit's parents, author, date and subject, read from the commit objects."""
    contents = cat_many(repo, shas) if shas else []
    out = []
    for sha, data in zip(shas, contents, strict=True):
        if not isinstance(data, bytes):
            raise SmevalsError(f"git commit {sha} cannot be read")
        out.append(parse_commit(sha, data))
    return out


def parse_commit(sha: str, data: bytes) -> Commit:
    """A commit object's parents, author, author date and subject (its first line)."""
    head, _, message = data.partition(b"\n\n")
    parents: list[str] = []
    author, date = "", ""
    for line in head.split(b"\n"):
        if line.startswith(b"parent "):
            parents.append(line[7:].decode("ascii", "replace"))
        elif line.startswith(b"author ") and not author:
            author, date = _ident(line[7:])
    subject = message.split(b"\n", 1)[0]
    return Commit(sha, tuple(parents), author, date, _text(subject))


def _ident(value: bytes) -> tuple[str, str]:
    """(name, ISO date) of `Name <email> 1700000000 +0100`."""
    name, _, rest = value.partition(b" <")
    fields = rest.rpartition(b"> ")[2].split()
    try:
        moment = datetime.fromtimestamp(int(fields[0]), UTC)
        date = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    except (IndexError, ValueError, OverflowError, OSError):
        date = ""
    return _text(name), date


def _text(raw: bytes) -> str:
    """Shown text: valid UTF-8 (else replaced), no control characters, bounded."""
    text = raw.decode("utf-8", "replace")
    text = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return text[:MAX_TEXT]
