"""Frozen, typed records of loaded authoring files, used by every later command."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Task:
    name: str
    path: Path
    doc: dict[str, Any]          # every key but `grading` (what runners see)
    grading: dict[str, Any]      # answer keys only checkers see
    locs: dict[Any, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    line: int = 0                # a row of a data file: its first line (0 for a YAML file)

    def pos(self, key: str) -> tuple[int, int]:
        """Where the top-level `key` is written (the row, or the file's start, at worst)."""
        return self.locs.get((key,), (self.line or 1, 1))


@dataclass(frozen=True)
class Config:
    name: str
    path: Path
    doc: dict[str, Any]
    runner: str
    model: str | None
    timeout: float | None
    locs: dict[Any, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    vlocs: dict[Any, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Check:
    index: int
    checker: str
    options: dict[str, Any]      # the checker's own options (reserved keys removed)
    spec: dict[str, Any]         # the whole check mapping as written
    label: str                   # `name`, else the checker as written
    required: bool = False
    creates: tuple[str, ...] = ()
    timeout: float | None = None
    weight: float = 1.0
    min_score: float | None = None
    depends: tuple[str, ...] = ()   # globs of files the checker reads (grade/deps.py)


@dataclass(frozen=True)
class Grader:
    name: str
    path: Path
    doc: dict[str, Any]
    raw: bytes
    checks: tuple[Check, ...]
    pass_threshold: float | None
    method: str = "last"
    locs: dict[Any, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    vlocs: dict[Any, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Eval:
    name: str
    path: Path
    description: str
    tasks: tuple[Task, ...]
    configs: dict[str, Config] = field(default_factory=dict)
    graders: dict[str, Grader] = field(default_factory=dict)
    run_configs: tuple[str, ...] = ("default",)   # eval.yaml `configs`: what run uses without -c

    def task(self, name: str) -> Task | None:
        return self.task_index.get(name)

    @property
    def task_index(self) -> dict[str, Task]:
        index: dict[str, Task] | None = self.__dict__.get("_task_index")
        if index is None:
            index = {t.name: t for t in self.tasks}
            object.__setattr__(self, "_task_index", index)
        return index
