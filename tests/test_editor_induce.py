"""The offline editor grows vocabulary only by induction from failing dev turns, and says where each cue came from."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from rsi.archive import Archive, EditorInfo, ProposalRecord
from rsi.editor_offline import OfflineEditor, tune_moves
from rsi.induce import induce, ngrams
from rsi.interfaces import EditBrief, FailureExample, TurnEvidence

ROOT = Path(__file__).resolve().parent.parent


def _harness(tmp_path: Path) -> Path:
    dest = tmp_path / "h"
    shutil.copytree(ROOT / "modules", dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _turn(sid: str, tid: str, text: str, op: str, family: str = "") -> TurnEvidence:
    return TurnEvidence(scenario_id=sid, turn_id=tid, text=text, op=op, families=[family] if family else [])


# a cancel of another dev family the parent handled right that says the same word: what makes a
# cue drawn from one failing turn more than that turn's family head
_SCRUB = _turn("dev-7", "u2", "Please scrub that order now", "cancel", "cancel/dev/a")
_VALIDATES = _turn("dev-8", "u3", "Scrub it, cancel it", "cancel", "cancel/dev/b")


def _brief(failing: list[TurnEvidence], handled: list[TurnEvidence], module: str = "intake", cause: str = "missed_cancel", archive=None) -> EditBrief:
    failures = [
        FailureExample(
            scenario_id=t.scenario_id, patterns=["cancel_running"], cause=cause, module=module, evidence="", failed_checks=["never_heard: x"], turns=[t]
        )
        for t in failing
    ]
    return EditBrief(
        round=1,
        parent="g0",
        target_module=module,
        target_cause=cause,
        diagnosis="",
        failures=failures,
        archive=archive or [],
        editable=[f"{module}/params.toml"],
        contract="",
        seed=4,
        handled=handled,
    )


def _params(h: Path, module: str) -> dict:
    return tomllib.loads((h / module / "params.toml").read_text())["params"]


def test_a_cue_missing_from_the_params_is_induced_from_the_failing_turn_and_its_evidence_recorded(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    before = _params(h, "intake")["cancel_phrases"]
    assert "scrub" not in before
    failing = [_SCRUB]
    handled = [_turn("dev-3", "u1", "Please order a pizza for me now", "new"), _VALIDATES]
    result = OfflineEditor(operators=()).propose(_brief(failing, handled), h)

    assert result.operator == "induce:intake.cancel_phrases"
    after = _params(h, "intake")["cancel_phrases"]
    assert "scrub" in after and set(before) <= set(after)  # the list grew, nothing was dropped
    # words the other op's turn also holds ("please", "order", "now") separate nothing: not proposed
    assert not {"please", "order", "now", "order now"} & set(after)
    cue = next(c for c in result.evidence if c.phrase == "scrub")
    assert (cue.module, cue.param, cue.op, cue.support) == ("intake", "cancel_phrases", "cancel", 1)
    assert cue.precision == 1.0 and cue.score > 0
    assert [(t.scenario_id, t.turn_id, t.text) for t in cue.turns] == [("dev-7", "u2", "Please scrub that order now")]
    assert cue.families == ["cancel/dev/a", "cancel/dev/b"]  # drawn from one family, validated on another
    # and the edited harness now hears the cancel
    import importlib.util

    spec = importlib.util.spec_from_file_location("induced_intake_rules", h / "intake" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    assert rules._is_cancel("Please scrub that order now", _params(h, "intake"))


def test_the_evidence_reaches_the_archive_record_and_archive_show(tmp_path: Path) -> None:
    from duplexagent.cli import app

    handled = [_turn("dev-3", "u1", "Please order a pizza", "new"), _VALIDATES]
    result = OfflineEditor(operators=()).propose(_brief([_SCRUB], handled), _harness(tmp_path))
    rec = ProposalRecord(
        id="r01c0",
        round=1,
        candidate=0,
        mode="rsi",
        parent="g0",
        parent_commit="0" * 40,
        target_module="intake",
        target_cause="missed_cancel",
        diagnosis="missed_cancel 1 of 8",
        exam={"n": 8},
        seed=1,
        editor=EditorInfo(backend="offline", summary=result.summary, operator=result.operator, evidence=result.evidence),
        commit=None,
        changed_paths=[],
        diff="",
        decision="rejected",
        stage="dev",
        reason="because",
    )
    Archive(tmp_path / "C").append(rec)
    out = CliRunner().invoke(app, ["archive", "show", str(tmp_path / "C"), "r01c0", "--json"])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.output)["editor"]["evidence"]
    assert shown[0]["phrase"] == "scrub" and shown[0]["turns"][0] == {
        "scenario_id": "dev-7",
        "turn_id": "u2",
        "text": "Please scrub that order now",
        "op": "cancel",
    }
    assert shown[0]["families"] == ["cancel/dev/a", "cancel/dev/b"]


def test_a_cue_needs_support_from_two_failing_turns_once_there_are_several() -> None:
    failing = [
        _turn("d1", "u2", "scrub the laptop one", "cancel"),
        _turn("d2", "u2", "ok scrub it", "cancel"),
        _turn("d3", "u3", "yank the blender thing", "cancel"),
    ]
    handled = [_turn("d4", "u1", "buy a laptop", "new"), _turn("d5", "u1", "get me a blender", "new")]
    ind = induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]'])
    assert ind is not None and ind.phrases == ["scrub"]  # "yank" has one turn only
    assert ind.cues[0].support == 2 and {t.scenario_id for t in ind.cues[0].turns} == {"d1", "d2"}


def test_a_cue_only_one_dev_family_uses_is_held_back_and_one_two_families_share_is_proposed() -> None:
    # "yank" is what every turn of one family says (its head); "scrub" is said in two families
    failing = [
        _turn("d1", "u2", "yank the laptop one", "cancel", "cancel/dev/f1"),
        _turn("d2", "u2", "ok yank it", "cancel", "cancel/dev/f1"),
        _turn("d3", "u3", "yank that blender thing", "cancel", "cancel/dev/f1"),
        _turn("d4", "u2", "please scrub the order", "cancel", "cancel/dev/f2"),
        _turn("d5", "u2", "scrub it for me", "cancel", "cancel/dev/f3"),
    ]
    handled = [_turn("d6", "u1", "buy a laptop", "new", "shopping/dev/f1"), _turn("d7", "u1", "get me a blender", "new", "shopping/dev/f2")]
    notes: list[str] = []
    ind = induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]'], notes=notes)
    assert ind is not None and ind.phrases == ["scrub"]  # three turns say "yank", but one family
    cue = ind.cues[0]
    assert cue.families == ["cancel/dev/f2", "cancel/dev/f3"] and {t.scenario_id for t in cue.turns} == {"d4", "d5"}
    assert [c.phrase for c in ind.held][:1] == ["yank"] and ind.held[0].families == ["cancel/dev/f1"] and ind.held[0].support == 3
    assert any("held back" in n and "'yank'" in n for n in notes)
    # the same turns with all of them in one family: nothing is proposed
    one = [t.model_copy(update={"families": ["cancel/dev/f1"]}) for t in failing]
    assert induce(_brief(one, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]']) is None


def test_a_turn_an_existing_cue_already_matches_gives_no_new_cue() -> None:
    failing = [_turn("d1", "u2", "please cancel the order", "cancel")]
    assert induce(_brief(failing, []), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]']) is None


def test_names_numbers_and_closed_class_words_are_never_cues() -> None:
    grams = ngrams("Could you book it for Oslo at 7 instead")
    assert "instead" in grams and "book" in grams
    assert not {"oslo", "7", "for", "could you", "it for", "at 7"} & grams


def test_spoken_values_are_never_cues() -> None:
    grams = ngrams("no wait, make it eight people at half past six for twenty bucks")
    assert "make it" in grams
    assert not {"eight", "to eight", "half past", "six", "past six", "twenty bucks", "bucks", "eight people"} & grams
    assert "cancel that one" in ngrams("cancel that one please")  # "one" alone is a pronoun, not a count


def test_a_turn_of_another_op_counts_against_a_cue_whatever_became_of_its_conversation() -> None:
    """Two cancels say "last one"; a status question in a conversation the parent failed says it
    too. Before, only turns of passed conversations were the contrast and "last one" became a
    cancel cue, which then cancelled every "is that last one ready yet?"."""
    failing = [
        _turn("d1", "u2", "forget the last one", "cancel", "cancel/dev/f1"),
        _turn("d2", "u2", "drop that last one for me", "cancel", "cancel/dev/f2"),
    ]
    handled = [_turn("d4", "u1", "buy a laptop", "new", "shopping/dev/f1")]
    asks = [_turn("d9", "u3", "is that last one ready yet", "status", "status/dev/f1"), _turn("d9", "u4", "and the last one", "status", "status/dev/f2")]
    lists, reads = {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]']
    alone = induce(_brief(failing, handled), "intake", lists, reads)
    assert alone is not None and {"last", "last one"} & set(alone.phrases)
    brief = _brief(failing, handled).model_copy(update={"contrast": failing + handled + asks})
    ind = induce(brief, "intake", lists, reads)
    assert ind is None or not {"last one", "last"} & set(ind.phrases)


def test_only_lists_the_harness_reads_are_grown() -> None:
    failing = [_turn("d1", "u2", "scrub that", "cancel")]
    assert induce(_brief(failing, []), "intake", {"cancel_phrases": []}, ["def f(p): return p['other']"]) is None


def test_an_operator_is_bundled_with_the_vocabulary_for_its_cause(tmp_path: Path) -> None:
    from rsi.repairs import by_name

    h = _harness(tmp_path)
    failing = [_turn("dev-7", "u2", "Please scrub that order now", "cancel"), _turn("dev-9", "u3", "ok scrub the flight", "cancel")]
    op = by_name("intake.cancel_structural")
    handled = [_turn("dev-3", "u1", "Please order a pizza", "new")]
    result = OfflineEditor(operators=(op,)).propose(_brief(failing, handled), h)
    assert result.operator == "intake.cancel_structural+induce:intake.cancel_phrases"
    assert "def _cancel_cue" in (h / "intake" / "rules.py").read_text()
    assert "scrub" in _params(h, "intake")["cancel_phrases"] and result.evidence[0].support == 2
    # a cue seen in one failing turn only does not ride along with an operator
    alone = OfflineEditor(operators=(op,)).propose(_brief(failing[:1], handled), _harness(tmp_path / "one"))
    assert alone.operator == "intake.cancel_structural" and not alone.evidence


def test_no_vocabulary_for_a_cause_no_cue_list_repairs() -> None:
    failing = [_turn("dev-7", "u2", "Please scrub that order now", "cancel")]
    brief = _brief(failing, [], module="intake", cause="takeover")
    assert OfflineEditor(operators=())._induction(brief, ROOT / "modules", []) is None


def test_numeric_steps_stay_inside_the_declared_range_and_are_not_repeated(tmp_path: Path) -> None:
    from rsi.interfaces import ArchiveDigest

    moves = tune_moves("deliver", {"wait_s": 0.5, "min_interrupt_s": 0.5, "speak_kinds": ["x"]}, {"wait_s": [0.1, 5.0], "min_interrupt_s": [0.0, 3.0]})
    assert ("min_interrupt_s", 0.0) in moves and ("min_interrupt_s", 1.0) in moves and ("wait_s", 0.917) in moves
    assert all(0.0 <= v <= 5.0 for _, v in moves)
    # no operator and no vocabulary for the cause: one numeric step, never one already rejected here
    brief = _brief([_turn("d", "u1", "mhm", "backchannel")], [], module="deliver", cause="overlap")
    h = _harness(tmp_path / "a")
    first = OfflineEditor(operators=()).propose(brief, h)
    assert first.operator and first.operator.startswith("tune:deliver.")
    key, value = first.operator.removeprefix("tune:deliver.").split("=")
    assert _params(h, "deliver")[key] == float(value)
    rejected = ArchiveDigest(record_id="r01c0", round=1, target_module="deliver", target_cause="overlap", operator=first.operator, decision="rejected", reason="dev")
    second = OfflineEditor(operators=()).propose(brief.model_copy(update={"archive": [rejected]}), _harness(tmp_path / "b"))
    assert second.operator and second.operator != first.operator


def test_after_a_rejection_at_this_parent_the_vocabulary_alone_comes_before_more_operators(tmp_path: Path) -> None:
    from rsi.interfaces import ArchiveDigest

    failing = [_SCRUB]
    handled = [_turn("dev-3", "u1", "Please order a pizza", "new"), _VALIDATES]
    first = OfflineEditor().propose(_brief(failing, handled), _harness(tmp_path / "a"))
    assert first.operator and not first.operator.startswith("induce:")  # the best operator first
    rejected = ArchiveDigest(record_id="r01c0", round=1, target_module="intake", target_cause="missed_cancel", operator=first.operator, decision="rejected", reason="dev")
    second = OfflineEditor().propose(_brief(failing, handled, archive=[rejected]), _harness(tmp_path / "b"))
    assert second.operator == "induce:intake.cancel_phrases" and second.evidence
    again = ArchiveDigest(record_id="r01c1", round=1, target_module="intake", target_cause="missed_cancel", operator=second.operator, decision="rejected", reason="dev")
    third = OfflineEditor().propose(_brief(failing, handled, archive=[rejected, again]), _harness(tmp_path / "c"))
    assert third.operator not in (first.operator, second.operator) and not third.operator.startswith("induce:")


def test_a_model_editor_gets_the_failing_turns_of_its_examples_but_not_the_bulk_induction_material(tmp_path: Path) -> None:
    from rsi.editor_litellm import LiteLLMEditor

    failing = [_turn("dev-7", "u2", "Please scrub that order now", "cancel")]
    brief = _brief(failing, [_turn("dev-3", "u1", "Please order a pizza for the office", "new")])
    brief = brief.model_copy(update={"failing_turns": [_turn("dev-9", "u4", "one more failing turn", "cancel")]})
    user = LiteLLMEditor(client=None).messages(brief, _harness(tmp_path))[-1]["content"]  # type: ignore[arg-type]
    assert "Please scrub that order now" in user  # the example's cited turn
    assert "pizza for the office" not in user and "one more failing turn" not in user


def test_every_dev_turn_of_a_connective_op_is_traced_to_one_family_of_its_kind() -> None:
    from rsi.diagnose import CONNECTIVE_OPS, turn_evidence
    from simulator.compose import compose

    seen: dict[str, set[str]] = {}
    for sc in compose("dev", 60, seed=3):
        for t in turn_evidence(sc):
            if t.op in set(CONNECTIVE_OPS.values()) - {"new", "batch"}:
                assert t.families, (sc.id, t.turn_id, t.op)
                assert all(CONNECTIVE_OPS[f.split("/")[0]] == t.op and "/dev/" in f for f in t.families)
                seen.setdefault(t.op, set()).update(t.families)
    # the families of a kind are told apart (several per kind), so a cue's family count means something
    assert len(seen) >= 8 and max(len(v) for v in seen.values()) >= 2


def test_the_campaigns_contrast_is_a_dev_sample_the_same_for_every_round(tmp_path: Path) -> None:
    """Precision of a cue is estimated over a dev sample larger than the round's sets: text and
    ground-truth op of dev turns only, composed once per campaign from its seed."""
    from rsi.campaign import CONTRAST_N, Campaign
    from rsi.config import CampaignConfig

    a = Campaign(tmp_path / "a", CampaignConfig())._contrast_turns()
    b = Campaign(tmp_path / "b", CampaignConfig())._contrast_turns()
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert len({t.scenario_id for t in a}) == CONTRAST_N
    assert all(t.scenario_id.startswith("dev-") for t in a)
    ops = {t.op for t in a}
    assert {"cancel", "status", "refine", "new", "stop", "side", "backchannel"} <= ops
    other = Campaign(tmp_path / "c", CampaignConfig(seed=8))._contrast_turns()
    assert [t.text for t in other] != [t.text for t in a]


def test_light_verbs_and_particles_alone_are_never_cues() -> None:
    grams = ngrams("could we go back to the garden one instead")
    assert "we go" not in grams and "go back" not in grams and "we go back" not in grams
    assert "garden" in grams and "instead" in grams


def test_the_padding_around_a_word_and_the_tail_of_a_phrase_are_never_phrase_cues() -> None:
    # two families' failing cancels share only a padded word ("er oh hang") or the tail of a phrase
    # ("about wool"); the bare words are said in turns of other ops, so the old reading proposed the
    # padded or headless phrase; neither is a cue, and nothing is proposed
    handled = [
        _turn("d6", "u1", "buy some wool and a hang glider", "new", "shopping/dev/f2"),
        _turn("d3", "u2", "hang on a second", "stop", "stop/dev/f1"),
        _turn("d4", "u2", "make it the old one", "refine", "refine/dev/f1"),
    ]
    for a, b in (("um, er oh hang, park it", "so, er oh hang, shelve that"), ("hmm park it about wool", "hmm shelve that about wool")):
        failing = [_turn("d1", "u2", a, "cancel", "cancel/dev/f1"), _turn("d2", "u2", b, "cancel", "cancel/dev/f2")]
        assert induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]']) is None
    # a phrase with its head and no padding at its edges is still proposed
    failing = [_turn("d1", "u2", "um, park it, thanks", "cancel", "cancel/dev/f1"), _turn("d2", "u2", "oh, park it please", "cancel", "cancel/dev/f2")]
    ind = induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]'])
    assert ind is not None and ind.phrases == ["park"]


def test_a_word_the_turns_use_as_the_thing_acted_on_is_not_a_cue_alone() -> None:
    # both families' failing cancels name the thing they drop with "the"; the word for the thing
    # would fire on any turn that mentions it, so it is not proposed alone
    failing = [
        _turn("d1", "u2", "oh just scrap the plan", "cancel", "cancel/dev/f1"),
        _turn("d2", "u2", "ditch the plan please", "cancel", "cancel/dev/f2"),
    ]
    handled = [_turn("d3", "u1", "book a table for two", "new", "booking/dev/f1")]
    ind = induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]'])
    assert ind is None or "plan" not in ind.phrases
    # nor with its determiner: "the plan" names the thing as much as "plan" does
    assert ind is None or not any(p.split()[-1] == "plan" and len(p.split()) == 2 for p in ind.phrases)
    # a word the turns use as the act itself is still proposed
    failing = [_turn("d1", "u2", "oh just nuke it", "cancel", "cancel/dev/f1"), _turn("d2", "u2", "nuke that one please", "cancel", "cancel/dev/f2")]
    ind = induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]'])
    assert ind is not None and ind.phrases == ["nuke"]


def test_a_cue_is_written_as_the_turns_said_it_when_they_all_said_it_one_way() -> None:
    # both families' failing cancels say "binned"; written as its lemma the cue would claim "we're
    # binning the old ones" too, a form no failing turn used
    handled = [_turn("d3", "u1", "book a table for two", "new", "booking/dev/f1")]
    failing = [_turn("d1", "u2", "oh that one is binned now", "cancel", "cancel/dev/f1"), _turn("d2", "u2", "consider it binned please", "cancel", "cancel/dev/f2")]
    ind = induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]'])
    assert ind is not None and ind.phrases == ["binned"]
    # turns that say the word in several forms keep the lemma, which matches every form
    failing = [_turn("d1", "u2", "oh just bin it", "cancel", "cancel/dev/f1"), _turn("d2", "u2", "I binned that one please", "cancel", "cancel/dev/f2")]
    ind = induce(_brief(failing, handled), "intake", {"cancel_phrases": ["cancel"]}, ['p["cancel_phrases"]'])
    assert ind is not None and ind.phrases == ["bin"]
