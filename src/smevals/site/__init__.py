"""The web report: page data from the report's rows (`data`, `pages`), a static site
(`build`) and a live server (`serve`), sharing one browser app (`static/`)."""
