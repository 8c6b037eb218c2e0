"""`smevals diff`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from smevals.cli.base import cli
from smevals.cli.options import side_options, task_pass_option, write_output
from smevals.errors import EvidenceFailed

if TYPE_CHECKING:
    _Choice = click.Choice[str]
else:  # click before 8.2: Choice is not generic
    _Choice = click.Choice


class _Mode(_Choice):
    """A mode of --fail-on-regression; a bare `--fail-on-regression` means `any`. A value
    that is no mode is refused, with a hint when it looks like a revision or a folder."""

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        if isinstance(value, str) and value not in self.choices:
            self.fail(f"'{value}' is not one of flip, significant, any (revisions and folders "
                      "go before the option, or write --fail-on-regression=any)", param, ctx)
        return str(super().convert(value, param, ctx))


@cli.command("diff",
             short_help="Compare graded Runs of two git revisions (or grader versions).")
@click.argument("args", nargs=-1, metavar="[A] [B] [EVAL_OR_SUITE]...")
@side_options
@click.option("--grader-versions", nargs=2, metavar="OLD NEW",
              help="Compare two grader versions (prefixes) on the same Runs instead of two "
              "revisions.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level of the paired tests (the interval is 1 - alpha).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True, help="Output format.")
@click.option("--fail-on-regression", "fail_on", is_flag=False, flag_value="any", default=None,
              type=_Mode(["flip", "significant", "any"]), metavar="[flip|significant|any]",
              help="Exit 1 on a pass->fail flip (flip), a significant drop of a config x model "
              "(significant), or either (any, the default when given bare).")
@task_pass_option
@click.option("--allow-incomplete", is_flag=True,
              help="Let --fail-on-regression pass even when B has fewer graded Runs of a "
              "config x model than A because some are ungraded or their Grade is an error.")
@click.option("--show-output", is_flag=True,
              help="Print both Runs' output.txt side by side under each flip.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the diff to this file instead of standard output.")
def diff_cmd(args: tuple[str, ...], grader: str, tasks: tuple[str, ...],
             models: tuple[str, ...], configs: tuple[str, ...], include_stale: bool,
             store: str | None, grader_versions: tuple[str, str] | None, alpha: float, fmt: str,
             fail_on: str | None, task_pass: str, allow_incomplete: bool,
             show_output: bool, output: str | None) -> None:
    """Compare the graded Runs of two git revisions A and B, read without a checkout.

    \b
    A defaults to HEAD and B to the working tree. Arguments that are existing folders are
    Evals or Suites (default: .); the others are revisions, at most two:
      smevals diff                      HEAD -> working tree, Evals under .
      smevals diff HEAD~1 HEAD evals/   two commits
      smevals diff --grader-versions 3f2a 9c1d evals/qa   two grader versions, same Runs

    Per config x model: mean score and pass rate on each side, the delta, a paired
    bootstrap interval of the mean score delta and an exact McNemar test over the tasks
    present on both sides; then the tasks that flipped, and what was added or removed.
    Runs left out (ungraded, errored, stale) are counted per config x model; a gate fails
    when B has fewer graded Runs of one than A because some are ungraded or errored.
    """
    from smevals.commands.diff import diff_command
    from smevals.diff.pairs import DiffOptions
    from smevals.report.rows import Filters
    from smevals.sides.read import SideSpec

    spec = SideSpec(grader, None, store, filters=Filters(tasks, models, configs),
                    include_stale=include_stale)
    opts = DiffOptions(args, spec, grader_versions, alpha, fmt, fail_on, show_output,
                       allow_incomplete, task_pass)
    result = diff_command(opts)
    write_output(result.text, output)
    if result.reasons:
        head = "gate failed" if result.incomplete else "regression"
        raise EvidenceFailed(f"{head}:\n  " + "\n  ".join(result.reasons))
