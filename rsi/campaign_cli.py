"""``duplexagent campaign``: mounted by rsi.cli.register (the commands live in rsi.cli_campaign)."""

from rsi.cli_campaign import campaign_app as app

__all__ = ["app"]
