"""`smevals log`: the history of Evals along git (smevals.history), rendered."""

from __future__ import annotations

from smevals.errors import SmevalsError
from smevals.history.load import HistoryOptions, load_history
from smevals.history.render import FORMATS, render


def log_command(opts: HistoryOptions, fmt: str) -> str:
    if fmt not in FORMATS:
        raise SmevalsError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}")
    return render(load_history(opts), fmt)
