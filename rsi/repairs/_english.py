"""Closed-class words of English grammar, the only word lists structural operators carry.

These are the small fixed classes every English grammar lists (articles and determiners,
pronouns, auxiliaries and modals, prepositions, conjunctions, wh-words, negators, hesitation
sounds and discourse particles). They say how a sentence is built, not what it is about, so a
rule built on them reads any wording. Content words (verbs of cancelling, words of status,
backchannel words, domain words) are never listed here: the editor induces those from failing dev
turns (:mod:`rsi.induce`).
"""

from __future__ import annotations

__all__ = [
    "ARTICLES_DETERMINERS",
    "CLOSED_CLASS",
    "CONJUNCTIONS",
    "DISCOURSE",
    "FILLERS",
    "MODALS_AUXILIARIES",
    "NEGATORS",
    "PREPOSITIONS",
    "PRONOUNS",
    "QUESTION_WORDS",
    "REFERENCE",
    "REQUEST_OPENERS",
    "TRAILING_FUNCTION_WORDS",
    "WH_WORDS",
    "GREETINGS",
    "POLITENESS",
    "INDEFINITE_PEOPLE",
    "INTERJECTIONS",
    "closed_class",
]

ARTICLES_DETERMINERS = (
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "our", "their", "its", "some", "any",
    "no", "every", "each", "all", "both", "either", "neither", "another", "other", "such", "what", "which", "whose",
    "more", "most", "much", "many", "few", "less", "one",
)
PRONOUNS = (
    "i", "me", "you", "he", "him", "she", "it", "we", "us", "they", "them", "myself", "yourself", "itself", "mine",
    "yours", "ours", "theirs", "i'm", "i'd", "i've", "i'll", "you're", "you've", "you'll", "we're", "we'd", "it's",
    "that's", "there's", "there", "here", "someone", "somebody", "anyone", "anybody", "everyone", "everybody",
    "something", "anything", "everything", "nothing", "one",
)
MODALS_AUXILIARIES = (
    "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "have", "has", "had", "can", "could",
    "would", "will", "should", "shall", "may", "might", "must", "isn't", "aren't", "wasn't", "don't", "doesn't",
    "didn't", "can't", "won't", "wouldn't", "couldn't", "shouldn't", "let's",
)
PREPOSITIONS = (
    "to", "for", "of", "in", "on", "at", "by", "with", "from", "about", "into", "onto", "over", "under", "between",
    "after", "before", "through", "up", "down", "off", "out", "as", "like", "than", "per", "via",
)
CONJUNCTIONS = ("and", "or", "but", "so", "because", "if", "then", "also", "plus", "while", "though", "although", "when")
QUESTION_WORDS = (
    "what", "what's", "whats", "which", "who", "whose", "where", "when", "why", "how", "how's", "is", "are", "was",
    "were", "does", "do", "did", "can", "could", "will", "would", "should", "has", "have", "and", "any",
)
# wh-words proper (a closed class): a question that opens with one asks for something of its own
WH_WORDS = ("what", "what's", "whats", "which", "who", "who's", "whose", "where", "where's", "when", "how", "how's", "why")
NEGATORS = ("not", "no", "never", "don't", "dont", "doesn't", "didn't", "won't", "can't", "isn't", "nor")
# Hesitation sounds (a sentence does not end on one).
FILLERS = ("um", "uh", "er", "erm", "hmm", "ah", "eh")
# Particles and hesitations that open a clause without carrying its content.
DISCOURSE = ("so", "okay", "ok", "well", "oh", "um", "uh", "er", "erm", "hmm", "ah", "hey", "and", "also", "then", "now",
             "just", "please")
# Interjections and sentence adverbs a speaker opens or pads a turn with ("Right, ...", "Look, ...").
INTERJECTIONS = ("right", "alright", "look", "listen", "sorry", "actually", "anyway", "anyways", "yes", "yeah", "yep", "no",
                 "nope", "again", "maybe", "perhaps", "really", "quickly", "quick")
# Closed-class words a request can open with: modals, subject pronouns, "please", "let's".
REQUEST_OPENERS = ("can", "could", "would", "will", "please", "i", "i'd", "i'm", "we", "let's", "lets", "you", "may", "might",
                   "should", "shall")
# Words a finished sentence does not end on: determiners, prepositions, conjunctions, auxiliaries
# and modals, wh-words, subject pronouns, and a few degree adverbs.
TRAILING_FUNCTION_WORDS = (
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "our", "their", "its", "some", "any",
    "to", "for", "of", "in", "on", "at", "by", "with", "from", "about", "into", "onto", "over", "under", "between",
    "and", "or", "but", "so", "because", "if", "than", "then", "as", "like",
    "is", "are", "was", "were", "be", "am", "do", "does", "did", "can", "could", "would", "will", "should", "shall", "may",
    "might", "must", "have", "has", "had", "what", "what's", "how", "how's", "which", "where", "when", "who", "why",
    "whether", "i", "i'd", "i'm", "you", "we", "me", "please", "maybe", "also", "just", "really", "very",
)
# Greetings said before a name ("Hey Sam, ..."); indefinite pronouns for other people in the room.
GREETINGS = ("hey", "hi", "hello")
# Politeness formulae a speaker closes or softens any turn with (lemmas as the toolkit gives them).
POLITENESS = ("please", "thank", "thanks", "cheers", "sorry", "kindly")
INDEFINITE_PEOPLE = ("somebody", "someone", "anybody", "anyone", "everybody", "everyone")
# Pronouns and demonstratives by which a turn points back at something already said.
REFERENCE = ("that", "it", "this", "these", "those", "them", "that one", "this one", "the one")
# general nouns a speaker names what they asked for by, whatever it was ("cancel the request", "my last job")
TASK_NOUNS = ("request", "task", "job", "errand", "query")

CLOSED_CLASS = frozenset(
    ARTICLES_DETERMINERS + PRONOUNS + MODALS_AUXILIARIES + PREPOSITIONS + CONJUNCTIONS + QUESTION_WORDS + NEGATORS
    + FILLERS + DISCOURSE + REQUEST_OPENERS
)


def closed_class(word: str) -> bool:
    """True for a closed-class word (see the lists above)."""
    return word in CLOSED_CLASS
