"""`smevals diff`: compare two sides (two revisions, or two grader versions on the same
Runs) with paired statistics; `compare` is pure, `render` turns the result into text."""
