"""``duplexagent archive``: mounted by rsi.cli.register (the commands live in rsi.cli_campaign)."""

from rsi.cli_campaign import archive_app as app

__all__ = ["app"]
