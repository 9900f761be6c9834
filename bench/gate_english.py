"""Learned gate on general-English wordings: prefixes written for this bench, not from the catalogue.

Usage: python bench/gate_english.py [--model gate.pt] [--json]

A small held-out check of how the gate generalises beyond the grammar's paraphrase families: 338
everyday utterances (small talk and quick facts, requests and task changes, stop and resume, side
talk and backchannels, unfinished requests; the first 53 as first written, 45 added later, 50 in a
third batch written for the semantic channel's work before the new gate was scored on them, 50 in
a fourth batch (rows 149-198) written for the per-action gate work before any gate was scored on
them and reported apart: that work was chosen on rows 1-148 only; 70 in a fifth batch (rows
199-268, 14 per action) written on 2026-12-07 before any gate was scored on them and reported
apart; and 70 in a sixth batch (rows 269-338, 14 per action) written on 2026-12-07, worded apart
from rows 1-268, before any gate was scored on them and reported apart) with the context an
interaction model would have (agent speaking, tasks live). Prints accuracy per action, expected
calibration error and the share right in the confidence band above 0.8.
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
    # a third batch (rows 99-148), written for the semantic channel's work the same way: everyday
    # spoken English, no catalogue text, before the new gate was scored on them
    ("RESPOND", "What year did the Berlin Wall come down?", {}),
    ("RESPOND", "How far away is the moon?", {}),
    ("RESPOND", "Which planet is the biggest?", {}),
    ("RESPOND", "Hey, what's up?", {}),
    ("RESPOND", "Ugh, Mondays, am I right?", {}),
    ("RESPOND", "Do you ever get bored?", {}),
    ("RESPOND", "FYI, I'm vegetarian.", {}),
    ("RESPOND", "Oh and my partner's name is Alex, in case it comes up.", {}),
    ("RESPOND", "Cheers, that's perfect.", _ANSWERED),
    ("RESPOND", "What's the opposite of generous?", {}),
    ("RESPOND", "How many days are there in a leap year?", {}),
    ("RESPOND", "You're pretty funny, you know that?", _ANSWERED),
    ("DELEGATE", "Can you sort out a haircut for me on Saturday?", {}),
    ("DELEGATE", "Get me the cheapest flight to Lisbon next month.", {}),
    ("DELEGATE", "Pull together a shopping list for a barbecue for ten.", {}),
    ("DELEGATE", "Actually make that Sunday, not Saturday.", _ACKED),
    ("DELEGATE", "Never mind the flight, I'll take the train.", _ACKED),
    ("DELEGATE", "Where are we with that shopping list?", _ACKED),
    ("DELEGATE", "Could you tidy up the wording of my cover letter?", {}),
    ("DELEGATE", "Figure out what time I need to leave to catch the eight fifteen.", {}),
    ("DELEGATE", "Email the team that the meeting's moved to three.", {}),
    ("DELEGATE", "Dig up some reviews of that new Thai place.", {}),
    ("CONTROL", "Okay okay, that's plenty.", _SPEAKING),
    ("CONTROL", "Hush a sec.", _SPEAKING),
    ("CONTROL", "Let me stop you there.", _SPEAKING),
    ("CONTROL", "Hang on, I can't hear myself think.", _SPEAKING),
    ("CONTROL", "Right, where were you? Keep going.", _STOPPED),
    ("CONTROL", "Sorry about that, you were saying?", _STOPPED),
    ("CONTROL", "Pick up where you left off.", _STOPPED),
    ("CONTROL", "Alright, I'm back, carry on.", _STOPPED),
    ("IGNORE", "Babe, have you seen my keys?", _ACKED),
    ("IGNORE", "Jamie, put your coat on, we're leaving.", _ACKED),
    ("IGNORE", "Hello? Yeah, I'll call you back in ten.", _ACKED),
    ("IGNORE", "No, not you, I was talking to my son.", _ACKED),
    ("IGNORE", "Can somebody get the door?", _ACKED),
    ("IGNORE", "Uh-huh.", _SPEAKING),
    ("IGNORE", "Right, right.", _SPEAKING),
    ("IGNORE", "Okay, yeah, makes sense.", _SPEAKING),
    ("IGNORE", "Huh, interesting.", _SPEAKING),
    ("IGNORE", "Yeah no, totally.", _SPEAKING),
    ("LISTEN", "Could you find me somewhere to", {}),
    ("LISTEN", "I want to book a", {}),
    ("LISTEN", "What's the quickest way from here to", {}),
    ("LISTEN", "Can you let my boss know that", _ACKED),
    ("LISTEN", "Remind me tomorrow to", {}),
    ("LISTEN", "So basically what I need is", {}),
    ("LISTEN", "Would you mind checking whether the", {}),
    ("LISTEN", "Add to my list some", _ACKED),
    ("LISTEN", "And then after lunch I want you to", _ACKED),
    ("LISTEN", "Who was the guy that", {}),
    # a fourth batch (rows 149-198), written for issue 11 the same way (everyday spoken English, no
    # catalogue text) and committed before any gate was scored on them: the honest probe
    ("RESPOND", "What's the boiling point of water in Fahrenheit?", {}),
    ("RESPOND", "Who painted the Mona Lisa?", {}),
    ("RESPOND", "How many ounces are in a pound?", {}),
    ("RESPOND", "Evening! How have you been?", {}),
    ("RESPOND", "Just a heads up, I work from home on Fridays.", {}),
    ("RESPOND", "Is a tomato a fruit or a vegetable?", {}),
    ("RESPOND", "Thanks, you're a lifesaver.", _ANSWERED),
    ("RESPOND", "What's your favourite colour?", {}),
    ("RESPOND", "I'm so tired today, I barely slept.", {}),
    ("RESPOND", "How do you say thank you in Japanese?", {}),
    ("DELEGATE", "Could you reserve two seats for the concert on Friday?", {}),
    ("DELEGATE", "Find out when the pharmacy closes tonight.", {}),
    ("DELEGATE", "Write a thank-you card for my neighbour.", {}),
    ("DELEGATE", "Plan a three-day trip to Rome for me.", {}),
    ("DELEGATE", "Push it back by an hour.", _ACKED),
    ("DELEGATE", "Scrap that, I don't need it anymore.", _ACKED),
    ("DELEGATE", "Any progress on the trip plan?", _ACKED),
    ("DELEGATE", "Also add a vegetarian option to the order.", _ACKED),
    ("DELEGATE", "Actually, can you bring back the reservation I cancelled?", _ANSWERED),
    ("DELEGATE", "Check my calendar and tell me when I'm free next week.", {}),
    ("CONTROL", "Hold it, hold it.", _SPEAKING),
    ("CONTROL", "Okay, stop, stop.", _SPEAKING),
    ("CONTROL", "Can you be quiet for a bit?", _SPEAKING),
    ("CONTROL", "Give me a moment, stop there.", _SPEAKING),
    ("CONTROL", "Zip it for a second.", _SPEAKING),
    ("CONTROL", "Pause for a sec.", _SPEAKING),
    ("CONTROL", "Okay, you can go ahead now.", _STOPPED),
    ("CONTROL", "Resume, please.", _STOPPED),
    ("CONTROL", "Go ahead and finish.", _STOPPED),
    ("CONTROL", "Keep talking, I'm here.", _STOPPED),
    ("IGNORE", "Mm, yeah, I know.", _SPEAKING),
    ("IGNORE", "Oh right, okay, got you.", _SPEAKING),
    ("IGNORE", "Yeah, sure, mm-hmm.", _SPEAKING),
    ("IGNORE", "Totally.", _SPEAKING),
    ("IGNORE", "Sweetheart, turn the TV down please.", _ACKED),
    ("IGNORE", "Mike, book the meeting room for us, would you?", _ACKED),
    ("IGNORE", "Hey Sarah, can you grab me a coffee?", _ACKED),
    ("IGNORE", "Just a minute, I'm talking to my assistant.", _ACKED),
    ("IGNORE", "Kids, shoes on, now!", _ACKED),
    ("IGNORE", "Hi Mum, yeah, I'm at home.", _ACKED),
    ("LISTEN", "Could you", {}),
    ("LISTEN", "I need to get to the station by", {}),
    ("LISTEN", "Can you look for a restaurant that's good for", {}),
    ("LISTEN", "Send a text to my brother and tell him", _ACKED),
    ("LISTEN", "What's the difference between a", {}),
    ("LISTEN", "Remind me to call the", _ANSWERED),
    ("LISTEN", "I'd like you to help me with", {}),
    ("LISTEN", "Is it possible to change the booking to", _ACKED),
    ("LISTEN", "Okay so for the party I'm going to need", {}),
    ("LISTEN", "Oh and could you also", _ACKED),
    # a fifth batch (rows 199-268), written on 2026-12-07 the same way (everyday spoken English as
    # said to a voice assistant or a customer-service line, no catalogue text) and committed before
    # any gate was scored on them; reported apart
    ("RESPOND", "Do you ever get tired of answering questions all day?", {}),
    ("RESPOND", "Can you tell me what the capital of Canada is?", {}),
    ("RESPOND", "Which do you prefer, cats or dogs?", {}),
    ("RESPOND", "Can you tell me how many players there are on a football team?", {}),
    ("RESPOND", "Do you actually understand what I'm saying, or is it all guesswork?", {}),
    ("RESPOND", "For future reference, I'm left-handed.", {}),
    ("RESPOND", "Just so you're aware, I don't drive, so I usually take the bus.", {}),
    ("RESPOND", "Thanks, that's exactly what I needed.", _ANSWERED),
    ("RESPOND", "Guess what, I finally passed my driving test!", {}),
    ("RESPOND", "What's the chemical symbol for gold?", {}),
    ("RESPOND", "Honestly, what do you think of pineapple on pizza?", {}),
    ("RESPOND", "Can you tell me who was the first person to walk on the moon?", {}),
    ("RESPOND", "Are you always listening to me?", {}),
    ("RESPOND", "Ha, you're on the ball today, aren't you?", _ANSWERED),
    ("DELEGATE", "How much would each of us pay if the bill's a hundred and twenty and there are five of us?", {}),
    ("DELEGATE", "Which is older, Oxford University or Cambridge?", {}),
    ("DELEGATE", "How do I say 'could we have the bill, please' in German?", {}),
    ("DELEGATE", "What's sixty-five miles an hour in kilometres?", {}),
    ("DELEGATE", "Can I move my appointment to Thursday afternoon instead?", _ACKED),
    ("DELEGATE", "I'd like to cancel the order I placed yesterday.", {}),
    ("DELEGATE", "Has my parcel been sent out yet?", {}),
    ("DELEGATE", "Did you manage to get hold of the plumber yet?", _ACKED),
    ("DELEGATE", "When does my phone contract run out?", {}),
    ("DELEGATE", "Could you change the delivery address to my work instead?", _ACKED),
    ("DELEGATE", "Are there any decent Indian places near the office that deliver?", {}),
    ("DELEGATE", "What's fifteen percent of eighty-four?", {}),
    ("DELEGATE", "Can you put the hotel booking back on? I shouldn't have cancelled it.", _ANSWERED),
    ("DELEGATE", "Can you boil that article down to a couple of sentences for me?", {}),
    ("CONTROL", "Okay, I've got the gist.", _SPEAKING),
    ("CONTROL", "You can leave it there.", _SPEAKING),
    ("CONTROL", "Alright, that'll do, thanks.", _SPEAKING),
    ("CONTROL", "No need to read the whole thing out.", _SPEAKING),
    ("CONTROL", "One sec, let me grab a pen.", _SPEAKING),
    ("CONTROL", "Okay, you can skip the rest of that.", _SPEAKING),
    ("CONTROL", "Whoa, whoa, hold your horses.", _SPEAKING),
    ("CONTROL", "Alright, I think I've heard enough.", _SPEAKING),
    ("CONTROL", "Oh sorry, carry on.", _STOPPED),
    ("CONTROL", "Okay, I'm ready now, what was the rest?", _STOPPED),
    ("CONTROL", "Go on then, finish the list.", _STOPPED),
    ("CONTROL", "Right, I'm off that call, you can continue.", _STOPPED),
    ("CONTROL", "Let's hear the rest of it.", _STOPPED),
    ("CONTROL", "Okay, back to you.", _STOPPED),
    ("IGNORE", "Put your shoes on, we're going to be late.", _ACKED),
    ("IGNORE", "Can you grab the door? My hands are full.", _ACKED),
    ("IGNORE", "Could you pass me the salt?", _SPEAKING),
    ("IGNORE", "Ben, text your dad and tell him we're on our way.", _ACKED),
    ("IGNORE", "Will you check if the oven's still on, love?", _ACKED),
    ("IGNORE", "Hiya, no, I can't talk right now, I'm in the car.", _ACKED),
    ("IGNORE", "Can you take the bins out before you go?", _ACKED),
    ("IGNORE", "Yeah, okay, fair enough.", _SPEAKING),
    ("IGNORE", "Mm, right, I see what you mean.", _SPEAKING),
    ("IGNORE", "Oh okay, yeah, that's good.", _SPEAKING),
    ("IGNORE", "Ah, nice, yeah.", _SPEAKING),
    ("IGNORE", "Yep, yep, okay.", _SPEAKING),
    ("IGNORE", "Hmm, yeah, I guess so.", _SPEAKING),
    ("IGNORE", "Right, sure, okay then.", _SPEAKING),
    ("LISTEN", "I need you to, um", {}),
    ("LISTEN", "Can you book me a table at the", {}),
    ("LISTEN", "What I'd really like is for you to", _ACKED),
    ("LISTEN", "Could you move my appointment from Tuesday to", _ACKED),
    ("LISTEN", "How much would it cost if I", {}),
    ("LISTEN", "Can you tell me what time the", {}),
    ("LISTEN", "I'd like to cancel my", {}),
    ("LISTEN", "Which one is cheaper, the", {}),
    ("LISTEN", "Do you ever", {}),
    ("LISTEN", "Write back to Sarah and say that we", _ANSWERED),
    ("LISTEN", "Right, er, what I was going to ask was whether", {}),
    ("LISTEN", "Hang on, can you also add", _ACKED),
    ("LISTEN", "Translate this into French for", {}),
    ("LISTEN", "My daughter's allergic to", {}),
    # a sixth batch (rows 269-338, 14 per action), written on 2026-12-07 the same way (everyday
    # spoken English at home, at work, in the car, cooking, shopping, travelling and on the phone to
    # a service, no catalogue text, worded apart from rows 1-268) and committed before any gate was
    # scored on them; reported apart
    ("RESPOND", "Morning! How'd you sleep? Oh wait, you don't, do you.", {}),
    ("RESPOND", "Roughly how long does light from the sun take to get here?", {}),
    ("RESPOND", "Settle an argument for me, is a whale a fish or a mammal?", {}),
    ("RESPOND", "Oh, uh, worth knowing, I'm diabetic, so nothing too sugary for me.", {}),
    ("RESPOND", "The wife and I just had our fifth anniversary, can you believe it?", {}),
    ("RESPOND", "We've moved house, so I'm living in Bristol now rather than Cardiff.", {}),
    ("RESPOND", "How many teaspoons go into a tablespoon?", {}),
    ("RESPOND", "Cheers for sorting that, you've saved my bacon.", _ANSWERED),
    ("RESPOND", "You'll never guess who I bumped into at the shops today.", _ACKED),
    ("RESPOND", "Who invented the telephone, was it Bell?", {}),
    ("RESPOND", "A baker's dozen is thirteen, isn't it?", {}),
    ("RESPOND", "Brilliant, I owe you one.", _ANSWERED),
    ("RESPOND", "For what it's worth, I'm usually up by half five on weekdays.", {}),
    ("RESPOND", "Are you a he or a she, or neither?", {}),
    ("DELEGATE", "Any chance you could find a plumber who can come out tomorrow morning?", {}),
    ("DELEGATE", "I was wondering, could you get me a quote for insuring the car? Ideally under forty quid a month.", {}),
    ("DELEGATE", "I'm driving, so, um, can you get me to the nearest petrol station that's open?", {}),
    ("DELEGATE", "Uh, could you, um, knock up a quick reply to Jenny saying Tuesday works?", {}),
    ("DELEGATE", "Order a couple of bags of compost for Saturday delivery, if that's alright.", {}),
    ("DELEGATE", "I need my message to the neighbour put into Spanish before I send it.", {}),
    ("DELEGATE", "Give me the short version of that thread from the landlord, I haven't got time to read it.", {}),
    ("DELEGATE", "Can you give me a shout at quarter to six so I remember the dry cleaning?", {}),
    ("DELEGATE", "Ooh, actually, make it the 21st rather than the 20th.", _ACKED),
    ("DELEGATE", "You know that parcel return? Don't bother, I'm keeping it.", _ACKED),
    ("DELEGATE", "How far along are you with the insurance thing?", _ACKED),
    ("DELEGATE", "I've changed my mind about the cinema tickets, get them back on, please.", _ANSWERED),
    ("DELEGATE", "Oh, and the postcode for that's BS6 5QT.", _ACKED),
    ("DELEGATE", "And while you're on with them, ask if they do Sunday deliveries.", _ACKED),
    ("CONTROL", "Sorry, sorry, can I just jump in there?", _SPEAKING),
    ("CONTROL", "Right, mute for a minute, the baby's asleep.", _SPEAKING),
    ("CONTROL", "Nope, not that one, cut it there.", _SPEAKING),
    ("CONTROL", "Oi, pipe down a sec, I'm on a call.", _SPEAKING),
    ("CONTROL", "Yeah, I'm good, you can cut it short.", _SPEAKING),
    ("CONTROL", "Not now, not now.", _SPEAKING),
    ("CONTROL", "Shut up a second, the satnav's talking.", _SPEAKING),
    ("CONTROL", "Let me get a word in, please.", _SPEAKING),
    ("CONTROL", "Right, the baby's down, on you go.", _STOPPED),
    ("CONTROL", "Okay, fire away again.", _STOPPED),
    ("CONTROL", "Mm, yeah, finish that thought.", _STOPPED),
    ("CONTROL", "I'm listening again, let's have it.", _STOPPED),
    ("CONTROL", "Sorry, the kettle, uh, you were telling me about the first option?", _STOPPED),
    ("CONTROL", "Okay, done, read me the rest.", _STOPPED),
    ("IGNORE", "Rex, off the sofa, now. Off!", _ACKED),
    ("IGNORE", "Gareth, can you book the Friday off for both of us before the rota goes up?", _ACKED),
    ("IGNORE", "Just leave it on the step, thanks, mate.", _SPEAKING),
    ("IGNORE", "Order me the fish and chips, love, I'm just nipping to the loo.", _ANSWERED),
    ("IGNORE", "Ella, find your other shoe and get in the car.", _ACKED),
    ("IGNORE", "Stick the kettle on, will you? I'm gasping.", _ANSWERED),
    ("IGNORE", "Remind me when we get home to ring your gran, yeah?", _ACKED),
    ("IGNORE", "Okay, mm, sounds about right.", _SPEAKING),
    ("IGNORE", "Ooh, yeah, go on.", _SPEAKING),
    ("IGNORE", "Uh-huh, yep, with you so far.", _SPEAKING),
    ("IGNORE", "No way. Seriously?", _SPEAKING),
    ("IGNORE", "Ah, right, that's handy to know.", _SPEAKING),
    ("IGNORE", "Mm, fair, fair.", _SPEAKING),
    ("IGNORE", "Cool, cool, okay.", _SPEAKING),
    ("LISTEN", "Can you find out whether the chemist on", {}),
    ("LISTEN", "I'm after a present for my nephew, something around", {}),
    ("LISTEN", "Um, I'm gonna need a cab for", {}),
    ("LISTEN", "Could you pop an email over to the", _ANSWERED),
    ("LISTEN", "Order the blue one and", _ACKED),
    ("LISTEN", "Book the table for eight and also", {}),
    ("LISTEN", "So, uh, the thing I wanted to ask about was, um", {}),
    ("LISTEN", "If it's not too much trouble, could you maybe", {}),
    ("LISTEN", "Can we shift the delivery slot to, er,", _ACKED),
    ("LISTEN", "What time does the last bus from", {}),
    ("LISTEN", "Actually, instead of Thursday, let's make it", _ACKED),
    ("LISTEN", "I was thinking we could get a couple of", {}),
    ("LISTEN", "Tell Jo I'll be late because", _ANSWERED),
    ("LISTEN", "Before I forget, my mother-in-law's birthday is on the", {}),
]


def _per(right: list[bool], rows: list[tuple[str, str, dict]]) -> dict:
    return {act: {"n": sum(1 for r in rows if r[0] == act), "right": sum(ok for ok, r in zip(right, rows) if r[0] == act)} for act in ACTIONS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    gate = load_gate(a.model)
    preds = [gate.predict(GateInput(text=text, **ctx)) for _, text, ctx in ROWS]
    right = [p[0] == label for (label, _, _), p in zip(ROWS, preds)]
    per = _per(right, ROWS)
    band = [ok for ok, (_, c) in zip(right, preds) if c > 0.8]
    first = right[:53]
    first98, third, fourth, fifth, sixth = right[:98], right[98:148], right[148:198], right[198:268], right[268:]
    rep = {
        "n": len(ROWS),
        "first_53": {"n": 53, "right": sum(first)},
        "first_98": {"n": 98, "right": sum(first98)},
        "first_148": {"n": 148, "right": sum(right[:148]), "per_action": _per(right[:148], ROWS[:148])},
        "rows_99_148": {"n": len(third), "right": sum(third), "per_action": _per(third, ROWS[98:148])},
        "rows_149_198": {"n": len(fourth), "right": sum(fourth), "per_action": _per(fourth, ROWS[148:198])},
        "rows_199_268": {"n": len(fifth), "right": sum(fifth), "per_action": _per(fifth, ROWS[198:268])},
        "rows_269_338": {"n": len(sixth), "right": sum(sixth), "per_action": _per(sixth, ROWS[268:])},
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
        print(f"general English: {rep['right']}/{rep['n']} right (first 53 rows: {sum(first)}/53, first 98: {sum(first98)}/98, rows 99-148: {sum(third)}/{len(third)}, rows 1-148: {sum(right[:148])}/148, rows 149-198: {sum(fourth)}/{len(fourth)}, rows 199-268: {sum(fifth)}/{len(fifth)}, rows 269-338: {sum(sixth)}/{len(sixth)}), ECE {rep['ece']:.3f}, confidence > 0.8 right {sum(band)}/{len(band)}")
        print("  all:      " + "  ".join(f"{act} {d['right']}/{d['n']}" for act, d in per.items()))
        print("  1-148:    " + "  ".join(f"{act} {d['right']}/{d['n']}" for act, d in rep["first_148"]["per_action"].items()))
        print("  149-198:  " + "  ".join(f"{act} {d['right']}/{d['n']}" for act, d in rep["rows_149_198"]["per_action"].items()))
        print("  199-268:  " + "  ".join(f"{act} {d['right']}/{d['n']}" for act, d in rep["rows_199_268"]["per_action"].items()))
        print("  269-338:  " + "  ".join(f"{act} {d['right']}/{d['n']}" for act, d in rep["rows_269_338"]["per_action"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
