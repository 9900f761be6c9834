"""The conversation simulator: composes, renders, exports and grades timed test conversations.

It imports nothing from ``duplexagent`` or ``rsi``: it serves other systems too.
"""
