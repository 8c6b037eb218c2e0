"""`smevals test`: graders over their fixtures (the work is commands/test.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from smevals.cli.base import cli, evals_argument, store_option
from smevals.errors import EvidenceFailed, SmevalsError

if TYPE_CHECKING:
    from smevals.commands.test import Suite


@cli.command("test", short_help="Run each grader over its fixtures; exit 1 on a mismatch.")
@evals_argument(required=False)
@click.option("-g", "--grader", "graders", metavar="GRADER", multiple=True,
              help="Only this grader (repeatable). Default: every grader with fixtures.")
@click.option("--junit", "junit", metavar="FILE", type=click.Path(dir_okay=False),
              help="Also write the results as JUnit XML to FILE (for CI).")
@click.option("--from-labels", is_flag=True,
              help="First write a fixture for every labelled Run that has none yet.")
@store_option
def test_cmd(paths: tuple[str, ...], graders: tuple[str, ...], junit: str | None,
             from_labels: bool, store: str | None) -> None:
    """Run each grader over the fixtures beside it (graders/<grader>.fixtures/*.yaml) and
    print, per case, what was expected and what the grader concluded.

    Nothing is read from or written to a store: each case gets a temporary Run folder
    and workspace. Exit 1 when a case does not match, 2 when a fixture is invalid.
    EVAL_OR_SUITE defaults to the current folder.
    """
    from smevals.commands.test import plan_tests, run_tests

    if from_labels:
        from smevals.graderfixtures.labels import fixtures_from_labels

        for line in fixtures_from_labels(paths, graders, store):
            click.echo(line)
    plan = plan_tests(paths, graders)
    for line in plan.without:
        click.echo(f"note: {line}", err=True)
    suites = run_tests(plan, _print_suite)
    outcomes = [o for s in suites for o in s.outcomes]
    if junit:
        _write_junit(junit, [(s.title, s.outcomes) for s in suites])
    bad = sum(bool(o.mismatches) for o in outcomes)
    missing = [o for o in outcomes if o.missing]
    not_run = f", {len(missing)} not run" if missing else ""
    click.echo(f"{len(outcomes)} case(s): {len(outcomes) - bad - len(missing)} ok, "
               f"{bad} mismatch(es){not_run}")
    if missing:                     # the environment, not the grader: exit 2, saying how
        needs = list(dict.fromkeys(line for o in missing for line in o.missing))
        raise SmevalsError(f"{len(missing)} of {len(outcomes)} fixture(s) could not be graded "
                           "here, a Check needs an optional dependency that is not "
                           "installed:\n  " + "\n  ".join(needs))
    if bad:
        raise EvidenceFailed(f"{bad} of {len(outcomes)} fixture(s) did not match")


def _print_suite(suite: Suite) -> None:
    click.echo(f"{suite.title} (grader version {suite.version}): {len(suite.cases)} case(s)")
    rows = [("CASE", "EXPECT", "GOT", "RESULT", "FAILING CHECK")]
    for o in suite.outcomes:
        result = "ok" if o.ok else "NOT RUN" if o.missing else "MISMATCH"
        rows.append((o.case.name, o.case.expect, o.outcome, result,
                     o.why.removeprefix("failed check ")))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for index, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        click.echo(("  " + "  ".join([*cells, row[4]])).rstrip())
        if index and not suite.outcomes[index - 1].ok:
            outcome = suite.outcomes[index - 1]
            for reason in outcome.missing or outcome.mismatches:
                click.echo(f"      {reason}")


def _write_junit(target: str, results: list[tuple[str, list[Any]]]) -> None:
    from smevals.graderfixtures.junit import junit_xml

    try:
        Path(target).write_text(junit_xml(results), encoding="utf-8")
    except OSError as exc:
        raise SmevalsError(f"--junit: cannot write {target}: {exc.strerror}") from None

