"""Repair operators for the Deliver module, one module per operator (see ``rsi.repairs``)."""
