"""Repair operators for the Memory module, one module per operator (see ``rsi.repairs``)."""
