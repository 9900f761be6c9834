"""Moved to :mod:`rsi.diagnose._index`; kept so older imports keep working."""

from rsi.diagnose._index import *  # noqa: F403
from rsi.diagnose._index import __all__  # noqa: F401
