"""Bundles: repair operators that edit several modules at once (see ``rsi.repairs``)."""
