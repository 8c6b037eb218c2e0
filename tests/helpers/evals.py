"""Building Evals in a temporary folder."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write(path: Path, text: str, executable: bool = False) -> Path:
    """`text` (dedented) at `path`, its folders made; mode 755 when `executable`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    if executable:
        path.chmod(0o755)
    return path


ECHO_RUNNER = """
#!/bin/sh
printf '%s says: %s\\n' "$SMEVALS_MODEL" "$SMEVALS_PROMPT"
"""


def make_eval(root: Path, tasks: dict[str, str] | None = None,
              configs: dict[str, str] | None = None, graders: dict[str, str] | None = None,
              files: dict[str, str] | None = None, name: str | None = None) -> Path:
    """An Eval folder: `tasks`, `configs`, `graders` map names to YAML text; `files` maps
    relative paths to content (files starting with `#!` are made executable)."""
    write(root / "eval.yaml", f"name: {name}\n" if name else "description: test eval\n")
    tasks = {"one": "prompt: hello one\n", "two": "prompt: hello two\n"} if tasks is None else tasks
    configs = {"default": "runner: ./echo.sh\nmodel: m1\n"} if configs is None else configs
    files = {"configs/echo.sh": ECHO_RUNNER} if files is None else files
    graders = ({"default": "checks:\n  - checker: contains\n    value: says\n"}
               if graders is None else graders)
    for kind, docs in (("tasks", tasks), ("configs", configs), ("graders", graders)):
        for stem, text in docs.items():
            write(root / kind / f"{stem}.yaml", text)
    for rel, text in files.items():
        body = textwrap.dedent(text).lstrip("\n")
        write(root / rel, body, executable=body.startswith("#!"))
    return root
