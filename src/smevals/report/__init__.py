"""`smevals report`: pure functions from Runs and their chosen Grades to rows, summaries and
renderings (Markdown, JSON, CSV, JUnit XML), plus the CI gates. `committed` reads an Eval's
authoring files as committed at a git revision."""
