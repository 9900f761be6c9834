"""Building the read-only views (and their parts) the engine hands to hooks, without validation.

The engine builds every view from its own state, so it skips validation as ``model_construct``
does. ``construct`` makes exactly what ``model_construct`` makes (the same ``__dict__`` in field
order, the same fields set, defaults copied as pydantic copies them) with the per-field alias
lookups done once per class instead of on every call; a class this shortcut does not cover
(aliases, extra fields allowed, private attributes, a post-init hook) goes to ``model_construct``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["construct"]

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__
_PLANS: dict[type, tuple[tuple[str, Any], ...] | None] = {}


def _plan(cls: type[BaseModel]) -> tuple[tuple[str, Any], ...] | None:
    """(field name, FieldInfo or None when required) per field, in order; None: not covered."""
    if cls.__pydantic_root_model__ or cls.__pydantic_post_init__ or cls.__private_attributes__ or cls.model_config.get("extra") == "allow":
        return None
    out = []
    for name, field in cls.__pydantic_fields__.items():
        if field.alias is not None or field.validation_alias is not None:
            return None
        out.append((name, None if field.is_required() else field))
    return tuple(out)


def construct(cls: type[M], _fields_set: set[str] | None = None, **values: Any) -> M:
    """``cls.model_construct(_fields_set, **values)``, faster (trusted values: nothing is validated)."""
    try:
        plan = _PLANS[cls]
    except KeyError:
        plan = _PLANS[cls] = _plan(cls)
    if plan is None:
        return cls.model_construct(_fields_set, **values)
    fields: dict[str, Any] = {}
    fields_set = set()
    for name, field in plan:
        if name in values:
            fields[name] = values[name]
            fields_set.add(name)
        elif field is not None:
            fields[name] = field.get_default(call_default_factory=True, validated_data=fields)
    m = cls.__new__(cls)
    _set(m, "__dict__", fields)
    _set(m, "__pydantic_fields_set__", fields_set if _fields_set is None else _fields_set)
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m
