"""Learned gate on general-English wordings: prefixes written for this bench, not from the catalogue.

Usage: python bench/gate_english.py [--model gate.pt] [--json]

A small held-out check of how the gate generalises beyond the grammar's paraphrase families: 168
everyday utterances (small talk and quick facts, requests and task changes, stop and resume, side
talk and backchannels, unfinished requests; the first 53 as first written, 45 added later, 36 more
tuning rows and 34 test rows added at stop 13) with the context an interaction model would
have (agent speaking, tasks live). The rows from ``TEST_FROM`` on are a test never tuned on:
a recipe may be chosen on the tuning rows (the first 134), and the test rows are only reported.
Prints accuracy per action, expected calibration error and the share right in the confidence
band above 0.8, for all rows, the tuning rows and the test rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from duplexagent.gate.evaluate import ece  # noqa: E402
from duplexagent.gate.features import GateInput  # noqa: E402
from duplexagent.gate.model import ACTIONS, load_gate  # noqa: E402

_SPEAKING = dict(agent_speaking=True, agent_last="Here is what I found for you, the first option is", agent_last_purpose="answer", n_live=1)
_ACKED = dict(agent_last="Sure, I'm on it.", agent_last_purpose="ack", n_live=1, n_open=1)
_ANSWERED = dict(agent_last="Done, that is all sorted for you.", agent_last_purpose="answer", n_live=1)
_STOPPED = dict(agent_last="Here is what I found, the first", agent_last_purpose="answer", n_live=1)
ROWS: list[tuple[str, str, dict]] = [
    # RESPOND
    ("RESPOND", "How's your day going so far?", {}),
    ("RESPOND", "What's the capital of Australia?", {}),
    ("RESPOND", "Good morning! How are you doing today?", {}),
    ("RESPOND", "Tell me a joke, would you?", {}),
    ("RESPOND", "Just so you know, my sister is called Priya.", {}),
    ("RESPOND", "Keep in mind that I'm allergic to peanuts.", {}),
    ("RESPOND", "Do you like music?", {}),
    ("RESPOND", "How many legs does a spider have?", {}),
    ("RESPOND", "Thanks a lot, you've been really helpful.", _ANSWERED),
    ("RESPOND", "What's your name, by the way?", {}),
    ("RESPOND", "Remember that my car is a blue hatchback.", {}),
    ("RESPOND", "Nice weather we're having, isn't it?", _ACKED),
    ("RESPOND", "Who wrote Pride and Prejudice?", {}),
    ("RESPOND", "Hi there, nice to meet you.", {}),
    # DELEGATE
    ("DELEGATE", "Could you book me a table for two at an Italian place tonight?", {}),
    ("DELEGATE", "Please find me a cheap hotel in Madrid for the weekend.", {}),
    ("DELEGATE", "Can you write a short note to my landlord about the broken heater?", {}),
    ("DELEGATE", "Order some more printer paper for the office.", {}),
    ("DELEGATE", "Look up train times from Leeds to York tomorrow morning.", {}),
    ("DELEGATE", "Make it for three people instead.", _ACKED),
    ("DELEGATE", "Actually, forget about the hotel.", _ACKED),
    ("DELEGATE", "How's that search coming along?", _ACKED),
    ("DELEGATE", "Bring back the one I called off earlier.", _ANSWERED),
    ("DELEGATE", "Turn this paragraph into Spanish for me.", {}),
    ("DELEGATE", "Work out how much I'd save if I paid the loan off early.", {}),
    ("DELEGATE", "Put a dentist appointment in my diary for Friday at ten.", {}),
    ("DELEGATE", "I need a summary of this report by lunchtime.", {}),
    ("DELEGATE", "Any news on the booking yet?", _ACKED),
    # CONTROL
    ("CONTROL", "Hang on, stop talking for a second.", _SPEAKING),
    ("CONTROL", "Hold on, be quiet a moment.", _SPEAKING),
    ("CONTROL", "Okay, please go on.", _STOPPED),
    ("CONTROL", "Carry on with what you were saying.", _STOPPED),
    ("CONTROL", "Shh, enough for now.", _SPEAKING),
    ("CONTROL", "You can keep going now.", _STOPPED),
    ("CONTROL", "Pause there, please.", _SPEAKING),
    # IGNORE
    ("IGNORE", "Honey, did you remember to feed the dog?", _ACKED),
    ("IGNORE", "Mum, I'll be down in five minutes!", _ACKED),
    ("IGNORE", "Mm-hmm.", _SPEAKING),
    ("IGNORE", "Right, okay.", _SPEAKING),
    ("IGNORE", "Uh huh, yeah.", _SPEAKING),
    ("IGNORE", "Kids, stop fighting over the remote!", _ACKED),
    ("IGNORE", "Sorry Dave, I'm on the phone, give me a minute.", _ACKED),
    ("IGNORE", "Yep, got it.", _SPEAKING),
    # LISTEN
    ("LISTEN", "Could you book me a", {}),
    ("LISTEN", "I was wondering if you could", {}),
    ("LISTEN", "What's the weather going to be like in", {}),
    ("LISTEN", "Can you remind me to", _ANSWERED),
    ("LISTEN", "Find me a flight from London to", {}),
    ("LISTEN", "Um, so, I need you to", _ACKED),
    ("LISTEN", "Tell me about the", {}),
    ("LISTEN", "Please send an email to", _ANSWERED),
    ("LISTEN", "And after that could you also", _ACKED),
    ("LISTEN", "Is there any way you could", {}),
    # added later (rows 54-98), written the same way: everyday English, no catalogue text
    ("RESPOND", "What time is it in Tokyo right now?", {}),
    ("RESPOND", "How do you spell necessary?", {}),
    ("RESPOND", "What does ubiquitous mean?", {}),
    ("RESPOND", "Good night, talk to you tomorrow.", _ANSWERED),
    ("RESPOND", "I just got back from a run and I'm exhausted.", {}),
    ("RESPOND", "Are you a robot?", {}),
    ("RESPOND", "By the way, my daughter's birthday is in March.", {}),
    ("RESPOND", "I prefer to be called Sam.", {}),
    ("RESPOND", "How tall is Mount Everest?", {}),
    ("RESPOND", "That's brilliant, thank you so much.", _ANSWERED),
    ("DELEGATE", "Can you set an alarm for six tomorrow morning?", {}),
    ("DELEGATE", "Send a message to Tom saying I'll be late.", {}),
    ("DELEGATE", "Find a recipe for vegetarian lasagne.", {}),
    ("DELEGATE", "Change that to Thursday instead.", _ACKED),
    ("DELEGATE", "Cancel the taxi I asked for.", _ACKED),
    ("DELEGATE", "Is the report ready yet?", _ACKED),
    ("DELEGATE", "Compare prices for those two laptops.", {}),
    ("DELEGATE", "What did the email say exactly?", _ANSWERED),
    ("DELEGATE", "Could you draft a birthday message for my uncle?", {}),
    ("CONTROL", "Wait, wait, stop there.", _SPEAKING),
    ("CONTROL", "Sorry, could you stop for a moment?", _SPEAKING),
    ("CONTROL", "That's enough, thanks.", _SPEAKING),
    ("CONTROL", "Okay, continue.", _STOPPED),
    ("CONTROL", "Go on, I'm listening.", _STOPPED),
    ("CONTROL", "Please finish what you were telling me.", _STOPPED),
    ("CONTROL", "Quiet, please.", _SPEAKING),
    ("IGNORE", "Yeah, yeah.", _SPEAKING),
    ("IGNORE", "Mhm, okay.", _SPEAKING),
    ("IGNORE", "I see.", _SPEAKING),
    ("IGNORE", "Tom, can you close the window?", _ACKED),
    ("IGNORE", "Dad, where did you put my shoes?", _ACKED),
    ("IGNORE", "Sure, sounds good.", _SPEAKING),
    ("IGNORE", "Grandma, dinner's ready!", _ACKED),
    ("IGNORE", "Oh wow, really.", _SPEAKING),
    ("LISTEN", "Could you tell me whether", {}),
    ("LISTEN", "I'd like to order a", {}),
    ("LISTEN", "Set a reminder for", {}),
    ("LISTEN", "What's the best way to get to the", {}),
    ("LISTEN", "Can you check if my", _ACKED),
    ("LISTEN", "Book a taxi to the airport at", {}),
    ("LISTEN", "So the thing is, I need", {}),
    ("LISTEN", "How much does it cost to", {}),
    ("LISTEN", "And could you make sure that the", _ACKED),
    ("LISTEN", "Tell me more about", _ANSWERED),
    ("LISTEN", "Do you know if", {}),
    # rows 99-134, added at stop 13 (tuning rows: recipe choices may look at these)
    ("RESPOND", "What's the boiling point of water?", {}),
    ("RESPOND", "Who painted the Mona Lisa?", {}),
    ("RESPOND", "How far away is the moon?", {}),
    ("RESPOND", "What year did the Second World War end?", {}),
    ("RESPOND", "Is a tomato a fruit or a vegetable?", {}),
    ("RESPOND", "Hey, how have you been?", {}),
    ("RESPOND", "I'm feeling a bit tired today.", {}),
    ("RESPOND", "Just so you know, I'm vegetarian.", {}),
    ("RESPOND", "My favourite colour is green.", {}),
    ("RESPOND", "What's your favourite film?", {}),
    ("RESPOND", "Thanks, that's perfect.", _ANSWERED),
    ("RESPOND", "How many days are there in a leap year?", {}),
    ("DELEGATE", "Can you find me a plumber who can come tomorrow?", {}),
    ("DELEGATE", "Please book a haircut for Saturday morning.", {}),
    ("DELEGATE", "Write a thank-you email to my team.", {}),
    ("DELEGATE", "Move the meeting to three o'clock.", _ACKED),
    ("DELEGATE", "Never mind the flowers, don't order them.", _ACKED),
    ("DELEGATE", "How far along are you with the slides?", _ACKED),
    ("DELEGATE", "Plan a route that avoids the motorway.", {}),
    ("DELEGATE", "Could you check my bank balance?", {}),
    ("CONTROL", "Stop, stop.", _SPEAKING),
    ("CONTROL", "Hold it right there.", _SPEAKING),
    ("CONTROL", "Okay, you can carry on.", _STOPPED),
    ("CONTROL", "Right, keep going.", _STOPPED),
    ("IGNORE", "Uh-huh.", _SPEAKING),
    ("IGNORE", "Okay, okay.", _SPEAKING),
    ("IGNORE", "Really? Interesting.", _SPEAKING),
    ("IGNORE", "Hey Sarah, do you want a cup of tea?", _ACKED),
    ("IGNORE", "Jack, put your coat on, we're leaving.", _ACKED),
    ("IGNORE", "Mike, did you lock the car?", _ACKED),
    ("LISTEN", "Could you find me a", {}),
    ("LISTEN", "What's the quickest way to", {}),
    ("LISTEN", "I need to book", {}),
    ("LISTEN", "Can you tell me how", {}),
    ("LISTEN", "Send a text to my", {}),
    ("LISTEN", "Remind me to pick up the", _ANSWERED),
    # rows 135-168, added at stop 13: the held-out test rows. Written before any recipe was tried and
    # never looked at while choosing one; read them only to report.
    ("RESPOND", "What's the square root of sixty four?", {}),
    ("RESPOND", "Where is the Eiffel Tower?", {}),
    ("RESPOND", "How old is the universe?", {}),
    ("RESPOND", "Good afternoon, lovely to hear from you.", {}),
    ("RESPOND", "I had a great weekend at the beach.", {}),
    ("RESPOND", "Do you have a favourite book?", {}),
    ("RESPOND", "For future reference, I take my coffee black.", {}),
    ("RESPOND", "Cheers, that helps a lot.", _ANSWERED),
    ("RESPOND", "What language do they speak in Brazil?", {}),
    ("RESPOND", "Which planet is closest to the sun?", {}),
    ("DELEGATE", "Can you reserve two tickets for the concert on Friday?", {}),
    ("DELEGATE", "Please translate this letter into French.", {}),
    ("DELEGATE", "Find out when the pharmacy closes today.", {}),
    ("DELEGATE", "Schedule a call with Maria next week.", {}),
    ("DELEGATE", "Make it a window seat instead.", _ACKED),
    ("DELEGATE", "Scrap that last request.", _ACKED),
    ("DELEGATE", "Is the booking done yet?", _ACKED),
    ("DELEGATE", "Put together a shopping list for the party.", {}),
    ("CONTROL", "Hush for a moment.", _SPEAKING),
    ("CONTROL", "Stop there, please.", _SPEAKING),
    ("CONTROL", "Alright, go ahead.", _STOPPED),
    ("CONTROL", "Please continue.", _STOPPED),
    ("IGNORE", "Mm, yeah.", _SPEAKING),
    ("IGNORE", "Right, right.", _SPEAKING),
    ("IGNORE", "Oh, okay.", _SPEAKING),
    ("IGNORE", "Emma, your bus is here!", _ACKED),
    ("IGNORE", "Sweetheart, can you grab the milk?", _ACKED),
    ("IGNORE", "Ben, turn the telly down please.", _ACKED),
    ("LISTEN", "Can you order me a", {}),
    ("LISTEN", "I'd like you to", {}),
    ("LISTEN", "What's the phone number for the", {}),
    ("LISTEN", "Could you send the", {}),
    ("LISTEN", "Please book a table at", {}),
    ("LISTEN", "How long will it take to", {}),
]
TEST_FROM = 134
"""Rows from this index on are the held-out test rows (never tuned on); the rest are tuning rows."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    gate = load_gate(a.model)
    preds = [gate.predict(GateInput(text=text, **ctx)) for _, text, ctx in ROWS]
    right = [p[0] == label for (label, _, _), p in zip(ROWS, preds)]
    per = {act: {"n": sum(1 for r in ROWS if r[0] == act), "right": sum(ok for ok, r in zip(right, ROWS) if r[0] == act)} for act in ACTIONS}
    band = [ok for ok, (_, c) in zip(right, preds) if c > 0.8]
    first = right[:53]
    tune, test = right[:TEST_FROM], right[TEST_FROM:]
    rep = {
        "n": len(ROWS),
        "first_53": {"n": 53, "right": sum(first)},
        "first_98": {"n": 98, "right": sum(right[:98])},
        "tuning": {"n": len(tune), "right": sum(tune)},
        "test": {"n": len(test), "right": sum(test), "ece": round(ece([c for _, c in preds[TEST_FROM:]], test), 4)},
        "right": sum(right),
        "accuracy": round(sum(right) / len(ROWS), 4),
        "per_action": per,
        "ece": round(ece([c for _, c in preds], right), 4),
        "band_0_8": {"n": len(band), "right": sum(band)},
        "model": gate.describe(),
    }
    if a.json:
        print(json.dumps(rep, indent=2))
    else:
        print(f"general English: {rep['right']}/{rep['n']} right (first 53 rows: {sum(first)}/53, first 98: {sum(right[:98])}/98), ECE {rep['ece']:.3f}, confidence > 0.8 right {sum(band)}/{len(band)}")
        print(f"  tuning rows {sum(tune)}/{len(tune)}; held-out test rows {sum(test)}/{len(test)} (ECE {rep['test']['ece']:.3f})")
        print("  " + "  ".join(f"{act} {d['right']}/{d['n']}" for act, d in per.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
