"""The fixtures of the web tests and the browser check before each (tests/helpers/web/site.py):
`sites`, `served`, `browser`, `browser_context`, `open_page`."""

from tests.helpers.web.site import (
    browser,
    browser_context,
    open_page,
    pytest_runtest_setup,
    served,
    sites,
)

__all__ = ["browser", "browser_context", "open_page", "pytest_runtest_setup", "served", "sites"]
