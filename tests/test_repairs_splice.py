"""The offline editor indexes an edited rules.py from the text it was made from instead of parsing
it whole: whatever it reads afterwards (functions, their source, the first hook) must be what a
whole parse of the new text gives, through chains of edits."""

from __future__ import annotations

import ast

from rsi.repairs import _base

SOURCE = '''from __future__ import annotations

import re

LIMIT = 3


def helper(x):
    return x + 1


@staticmethod
def decorated(y):
    return "é → ü"  # text after a multi-byte character


def on_turn(view):
    if view is None:
        return None
    return helper(1)
'''


def _as_read(text: str) -> list[tuple[str, int, int]]:
    return [(ast.dump(n), _base._span(n, off)[0], _base._span(n, off)[1]) for n, off in _base._index(text)]


def _whole(text: str) -> list[tuple[str, int, int]]:
    return [(ast.dump(n), _base._span(n, 0)[0], _base._span(n, 0)[1]) for n in ast.parse(text).body]


def test_replacing_a_function_is_indexed_as_a_whole_parse_would_be() -> None:
    _base._INDEX.clear()
    text = SOURCE
    steps = [
        ("helper", "def helper(x):\n    y = x * 2\n    return y + 1\n", None),  # grows
        ("decorated", "def decorated(y):\n    return y\n", None),  # loses its decorator line
        ("on_turn", "def on_turn(view):\n    return None\n", None),  # last statement, shrinks
        ("fresh", "def fresh():\n    return 2\n", "on_turn"),  # inserted before a hook
        ("tail", "def tail():\n    pass\n", None),  # appended
        ("helper", "def helper(x):\n    return x\n", None),  # the replaced statement again
    ]
    for name, new_def, before in steps:
        text = _base.replace_function(text, name, new_def, before=before)
        assert text in _base._INDEX
        assert _as_read(text) == _whole(text), name
        assert _base._function_text(text, name) + "\n" == new_def
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                assert _base._function_text(text, node.name) == ast.get_source_segment(text, node)
    assert [n for n in _base._top_functions(text)] == ["helper", "decorated", "fresh", "on_turn", "tail"]


def test_a_replacement_that_does_not_parse_alone_still_raises_the_parsers_error() -> None:
    _base._INDEX.clear()
    try:
        _base.replace_function(SOURCE, "helper", "def helper(x):\n    return (x\n")
    except SyntaxError:
        pass
    else:
        raise AssertionError("a broken replacement parsed")
