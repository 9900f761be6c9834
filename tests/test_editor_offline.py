"""The offline editor: real rule rewrites, archive-aware choice, deterministic, visible material only."""

from __future__ import annotations

import re

import ast
import shutil
import tomllib
from pathlib import Path

import pytest

from duplexagent.check import static_problems
from duplexagent.loader import HOOKS, load_harness
from rsi.editor_offline import OfflineEditor, rank_operators
from rsi.interfaces import ArchiveDigest, EditBrief, FailureExample
from rsi.repairs import OPERATORS, by_name
from rsi.repairs._base import apply_operator, guards_in, replace_function, set_toml_value

ROOT = Path(__file__).resolve().parent.parent


def _harness(tmp_path: Path) -> Path:
    dest = tmp_path / "h"
    shutil.copytree(ROOT / "modules", dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _brief(module: str = "policy", cause: str = "takeover", archive: list[ArchiveDigest] | None = None, seed: int = 3) -> EditBrief:
    return EditBrief(
        round=1,
        parent="g0",
        target_module=module,
        target_cause=cause,
        diagnosis="",
        failures=[FailureExample(scenario_id="dev-1", patterns=["mid_sentence_pause"], cause=cause, module=module, evidence="", failed_checks=["no_takeover: took over"])],
        archive=archive or [],
        editable=["policy/rules.py"],
        contract="",
        seed=seed,
    )


def test_every_operator_applies_to_g0_and_the_result_loads(tmp_path: Path) -> None:
    for op in OPERATORS:
        h = _harness(tmp_path / op.name)
        changed = apply_operator(op, h, HOOKS[op.module])
        assert changed, f"{op.name} changed nothing on g0"
        for path in changed:
            if path.endswith(".py"):
                ast.parse((h / path).read_text())
            else:
                tomllib.loads((h / path).read_text())
        load_harness(h, strict=True)
        # the contract check's static rules (imports, determinism, a range for every number) hold too:
        # an operator that brings a numeric parameter without its range is refused before any play
        assert not static_problems(h), (op.name, static_problems(h)[:2])


def test_an_operator_rewrites_the_rule_not_only_numbers(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    before = (h / "policy" / "rules.py").read_text()
    apply_operator(by_name("policy.incomplete_function_word"), h, HOOKS["policy"])
    after = (h / "policy" / "rules.py").read_text()
    assert "def _is_incomplete" in after and after != before
    assert 'p["function_words"]' in after  # new logic reading a new parameter
    assert "function_words" in tomllib.loads((h / "policy" / "params.toml").read_text())["params"]
    # the other helpers are untouched
    assert before.split("def _is_incomplete")[0] == after.split("def _is_incomplete")[0]


def test_replace_function_and_set_toml_value_are_exact() -> None:
    src = "import x\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
    out = replace_function(src, "a", "def a():\n    return 10\n")
    assert "return 10" in out and "def b():\n    return 2" in out
    out = replace_function(src, "c", "def c():\n    return 3\n", before="b")
    assert out.index("def c") < out.index("def b")
    toml = "[params]\nx = 1\n\n[ranges]\nx = [0, 2]\n"
    t2 = set_toml_value(toml, "params", "x", 2)
    assert tomllib.loads(t2)["params"]["x"] == 2
    t3 = set_toml_value(t2, "params.sub", "k", ["a", "b"])
    assert tomllib.loads(t3)["params"]["sub"]["k"] == ["a", "b"]


def test_ranking_prefers_the_target_and_skips_operators_rejected_at_this_parent() -> None:
    ranked = [op.name for op, _ in rank_operators(_brief())]
    assert by_name(ranked[0]).module == "policy" and "takeover" in by_name(ranked[0]).causes
    first = ranked[0]
    rejected = ArchiveDigest(record_id="r01c0", round=1, target_module="policy", target_cause="takeover", operator=first, decision="rejected", reason="dev")
    ranked2 = [op.name for op, _ in rank_operators(_brief(archive=[rejected]))]
    assert first not in ranked2
    # after a retained version the harness changed: the operator may be tried again, ranked lower
    kept = ArchiveDigest(record_id="r02c0", round=2, target_module="hold", target_cause="missing_progress", operator="hold.periodic_progress", decision="retained", reason="ok")
    ranked3 = [op.name for op, _ in rank_operators(_brief(archive=[rejected, kept]))]
    assert first in ranked3 and ranked3.index(first) > 0


def test_proposals_are_deterministic_per_seed(tmp_path: Path) -> None:
    ed = OfflineEditor()
    a, b = _harness(tmp_path / "a"), _harness(tmp_path / "b")
    ra, rb = ed.propose(_brief(seed=5), a), ed.propose(_brief(seed=5), b)
    assert ra.operator == rb.operator
    assert (a / "policy" / "rules.py").read_text() == (b / "policy" / "rules.py").read_text()


def test_without_diagnosis_one_shot_bundles_and_sequential_makes_one_edit(tmp_path: Path) -> None:
    failures = [
        FailureExample(scenario_id=f"d{i}", patterns=[], cause="", module="", evidence="", failed_checks=[c])
        for i, c in enumerate(["delivered: x", "task_count: y", "kept_speaking: z", "reported_failure: w", "no_takeover: v"])
    ]
    brief = _brief(module="", cause="").model_copy(update={"failures": failures})
    one = OfflineEditor(mode="one-shot").propose(brief, _harness(tmp_path / "one"))
    seq = OfflineEditor(mode="sequential").propose(brief, _harness(tmp_path / "seq"))
    assert one.operator and len(one.operator.split("+")) >= 3
    assert seq.operator and "+" not in seq.operator


@pytest.mark.parametrize("op", OPERATORS, ids=lambda o: o.name)
def test_repairs_do_not_copy_dev_phrases(op) -> None:
    """Repair code holds general rules; no dev connective phrase (read through the catalogue loader)
    appears in an operator's functions or params: vocabulary comes from induction, at run time."""
    from simulator.catalogue import load_catalogue

    cat = load_catalogue()
    dev_sentences = [t.lower() for kind in cat.phrases.values() for fam in kind.get("dev", []) for t in fam.templates]
    blob = " ".join(part.source(fn) for part in op.parts() for fn in part.functions) + " " + " ".join(repr(part.params) for part in op.parts())
    blob = blob.lower()
    for s in dev_sentences:
        core = re.sub(r"\{[a-z_]+\}", "", s).strip(" .,!?")
        if len(core) > 12:
            assert core not in blob, f"{op.name} copies a dev phrase"


def test_every_name_an_operator_function_uses_resolves_in_its_module() -> None:
    """Operator modules are code linters can check: every name a function uses is a local, a builtin,
    or bound at module level (an import, a g0 helper from rsi.repairs._g0, another function)."""
    import builtins
    import symtable

    pkg = ROOT / "rsi" / "repairs"
    missing = []
    for path in sorted(pkg.glob("*/*.py")):
        src = path.read_text()
        tree = ast.parse(src)
        bound = set(dir(builtins)) | {"__name__"}
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.Assign):
                bound |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        tables = {t.get_name(): t for t in symtable.symtable(src, str(path), "exec").get_children()}

        def local_names(t) -> set[str]:
            out = {s.get_name() for s in t.get_symbols() if s.is_local() or s.is_parameter()} if t.get_type() == "function" else set()
            for child in t.get_children():
                out |= local_names(child)
            return out

        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                loc = local_names(tables[node.name])
                missing += [f"{path.relative_to(pkg)}:{node.name}:{n.id}" for n in ast.walk(node) if isinstance(n, ast.Name) and n.id not in bound | loc]
    assert not missing, missing


def test_a_request_whose_object_names_another_type_is_typed_by_its_verb_and_not_asked_for_slots(tmp_path: Path) -> None:
    import importlib.util
    from types import SimpleNamespace

    h = _harness(tmp_path)
    apply_operator(by_name("intake.task_state_reading"), h, HOOKS["intake"])
    spec = importlib.util.spec_from_file_location("intake_rules_under_test", h / "intake" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    p = tomllib.loads((h / "intake" / "params.toml").read_text())["params"]
    running = SimpleNamespace(task_id="T1", version=1, request_type="weather", utterances=["weather in Oslo"], slots={}, state="RUNNING")

    # the replacement is read from its own clause: translation first, the booking word is inside the phrase
    op = rules._replacement_op("No, wait, do something else instead. Can you translate I have a reservation to Japanese?", running, p)
    assert (op.op, op.request_type, op.missing) == ("replace", "translation", [])
    new = rules._new_op("Please summarize the notes from the meeting", p)
    assert (new.request_type, new.missing) == ("summarization", [])
    # a clear reading still asks for what it lacks, in a replacement and in a new request
    assert rules._replacement_op("Scratch that, book a table for 4 people instead", running, p).missing == ["time"]
    assert rules._new_op("Book a table for 4 people", p).missing == ["time"]


def test_every_operator_is_a_module_of_real_functions_that_applies_to_g0(tmp_path: Path) -> None:
    """Each registered module imports, holds one OPERATOR record, and every function the record
    names is a real function of that module whose source is what lands in the harness."""
    import importlib
    import inspect

    from rsi.repairs import OPERATOR_MODULES

    pkg = ROOT / "rsi" / "repairs"
    on_disk = {
        ".".join(p.relative_to(pkg).with_suffix("").parts)
        for p in pkg.glob("*/*.py")
        if p.name != "__init__.py" and not p.name.startswith("_")
    }
    assert on_disk == set(OPERATOR_MODULES)  # no operator file left out of the registry
    for name in OPERATOR_MODULES:
        mod = importlib.import_module(f"rsi.repairs.{name}")
        op = mod.OPERATOR
        assert op in OPERATORS
        for part in op.parts():
            for fn in part.functions:
                obj = part.function(fn)
                assert inspect.isfunction(obj) and obj.__name__ == fn
        h = _harness(tmp_path / name)
        changed = apply_operator(op, h, HOOKS[op.module])
        assert changed
        for part in op.parts():
            rules = (h / part.module / "rules.py").read_text()
            for fn in part.functions:
                guards = [(g.function, g.where) for g in part.guards if g.target == fn]
                if guards:  # a guarded function: its own version, with the guard statements put in
                    assert all(g in guards_in(rules, fn) for g in guards)
                else:
                    assert part.source(fn).strip() in rules
        load_harness(h, strict=True)
