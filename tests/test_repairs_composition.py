"""Operators compose: one applied after another keeps what the earlier one did.

Two kinds of test. The library check: no two operators may write their own versions of one harness
function over each other unless they are declared rivals (other readings of the same decision);
an operator that only adds a case to a reading does it with a :class:`~rsi.repairs._base.Guard`,
which survives any later rewrite. And behaviour: pairs of operators that touch the same function,
applied in both orders to a copy of the shipped g0 harness, each keep their own effect on turns a
user would say (general spoken English, not text of any catalogue family or probe set).
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from duplexagent.contract import MemoryContext, PolicyView, TaskInfo, TurnInfo, Utterance
from rsi.repairs import OPERATORS, by_name
from rsi.repairs._base import ApplyError, Guard, Operator, apply_operator, guards_in
from rsi.repairs._compose import RIVALS, overwrites, undeclared
from tests._operators import load_rules as _load

ROOT = Path(__file__).resolve().parent.parent
_n = itertools.count()


def _harness(tmp_path: Path, *operators: str) -> Path:
    h = tmp_path / f"h{next(_n)}"
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        apply_operator(by_name(name), h)
    return h


# ---------------------------------------------------------------- the library


def test_no_operator_silently_takes_back_another_ones_rewrite():
    found = undeclared()
    listing = "\n".join(f"  {o.later} writes over {o.earlier}'s {o.module}.{o.function}" for o in found)
    assert not found, (
        "operators that rewrite a function another operator rewrites, with neither composing (shared / guards) "
        "nor being declared rivals (Operator.alternatives or rsi.repairs._compose.RIVALS):\n" + listing
    )


def test_the_check_catches_a_new_operator_that_rewrites_a_guarded_reading(tmp_path):
    # an operator written like new_request_apart was before guards: its own copy of _is_refinement
    rogue = Operator(
        name="intake.rogue_refinement", module="intake", causes=("missed_refine",), summary="test",
        source_module="rsi.repairs.intake.refine_short_value", functions=("_is_refinement",),
    )
    assert any(o.later == "intake.rogue_refinement" and o.function == "_is_refinement" for o in undeclared(OPERATORS + (rogue,)))
    declared = Operator(**{**rogue.__dict__, "alternatives": ("intake.task_state_reading", "intake.refine_by_value")})
    assert not any(o.later == declared.name or o.earlier == declared.name for o in undeclared(OPERATORS + (declared,)))


def test_the_rival_table_names_only_operators_that_exist_and_pairs_that_overwrite():
    names = {op.name for op in OPERATORS}
    pairs = {(f"{o.module}.{o.function}", o.later) for o in overwrites()} | {(f"{o.module}.{o.function}", o.earlier) for o in overwrites()}
    for fn, group in RIVALS.items():
        for name in group:
            assert name in names, f"RIVALS[{fn!r}]: no operator {name!r}"
            assert (fn, name) in pairs, f"RIVALS[{fn!r}]: {name} does not rewrite it against another operator"


def test_the_operators_that_add_a_case_do_it_with_a_guard():
    assert [g.target for g in by_name("intake.new_request_apart").guards] == ["_is_refinement"]
    assert [g.target for g in by_name("intake.task_state_reading").guards] == ["_is_refinement"]
    assert [(g.target, g.where) for g in by_name("policy.resume_interrupted").guards] == [("_is_control", "last")]
    assert [(g.target, g.where) for g in by_name("policy.task_turns_by_form").guards] == [("_is_control", "first")]
    for op in OPERATORS:
        for part in op.parts():
            for g in part.guards:
                assert g.function in part.transplanted and g.target != g.function


# ---------------------------------------------------------------- the machinery


def test_a_guard_is_put_back_into_the_version_that_replaces_its_function(tmp_path):
    h = _harness(tmp_path, "intake.new_request_apart")
    assert guards_in((h / "intake" / "rules.py").read_text(encoding="utf-8"), "_is_refinement") == [("_nra_not_refinement", "first")]
    # a rival reading of refinements written over it: the guard goes on in front of the new version
    apply_operator(by_name("intake.refine_short_value"), h)
    src = (h / "intake" / "rules.py").read_text(encoding="utf-8")
    assert guards_in(src, "_is_refinement") == [("_nra_not_refinement", "first")]
    assert "_is_question(t, p) and not _slot_like(t)" not in src.split("def _is_refinement")[1].split("\ndef ")[0]
    # applying again changes nothing
    assert apply_operator(by_name("intake.new_request_apart"), h) == []


def test_guards_keep_their_order_and_place_across_rewrites(tmp_path):
    h = _harness(tmp_path, "policy.resume_interrupted", "policy.task_turns_by_form")
    want = [("_tbf_stop_about_task", "first"), ("_ri_resume", "last")]
    assert guards_in((h / "policy" / "rules.py").read_text(encoding="utf-8"), "_is_control") == want
    apply_operator(by_name("policy.control_verbs"), h)  # a rival reading of stop and resume cues
    assert guards_in((h / "policy" / "rules.py").read_text(encoding="utf-8"), "_is_control") == want
    h2 = _harness(tmp_path, "policy.task_turns_by_form", "policy.control_verbs", "policy.resume_interrupted")
    assert guards_in((h2 / "policy" / "rules.py").read_text(encoding="utf-8"), "_is_control") == want


def test_a_guard_whose_parameters_do_not_fit_is_refused_with_one_line(tmp_path):
    h = _harness(tmp_path)
    bad = Operator(
        name="intake.bad_guard", module="intake", causes=("missed_refine",), summary="test",
        source_module="rsi.repairs.intake.new_request_apart", functions=("_nra_values",),
        guards=(Guard("_is_refinement", "_nra_values"),),
    )
    before = (h / "intake" / "rules.py").read_text(encoding="utf-8")
    with pytest.raises(ApplyError) as err:
        apply_operator(bad, h)
    assert "\n" not in str(err.value) and "_nra_values" in str(err.value) and "_is_refinement" in str(err.value)
    assert (h / "intake" / "rules.py").read_text(encoding="utf-8") == before  # nothing half-written
    with pytest.raises(ValueError):
        Guard("_is_refinement", "_nra_values", where="middle")


def test_a_later_operator_of_the_family_keeps_a_limit_an_earlier_edit_set(tmp_path):
    from rsi.repairs._base import set_toml_value

    h = _harness(tmp_path, "intake.task_state_reading")
    assert _load(h, "intake")[1]["refine_max_words"] == 12  # the family's default, written over a harness without it
    # a numeric step the gates retained
    path = h / "intake" / "params.toml"
    path.write_text(set_toml_value(path.read_text(encoding="utf-8"), "params", "refine_max_words", 20), encoding="utf-8")
    apply_operator(by_name("intake.split_request_clauses"), h)
    apply_operator(by_name("intake.cancel_by_discard"), h)
    params = _load(h, "intake")[1]
    assert params["refine_max_words"] == 20 and params["status_max_words"] == 9 and params["max_batch_parts"] == 4


# ---------------------------------------------------------------- behaviour: intake


def _running(said: str, rtype: str) -> SimpleNamespace:
    return SimpleNamespace(
        task_id="T1", version=1, request_type=rtype, utterances=[said], slots={}, state="RUNNING", missing=[], updated_t=1.0,
        conditions={}, result=None, delivered=False,
    )


def _decide(h: Path):
    rules, params = _load(h, "intake")

    def decide(turn: str, *tasks) -> list[tuple[str, str | None]]:
        view = SimpleNamespace(turn=SimpleNamespace(text=turn), tasks=list(tasks), params=params, history=[], now=20.0)
        return [(op.op, op.task_id) for op in rules.interpret(view).ops]

    return decide


TRANSLATION = _running("Could you translate where is the station into Italian?", "translation")
SECOND_QUESTION = "Oh, and also, how many ounces are in 3 pounds?"


@pytest.mark.parametrize(
    "order",
    [
        ("intake.new_request_apart", "intake.task_state_reading"),
        ("intake.task_state_reading", "intake.new_request_apart"),
        ("intake.new_request_apart", "intake.refine_by_value"),
        ("intake.new_request_apart", "intake.task_state_reading", "intake.split_request_clauses"),
    ],
)
def test_a_second_question_during_a_task_stays_a_new_task_whatever_comes_after(tmp_path, order):
    decide = _decide(_harness(tmp_path, *order))
    assert decide(SECOND_QUESTION, TRANSLATION) == [("new", None)]
    # the structural reading's own cases are all still there
    assert decide("Actually, make it Spanish instead.", TRANSLATION) == [("refine", "T1")]
    assert decide("Sorry, scratch that, don't bother with the translation.", TRANSLATION) == [("cancel", "T1")]
    assert decide("And how do you say the station in 3 words?", TRANSLATION)[0][0] != "new"  # shares a word: about the task


def test_the_structural_reading_alone_now_keeps_a_question_of_its_own_apart(tmp_path):
    # task_state_reading widened what counts as a refinement; it brings the guard for that widening with it
    decide = _decide(_harness(tmp_path, "intake.task_state_reading"))
    assert decide(SECOND_QUESTION, TRANSLATION) == [("new", None)]
    assert decide("Make it Spanish.", TRANSLATION) == [("refine", "T1")]


# ---------------------------------------------------------------- behaviour: policy


def _task(state: str, said: str) -> TaskInfo:
    done = state in ("READY", "DELIVERED")
    return TaskInfo(
        task_id="T1", version=1, state=state, request_type="web_search", slots={}, missing=[], utterances=[said], conditions={},
        result="Three museums open late on Fridays." if done else None, result_status="ok" if done else None,
        created_t=1.0, updated_t=1.0, delivered=state == "DELIVERED",
    )


def _router(h: Path):
    rules, params = _load(h, "policy")

    def route(said: str, *, tasks=(), history=(), speaking: bool = False, gate: str = "DELEGATE") -> tuple[str, str | None]:
        turn = TurnInfo(id="u9", text=said, t_start=20.0, t_end=22.0, silence_s=0.9, agent_speaking=speaking, native_action=gate, native_confidence=0.99)
        view = PolicyView(now=23.0, turn=turn, history=list(history), tasks=list(tasks), agent_speaking=speaking, context=MemoryContext(), params=params)
        d = rules.route(view)
        return d.action, d.control

    return route


MUSEUMS = "Look up which museums stay open late on Fridays."
CUT_OFF = [
    Utterance(who="user", text=MUSEUMS, t=1.0),
    Utterance(who="agent", text="Three museums open late on", t=12.0, purpose="answer", task_id="T1"),
    Utterance(who="user", text="Sorry, my phone is ringing.", t=13.0),
]
ACK = [Utterance(who="user", text=MUSEUMS, t=1.0), Utterance(who="agent", text="Sure, I'm looking that up now.", t=3.0, purpose="ack", task_id="T1")]


@pytest.mark.parametrize(
    "order",
    [
        ("policy.resume_interrupted", "policy.task_turns_by_form"),
        ("policy.task_turns_by_form", "policy.resume_interrupted"),
        ("policy.task_turns_by_form", "policy.resume_interrupted", "policy.control_by_content"),
    ],
)
def test_the_control_operators_each_keep_their_case_in_either_order(tmp_path, order):
    route = _router(_harness(tmp_path, *order))
    # resume_interrupted: a padded request to go on with the interrupted answer is a resume
    assert route("Okay, sorry about that, you can go on now.", tasks=[_task("READY", MUSEUMS)], history=CUT_OFF) == ("CONTROL", "resume")
    # task_turns_by_form: a stop cue aimed at a running task while the agent is silent is about the task
    running = [_task("RUNNING", MUSEUMS)]
    assert route("Hold on, stop that one.", tasks=running, history=ACK)[0] != "CONTROL"
    # control_by_content: a stop padded with hesitation over the agent's speech still stops it
    assert route("Um, sorry, could you just stop for a second?", tasks=running, speaking=True) == ("CONTROL", "stop")


def test_each_control_guard_adds_a_case_the_reading_alone_lacks(tmp_path):
    # what each guard adds is real: the reading alone (control_by_content) lacks both cases
    route = _router(_harness(tmp_path, "policy.control_by_content"))
    assert route("Okay, sorry about that, you can go on now.", tasks=[_task("READY", MUSEUMS)], history=CUT_OFF)[1] != "resume"
    running = [_task("RUNNING", MUSEUMS)]
    assert route("Hold on, stop that one.", tasks=running, history=ACK) == ("CONTROL", "stop")


# ---------------------------------------------------------------- behaviour: deliver


def _hears(h: Path):
    from duplexagent import contract as C

    rules, params = _load(h, "deliver")

    def action(said: str, speaking_s: float) -> str:
        view = C.DeliverSpeechView.model_construct(
            now=20.0,
            speech=C.SpeechInfo.model_construct(
                speech_id="S2", purpose="answer", task_id="T1", text="The riverside path is four miles and mostly shaded.", elapsed_s=1.5, remaining_s=3.0,
            ),
            user_text=said, user_speaking_s=speaking_s, params=params,
        )
        return rules.on_user_speech(view).action

    return action


@pytest.mark.parametrize(
    "order",
    [
        ("deliver.barge_in_by_form", "deliver.backchannel_by_form"),
        ("deliver.backchannel_by_form", "deliver.barge_in_by_form"),
    ],
)
def test_a_backchannel_rewrite_after_the_barge_in_cases_keeps_them(tmp_path, order):
    hears = _hears(_harness(tmp_path, *order))
    # barge_in_by_form: a sentence that has only begun takes the floor at once
    for heard in ("Hmm, okay, could", "Oh, sorry, we"):
        assert hears(heard, 0.3) == "yield"
    # backchannel_by_form: a complete murmur does not; a question does
    assert hears("Mm, that is nice", 1.0) == "continue"
    assert hears("Wait, is it steep?", 1.0) == "yield"


def test_the_backchannel_reading_alone_lets_a_begun_sentence_run_on(tmp_path):
    # what the guard adds is real: without it the agent talks over the start of a sentence
    hears = _hears(_harness(tmp_path, "deliver.backchannel_by_form"))
    assert hears("Hmm, okay, could", 0.3) == "continue"
