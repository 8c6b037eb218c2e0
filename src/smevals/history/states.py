"""Each Eval folder's state at the commits of a history: its entries (`uses.Listing`, its
store left out) and the files outside it that its configs and graders name (`uses.outside`),
which a commit changing only them changes the figures as much as an edit in the folder.

The entries of many commits come from one `git cat-file --batch`; the outside files of a
state are worked out once per state (the Eval extracted at the first commit that has it,
kept in the cache by the state's digest, so a second `log` extracts nothing for them)."""

from __future__ import annotations

from pathlib import Path

from smevals.errors import SmevalsError
from smevals.history.authoring import Authoring, Key
from smevals.history.memo import Memo
from smevals.sides.uses import Listing, digest, has_eval, listings, outside, tree_ids, without

DEFAULT_STORE = "results"            # the store's entry in its Eval folder (without --store)


class States:
    def __init__(self, repo: Path, prefixes: dict[Path, str], store: str | None, tmp: Path,
                 memo: Memo, authoring: Authoring):
        self.repo = repo
        self.prefixes = prefixes            # Eval folder -> its path in the repository
        self.store = store
        self.tmp = tmp
        self.memo = memo
        self.authoring = authoring
        self.seen: dict[tuple[str, Path], Listing | None] = {}
        # no path git's batch input cannot take: else every state is read afresh
        self.usable = not any("\n" in p for p in prefixes.values())

    def fill(self, shas: list[str]) -> None:
        """Read the entries of every folder at each of `shas` not read yet."""
        if not self.usable:
            return
        wanted = [(sha, folder) for sha in dict.fromkeys(shas) for folder in self.prefixes
                  if (sha, folder) not in self.seen]
        found = listings(self.repo, [(sha, self.prefixes[f]) for sha, f in wanted])
        skip = None if self.store else DEFAULT_STORE
        for pair, listing in zip(wanted, found, strict=True):
            self.seen[pair] = without(listing, skip)

    def listing(self, sha: str, folder: Path) -> Listing | None:
        self.fill([sha])
        return self.seen.get((sha, folder))

    def present(self, sha: str, folder: Path) -> bool | None:
        """Whether the Eval is in the commit (None: cannot tell)."""
        return has_eval(self.listing(sha, folder)) if self.usable else None

    def uses(self, sha: str, folder: Path) -> list[str]:
        """The files outside the folder that the Eval as committed at `sha` names."""
        listing = self.listing(sha, folder)
        if not has_eval(listing):
            return []
        assert listing is not None
        state = digest(listing)
        found = self.memo.get_uses(folder, state)
        if found is None:
            found = self._read_uses(sha, folder, state)
            self.memo.put_uses(folder, state, found)
        return found

    def _read_uses(self, sha: str, folder: Path, state: str) -> list[str]:
        try:
            opened = self.authoring.open(folder, sha, self.store, self.tmp)
        except SmevalsError:
            return []                       # not a valid Eval there: noted where it is read
        found = outside(opened.ev, self.prefixes[folder], self.repo)
        key = self.key(sha, folder, tree_ids(self.repo, [(sha, p) for p in found]))
        if key is not None:
            self.authoring.remember(folder, key, opened.ev)
        return found

    def key(self, sha: str, folder: Path, ids: list[str]) -> Key | None:
        """What `Authoring` reuses an Eval by: the folder's entries and the ids (`ids`) of
        the outside files it uses at `sha`."""
        listing = self.listing(sha, folder)
        return None if listing is None else (digest(listing), tuple(ids))
