"""Rewordings: how a harness reads everyday English turns of a few kinds, each in a one-task setting.

Usage: python bench/rewordings.py [--modules DIR ...] [--json]

Turns written at stop 29 from general English (not from the catalogue, the hand-written set or the
hidden splits) to choose and check changes to the harness readings: they were looked at while
changes were made, so they are a development check, not a held-out measure. Each group plays
one short conversation per turn and reads what the harness did with it:

- ``cancel``, ``status``, ``refine``: said while a hotel search is running; right when Intake's op
  for the turn is cancel, status or refine;
- ``replace``: said while the hotel search is running, putting it aside for other work (written at
  stop 30); right when Intake's op is replace;
- ``greeting``: turns opened by a greeting, at a conversation's start or while a search runs; right
  when Policy routes them as labelled (RESPOND for small talk, DELEGATE for work);
- ``opening`` (stop 30): a conversation's first turn, a plain request for work or small talk and
  quick facts, routed as labelled; ``chat`` (stop 30): small talk with a pronoun or demonstrative in
  it, said while the search runs, right when Policy answers it (RESPOND);
- ``stop``: said four seconds into a story the agent is telling; right when the agent yields within
  a second and the rest of the story is never heard;
- ``side``: said to someone else in the room while a search runs; right when Policy ignores it.

Prints, per harness (default: the shipped g0), the right count of each group and the turns it got
wrong with what it did instead. Exit code 0; 2 on a bad argument.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TASK_TURN = "Could you find me a cheap hotel in Lisbon for next weekend?"

GROUPS: dict[str, list[tuple[str, str]]] = {
    "cancel": [
        ("cancel", t)
        for t in (
            "Actually, forget the hotel, we've decided to stay with friends.",
            "Could you call off that hotel search? Plans have changed.",
            "Don't worry about the hotel anymore.",
            "Hmm, let's leave the hotel thing for now, thanks.",
            "No need to keep looking for that hotel.",
            "Scratch the hotel, my sister's sorting it.",
            "I've changed my mind, I don't want a hotel after all.",
            "Stop looking for the hotel, please.",
            "You can drop that hotel search, cheers.",
            "Oh, never mind about Lisbon, the trip's off.",
            "Ah, the trip's been cancelled, so no hotel needed.",
            "Please abandon the hotel search.",
            "Let's not bother with the hotel.",
            "Could you stop the search? I don't need it now.",
            "Right, cancel that last request if you can.",
        )
    ],
    "status": [
        ("status", t)
        for t in (
            "How are you getting on with that hotel?",
            "Any joy with the hotel yet?",
            "Is the hotel thing sorted?",
            "Did you manage to find anything?",
            "Where are we with the hotel search?",
            "Have you found one yet?",
            "Still nothing on the hotel?",
            "Any progress on my hotel?",
            "How much longer will the hotel take?",
            "Is it nearly done?",
            "Have you had any luck?",
            "What's happening with my hotel search?",
            "Are you still looking for that hotel?",
            "Got anything for me yet?",
            "Hmm, is that taking a while?",
        )
    ],
    "refine": [
        ("refine", t)
        for t in (
            "Oh, make that somewhere near the beach.",
            "Actually, can it be under eighty euros a night?",
            "Sorry, I meant the weekend after, not next weekend.",
            "Could you make it for three nights instead of two?",
            "Wait, it needs to have parking too.",
            "Ah, and somewhere that allows dogs, please.",
            "Change that to Porto rather than Lisbon.",
            "Make sure it's close to the old town.",
            "Oh, and breakfast included if possible.",
            "Hmm, let's go up to a hundred euros.",
            "Can you look for something with a pool instead?",
            "Actually, two rooms, not one.",
        )
    ],
    "replace": [
        ("replace", t)
        for t in (
            'Actually, scrap that, could you find me a train to Porto instead?',
            "Forget the hotel, I'd rather you looked up car hire in Lisbon.",
            "On second thoughts, don't bother with the hotel. Can you check the weather in Lisbon for next weekend?",
            'No, hang on, instead of the hotel, can you book a table at a seafood place for Saturday night?',
            "Let's not do the hotel. What I really need is a flight from Manchester on Friday morning.",
            'Change of plan: skip the hotel and set a reminder to call my sister at six.',
            'Hmm, leave the hotel for now and translate "where is the beach" into Portuguese for me.',
            'Never mind the hotel search, could you recommend a good guidebook for Lisbon?',
            "Ditch the hotel, we're camping. Can you find a campsite near Lisbon?",
            'Rather than the hotel, could you sort out travel insurance for the trip?',
            "Cancel that one and email Marta that we'll arrive on Friday.",
            "That's no longer needed. Instead, please work out how much two hundred euros is in pounds.",
        )
    ],
    # (label, turn) with "+" before the turn: said while the search runs
    "greeting": [
        ("RESPOND", "Hey, how's it going?"),
        ("RESPOND", "Hi there! Lovely day, isn't it?"),
        ("RESPOND", "+Hey, thanks so much for that."),
        ("RESPOND", "Hello, who am I talking to?"),
        ("RESPOND", "Hey, do you like football?"),
        ("RESPOND", "Hi, what's your favourite colour?"),
        ("RESPOND", "Hey, good morning to you."),
        ("RESPOND", "+Hey, you're pretty clever, aren't you?"),
        ("DELEGATE", "Hey, can you find me a cheap hotel in Rome?"),
        ("DELEGATE", "Hi, is my parcel on its way yet?"),
        ("DELEGATE", "Hey, what time does the chemist close today?"),
        ("DELEGATE", "+Hey, cancel that last thing, would you?"),
        ("DELEGATE", "Hi, could you sort me a taxi for six?"),
        ("DELEGATE", "+Hey, any luck with that search?"),
        ("DELEGATE", "Hey, I need to move my dentist appointment."),
        ("DELEGATE", "Hello, I'd like to return a jacket I bought."),
        ("DELEGATE", "+Hey, scrap the last one, I don't need it now."),
        ("DELEGATE", "+Hiya, how's my train search coming along?"),
        ("RESPOND", "Hey, how tall is Mount Everest?"),
        ("RESPOND", "+Hey there, I'm back!"),
    ],
    # written at stop 30: a conversation's opening turn, plain requests for work (many as a customer
    # of a shop or a service says them) and small talk or a quick fact
    "opening": [
        ("DELEGATE", "I'd like to return the shoes I bought last week."),
        ("DELEGATE", "My order hasn't arrived yet, can you check where it is?"),
        ("DELEGATE", "I need to change the delivery address on my account."),
        ("DELEGATE", "Can I get a refund for the broken kettle?"),
        ("DELEGATE", "Please move my dentist appointment to Thursday."),
        ("DELEGATE", "Could you text Ben that I'm running ten minutes late?"),
        ("DELEGATE", "Find me a plumber who can come out today."),
        ("DELEGATE", "What's the cheapest way to get from Leeds to Glasgow on Saturday?"),
        ("DELEGATE", "I want to upgrade my phone plan."),
        ("DELEGATE", "Can you put together a packing list for a week in Spain?"),
        ("DELEGATE", "Help me write a thank-you note for my neighbour."),
        ("DELEGATE", "Is there a chemist open near me right now?"),
        ("DELEGATE", "I'd like to book two tickets for the nine o'clock showing of Dune."),
        ("DELEGATE", "Could you compare prices for a weekend car hire in Bristol?"),
        ("DELEGATE", "I was charged twice for my subscription this month."),
        ("RESPOND", "How are you doing today?"),
        ("RESPOND", "What's your favourite film?"),
        ("RESPOND", "Do you ever get tired of answering questions?"),
        ("RESPOND", "I just got back from a lovely walk by the river."),
        ("RESPOND", "That's really kind of you, thanks."),
        ("RESPOND", "Can you tell me a joke?"),
        ("RESPOND", "What's the capital of Canada?"),
        ("RESPOND", "How many days are there in a leap year?"),
        ("RESPOND", "You sound a bit different today."),
        ("RESPOND", "Good morning! Sleep well?"),
        ("RESPOND", "I'm so nervous about my exam tomorrow."),
        ("RESPOND", "Are you a real person?"),
        ("RESPOND", "What should I call you?"),
        ("RESPOND", "How do you spell necessary?"),
        ("RESPOND", "Isn't the weather lovely this afternoon?"),
    ],
    # written at stop 30: small talk said while the search runs, with a pronoun or demonstrative in it
    "chat": [
        ("RESPOND", "+Did you see the match last night? It was brilliant."),
        ("RESPOND", "+My neighbour got a puppy, isn't that sweet?"),
        ("RESPOND", "+What's the tallest mountain in Africa? I always forget that."),
        ("RESPOND", "+I've just made a cup of tea. Do you drink it? Ha, of course not."),
        ("RESPOND", "+Is it normal to feel this tired on a Monday?"),
        ("RESPOND", "+That reminds me, how many ounces are in a pound?"),
        ("RESPOND", "+This rain is awful, does it ever stop here?"),
        ("RESPOND", "+Have you heard that new song by Adele? I can't get it out of my head."),
        ("RESPOND", "+It's my birthday tomorrow, can you believe it?"),
        ("RESPOND", "+I love this song, do you know it?"),
        ("RESPOND", "+How old do you think that oak tree in my garden is?"),
        ("RESPOND", "+Is it me or is it getting colder?"),
        ("RESPOND", "+My daughter made me a card, isn't that lovely?"),
        ("RESPOND", "+Honestly, what do you reckon about pineapple on pizza? I quite like it."),
        ("RESPOND", "+Oh, that's funny, do you ever get jokes?"),
    ],
    "stop": [
        ("stop", t)
        for t in (
            "Okay, that's plenty, thank you.",
            "Sorry, can you stop there?",
            "Right, I've heard enough of that one.",
            "Whoa, hang on, stop a sec.",
            "Alright, that'll do, cheers.",
            "Could you be quiet for a moment?",
            "Let's leave it there, thanks.",
            "Stop, stop, I get the idea.",
            "Um, okay, you can stop now.",
            "No more, please, I'm falling asleep.",
            "That's lovely but I need to go now.",
            "Shh, the baby's sleeping.",
        )
    ],
    "side": [
        ("IGNORE", t)
        for t in (
            "Sam, can you grab the door? Someone's knocking.",
            "Mum, have you seen my car keys anywhere?",
            "No, not now sweetie, I'm on the phone.",
            "Hang on, love, I'll be with you in a minute.",
            "Kids, dinner's on the table!",
            "Can you pass me that pen, Jake?",
            "Oh hi Dave, yeah, come on in.",
            "Stop that, Max, leave the cat alone!",
            "Honey, did you book the babysitter for Friday?",
            "Sorry, I'm talking to my assistant, give me a sec.",
        )
    ],
}

# groups right when Policy routes the turn as labelled (with "+": said while the search runs)
_ROUTED = ("greeting", "opening", "chat")

_HOTEL = {"key": "t", "request_type": "web_search", "slots": {}, "keywords": ["hotel"], "delay_s": 25, "answer_template": "The Casa Azul has rooms at 60 euros."}
_STORY = (
    "Once upon a time there was a clever fox named Rowan who lived at the edge of a great forest. Every evening she crept "
    "down to the river to listen to the frogs, and one night the frogs began to sing her name."
)


def _scenario(group: str, n: int, text: str) -> Any:
    from simulator.scenario import parse_scenario

    base = {"schema_version": 1, "split": "dev", "id": f"rw-{group}-{n:02d}", "seed": 3, "duration_s": 40}
    if group == "stop":
        return parse_scenario(
            {
                **base,
                "request_types": ["chit_chat"],
                "patterns": ["stop_speaking"],
                "turns": [
                    {"id": "u1", "text": "Tell me a bedtime story about a fox.", "at": 0.5, "intent": {"op": "chat"}},
                    {"id": "u2", "text": text, "after": {"event": "agent_speech_start", "ref": "u1", "contains": "fox named", "delay_s": 4.0, "else_at": 10}, "intent": {"op": "stop"}},
                ],
                "world": {"direct": [{"match": ["story", "fox"], "reply": _STORY}]},
                "expect": [{"check": "yielded", "turn": "u2", "within_s": 1.0}, {"check": "never_heard", "turn": "u2", "absent": ["frogs began"]}],
            },
            f"<{base['id']}>",
        )
    running = group not in _ROUTED or text.startswith("+")
    said = text.lstrip("+")
    turns = [{"id": "u0", "text": TASK_TURN, "at": 0.5, "intent": {"op": "new", "task": "t", "slots": {}}}] if running else []
    intent = {"op": "side"} if group == "side" else {"op": "chat"} if group in _ROUTED else {"op": group, "task": "t"}
    turn: dict[str, Any] = {"id": "u1", "text": said, "at": 9.0 if running else 0.5, "intent": intent}
    if group == "side":
        turn["addressed"] = False
    return parse_scenario(
        {
            **base,
            "request_types": ["web_search"],
            "patterns": ["side_talk" if group == "side" else "request_then_chat"],
            "turns": turns + [turn],
            "world": {"tasks": [_HOTEL]},
            "expect": [{"check": "delivered", "task": "t", "contains": ["Casa"], "by_s": 39}],
        },
        f"<{base['id']}>",
    )


def measure(modules: Path) -> dict[str, Any]:
    """Per group: turns, right, and the wrong ones with what the harness did."""
    from duplexagent.engine import Session
    from duplexagent.loader import load_harness
    from duplexagent.runner import run_scenarios

    harness = load_harness(modules)
    route, interpret = harness.hook("policy", "route"), harness.hook("intake", "interpret")
    seen: list[tuple[str, str, str]] = []

    def routed(view: Any) -> Any:
        d = route(view)
        seen.append(("route", view.turn.id, d.action))
        return d

    def read(view: Any) -> Any:
        d = interpret(view)
        seen.append(("intake", view.turn.id, d.ops[0].op if d.ops else "none"))
        return d

    harness.modules["policy"].hooks["route"] = routed
    harness.modules["intake"].hooks["interpret"] = read
    out: dict[str, Any] = {}
    for group, rows in GROUPS.items():
        wrong = []
        if group == "stop":
            scs = [_scenario(group, n, t) for n, (_, t) in enumerate(rows)]
            res = run_scenarios(scs, modules)
            for (_, t), conv in zip(rows, res.score.conversations):
                if not conv.passed:
                    wrong.append({"turn": t, "got": ", ".join(o.check for o in conv.checks if not o.passed and not o.untested)})
        else:
            for n, (label, t) in enumerate(rows):
                seen.clear()
                Session(_scenario(group, n, t), harness).run()
                mine = [s for s in seen if s[1] == "u1"]
                routes = [s[2] for s in mine if s[0] == "route"]
                ops = [s[2] for s in mine if s[0] == "intake"]
                got = (routes[-1] if routes else "none") if group in _ROUTED + ("side",) else (ops[-1] if ops else f"routed {routes[-1] if routes else 'none'}")
                if got != label:
                    wrong.append({"turn": t.lstrip("+"), "got": got})
        out[group] = {"n": len(rows), "right": len(rows) - len(wrong), "wrong": wrong}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", action="append", type=Path, default=None, help="harness directory (repeatable; default: the shipped g0)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    from duplexagent.loader import default_modules_dir

    dirs = a.modules or [default_modules_dir()]
    for d in dirs:
        if not (d / "MANIFEST.toml").is_file():
            print(f"{d}: --modules: not a harness directory (no MANIFEST.toml)", file=sys.stderr)
            return 2
    report = {str(d): measure(d) for d in dirs}
    if a.json:
        print(json.dumps(report, indent=2))
        return 0
    for d, groups in report.items():
        print(f"{d}: " + ", ".join(f"{g} {r['right']}/{r['n']}" for g, r in groups.items()))
        for g, r in groups.items():
            for w in r["wrong"]:
                print(f"  {g}: {w['turn']!r} -> {w['got']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
