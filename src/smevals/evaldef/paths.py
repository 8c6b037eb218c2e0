"""Names an author gives for files in a Grade's workspace or a Run's folder (a Check's
`creates:`, a checker's `file:`): relative, and never leading out of that folder.

`smevals validate` (and every command, before it starts) refuses a bad one at its line; a
checker refuses it again at grade time, so a grader that skipped validation cannot be
satisfied by a file outside (`creates: [/etc/passwd]`).
"""

from __future__ import annotations

from pathlib import PurePosixPath


def path_problem(name: str) -> str | None:
    """Why `name` cannot name a file inside a workspace or a Run's folder, or None."""
    if not name or "\0" in name:
        return "needs a non-empty relative path"
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or (len(name) > 1 and name[1] == ":"):
        return f"must be a relative path, not {name!r}"
    if ".." in path.parts:
        return f"may not contain '..' ({name!r})"
    return None
