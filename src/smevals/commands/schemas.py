"""`smevals schemas --write DIR [EVAL_OR_SUITE]...` (cli/schemas_cmd.py): the editor schemas
written, and the YAML files' schema comments pointed at them (smevals.schemas.editors)."""

from __future__ import annotations

from pathlib import Path

from smevals.evaldef.discover import find_evals
from smevals.schemas.editors import point_comments, write_schemas


def write_for_editors(folder: Path, paths: list[str]) -> tuple[list[Path], list[Path]]:
    """`smevals schemas --write DIR [EVAL_OR_SUITE]...`: the schemas written, then the files
    pointed at them (bad paths are refused before anything is written)."""
    evals = find_evals(paths) if paths else []
    return write_schemas(folder), point_comments(evals, folder)
