"""Repair operators for the Policy module, one module per operator (see ``rsi.repairs``)."""
