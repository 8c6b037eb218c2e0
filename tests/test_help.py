"""Consistent --help: every command, option and argument explains itself the same way."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click

from smevals.cli import cli

NARROW = 80     # a plain terminal; summaries must fit it without "..."


def commands(group: click.Group = cli, prefix: str = "smevals") -> list[tuple[str, click.Command]]:
    """Every command under `group`, depth first, with its full name."""
    found: list[tuple[str, click.Command]] = [(prefix, group)]
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            found.extend(commands(cmd, f"{prefix} {name}"))
        else:
            found.append((f"{prefix} {name}", cmd))
    return found


def summary_limit(group: click.Group) -> int:
    """The room click gives a summary in a group's command list at NARROW columns."""
    return NARROW - 2 - 6 - max(len(name) for name in group.commands)


def base(metavar: str) -> str:
    return metavar.replace("[", "").replace("]", "").replace("...", "").strip()


def test_every_option_has_help_and_a_telling_metavar() -> None:
    missing = []
    for full, cmd in commands():
        for param in cmd.params:
            if isinstance(param, click.Option) and not (param.help or "").strip():
                missing.append(f"{full} {param.opts[-1]}: no help text")
            if isinstance(param, click.Argument) and not param.metavar:
                missing.append(f"{full} {param.name}: no metavar")
            if isinstance(param, click.Option) and not param.is_flag and not param.metavar \
                    and param.make_metavar(click.Context(cmd)) in ("TEXT", "INTEGER RANGE",
                                                                    "FLOAT RANGE"):
                missing.append(f"{full} {param.opts[-1]}: a bare type for a metavar")
    assert missing == []


def test_no_summary_is_cut_off() -> None:
    cut = []
    for full, cmd in commands():
        if not isinstance(cmd, click.Group):
            continue
        limit = summary_limit(cmd)
        for name, sub in cmd.commands.items():
            text = sub.get_short_help_str(limit)
            if text.endswith("...") or not text:
                cut.append(f"{full} {name}: {text!r}")
    assert cut == []


def test_the_same_argument_has_the_same_metavar_everywhere() -> None:
    seen: dict[str, set[str]] = {}
    for _full, cmd in commands():
        for param in cmd.params:
            if isinstance(param, click.Argument):
                seen.setdefault(param.name or "", set()).add(base(param.metavar or ""))
            elif isinstance(param, click.Option) and not param.is_flag \
                    and not isinstance(param.type, click.Choice):   # choices differ by design
                ctx = click.Context(cmd)
                seen.setdefault(f"--{param.name}", set()).add(param.make_metavar(ctx))
    assert {name: metavars for name, metavars in seen.items() if len(metavars) > 1} == {}


def test_required_eval_arguments_are_shown_required(cli) -> None:
    for command in ("run", "grade", "regrade", "validate", "report", "build", "serve"):
        res = cli(command, "--help")
        assert res.code == 0
        assert res.out.startswith(f"Usage: smevals {command} [OPTIONS] EVAL_OR_SUITE...\n")
    for command in ("verify", "gc"):
        res = cli(command, "--help")
        assert res.out.startswith(f"Usage: smevals {command} [OPTIONS] [EVAL_OR_SUITE]...\n")
    res = cli("run")
    assert (res.code, res.err.splitlines()[-1]) == (
        2, "Error: Missing argument 'EVAL_OR_SUITE...': give an Eval or a Suite.")


def test_top_level_help_fits_a_narrow_terminal(cli) -> None:
    res = cli("--help", env={"COLUMNS": str(NARROW)})
    listing = res.out.split("\nCommands:\n", 1)[1]
    assert [line for line in listing.splitlines() if line.endswith("...")] == []


def test_grade_jobs_option_is_described(cli) -> None:
    for command in ("grade", "regrade"):
        res = cli(command, "--help")
        assert re.search(r"-j, --jobs N +Runs graded at once\.  \[default: 4; x>=1\]\n",
                         res.out), res.out


def test_init_help_lists_the_examples(cli) -> None:
    res = cli("init", "--help")
    assert res.code == 0
    listing = res.out.split("\nExamples (--example NAME):\n", 1)[1]
    names = [line.split()[0] for line in listing.splitlines() if not line.startswith("    ")]
    assert names == ["agent-tools", "code-localization", "haiku", "json-extraction",
                     "pelican", "python-stdout", "rag-citations", "reward-hacking", "safety",
                     "spec-implementation", "support-replies", "svg-artifacts", "text-to-sql"]
    assert ("  haiku                Can the model write a haiku - three lines, on the subject "
            "asked for?\n") in listing


def test_top_level_example_works_from_any_folder(cli, tmp_path: Path) -> None:
    res = cli("--help")
    session = res.out.split("Typical session", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in session.splitlines()[1:] if line.strip()]
    assert lines[0].startswith("smevals init --example haiku ")
    for line in lines:
        done = cli(*shlex.split(line)[1:], cwd=tmp_path)
        assert done.code == 0, (line, done.both)
