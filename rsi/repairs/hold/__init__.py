"""Repair operators for the Hold module, one module per operator (see ``rsi.repairs``)."""
