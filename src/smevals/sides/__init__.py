"""One side of a comparison: an Eval and its store, in the working tree or at a git
revision, read into report rows (what `report`, `diff`, `build` and `serve` share)."""
