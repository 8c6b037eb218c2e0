"""Results for analysis: the read API of `import smevals` (api.py), its typed records
(results.py), tables and DataFrames (tables.py, frames.py) and the files of `smevals
export` (files.py). Nothing here imports pandas, polars or pyarrow until a table is
converted."""
