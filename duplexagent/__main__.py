"""``python -m duplexagent``: the ``duplexagent`` console script (where the script is not on PATH)."""

from duplexagent.cli import main

main()
