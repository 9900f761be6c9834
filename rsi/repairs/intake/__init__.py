"""Repair operators for the Intake module, one module per operator (see ``rsi.repairs``)."""
