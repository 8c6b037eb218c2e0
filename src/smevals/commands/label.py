"""`smevals label RUN_ID pass|fail` (cli/label_cmd.py): a person's verdict on a Run, written
through the store as an immutable Grade of the reserved grader `human` (who labelled it,
when, and the note). Reading labels and turning them into fixtures is
smevals.graderfixtures.labels'."""

from __future__ import annotations

import getpass
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from smevals.errors import SmevalsError
from smevals.grade.labels import HUMAN, VERSION
from smevals.grade.version import grading_hash
from smevals.store.read import Obj, is_run
from smevals.store.records import CheckRecord, GradeFields, RunRecord
from smevals.store.write import Written


def labeller(where: Path, by: str | None) -> dict[str, str | None]:
    """Who labels: `--by`, else git's user.name and user.email, else the login name."""
    if by:
        return {"name": by.strip(), "email": None, "source": "option"}
    name, email = _git_config(where, "user.name"), _git_config(where, "user.email")
    if name or email:
        return {"name": name, "email": email, "source": "git"}
    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = "unknown"
    return {"name": login, "email": None, "source": "login"}


def _git_config(where: Path, key: str) -> str | None:
    try:
        proc = subprocess.run(["git", "config", "--get", key], cwd=where, capture_output=True,
                              check=False, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    text = proc.stdout.decode("utf-8", "replace").strip()
    return text if proc.returncode == 0 and text else None


def label_run(paths: tuple[str, ...], store: str | None, ident: str, verdict: str, note: str,
              by: str | None) -> tuple[Written, Obj[RunRecord]]:
    from smevals.evaldef.stores import find_object

    if verdict not in ("pass", "fail"):
        raise SmevalsError(f"a label is pass or fail, not '{verdict}'")
    st, run = find_object(paths, store, ident)
    if not is_run(run):
        raise SmevalsError(f"{ident} is a Grade ({run.id}); label the Run it grades: "
                           f"{run.record.get('run', {}).get('id')}")
    record = label_record(run, verdict, note, labeller(st.root, by))
    rec = run.record
    staging = st.stage("grade")
    try:
        written = staging.commit(record, [HUMAN, rec["task"]["name"], rec["config"]["name"],
                                          rec["model"]])
    except BaseException:
        staging.abort()
        raise
    return written, run


def label_record(run: Obj[RunRecord], verdict: str, note: str, by: dict[str, str | None]
                 ) -> GradeFields:
    from smevals.version import __version__

    rec = run.record
    check: CheckRecord = {"checker": HUMAN, "name": "label", "ok": verdict == "pass",
                          "score": 1.0 if verdict == "pass" else 0.0}
    if note:
        check["notes"] = note
    return cast(GradeFields, {
        "eval": rec.get("eval"),
        "run": {"id": run.id, "rel": run.rel, "task": rec["task"]["name"],
                "config": rec["config"]["name"], "model": rec["model"]},
        "grader": {"name": HUMAN, "version": VERSION},
        "grading_hash": grading_hash(dict(rec.get("grading") or {})),
        "method": "label", "graded": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "duration_seconds": 0.0, "outcome": verdict, "score": check["score"],
        "tags": [], "metrics": {}, "checks": [check],
        "label": {"by": by, "note": note}, "smevals": __version__,
    })
