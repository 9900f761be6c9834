"""The ``duplexagent`` console script (the commands live in ``duplexagent._cli``, one file per group)."""

from duplexagent._cli import app, main

__all__ = ["app", "main"]

if __name__ == "__main__":
    main()
