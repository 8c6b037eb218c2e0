"""The editor schemas: every authoring file's `yaml-language-server` comment resolved and
checked against the packaged schema."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import yaml

PACKAGED = Path(__file__).resolve().parents[2] / "src" / "smevals" / "schemas"
COMMENT = re.compile(r"^# yaml-language-server: \$schema=(\S+)$", re.M)


def kind_of(rel: Path) -> str:
    """The schema an authoring file's place in its Eval calls for."""
    if rel.name == "eval.yaml" and rel.parent.name != "tasks":
        return "eval"
    folders = rel.parts[:-1]
    if folders and folders[-1].endswith(".fixtures"):
        return "fixture"
    return {"tasks": "task", "configs": "config", "graders": "grader"}[folders[-1]]


def eval_of(path: Path) -> Path:
    return next(p for p in path.parents if (p / "eval.yaml").is_file())


def yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.y*ml") if p.suffix in (".yaml", ".yml")
                  and "results" not in p.relative_to(root).parts)


def resolve_all(root: Path, base: Path | None = None) -> dict[str, int]:
    """Check every YAML file under `root` and its comment; `base` resolves the comment as
    if the files sat there instead (the package's copy of the suites). The count by kind."""
    kinds: dict[str, int] = {}
    validators: dict[Path, jsonschema.Draft202012Validator] = {}
    for path in yaml_files(root):
        text = path.read_text(encoding="utf-8")
        found = COMMENT.findall(text)
        assert text.startswith("# yaml-language-server: $schema="), path
        assert len(found) == 1, path
        assert "://" not in found[0], (path, found[0])        # no address to fetch
        folder = (base or root) / path.parent.relative_to(root)
        target = Path(os.path.normpath(folder / found[0]))
        kind = kind_of(path.relative_to(eval_of(path)))
        assert target.name == f"{kind}.schema.json", (path, found[0])
        assert target.is_file(), (path, found[0], target)
        if target not in validators:
            schema = json.loads(target.read_bytes())
            jsonschema.Draft202012Validator.check_schema(schema)
            assert target.read_bytes() == (PACKAGED / target.name).read_bytes()
            validators[target] = jsonschema.Draft202012Validator(schema)
        validators[target].validate(yaml.safe_load(text))
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds
