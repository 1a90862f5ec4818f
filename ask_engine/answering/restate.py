"""A question restated in the shop's voice for a "not recorded" answer: "whether the X comes with a rain cover", "how
long the X burns", "whether the X is dishwasher safe"; None wherever no safe restatement exists (the asker's own words,
a second clause, a thing of the product's taken for the product)."""

from __future__ import annotations

import re

from ask_engine.answering.query import _strip_title, _title_stems
from ask_engine.answering.work import _NUMBER, _is_untrusted
from ask_engine.language import (
    CONCEPTS_BY_NAME,
    PREPOSITIONS,
    Intent,
    content_stems,
    lexicon_section,
    stem,
    third_person,
    word_list,
)
from ask_engine.types import Document

__all__ = ["_asked_adjective", "_asked_phrase"]

_ASKER_WORDS = {k.casefold(): v for k, v in lexicon_section("asker_words").items()}
_ASKER = re.compile(
    r"(?<![\w'’])(?:" + "|".join(sorted(map(re.escape, _ASKER_WORDS), key=len, reverse=True)) + r")(?![\w'’])",
    re.IGNORECASE,
)
_PRODUCT_NOUN_STEMS = content_stems(" ".join(sorted(word_list("product_nouns"))))
_ADVERBS = "|".join(map(re.escape, sorted(word_list("verb_adverbs"), key=len, reverse=True)))


_WH = r"how \w+|what|where|when|which \w+"


_COUNTED_NAME = re.compile(r"\b(?:a|an|two|three|four|five|both|several|multiple|\d+)\s+it\b")


def _asked_phrase(intent: Intent, doc: Document, subject: str, be: str, plural: bool) -> str | None:
    """What the question asks, in its own words with the product as subject ("whether the X comes with a rain
    cover", "how long the X burns"); None when no safe phrasing exists."""
    written = _strip_title(intent.text, doc.title, placeholder="it").rstrip("?!. ")
    written = re.sub(r"^(?:and|so|but|also|then|please)\s+", "", written, flags=re.IGNORECASE)
    text = written.lower()
    if len(text) != len(written):
        written = text  # a letter whose lower case is longer: the question's own case cannot be kept
    if _COUNTED_NAME.search(text):
        return None  # the name said of more than one ("can I use two gift cards on one order?"), not of the product
    if re.search(
        r"\b(?:a|an|the|some|any|my|your|its)\s+(?:\w+\s+)?it\s+(?!(?:is|are|was|will|can|does)\b)[a-z]", text
    ):
        return None  # a word of the name qualifying another thing ("a replacement silicone liner"), not the product

    def kept(m: re.Match[str], group: int) -> str:
        """A group of a match on the lower-cased question, in the question's own case ("Nunavut")."""
        return written[m.start(group) : m.end(group)]

    # "this one" before "this": "is this one Fairtrade certified?" asks whether the X is Fairtrade certified
    pronoun = r"(?P<ref>this one|that one|it|they|this|that|these|those|the \w+(?: \w+){0,4}?)"
    names = _title_stems(doc) | content_stems(doc.product_type or "") | _PRODUCT_NOUN_STEMS

    def product(m: re.Match[str] | None) -> re.Match[str] | None:
        """The match, when the words it took for the product name it ("the kettle"), not a thing of the product's
        ("what are the blue bits?" does not ask what the X is bits)."""
        if m is None or not m.group("ref").startswith("the "):
            return m
        return m if content_stems(m.group("ref")) <= names else None

    rest: str | None = None
    m = product(re.match(rf"^(?:is|are|was|were)\s+{pronoun}\s+(.+)$", text))
    if m and _agrees(text.split()[0], m.group("ref"), kept(m, 2)):
        rest = f"whether {subject} {be} {kept(m, 2)}"
    m = m or None
    if rest is None:
        # "does it ever run out?": an adverb before the verb stays before it ("whether the X ever runs out")
        m = product(re.match(rf"^(?:does|do|did)\s+{pronoun}\s+(?:(?P<adv>{_ADVERBS})\s+)?(\w+)(.*)$", text))
        if m and stem(m.group(3)) not in _title_stems(doc):  # "do it boots run small?": a name left behind
            verb = m.group(3) if plural else third_person(m.group(3))
            adverb = f"{m.group('adv')} " if m.group("adv") else ""
            rest = f"whether {subject} {adverb}{verb}{kept(m, 4)}"
    if rest is None:
        m = product(re.match(rf"^(?:can|could|will|would|should)\s+{pronoun}\s+(\w+)(.*)$", text))
        if m:
            modal = text.split()[0]
            rest = f"whether {subject} {modal} {kept(m, 2)}{kept(m, 3)}"
    if rest is None:
        m = re.match(r"^(?:can|could|may|should)\s+(i|we|you)\s+(.+)$", text)
        if m and re.search(r"\b(?:it|them|this|these|those)\b", m.group(2)):
            body = re.sub(r"\b(?:it|them|this|these|those)\b", subject, kept(m, 2), count=1, flags=re.IGNORECASE)
            # "can you gift wrap it for me?" asks what the shop does: "whether the shop can gift wrap the X for you"
            rest = f"whether {'the shop' if m.group(1) == 'you' else 'you'} can {body}"
    if rest is None:
        m = product(re.match(rf"^({_WH})\s+(is|are|does|do|can|will)\s+{pronoun}\s+(\w+)(.*)$", text))
        if m:
            wh, aux, verb = m.group(1), m.group(2), m.group(4)
            tail = kept(m, 5)
            if aux in ("does", "do"):
                verb = verb if plural else third_person(verb)
                rest = f"{wh} {subject} {verb}{tail}"
            elif aux in ("is", "are"):
                rest = f"{wh} {subject} {be} {verb}{tail}"
            else:
                rest = f"{wh} {subject} {aux} {verb}{tail}"
    if rest is None or _NUMBER.search(rest) or len(rest) > 120:
        return None
    if re.search(rf"\b(?:can|could|will|would|should|may|is|are|does|do) {re.escape(subject)}", rest):
        return None  # a verb of the question read as the product's name ("could you engrave my dad's print on these?")
    if re.search(rf"^(?:whether|{_WH}) {re.escape(subject)} \w+ (?:or|and|but)\b", rest):
        return None  # the words asked were the name's own ("are the cashews salted or plain?" of the Salted Cashews)
    if "," in rest:
        return (
            None  # a second clause reads wrongly in the shop's voice ("which harvest the X is from, this year's crop")
        )
    # the asker's own words said back to the asker: "whether it will keep you up at night", not "keep me"
    rest = _ASKER.sub(lambda w: _ASKER_WORDS[w.group(0).casefold()], rest)
    if re.search(r"\bit\b", rest.replace(subject, "")):
        return None  # the product's name was read as part of something else ("what is the SKU of the large it")
    if content_stems(rest.replace(subject, "")) & (_title_stems(doc) - content_stems(intent.text.split()[0])):
        return None  # a part of the name was left behind ("whether the helmet kidses helmet come with …")
    # the question's own words must not smuggle in the product name twice or any instruction
    if _is_untrusted(rest):
        return None
    return rest


def _agrees(verb: str, ref: str, rest: str) -> bool:
    """ "are" asked of a name in the singular, with a plural word after it, is asked of that plural: "are the knife
    handles wooden?" asks about the handles, not whether the Knife Set is "handles wooden"."""
    head, after = ref.split()[-1], (rest.split() or [""])[0]
    # (in the question's own case: "SABS" is a name, no plural)
    plural_after = verb in ("are", "were") and len(after) > 3 and after.endswith("s") and after.islower()
    # (a plural pronoun stands for the product whatever follows: "are these gumboots SABS certified?"; "it" there
    # stands for a word of the name: "are the knife handles …" of the Knife Set)
    return not (plural_after and head not in ("these", "those", "they") and not head.endswith("s"))


def _asked_adjective(intent: Intent, doc: Document) -> str | None:
    """What "is the X <adjective>?" asks, in the question's words, with any words of the product's name dropped."""
    text = _strip_title(intent.text, doc.title, placeholder="it").lower().rstrip("?!. ")
    m = re.match(r"^(?:is|are)\s+(?:it|they|this|that|these|those|the|this one|that one)\s+(.+)$", text)
    if not m:
        return None
    words = m.group(1).split()
    names = _title_stems(doc) | content_stems(doc.product_type or "")
    while words and (stem(words[0]) in names or words[0] in {"one", "item", "product"}):
        words = words[1:]
    # start where the asked attribute starts: "sun cream vegan" asks "vegan", "dishwasher safe" stays whole
    cues = [cue for name in intent.concepts for cue in CONCEPTS_BY_NAME[name].cues]
    for i in range(len(words)):
        if any(re.match(cue, " ".join(words[i:])) for cue in cues):
            # ... unless the cue is the object of a preposition ("tested on animals", "suitable for vegans"): then
            # the whole phrase is what is asked
            if not (i and words[i - 1] in PREPOSITIONS):
                words = words[i:]
            break
    phrase_ = " ".join(words)
    if not words or len(words) > 4 or _NUMBER.search(phrase_) or _is_untrusted(phrase_):
        return None
    return phrase_
