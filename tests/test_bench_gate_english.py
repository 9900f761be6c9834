"""The general-English gate bench: its rows, their batches and their labels (the gate is not run here)."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

from duplexagent.gate.model import ACTIONS

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "gate_english.py"


def _bench():
    if "gate_english_bench" not in sys.modules:
        spec = importlib.util.spec_from_file_location("gate_english_bench", BENCH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["gate_english_bench"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["gate_english_bench"]


def test_rows_and_batches():
    rows = _bench().ROWS
    assert len(rows) == 501
    assert all(label in ACTIONS for label, _, _ in rows)
    # the fifth batch (rows 199-268), reported apart: 14 per action
    assert Counter(label for label, _, _ in rows[198:268]) == {act: 14 for act in ACTIONS}
    # the sixth batch (rows 269-338), reported apart: 14 per action
    assert Counter(label for label, _, _ in rows[268:338]) == {act: 14 for act in ACTIONS}
    # the seventh batch (rows 339-408), reported apart: 14 per action
    assert Counter(label for label, _, _ in rows[338:408]) == {act: 14 for act in ACTIONS}
    # the eighth batch (rows 409-501), reported apart: 20 per action less 7 repeats of earlier rows
    assert Counter(label for label, _, _ in rows[408:]) == {"LISTEN": 20, "RESPOND": 15, "DELEGATE": 20, "CONTROL": 20, "IGNORE": 18}


def test_no_row_repeated():
    texts = [text.lower().strip(" .!?") for _, text, _ in _bench().ROWS]
    assert len(texts) == len(set(texts))
