"""Imports every command module so that its commands attach to the group."""

from __future__ import annotations

from smevals.cli import validate_cmd  # noqa: F401
from smevals.cli import run_cmd  # noqa: F401
from smevals.cli import grade_cmd  # noqa: F401
from smevals.cli import store_cmds  # noqa: F401
