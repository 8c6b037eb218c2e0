"""The fixtures of the web tests and the browser check before each (tests/helpers/web/site.py):
`sites`, `served`, `browser`, `open_page`."""

from tests.helpers.web.site import browser, open_page, pytest_runtest_setup, served, sites

__all__ = ["browser", "open_page", "pytest_runtest_setup", "served", "sites"]
