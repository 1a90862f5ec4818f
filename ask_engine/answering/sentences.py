"""The evidence as quotable sentences (`_units`), their relevance to the question (`_score`) and how they are
quoted, fitted into an answer and brought along with the sentence or lead-in they lean on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from ask_engine.answering.addressing import asked_figures
from ask_engine.answering.addressing import measures as asked_kinds
from ask_engine.answering.query import _GENERIC_QUERY_STEMS, _query_names
from ask_engine.answering.units import _LIST_ITEM_CHARS
from ask_engine.answering.work import _NUMBER, MAX_CHARS, _Answer, _is_untrusted, _plain, _Unit, _Work
from ask_engine.chunking import quotable_lines
from ask_engine.faithfulness import split_sentences
from ask_engine.language import (
    ARRIVED_DAMAGED_RE,
    Intent,
    content_stems,
    country_aliases,
    lexicon_section,
    text_cue,
    word_list,
)
from ask_engine.spelling import english_word
from ask_engine.towns import is_town
from ask_engine.types import Document, Evidence, Task

# An FAQ question this close to the buyer's question is the same question: its answer is quoted from the start.
FAQ_QUESTION_MATCH = 0.80
# A sentence this close in meaning to the question plainly answers it: no key word or name second-guesses it.
PLAIN_ANSWER = 0.6
# A shipping or returns sentence naming the kind of the product in view is that product's own rule ("Chain lube ...
# travels by ground only"), and outranks the general one by this much.
PRODUCT_RULE_BONUS = 0.35

# A sentence that leans on the one before: "This does not affect...", "Indoors they're still returnable...".
_ANAPHOR_START = text_cue("anaphor_start", re.I)
_DURATION = text_cue("duration")
_CLOCK = text_cue("clock", re.I)
_MODAL = text_cue("modal", re.I)
_NEGATION = text_cue("negation", re.I)
_FUNCTION_WORDS = word_list("function_words")
_SET_ASIDE = text_cue("set_aside")
_STATED_FIGURES = frozenset({"phone number", "how often"})  # kinds of figure a line naming, stating none, does not
_WEEKDAYS: dict[str, int] = lexicon_section("weekdays").get("full", {})
_DAY_NUMBERS: dict[str, int] = _WEEKDAYS | lexicon_section("weekdays").get("short", {})  # "sat" too, in a range
_ANY_DAY = "|".join(sorted(_DAY_NUMBERS, key=len, reverse=True))
_FULL_DAY = re.compile(rf"\b(?:{'|'.join(sorted(_WEEKDAYS, key=len, reverse=True))})\b", re.I)
_DAY_RANGE = re.compile(rf"\b({_ANY_DAY})\.?\s*(?:-|–|—|to|through|thru|until|till)\s*({_ANY_DAY})\b", re.I)


def _units(task: Task) -> list[_Unit]:
    """Every quotable sentence of the evidence, in evidence order."""
    out: list[_Unit] = []
    for rank, ev in enumerate(task.evidence):
        out.extend(passage_units(ev, rank, task.documents.get(ev.passage.doc_id)))
    return out


def passage_units(ev: Evidence, rank: int, doc: Document | None) -> list[_Unit]:
    """The quotable sentences of one evidence passage, with the heading or FAQ question each is scored against.

    The indexer embeds the text and context of every unit this returns (`answering.embedded`): it must stay the one
    place that splits a passage into units, so the texts stored at index time are the ones asked for here."""
    passage = ev.passage
    context = passage.title.split(" — ", 1)[-1] if passage.kind != "product" else passage.title
    out: list[_Unit] = []
    position = 0
    lead: _Unit | None = None
    listed: _Unit | None = None  # a lead-in whose list goes on in short lines whose markers the export dropped
    first = True
    for line in quotable_lines(passage):
        line_units: list[_Unit] = []
        stripped = line.strip()
        if listed is not None and lead is None and not _short_item(stripped):
            listed = None  # prose after the list
        for sentence in split_sentences(line):
            position += 1
            text = sentence.strip()
            if not text or _is_untrusted(text) or _is_heading(text, passage.title, doc):
                continue
            if passage.kind == "product" and re.match(r"^(?:tags|disclosures recorded|sku)\s*:", text, re.I):
                continue
            unit = _Unit(text=text, evidence=ev, position=position, rank=rank, context=context, doc=doc, first=first)
            unit.header = passage.kind == "product" and first
            first = False
            if lead is not None:
                unit.lead = lead
                unit.context = f"{context} {lead.text}"
            elif listed is not None:
                # "… we cannot deliver knives to:", "Northern Ireland.", "The Isle of Man.", …: each line is quoted
                # with the lead-in, though only the first is scored under it (as the indexer embedded it)
                unit.lead = listed
            if line_units:
                unit.line_first = line_units[0]
            line_units.append(unit)
        out.extend(line_units)
        if stripped.endswith(":") and line_units:
            lead = listed = line_units[-1]
            if len(line_units) > 1 and len(lead.text.split()) <= LABEL_LEAD_WORDS:
                lead.opener = line_units[-2].text
        elif not _looks_like_item(stripped):
            lead = None
    return out


# a lead-in of at most this many words is a label ("Covered:", "This includes:"), not a sentence saying what its list is
LABEL_LEAD_WORDS = 3


def _short_item(line: str) -> bool:
    """A line short enough to be a list item whose marker is gone: one sentence, not itself a lead-in."""
    return len(line) <= _LIST_ITEM_CHARS and not line.endswith(":") and len(split_sentences(line)) == 1


def _looks_like_item(line: str) -> bool:
    """A list item or a short "Label: value" line, which can follow a lead-in ending with a colon."""
    return bool(re.match(r"^(?:[-*•]|\d+[.)])\s", line)) or (len(line) < 90 and ":" in line[:40])


def _is_heading(text: str, title: str, doc: Document | None) -> bool:
    """Headings, FAQ questions and titles repeated as lines are there for retrieval, not for quoting."""
    bare = text.rstrip(" .:?").lower()
    names = {part.strip().lower() for part in re.split(r"\s+—\s+", title)}
    if doc is not None:
        names.add(doc.title.lower())
        names |= {s.heading.lower() for s in doc.sections}
    return bare in {n.rstrip(" .:?") for n in names} or text.rstrip().endswith("?")


def _heading_words(u: _Unit) -> frozenset[str]:
    """The words of a unit's heading and, for a page, of its title, which names what all its sections are about
    ("Visit the workshop" over "Address"; "Our Stores" over "Fort William")."""
    title = u.evidence.passage.title if u.evidence.passage.kind == "page" else ""
    return content_stems(f"{u.context} {title}")


def _heading_names(names: frozenset[str], units: Sequence[_Unit]) -> frozenset[str]:
    """The names a question gives ("Keswick") that some of the units' headings carry: those sections are the ones
    about it."""
    return frozenset(n for n in names if any(n in content_stems(u.context) for u in units))


def _written_as_names(text: str, units: Sequence[_Unit]) -> frozenset[str]:
    """Stems of the question's words, however it writes them, that the evidence writes only as names of places:
    capitalised wherever its sentences use them, once at least mid-sentence ("is the ottawa store open mondays?" and
    "Burlington or Ottawa (Westboro)"; not "store", which "our Ottawa store" writes small), and a town's name or no
    English word ("mattancherry"; not "bonfire night")."""
    said = " \n ".join(u.text for u in units)
    out: set[str] = set()
    for word in set(re.findall(r"\b[^\W\d_]{3,}\b", text)):
        if word[:1].isupper():
            continue  # a capitalised name is the question's own (`_query_names`)
        if english_word(word) and not is_town(word):
            continue  # a place's name, not an event's or a thing's ("bonfire night")
        found = [m.start() for m in re.finditer(rf"\b{re.escape(word)}\b", said, re.IGNORECASE)]
        if found and all(said[i].isupper() for i in found) and any(_MID_SENTENCE.search(said[:i]) for i in found):
            out |= content_stems(word)
    return frozenset(out)


_MID_SENTENCE = re.compile(r"[\w,;(–-]\s*$")


def _set_aside(intent: Intent) -> frozenset[str]:
    """The stems of what the question sets aside for the thing it asks about ("sent to a pick-up point instead of my
    home address?", "spray it rather than dipping"): the thing not wanted is no topic the answer must say."""
    return content_stems(" ".join(m.group(1) for m in _SET_ASIDE.finditer(intent.lower)))


def _score(work: _Work, units: list[_Unit], ignore: frozenset[str] = frozenset()) -> None:
    """Relevance of each unit: embedding similarity of the sentence and of its heading, content-word overlap,
    passage rank and answer-likeness."""
    intent = work.intent
    if not units:
        return
    contexts = list(dict.fromkeys(u.context for u in units))
    sims = work.similarity([u.text for u in units] + contexts)
    unit_sims = sims[: len(units)]
    context_sims = dict(zip(contexts, sims[len(units) :], strict=True))
    # (what the question sets aside is no topic: "collect it instead of delivery" is not about delivery)
    wanted = (intent.stems - _GENERIC_QUERY_STEMS - ignore - _set_aside(intent)) or intent.stems
    if intent.countries and not intent.shipping:
        # "what's the capital of France?" shares a country name with the shipping table, nothing more
        wanted = wanted - _country_stems(intent.countries)
    unit_words = [content_stems(u.text) for u in units]
    # Words the evidence rarely uses ("hire") say more about a match than words it uses everywhere ("tent").
    frequency: dict[str, int] = {}
    for words in unit_words:
        for w in words & wanted:
            frequency[w] = frequency.get(w, 0) + 1
    weight = {w: math.log(1 + len(units) / (1 + frequency[w])) for w in frequency}
    # A name alone ("Keswick" in "what's the weather in Keswick?") is too little overlap to make a sentence relevant.
    names = _query_names(intent.text)
    # a word no sentence uses weighs like an average word: it lowers every sentence alike
    average = sum(weight.values()) / len(weight) if weight else 1.0
    weight.update({w: average for w in wanted if w not in weight})
    if any(not w.isdigit() for w in wanted):
        # a number or a name ("2" in "what is 2+2?", "Keswick" in "the weather in Keswick") says too little alone
        weight.update({w: 0.3 * v for w, v in weight.items() if w.isdigit() or w in names})
    else:
        weight = {w: 0.0 for w in wanted}
    total = sum(weight.values()) or 1.0
    # the retriever's order among the passages in play, as a reciprocal-rank prior (trust its top passage most)
    order = {
        pid: i
        for i, pid in enumerate(dict.fromkeys(u.evidence.passage.id for u in sorted(units, key=lambda u: u.rank)))
    }
    # A name the question gives that some headings carry ("Keswick") picks those sections: the Fort William
    # section's parking is no answer about Keswick.
    heading_names = _heading_names(names | _written_as_names(intent.text, units), units)
    # the kinds of figure or place the question asks for that a line must state, not name ("where is your workshop?":
    # an address; "phone number?"), from the lexicon
    asked = [m for m in asked_figures(intent.text) if m.name == "place" or m.name in _STATED_FIGURES]
    asked_days = _days(intent.text)
    damaged = bool(ARRIVED_DAMAGED_RE.search(intent.lower)) and any(says_damaged(u) for u in units)
    for u, sim, words in zip(units, unit_sims, unit_words, strict=True):
        context_words = _heading_words(u)
        u.plain_overlap = any(not w.isdigit() and w not in names for w in wanted & (words | context_words))
        # a heading word counts almost fully: headings name the topic their sentences leave implicit
        lexical = (
            sum(weight[w] for w in wanted & words) + 0.75 * sum(weight[w] for w in (wanted & context_words) - words)
        ) / total
        bonus = 0.08 / (1 + order[u.evidence.passage.id]) + (0.02 if u.evidence.resolved else 0.0)
        if intent.permission_verb and intent.permission_verb in words and _MODAL.search(u.text):
            bonus += 0.06  # "can I return...?" is answered by a rule: "you can return ... within 30 days"
            if _DURATION.search(u.text):
                bonus += 0.05  # rules come with their limits
        if _ANAPHOR_START.match(u.text):
            bonus -= 0.03  # a sentence that leans on the one before answers less on its own
        if heading_names and not heading_names & context_words:
            bonus -= 0.15
        if intent.overview_policy and (_DURATION.search(u.text) or _MODAL.search(u.text)):
            # "what's your returns policy?" is answered by its rules: who can do what, within when; a rule that says
            # both (who may, and by when) is the policy's core, not a step of its procedure
            bonus += 0.12 if _DURATION.search(u.text) and _MODAL.search(u.text) else 0.06
        if intent.asks_time and _CLOCK.search(u.text):
            bonus += 0.08
            if asked_days and (said_days := _days(u.text)):
                # "what time do you open on saturday?": not the Friday restock at 8pm, but "Saturday: 10:00 - 16:00"
                bonus += 0.08 if asked_days & said_days else -0.08
        elif intent.asks_time and not intent.asks_duration:
            # "what's the cut-off time?" is not answered by "3-6 working days after dispatch", nor by "Orders after
            # cut-off ship the next business day", which states no time
            bonus -= 0.08
        for m in asked:
            # "where is …?" is answered by a place, and not by a sentence that names none; "phone number?" by a number,
            # not "The shop phone is the quickest way to reach us", nor a line asking for one ("put a note in the box
            # with your name, phone number, email")
            stated = bool(m.states.search(u.text) or m.states.search(u.context))
            if m.name in ("place", "phone number"):
                bonus += 0.08 if stated else -0.08
            elif m.name in _STATED_FIGURES and not stated and m.asks.search(u.text.lower()):
                bonus -= 0.08  # it asks for one itself
        if intent.asks_duration and _DURATION.search(u.text):
            bonus += 0.08
        elif intent.asks_quantity and _NUMBER.search(u.text):
            bonus += 0.06
        if u.text.rstrip().endswith(":"):
            bonus -= 0.08  # a list's lead-in says little on its own
        if re.match(r"^(?:yes|no)\b", u.text, re.I) and float(context_sims[u.context]) < 0.45:
            bonus -= 0.08  # "No, we don't ..." answers its own FAQ question, not necessarily this one
        if damaged:  # "my mug arrived smashed": the rule for goods that arrive damaged, not a line naming mugs
            hit = says_damaged(u)
            bonus += 0.08 if hit else -0.08
            # ("came split open" and "arrives damaged" share no word, but say the same thing of the goods)
            lexical, u.plain_overlap = (max(lexical, 0.3), True) if hit else (lexical, u.plain_overlap)
        if u.first:
            bonus += 0.03  # a section's first sentence usually states its rule
        u.semantic = float(sim)
        u.context_semantic = float(context_sims[u.context])
        u.lexical = lexical
        u.score = 0.45 * float(sim) + 0.27 * float(context_sims[u.context]) + 0.28 * lexical + bonus


def _days(text: str) -> frozenset[int]:
    """The days of the week a line names, a range with the days between ("Tuesday to Thursday", "Mon-Sat")."""
    days = {_WEEKDAYS[m.group(0).lower()] for m in _FULL_DAY.finditer(text)}
    for m in _DAY_RANGE.finditer(text):
        first, last = _DAY_NUMBERS[m.group(1).lower()], _DAY_NUMBERS[m.group(2).lower()]
        days |= {(first + i) % 7 for i in range((last - first) % 7 + 1)}
    return frozenset(days)


def _country_stems(codes: Iterable[str]) -> frozenset[str]:
    words: set[str] = set()
    for code in codes:
        for name in country_aliases(code):
            words |= content_stems(name)
    return frozenset(words)


def _fits(chosen: list[_Unit], unit: _Unit) -> bool:
    return sum(len(u.text) for u in chosen) + len(unit.text) <= MAX_CHARS


def _near_duplicate(unit: _Unit, chosen: list[_Unit]) -> bool:
    words = content_stems(unit.text)
    for other in chosen:
        others = content_stems(other.text)
        union = words | others
        if union and len(words & others) / len(union) >= 0.7:
            return True
    return False


def _continues_address(line: str, following: str) -> bool:
    """`following` is the rest of the street address `line` starts: a short line with a figure and no label of its
    own ("London E8 3PH", "Collingwood VIC 3066")."""
    place = next((m for m in asked_kinds() if m.name == "place"), None)
    if place is None or not place.states.search(line):
        return False
    rest = following.strip().rstrip(".")
    return len(rest) <= 40 and bool(re.search(r"\d", rest)) and ":" not in rest


def _with_context(units: list[_Unit], chosen: list[_Unit]) -> list[_Unit]:
    """A chosen sentence that leans on the one before ("This does not affect...") brings it along; a list's
    lead-in brings its items."""
    out = list(chosen)
    by_passage: dict[str, list[_Unit]] = {}
    for u in units:
        by_passage.setdefault(u.evidence.passage.id, []).append(u)
    for u in list(out):
        siblings = by_passage[u.evidence.passage.id]
        index = siblings.index(u)
        following = siblings[index + 1] if index + 1 < len(siblings) else None
        if (
            following is not None
            and following not in out
            and _continues_address(u.text, following.text)
            and _fits(out, following)
        ):
            out.append(following)  # "Arch 7, Mentmore Terrace" and the line below it, "London E8 3PH"
        if _ANAPHOR_START.match(u.text) and index > 0:
            previous = siblings[index - 1]
            if previous not in out and _fits(out, previous):
                out.append(previous)
        lead = u if u.text.rstrip().endswith(":") else u.lead
        if lead is not None:
            # a list is quoted with its lead-in and as many of its items as fit
            if lead not in out and _fits(out, lead):
                out.append(lead)
            for item in siblings:
                # four sentences in all, so the list never pushes the chosen sentences out of the answer
                if item.lead is lead and item not in out and _fits(out, item) and len(out) < 4:
                    out.append(item)
    return with_lists(out, units)


def with_lists(chosen: list[_Unit], units: Sequence[_Unit]) -> list[_Unit]:
    """`chosen` where no list's lead-in is quoted without its list ("… as long as they are:" and then another
    sentence): a lead-in without any of its items brings its first item when it fits, or else is left out (unless
    nothing else is chosen)."""
    out = list(chosen)
    for lead in [u for u in chosen if u.text.rstrip().endswith(":")]:
        items = [u for u in units if u.lead is lead]
        if not items or any(item in out for item in items):
            continue
        if _fits(out, items[0]):
            out.append(items[0])
        elif len(out) > 1:
            out.remove(lead)
    return out


def _quote(answer: _Answer, unit: _Unit, lead: str = "", opened: bool = False) -> None:
    """Quote a unit verbatim; a product's first line in the answer is prefixed with the product's name, and a bare list item with
    its section heading ("What we can't take back: Gift cards."), unless the answer already quotes a line of that
    section."""
    # "Covered:" with what the list is, unless the answer quotes that sentence too (`opened`)
    text = unit.lead_in() if unit.opener and not lead and not opened else unit.text
    markdown = None
    doc = unit.doc
    section = (unit.evidence.passage.id, unit.context.strip())
    if not lead and section not in answer.sections and _bare_item(unit):
        lead = f"{unit.context.strip().rstrip(':.')}: "
    answer.sections.add(section)
    if unit.context.rstrip().endswith("?") and unit.context_semantic < FAQ_QUESTION_MATCH:
        # "Yes, we offer Klarna" answers its own FAQ question ("Can I pay in instalments?"), not "can I pay with
        # PayPal?": the reply word would answer this one
        bare = _REPLY_START.sub("", text, count=1)
        if bare != text:
            text = bare[:1].upper() + bare[1:]
    if lead and re.match(r"^[A-Z][a-z]+\b", text) and text.split()[0].lower() in _FUNCTION_WORDS:
        text = text[:1].lower() + text[1:]
    titled = ("titled", doc.id if doc is not None else "")
    if (
        unit.evidence.passage.kind == "product"
        and doc is not None
        and doc.title.lower() not in text.lower()
        and titled not in answer.sections
    ):
        # the product is named before its first line in the answer, not before each
        answer.sections.add(titled)
        markdown = f"{lead}**{doc.title}** — {text}"
        text = f"{lead}{doc.title} — {_plain(text)}"
    else:
        if doc is not None and doc.kind == "product" and doc.title in text:
            markdown = lead + text.replace(doc.title, f"**{doc.title}**", 1)
        text = lead + _plain(text)
    answer.claim(text, (unit.evidence.number,), markdown=markdown, doc=doc.id if doc else unit.evidence.passage.doc_id)


_VERBISH = text_cue("verbish", re.IGNORECASE)


def says_damaged(u: _Unit) -> bool:
    """The unit, or its heading, says what happens to goods that arrive damaged."""
    return bool(ARRIVED_DAMAGED_RE.search(u.text) or ARRIVED_DAMAGED_RE.search(u.context))


def damaged_rule(intent: Intent, units: list[_Unit]) -> list[_Unit]:
    """For a question saying the goods arrived damaged, the units of the sections saying what happens then, where any
    does ("Damaged items: Very occasionally a tin leaks on its way to you. If anything arrives damaged, …")."""
    sections = {(u.evidence.passage.id, u.context) for u in units if says_damaged(u)}
    if not sections or not ARRIVED_DAMAGED_RE.search(intent.lower):
        return units
    return [u for u in units if (u.evidence.passage.id, u.context) in sections]


_REPLY_START = text_cue("reply_start", re.IGNORECASE)
_OWN_LABEL = re.compile(r"^[^\W\d][^:]{0,30}:\s+\S")  # a line led by its own label: "Phone: …", "Sunday: …"


def _under_heading(unit: _Unit) -> bool:
    """A line of a policy or page under a section heading of its own: not a product's, not after a lead-in, not an
    FAQ answer (its heading a question) and not under the document's title alone."""
    context = unit.context.strip()
    if unit.evidence.passage.kind == "product" or unit.lead is not None or not context or context.endswith("?"):
        return False
    return unit.doc is None or context.lower() != unit.doc.title.lower()


def _bare_item(unit: _Unit) -> bool:
    """A short verbless line under a section heading ("Gift cards."): alone it says nothing; with its heading it
    is the rule."""
    if not _under_heading(unit):
        return False
    if _OWN_LABEL.match(unit.text):
        return False  # "Phone: 020 7946 0321", "Saturday: 10am - 5pm" say what they are without the heading
    words = re.sub(r"\([^)]*\)", " ", unit.text).split()  # "The Channel Islands (Jersey, Guernsey, Sark)."
    return len(words) <= 6 and not _VERBISH.search(unit.text)


# Words of a rule sentence (who may do what, on which condition), as opposed to a list entry naming goods.
_RULE_WORDS = text_cue("rule_words", re.IGNORECASE)


def _kind_item(unit: _Unit) -> bool:
    """A list entry under a section heading that names goods with a qualifier ("Opened or used skincare, for
    hygiene reasons", "Candles that have been lit"): read with its heading, it is the rule for those goods."""
    return _under_heading(unit) and _names_goods(unit.text)


def _names_goods(text: str) -> bool:
    """A short line that names goods rather than stating a rule ("Candles that have been lit", not "You can return
    …")."""
    limit = _LABELLED_GOODS_WORDS if _OWN_LABEL.match(text) else _GOODS_WORDS
    return len(text.split()) <= limit and not _RULE_WORDS.search(text)


# a list entry naming goods is short, its several kinds and their state included ("Soap, shave soap, shampoo bars and
# bath bombs that have been unwrapped or used"); one led by a label of its own is a row of cells ("Category: Swim
# goggles and earplugs, Unopened: Full refund, Opened: …"), whose rule its cells state, and shorter
_GOODS_WORDS = 14
_LABELLED_GOODS_WORDS = 10


def _led_item(unit: _Unit) -> bool:
    """A short list entry after its lead-in that names goods ("Certain types of items cannot be returned:" - "Opened
    lubricants, sealants and cleaners"): read with the lead-in, it is the rule for those goods."""
    if unit.lead is None or unit.evidence.passage.kind == "product":
        return False
    return _names_goods(unit.text)


def _goods_said(text: str, goods: frozenset[str], words: frozenset[str]) -> bool:
    """Each word of `goods` the question (`text`) says stands alone, or before a word the entry (`words`) says too:
    "soap if I opened it" and "bath bombs" name goods of the entry, "the swim club" names no swim goggles."""
    tokens = re.findall(r"[\w'-]+", text)
    for word, after in zip(tokens, [*tokens[1:], ""], strict=True):
        following = content_stems(after)
        if content_stems(word) & goods and following and not following <= words:
            return False
    return True


def _goods_alike(intent: Intent, entry: str, goods: frozenset[str], plain: frozenset[str]) -> bool:
    """The question and the list `entry` each say `goods` alone or before a word the other says (`plain`: the
    entry's words that name no goods)."""
    words = content_stems(entry)
    return _goods_said(intent.lower, goods, words) and _goods_said(entry.lower(), goods, intent.stems | plain)
