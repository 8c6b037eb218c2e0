"""General file tools, below the store: canonical JSON (canonical.py), durable writes
(durable.py), opening only regular files within a size limit (regular.py), listing and
sealing a workspace without following links (workspace.py), reading objects out of git
(gitcat.py), transcripts (transcript.py), cache files (cachefile.py) and picture formats
told by their first bytes (imagefmt.py, for the checkers, the judges and the site).
Nothing here knows the store: `store`, `evaldef`, `checkers` and the layers above import
these, and `files` imports no other smevals package but `errors` (an import contract)."""
