"""Fast pickling of the contract's views for the module host pipe (standard library only).

Views are pydantic models the engine builds with ``model_construct``; pydantic's own pickle
support rebuilds them field by field and dominates a hook call's cost. A view here travels as
``(class, __dict__, fields set)`` and is rebuilt by :func:`rebuild` without validation, exactly as
``model_construct`` left it. Only the engine pickles (the host unpickles); the host's replies are
JSON, never pickles.
"""

from __future__ import annotations

__all__ = ["NO_PARAMS", "rebuild"]

_set = object.__setattr__

NO_PARAMS = "\x00params"
"""Stands for a view's ``params`` in a pickled view; the host puts in the module's own."""


def rebuild(cls: type, state: dict, fields_set: set) -> object:
    obj = cls.__new__(cls)
    _set(obj, "__dict__", state)
    _set(obj, "__pydantic_fields_set__", fields_set)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj
