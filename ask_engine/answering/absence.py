"""What a question asks that the evidence never says: words no sentence uses, names no passage mentions, two-word
things the shop names differently ("gift wrapping" beside "gift cards"), the proper names of a section, and the key
word a sentence must say.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

import numpy as np

from ask_engine.answering.addressing import framing_stems
from ask_engine.answering.query import _GENERIC_QUERY_STEMS, _names_in, _query_names
from ask_engine.answering.rules import _OFFER_STEMS, _PROCESS_STEMS, _RETURN_STEMS, _VAGUE_STEMS
from ask_engine.answering.sentences import PLAIN_ANSWER, _days, _heading_names, _heading_words, _set_aside
from ask_engine.answering.work import _Unit, _Work
from ask_engine.language import (
    ARRIVED_DAMAGED_RE,
    OFFER_QUESTION_RE,
    Intent,
    content_stem_sequence,
    content_stems,
    country_codes_in,
    folded_phrases,
    stem,
    text_cue,
    word_list,
    word_stems,
)
from ask_engine.towns import is_town
from ask_engine.types import Document, Task

# A two-word thing the question asks about reads as the same thing as the shop's ("size chart" / "size guide") at
# this similarity; below it, a shared first word names a different thing ("gift wrapping" / "gift cards").
COMPOUND_SAME = 0.70


def _names_other_product(text: str, own_words: set[str], catalogue: frozenset[str] = frozenset()) -> bool:
    """True when a sentence names something by a multi-word capitalised name that is not this product's or the
    shop's ("For example, the Redmere Lightweight Hiking Boot runs small" says nothing about the Greystone); given the
    `catalogue`'s words (stems of every product's title, type and vendor), a name using none of them names no product
    ("the Criminal Code prohibits crossbows …")."""
    for m in re.finditer(r"\b([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)+)", text):
        words = [w.lower() for w in m.group(1).split()]
        if catalogue and not content_stems(m.group(1)) & catalogue:
            continue
        if m.start() == 0:
            # a sentence's first word is capitalised anyway: "The Nordvik Brio has …" names the Brio, "Our Returns"
            # nothing
            if content_stems(words[0]) or len(words) < 3:
                continue
            words = words[1:]
        if not all(w in own_words for w in words):
            return True
    return False


def names_other_title(text: str, targets: Sequence[Document], others: Sequence[str]) -> bool:
    """`text` says two words in a row of another product's name (`others`) that no name of the `targets` has: "Product:
    Ridgeway wooden balance bike" speaks of the "Wooden Balance Bike 12"", not of the "Wooden Shape Sorter Cube"."""
    own = frozenset().union(*(content_stems(d.title) for d in targets))
    said = content_stem_sequence(text)
    pairs = set(pairwise(said))
    for title in others:
        words = content_stem_sequence(title)
        if any(a not in own and b not in own and (a, b) in pairs for a, b in pairwise(words)):
            return True
    return False


def names_title(text: str, targets: Sequence[Document]) -> bool:
    """`text` says two words in a row of the name of one of `targets` ("balance bike" of the "Wooden Balance Bike 12"")."""
    return names_other_title(text, [], [d.title for d in targets])


_OPEN = content_stems("open")
_HOURS = re.compile(r"\d|\bclosed\b", re.IGNORECASE)  # a day's hours, or that it is closed


def _said_by(u: _Unit) -> frozenset[str]:
    """The words a unit says, as written and in the words a question's everyday phrasings fold to ("we can't take back"
    says "return"), with its list's lead-in's ("Bikini bottoms with the liner removed" under "we can't take back:"),
    its heading's and its page title's ("Monday to Saturday: 9:00am - 6:00pm" under "Our Stores — Fort William" speaks
    of a store)."""
    lead = _folded_stems(u.lead.text) if u.lead is not None else frozenset()
    # (a heading folds as the question does: an FAQ entry "When is the Ski Swap?" speaks of the swap "is there a ski
    # swap this year?" reads as an exchange; a line of hours says when the shop is open: "Monday: closed")
    hours = _OPEN if _days(u.text) and _HOURS.search(u.text) else frozenset()
    return _folded_stems(u.text) | lead | _heading_words(u) | _folded_stems(u.context) | hours


@lru_cache(maxsize=1 << 14)  # kept by text: the same evidence sentences are read request after request
def _folded_stems(text: str) -> frozenset[str]:
    return content_stems(text) | content_stems(folded_phrases(text))


def _page_names(unit: _Unit) -> frozenset[str]:
    """The proper names (capitalised mid-sentence: a town, a brand) of `unit`'s policy or page, not of a product's:
    a name elsewhere on the page is what the page is about ("your Falmouth shop" and the studio page giving its
    Falmouth address), where a common word elsewhere on it ("parking") is another topic."""
    if unit.evidence.passage.kind == "product" or unit.doc is None:
        return frozenset()
    return frozenset().union(*(_query_names(line) for line in unit.doc.body.splitlines()))


_DENIAL = text_cue("denial")


_LIGHT_VERB_STEMS = word_stems("light_verbs")
_PLACE_PREPOSITIONS = word_list("place_prepositions")


def _key_word(units: Sequence[_Unit], intent: Intent, ignore: frozenset[str], best: Sequence[_Unit] = ()) -> str | None:
    """The question's most specific word that the evidence uses at all: the word found in the fewest sentences
    (never a name, a number, a word naming the product in view, nor one asking for a kind of figure: "how long do I
    have to report damage?" insists on "report", not on "long"; nor the condition goods are in or that they were
    bought: "can I return an unopened thermostat I bought last week?" insists on neither "unopened" nor "bought")."""
    names, aged = _query_names(intent.text), _aged(intent)
    # nor the rest of a word written with hyphens whose first part the `best` lines say: "first-time customers"
    # insists on no "time" beside "your first order" ("free next-day delivery" still insists on "next")
    said = frozenset().union(*map(_said_by, best))
    joined = frozenset().union(
        *(
            frozenset(p[1:])
            for w in re.findall(r"\w+(?:-\w+)+", intent.text)
            if (p := content_stem_sequence(w.replace("-", " "))) and p[0] in said
        )
    )
    counts: dict[str, int] = {}
    for u in units:
        words = _said_by(u)
        for w in (
            intent.stems
            - ignore
            - names
            - aged
            - joined
            - _GENERIC_QUERY_STEMS
            - framing_stems(intent.text)
            - _VAGUE_STEMS
            - _LIGHT_VERB_STEMS  # "what wood should I use for chicken?" insists on no "use"
            - _offer_verb(intent)  # "do you offer a discount for creches?" insists on no "offer"
            - _conditions(intent)
            - _set_aside(intent)  # "… instead of my home address?" insists on no "home"
        ):
            # ("not royal mail": "not" is no topic, nor is a word of two letters, a particle: "opened and set up"
            # insists on no "up")
            if w in words and not w.isdigit() and not _DENIAL.fullmatch(w) and len(w) > 2:
                counts[w] = counts.get(w, 0) + 1
    if len(counts) < 2:
        return None  # one shared word is the whole overlap; nothing more specific to insist on
    # (of words as rare, one the best lines do not say, the strictest reading, then the question's first: a set's order
    # changes from run to run)
    first = {w: i for i, w in reversed(list(enumerate(content_stem_sequence(intent.text))))}
    rarest = min(counts, key=lambda w: (counts[w], w in said, first.get(w, len(first)), w))
    return rarest if counts[rarest] * 4 <= len(units) else None


# A sentence ranked this close behind the best that says the question's key word answers before it.
KEY_WORD_MARGIN = 0.1


def insisted_on(work: _Work, units: Sequence[_Unit], ranked: list[_Unit], ignore: frozenset[str]) -> list[_Unit]:
    """`ranked` as the question's most specific word has it, where the evidence uses the word ("parking") and the
    best sentence does not: the sentences saying it first if one ranks close behind ("can I collect my order at your
    shop?": "Choose "Pick up in store" at checkout" under "Click & Collect"), else nothing where none of the best three
    says it (they are about something else). A sentence that plainly answers (`PLAIN_ANSWER`) is not second-guessed."""
    intent, best = work.intent, ranked[0]
    key = _key_word(units, intent, ignore=ignore, best=ranked[:3])
    if key is None or best.semantic >= PLAIN_ANSWER:
        return ranked
    town = any(is_town(w) for w in re.findall(r"[\w'-]+", intent.text) if stem(w.lower()) == key)
    others = _alternatives(intent.lower, key)  # ("book a consult online or by video?" and "… by video call")
    headed = _heading_names(_query_names(intent.text) - content_stems(work.task.shop_name), units)

    def says(u: _Unit) -> bool:
        # said by the sentence, or a town its page names ("your Falmouth shop" and the studio page's "we don't do eye
        # tests", whose address names Falmouth); not the parking of another place's section; an FAQ entry is no
        # place's section ("Can I pay in instalments?" for "Klarna instalments from Switzerland?" where a shipping
        # section is headed Switzerland)
        placed = not headed or headed & content_stems(u.context) or u.evidence.passage.kind == "faq"
        said = _said_by(u)
        return bool(placed) and (key in said or bool(others & said) or (town and key in _page_names(u)))

    if says(best):
        return ranked
    # the next sentences saying it come first where one ranks close behind: of the best three, or below them if
    # closer in meaning than the best, which ranks above it only by words ("Choose "Pick up in store"" for "can I
    # collect …?"; not "a soft presentation" for "do you stock softbaits?")
    first = [
        u
        for i, u in enumerate(ranked[1:8], 1)
        if says(u) and u.score >= best.score - KEY_WORD_MARGIN and (i < 3 or u.semantic >= best.semantic)
    ]
    if first:
        work.notes.append(f"the best sentence does not mention {key!r}; those close below that do come first")
        return first + [u for u in ranked if u not in first]
    if any(says(u) for u in ranked[1:3]):
        return ranked
    # an FAQ entry whose own question says it, below them, is about it where they are not ("How can I pay?" for "can I
    # pay off a board in instalments?" under the entry on selling boards): its answer comes first
    asked = [u for u in ranked[3:8] if u.evidence.passage.kind == "faq" and key in _folded_stems(u.context)]
    if asked:
        work.notes.append(f"the best sentences do not mention {key!r}; an FAQ entry asking about it comes first")
        return asked
    work.notes.append(f"the best sentences do not mention {key!r}")
    return []


_OR = re.compile(r"([\w'-]+)\s+or\s+(?:(?:by|in|on|with|via|through|a|an|the)\s+)?([\w'-]+)")


def _alternatives(lower: str, key: str) -> frozenset[str]:
    """The words the question offers in place of `key` ("online or by video": video for online, online for video)."""
    pairs = [(content_stems(m.group(1)), content_stems(m.group(2))) for m in _OR.finditer(lower)]
    return frozenset().union(*(b if key in a else a for a, b in pairs if key in a | b)) - {key}


def _offer_verb(intent: Intent) -> frozenset[str]:
    """The verb of a question whether the shop offers something ("do you offer / stock / carry …?"): no topic."""
    offer = OFFER_QUESTION_RE.match(intent.lower)
    return content_stems(offer.group(0)) if offer else frozenset()


def _aged(intent: Intent) -> frozenset[str]:
    """ "can my 17 yr old son collect it?": an age and the person it describes are who asks, not what."""
    return content_stems(" ".join(m.group(0) for m in _AGED.finditer(intent.lower)))


_BESIDE = re.compile(r"([\w'-]+) \(([^()]+)\)")  # a shopper's word and the shop's beside it ("veggie (vegetarian)")


def _unsaid(work: _Work, units: Sequence[_Unit], names: frozenset[str], ignore: frozenset[str]) -> list[str]:
    """The question's content words (not names, numbers, generic or offering words, nor the product in view's) that
    none of the sentences that may answer it (with their headings), no document title and not the shop's name use."""
    task, intent = work.task, work.intent
    said = frozenset().union(*(_said_by(u) for u in units)) | content_stems(
        " ".join([task.shop_name, *(d.title for d in task.documents.values())])
    )
    # the words asking for a kind of figure ("how long", "how often") frame the question, and a word naming a kind of
    # figure ("address", "weight") is one a sentence stating it need not use
    wanted = intent.stems - ignore - names - framing_stems(intent.text) - _GENERIC_QUERY_STEMS - _OFFER_STEMS
    wanted -= _VAGUE_STEMS  # "leaking everywhere": a vague word is not what a sentence must say
    wanted -= _aged(intent) | _set_aside(intent) | _conditions(intent)  # "my old 6'2": the asker's goods' state
    # (a figure is no topic a sentence must say: "can I sell my old 6'2?" asks about selling a board, whatever its length)
    unsaid = {w for w in wanted if w not in said and not any(c.isdigit() for c in w)}
    # "amex (american express)": a word the shop's own words follow in brackets is said by them
    for asked, own in _BESIDE.findall(intent.text):
        if content_stems(own) <= said:
            unsaid -= content_stems(asked)
    # "casting lessons" is said by "casting clinic": the same first word, and a second one that reads the same
    unsaid -= {
        w
        for first, second in _compounds(work)
        if content_stems(second) & unsaid and content_stems(first) <= said
        for w in content_stems(second)
        if _same_thing(work, units, first, second, anywhere=True)
    }
    return sorted(unsaid)


_PAY_WITH = text_cue("pay_with", re.IGNORECASE)  # "can i pay with paypal?": a means of payment, a name in lower case


def _absent_names(text: str, task: Task) -> list[str]:
    """Names in the question that no evidence passage or document mentions: the evidence is about something else
    ("Do you deliver to BFPO addresses?", "Do you sell Patagonia jackets?", "can i pay with paypal?")."""
    names = list(dict.fromkeys([*_names_in(text), *(m.group(1) for m in _PAY_WITH.finditer(text))]))
    if not names:
        return []
    haystack = " ".join(
        [task.shop_name, *(e.passage.text for e in task.evidence), *(d.title for d in task.documents.values())]
    )
    words = content_stems(haystack) | task.catalogue_words  # a name the catalogue uses is something it sells
    codes = set(country_codes_in(haystack))
    absent = []
    for name in names:
        # a hyphenated name ("Betws-y-Coed") is found when all its parts are
        if content_stems(name) <= words or set(country_codes_in(name, query=True)) & codes:
            continue
        absent.append(name)
    return absent


_AGE_PHRASE = text_cue("age_phrase", re.IGNORECASE)
_AGED = re.compile(rf"(?:{_AGE_PHRASE.pattern})(?:\s+[a-z]+)?", re.IGNORECASE)  # "17 yr old son"
# what became of a thing ("torn", "arrived", "melted") names no second thing after it
_STATE_WORDS = word_list("state_words")
_CONDITION_WORDS = word_list("condition_words")  # "unopened", "unused", "sealed", "bought"


def _conditions(intent: Intent) -> frozenset[str]:
    """The stems of the words the question writes as a condition of its goods or their purchase ("an unopened
    thermostat I bought"), and the asker's reason for a return ("if I don't like the taste"): as written, so "my order
    history" still insists on "order" where "I ordered" does not."""
    written = content_stems(" ".join(w for w in re.findall(r"[a-z']+", intent.lower) if w in _CONDITION_WORDS))
    reasons = [m.group(0) for m in _RETURN_REASON.finditer(intent.lower)] if intent.stems & _RETURN_STEMS else []
    return written | content_stems(" ".join(reasons))


_RETURN_REASON = text_cue("return_reason", re.IGNORECASE)  # "can I return it if I don't like the taste?"


_REGULAR_PAST = text_cue("regular_past")


def _absent_compounds(work: _Work, units: Sequence[_Unit]) -> list[str]:
    """Two-word things the question asks about ("gift wrapping") whose second word the evidence never uses, while
    it uses the first only in a different thing ("gift cards") that does not read as the same one."""
    task = work.task
    haystack = " ".join(
        [task.shop_name, *(e.passage.text for e in task.evidence), *(d.title for d in task.documents.values())]
    )
    known = content_stems(haystack)
    ignore = _naming_nothing(work.intent)
    found: list[str] = []
    for first, second in _compounds(work):
        head, modifier = content_stems(second), content_stems(first)
        if not head or not modifier or head & ignore or modifier & ignore or head & known or not modifier <= known:
            continue
        if _same_thing(work, units, first, second) is False:
            found.append(f"{first} {second}")
    return found


def _compounds(work: _Work) -> list[tuple[str, str]]:
    """The question's pairs of words that may name one thing ("gift wrapping")."""
    # "my 17 year old son": an age, not an "old son"
    words = re.findall(r"[a-z][a-z'’-]*", _AGE_PHRASE.sub(" ", work.intent.lower))
    # a shopper's word with the shop's own written after it ("specs (optical frames)") is the shop's thing
    annotated = set(re.findall(r"([a-z][a-z'’-]*)\s*\(", work.intent.lower))
    return [
        (first, second)
        for first, second in pairwise(words)
        # "a piece torn", "the almonds showed up", "an easel that'll take": a thing and what befell it
        if not ("'" in second or "’" in second or second in _STATE_WORDS or _REGULAR_PAST.search(second))
        and _may_be_one_thing(first, second)
        and second not in annotated
    ]


def _may_be_one_thing(first: str, second: str) -> bool:
    """Two words of a question that may name one thing: not a thing in some state ("an opened PLA spool", "a used
    saddle"), nor a thing and where it is ("parking near your shop": no "parking near")."""
    return not (first in _STATE_WORDS or _REGULAR_PAST.search(first)) and second not in _PLACE_PREPOSITIONS


def _naming_nothing(intent: Intent) -> frozenset[str]:
    """The question's words that name no thing: process verbs ("return stuff"), offering, generic, vague and light
    words ("want to try paddle boarding": no "try paddle"), names, and the words naming a kind of figure ("the frost
    cover fee": the fee is what the cover costs), and what the asker says arrived damaged ("my parcel arrived and
    the canvas corner is crushed" asks what to do, not about canvas corners)."""
    damaged = " ".join(m.group(0) for m in ARRIVED_DAMAGED_RE.finditer(intent.lower))
    return (
        content_stems(damaged)
        | _GENERIC_QUERY_STEMS
        | _OFFER_STEMS
        | _PROCESS_STEMS
        | _VAGUE_STEMS
        | _LIGHT_VERB_STEMS
        | _query_names(intent.text)
        | framing_stems(intent.text)
    )


def _same_thing(work: _Work, units: Sequence[_Unit], first: str, second: str, *, anywhere: bool = False) -> bool | None:
    """Whether the evidence names the thing "first second" by the same first word and another second one that reads
    the same ("casting clinic" for "casting lessons", not "gift cards" for "gift wrapping"); None when no heading,
    FAQ question, title or list line uses the first word in such a pair (the shop names its things there; running
    prose, "leave the same day", names none, but a thing it names there may be the one asked; `anywhere`: prose
    counts too)."""
    modifier = content_stems(first)
    short = {u.context for u in units} | {u.text for u in units if anywhere or len(u.text.split()) <= 6}
    short |= {d.title for d in work.task.documents.values()}
    rivals = _pairs(short, modifier)
    if not modifier or not rivals:
        return None
    rivals |= _pairs({u.text for u in units}, modifier)
    return float(np.max(work.similarity(sorted(rivals), probe=f"{first} {second}"))) >= COMPOUND_SAME


def _pairs(texts: set[str], modifier: frozenset[str]) -> set[str]:
    """The two-word runs of `texts` whose first word is `modifier`."""
    return {
        f"{a} {b}"
        for text in texts
        for a, b in pairwise(re.findall(r"[a-z][a-z'’-]*", text.lower()))
        if content_stems(a) == modifier and content_stems(b)
    }


_HAS_THING = text_cue("has_thing", re.IGNORECASE)


def _apart(work: _Work, units: Sequence[_Unit]) -> list[str]:
    """The two-word thing a question asks whether the shop has ("do you give a military discount?") when the evidence
    uses both its words, but never in one sentence with its heading ("Discount codes can't be combined", "Military
    addresses ship by Priority Mail"): the shop names two other things. Only the
    first such pair of the question's content words (process, offering and generic words, names and numbers are
    not things), and only for a question asking whether the shop has something (lexicon `has_thing`)."""
    intent = work.intent
    if not _HAS_THING.search(intent.lower):
        return []
    ignore = _naming_nothing(intent)
    said = [_said_by(u) for u in units]
    known = frozenset().union(*said)
    # a figure's unit is no thing ("a 28 inch inner tube" is no "inch inner")
    words = re.findall(r"\d[\d.,/]*\s*[a-z]*|[a-z][a-z'’-]*", _AGE_PHRASE.sub(" ", intent.lower))
    for first, second in pairwise(words):
        if first[0].isdigit() or second[0].isdigit():
            continue
        if not _may_be_one_thing(first, second):
            continue
        pair = content_stems(first) | content_stems(second)
        # a word the evidence never uses may be the shop's thing in other words ("a physical store" for "a shop I
        # can visit"): only two words both used elsewhere say the thing is two other things
        if len(pair) != 2 or pair & ignore or not pair <= known:
            continue
        return [] if any(pair <= s for s in said) else [f"{first} {second}"]
    return []


def _unnamed_kind(work: _Work, units: Sequence[_Unit]) -> list[str]:
    """The two-word thing a question asks whether the shop has whose kind the best-ranked sentence (or its heading)
    names but whose first word no evidence, title or product uses ("any student discount?" where only a rescue
    discount is recorded, "do you offer Saturday delivery?" where delivery days are Tuesday and Thursday): the shop
    names another thing of that kind. A word the shop never uses may still be its thing in other words ("loyalty
    program" for "Do you have a rewards program?"): said before the best lines, not in place of them."""
    task = work.task
    if not _HAS_THING.search(work.intent.lower):
        return []
    best = max(units, key=lambda u: u.score, default=None)
    titles = " ".join([task.shop_name, *(d.title for d in task.documents.values())])
    said = frozenset().union(*(_said_by(u) for u in units))
    known = said | content_stems(titles) | task.catalogue_words | _naming_nothing(work.intent)
    for first, second in _compounds(work):
        head, modifier = content_stems(second), content_stems(first)
        if best is not None and head and head <= _said_by(best) and modifier and not modifier & known:
            # (written together, as the question writes it: "amex (american express)" is one thing in two words)
            written = re.search(rf"\b{re.escape(first)} {re.escape(second)}\b", work.intent.text, re.IGNORECASE)
            return [written.group(0)] if first.isalpha() and written is not None else []
    return []
