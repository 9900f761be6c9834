"""How Deliver reads speech over its own answer once ``deliver.barge_in_by_form`` is applied.

A barge-in holds a request, a question, a correction, a negation, an address to the agent, an amount
stated as its point, or content words that are not in the agent's own speech; a backchannel is short,
content-free and agrees. Each row is general spoken English written for this table (not taken from
any catalogue family), heard while the agent reads out a flight. The table also shows what g0 and
``deliver.backchannel_by_form`` alone make of the same rows, and that applying
``backchannel_by_form`` after ``barge_in_by_form`` no longer takes the barge-in reading back.
"""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from duplexagent import contract as C
from duplexagent.contract import text
from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent
SPEECH = "The cheapest flight to Lisbon leaves Friday morning at nine and costs two hundred euros."


@dataclass(frozen=True)
class Case:
    said: str  # what the interaction model has heard of the user's turn so far
    barge_in: bool  # True: the agent should stop; False: keep speaking
    why: str


CASES = [
    # barge-ins, stops and new requests over the agent's speech
    Case("Pardon me, but", True, "an apology before taking the floor"),
    Case("Wait a second", True, "an imperative"),
    Case("Hang on", True, "a verb and its particle"),
    Case("No no, that's not it", True, "a negation"),
    Case("Actually I meant Tuesday", True, "a correction with a value"),
    Case("Can I stop you there", True, "a question form"),
    Case("Stop", True, "a lone imperative"),
    Case("Enough, thanks", True, "an amount stated as the point, then thanks"),
    Case("Okay, that's plenty", True, "an amount stated as the point"),
    Case("Hey, quick question", True, "content words the agent did not say"),
    Case("What about the train", True, "a wh-question"),
    Case("You've got that wrong", True, "an address to the agent"),
    Case("Right, you lost me", True, "an address to the agent"),
    Case("Alright, I've heard", True, "a statement with a content verb, not a continuer"),
    Case("Let me ask", True, "a request form"),
    Case("Not now", True, "a negation"),
    Case("Be quiet", True, "an imperative of 'be'"),
    Case("Mm, the train instead", True, "content words the agent did not say"),
    Case("Oh and also book a taxi", True, "a new request"),
    Case("Lisbon?", True, "a question about the agent's own word"),
    Case("Not nine", True, "a negation of the agent's own word"),
    Case("Uh, okay, no", True, "a negator heard last is not waited on"),
    Case("Go away", True, "an imperative with its particle"),
    Case("Hmm, okay, would", True, "a sentence that has only begun"),
    # backchannels: short, content-free, agreeing
    Case("Mm-hm", False, "a murmur"),
    Case("Right, right", False, "particles"),
    Case("Uh-huh, go on", False, "a continuer"),
    Case("Mhm, fair enough", False, "a continuer that shares a word with a stop cue"),
    Case("Yep, I'm following", False, "a first-person continuer"),
    Case("I'm with you", False, "closed-class words only"),
    Case("Okay, I'm listening", False, "a first-person continuer"),
    Case("Brilliant", False, "an assessment (an adjective)"),
    Case("Oh, that's lovely", False, "an assessment"),
    Case("That works", False, "a subject and a verb, nothing more"),
    Case("Oh, Lisbon, great", False, "an echo of the agent's own word and an assessment"),
    Case("Friday, okay", False, "an echo of a value the agent said"),
    Case("Yeah, that makes sense", False, "a continuer"),
    Case("Mm-hm, go", False, "on its way to a continuer: the next check hears more"),
    Case("Okay, sounds", False, "on its way to a continuer"),
]


