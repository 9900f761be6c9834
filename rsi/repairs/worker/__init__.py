"""Repair operators for the Worker module, one module per operator (see ``rsi.repairs``)."""
