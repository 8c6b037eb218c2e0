"""Errors that reach users. The CLI turns them into `Error: ...` and an exit code."""

from __future__ import annotations

from dataclasses import dataclass

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class SmevalsError(Exception):
    """An expected problem with the user's input or environment (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class Exit(Exception):
    """The command has said all it had to (its output, its own error lines): the CLI's one
    error path ends the process with `code` and prints nothing more."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class EvidenceFailed(SmevalsError):
    """The evidence failed: a Run or Grade failed, verify found damage, a gate tripped."""

    exit_code = EXIT_FAILED


@dataclass(frozen=True)
class Problem:
    """One located problem in an authoring file."""

    path: str
    line: int
    col: int
    message: str
    field: str = ""
    warning: bool = False        # worth a look, but nothing stops on it

    def render(self) -> str:
        where = f"{self.field}: " if self.field else ""
        kind = "warning: " if self.warning else ""
        return f"{self.path}:{self.line}:{self.col}: {kind}{where}{self.message}"

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "field": self.field,
            "message": self.message,
        }


class SpecError(SmevalsError):
    """One or more problems in authoring files (eval, task, config, grader)."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(p.render() for p in problems))