def _harness(tmp_path: Path, *operators: str):
    h = tmp_path / ("h_" + "_".join(o.replace(".", "_") for o in operators) if operators else "g0")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        for part in by_name(name).parts():
            apply_operator(part, h, HOOKS[part.module])
    spec = importlib.util.spec_from_file_location(f"deliver_rules_{h.name}", h / "deliver" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    return rules, tomllib.loads((h / "deliver" / "params.toml").read_text(encoding="utf-8"))["params"]


def _decide(harness, said: str) -> bool:
    rules, p = harness
    view = C.DeliverSpeechView.model_construct(
        now=20.0,
        speech=C.SpeechInfo.model_construct(speech_id="S2", purpose="answer", task_id="T1", text=SPEECH, elapsed_s=1.5, remaining_s=3.0),
        user_text=said,
        user_speaking_s=1.0,
        params=p,
    )
    return rules.on_user_speech(view).action == "yield"


@pytest.fixture(scope="module")
def harnesses(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("barge_in_reading")
    return {
        "g0": _harness(tmp),
        "bbf": _harness(tmp, "deliver.backchannel_by_form"),
        "bif": _harness(tmp, "deliver.barge_in_by_form"),
        "bif+bbf": _harness(tmp, "deliver.barge_in_by_form", "deliver.backchannel_by_form"),
    }


@pytest.mark.parametrize("case", CASES, ids=[c.said for c in CASES])
def test_the_barge_in_reading_tells_a_barge_in_from_a_backchannel(harnesses, case):
    assert _decide(harnesses["bif"], case.said) is case.barge_in, case.why


@pytest.mark.parametrize("case", CASES, ids=[c.said for c in CASES])
def test_backchannel_by_form_applied_later_keeps_that_reading(harnesses, case):
    assert _decide(harnesses["bif+bbf"], case.said) is case.barge_in, case.why


def test_the_reading_gets_right_rows_the_older_readings_got_wrong(harnesses):
    right = {name: sum(_decide(h, c.said) is c.barge_in for c in CASES) for name, h in harnesses.items()}
    assert right["bif"] == len(CASES)
    # g0 yields to most speech and keeps speaking only through what the toolkit knows as an
    # acknowledgement; backchannel_by_form alone misses the stops that are not built as imperatives
    assert right["g0"] < len(CASES) and right["bbf"] < len(CASES)
    assert not _decide(harnesses["bbf"], "Okay, that's plenty")  # what this reading adds
    assert _decide(harnesses["bbf"], "Uh-huh, go on") is False  # a continuer is one even with a particle verb


def test_only_pieces_that_acknowledge_are_set_aside():
    # the toolkit pieces the reading relies on
    assert text.acknowledgement("fair enough") and not text.acknowledgement("that's enough")
    assert "ADJ" in text.word_classes("brilliant") and "ADJ" not in text.word_classes("plenty")
    assert text.word_classes("") == frozenset()


# ---------------------------------------------------------------- Policy: an acknowledgement is no stop


def _policy(tmp_path: Path, operator: str):
    h = tmp_path / operator.replace(".", "_")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for part in by_name(operator).parts():
        apply_operator(part, h, HOOKS[part.module])
    spec = importlib.util.spec_from_file_location(f"policy_rules_{h.name}", h / "policy" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    return rules, tomllib.loads((h / "policy" / "params.toml").read_text(encoding="utf-8"))["params"]


def _route(rules, p: dict, said: str) -> tuple[str, str | None]:
    turn = C.TurnInfo(id="u2", text=said, t_start=10.0, t_end=11.0, silence_s=0.9, agent_speaking=True)
    history = [C.Utterance(who="user", text="Find me a flight to Lisbon.", t=1.0), C.Utterance(who="agent", text=SPEECH, t=8.0, purpose="answer", task_id="T1")]
    view = C.PolicyView(now=12.0, turn=turn, history=history, tasks=[], agent_speaking=True, context=C.MemoryContext(), params=p)
    d = rules.route(view)
    return d.action, d.control


@pytest.mark.parametrize("operator", ["policy.control_by_content", "policy.control_verbs"])
def test_a_continuer_sharing_a_word_with_a_stop_cue_is_not_a_stop(tmp_path, operator):
    rules, p = _policy(tmp_path, operator)
    assert "enough" in p["stop_phrases"]  # g0's own stop cue, which "fair enough" shares
    assert _route(rules, p, "Fair enough.") != ("CONTROL", "stop")
    assert _route(rules, p, "Mhm, fair enough.") != ("CONTROL", "stop")
    assert _route(rules, p, "Okay, enough now.") == ("CONTROL", "stop")
    assert _route(rules, p, "Stop, please.") == ("CONTROL", "stop")
