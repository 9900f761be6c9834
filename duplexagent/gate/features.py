"""What the learned gate sees, and how it is turned into hashed features.

:class:`GateInput` is everything an interaction model can know at a turn end (or a mid-turn
pause): the words heard so far in this turn, the silence since the last word, whether the agent
was speaking when the turn began, what the agent last said (and why), and how many tasks are in
flight. Nothing of the scenario's ground truth (intent, expectations, world) is in it.

:func:`featurize` maps a :class:`GateInput` to sorted, de-duplicated bucket ids in
``[0, N_BUCKETS)``: word 1- and 2-grams, character 3- and 4-grams of each word (so an unseen
inflection or compound shares most of its features with a seen one), the first and last words of
the prefix (where an unfinished request shows), a length bucket, and the context flags. The hash
is CRC-32 (stable across processes and machines, unlike ``hash()``).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["GateInput", "N_BUCKETS", "featurize", "feature_strings"]

N_BUCKETS = 1 << 14

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@dataclass(frozen=True)
class GateInput:
    """What the interaction model knows when its turn gate is asked."""

    text: str
    """The words of this user turn heard so far (every segment up to this pause or turn end)."""
    silence_s: float = 0.8
    """Silence since the last heard word, in seconds."""
    agent_speaking: bool = False
    """Whether the agent was speaking when this user turn began."""
    agent_last: str = ""
    """The text of the agent's most recent speech (empty before it first spoke)."""
    agent_last_purpose: str = ""
    """Why the agent said it (answer, ack, progress, status, chat, ask, confirm, ...)."""
    n_live: int = 0
    """Tasks in the ledger whose latest version is not cancelled, superseded or failed."""
    n_open: int = 0
    """Of those, the ones not yet delivered."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _len_bucket(n: int) -> str:
    for edge in (1, 2, 3, 5, 8, 12, 18):
        if n <= edge:
            return str(edge)
    return "many"


@lru_cache(maxsize=8192)
def _word_chars(w: str) -> tuple[str, ...]:
    s = f"<{w}>"
    out = []
    for n in (3, 4):
        out.extend(f"c{n}:{s[i:i + n]}" for i in range(len(s) - n + 1))
    return tuple(out)


def feature_strings(x: GateInput) -> list[str]:
    """The named features of one input (before hashing); readable, for docs and debugging."""
    ws = _words(x.text)
    f: list[str] = ["bias", f"n:{_len_bucket(len(ws))}"]
    for i, w in enumerate(ws):
        f.append(f"w:{w}")
        f.extend(_word_chars(w))
        if i:
            f.append(f"b:{ws[i - 1]}_{w}")
    if ws:
        f += [f"F1:{ws[0]}", f"L1:{ws[-1]}"]
        f.extend(f"Lc:{c}" for c in _word_chars(ws[-1]))
        if len(ws) > 1:
            f += [f"F2:{ws[0]}_{ws[1]}", f"L2:{ws[-2]}_{ws[-1]}", f"L1b:{ws[-2]}"]
    else:
        f.append("empty")
    f.append(f"as:{int(x.agent_speaking)}")
    f.append(f"live:{min(x.n_live, 3)}")
    f.append(f"open:{min(x.n_open, 3)}")
    f.append(f"as{int(x.agent_speaking)}_live{min(x.n_live, 2)}")
    f.append(f"ap:{x.agent_last_purpose or 'none'}")
    f.append(f"sil:{min(int(x.silence_s / 0.4), 5)}")
    for w in set(_words(x.agent_last)):
        f.append(f"a:{w}")
    return f


def featurize(x: GateInput) -> list[int]:
    """Sorted unique bucket ids of one input."""
    return sorted({zlib.crc32(s.encode("utf-8")) % N_BUCKETS for s in feature_strings(x)})
