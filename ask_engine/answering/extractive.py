"""The offline default generator: short answers built only from the shop's own words, with citations.

`ExtractiveGenerator` never invents a sentence about the shop. Every claim is either a sentence quoted from the
evidence or a fixed template filled with a recorded value, verbatim. How it answers:

1. **Reading the question** (`language.parse_query`): question shape (yes/no, wh-), and what it asks about: a
   product attribute from a small lexicon of common attributes (waterproof, material, warranty, weight, care,
   warmth, allergens, origin, dimensions, ...), price, stock, options (colours, sizes), shipping to a country,
   a comparison, a catalogue search, or a store process (returns, delivery, payment...).
2. **Products** (resolved by id/mention/history, else named in the question by distinctive title words): the
   asked attribute is matched against the product's recorded facts, first through the lexicon, then by lexical
   overlap with fact labels and by embedding similarity of the question to "Label: value" strings, so a key no
   lexicon knows (`burn_time`) still answers "how long does it burn?". A recorded fact is stated through a
   template that keeps the value verbatim; a description sentence that addresses the question is quoted; when
   neither exists the answer says plainly that the shop has not recorded it, then gives the most related recorded
   fact (never "no"). Price, stock and options come from the variants and price facts; an option the question
   names but the product lacks is reported as not recorded, with the options that are.
3. **Shipping to a country**: the country comes from the question (names, aliases, ISO codes) or, for a delivery
   question, from the buyer's context; sentences naming it (or a region group the policy itself names, e.g. "EU")
   are quoted. A country the shipping policy never names is reported as not listed, with where it does ship.
4. **Everything else** (policies, FAQ, pages): the evidence is split into sentences (label/value lines and table
   rows stay whole; FAQ questions and section headings are never quoted) and each is scored by a blend of
   embedding similarity to the question, similarity of its heading or FAQ question, content-word overlap, passage
   rank and answer-likeness (numbers and durations for "how long/how much"). The best one to three sentences are
   kept in their original order, near-duplicates dropped, within ~450 characters, never cut mid-sentence. A
   returns question about a kind of goods is answered by the policy's list entry naming them ("Items we cannot
   take back: Candles that have been lit."); a bare "Yes." is quoted only for its own FAQ question.
5. **No answer**: when nothing scores above the relevance floor, a fixed phrase says the shop's information does
   not cover it and what the assistant can help with; no evidence text is shown. A name the evidence never
   mentions ("bitcoin"), or a two-word thing whose second word it never uses while it uses the first for something
   else ("gift wrapping" against "gift cards"), is reported as not mentioned.
6. **Untrusted text**: sentences that address an AI or try to instruct it are never quoted (`guard.is_injection`
   plus a few broader patterns); an instruction inside the question is dropped from it.
7. **Conversation and compound questions**: "Is it waterproof, and can I return it?" is answered part by part;
   a follow-up that names no attribute ("what about the women's one?") asks what the previous question asked; a
   product question the product does not record falls back to a strongly matching policy or FAQ sentence.

Every threshold below was calibrated on the sample shop's questions plus off-topic ones, and checked on a second,
hand-made shop in the tests; none names anything in a particular shop.

Fixed phrases live in `prompts/phrases.j2`; `phrase(name, **kwargs)` renders one.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from ask_engine.answering.catalogue import _catalogue, _not_offered
from ask_engine.answering.commerce import unstocked_dispatch
from ask_engine.answering.options import _match_options, _options, with_extreme_size
from ask_engine.answering.overview import _overview
from ask_engine.answering.passages import _select
from ask_engine.answering.product import _product
from ask_engine.answering.query import (
    _GENERIC_QUERY_STEMS,
    _clean_query,
    _question_parts,
    _targets,
    _title_stems,
    _with_history,
    _without_mentions,
    _without_shop_name,
    names_in_view,
    refers_to_product,
)
from ask_engine.answering.rules import _VAGUE_STEMS
from ask_engine.answering.sentences import _DURATION, FAQ_QUESTION_MATCH
from ask_engine.answering.shipping import _CUSTOMS, _shipping, buyer_then_home
from ask_engine.answering.terms import own_service_price, untargeted_guide
from ask_engine.answering.work import _Answer, _articles, _VectorCache, _Work
from ask_engine.countries import named_by_state_code
from ask_engine.language import (
    CONCEPTS,
    CONDITIONAL_PART_RE,
    Intent,
    as_product_price,
    content_stems,
    mentions_concept,
    normalize,
    parse_query,
    stem,
    text_cue,
)
from ask_engine.phrases import phrase
from ask_engine.retrieve import AMOUNT_RE
from ask_engine.towns import Town, town_named
from ask_engine.types import Document, Draft, DraftKind, Sentence, Task

if TYPE_CHECKING:
    from ask_engine.config import Settings
    from ask_engine.protocols import Embedder

__all__ = ["ExtractiveGenerator"]

# a statement about the asker, then the question ("I'm buying Christmas gifts, what's the return deadline?")
_STATED_THEN_ASKED = text_cue("stated_then_asked", re.IGNORECASE)


class ExtractiveGenerator:
    """Answers from the evidence alone, offline: quoted sentences and verbatim facts, each citing its passage."""

    name = "extractive"
    grounded_by_construction = True  # only ever quotes the evidence: the grounding guard has nothing to check

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self._embedder = embedder
        self._lock = threading.Lock()
        self._vectors = _VectorCache()
        self.max_sentences = max(1, settings.max_answer_sentences) if settings is not None else 4

    @property
    def embedder(self) -> Embedder:
        """The embedder given at construction, or the configured one (`embedder`), made on first use."""
        if self._embedder is None:
            with self._lock:
                if self._embedder is None:
                    from ask_engine import registry
                    from ask_engine.config import Settings

                    settings = self.settings or Settings()
                    self._embedder = registry.create("embedder", settings.embedder, settings)
        return self._embedder

    def generate(self, task: Task) -> Draft:
        query = _clean_query(task.query or "")
        # What is left of a question that carried an instruction is answered only when clearly on topic.
        guarded = query != normalize(task.query or "")
        if not query:
            if task.query and task.query.strip() and not task.operation_requested:
                return self._no_answer(task, "the question held only instructions to the assistant")
            return self._empty(task)
        first = parse_query(query)
        if not first.stems and not first.countries and not first.product_specific:
            overview = self._overviews(task, first) if first.overview else None
            return overview or self._empty(task)  # greetings and thanks: invite a question
        # "Is this waterproof, and can I return it if it doesn't fit?" is two questions: each part is answered on
        # its own, in order, within the sentence budget.
        parts = _question_parts(query, in_view=bool(task.resolution.doc_ids), names_variant=_variant_namer(task))
        answers: list[_Answer] = []
        notes: list[str] = []
        places: tuple[str, ...] = ()
        town: str | None = None
        asked: dict[int, frozenset[str]] = {}  # each answered part's own content words
        named: list[Document] = []  # the products the last part naming any is about
        after_place: dict[int, Intent] = {}  # the parts naming no place of their own after one that named one
        for part in parts:
            answer, work_notes, targets = self._answer(
                task, part, guarded=guarded, places=places, town=town, carried=named
            )
            named = targets or named
            countries = parse_query(part).countries
            # "shipping to LA?" names Louisiana or Los Angeles, not Laos: a state's code is no place a later part asks
            where = tuple(c for c in countries if not named_by_state_code(part, c))
            # "how long does delivery to Berlin take, and what does it cost?": a town names its country
            found = None if where else _part_town(task, part)
            if places and answer is not None and not countries and found is None:
                after_place[id(answer)] = parse_query(part)
            if where:
                places, town = where, None
            elif found is not None:
                places, town = (found.country,), found.name
            notes += work_notes
            if answer is None or not answer.sentences:
                continue
            if answer.not_recorded and CONDITIONAL_PART_RE.match(part) and any(not a.not_recorded for a in answers):
                # "does it need batteries? if so, what size?" → "it does not require batteries": the part after
                # "if so" may not hold, and the answered part before it says whether it does
                continue
            answers.append(answer)
            asked[id(answer)] = content_stems(part) - _GENERIC_QUERY_STEMS - _VAGUE_STEMS
        if any(not a.not_recorded and any(s.kind == "claim" for s in a.sentences) for a in answers):
            # Another part is answered from the shop's data: a part whose "not recorded" names nothing missing ("how
            # can these be cleaned? disinfectant spray only?" → "... that for the X") only casts doubt on that
            # answer, and the closest fact it offers repeats it; it takes none of the sentence budget either ("do you
            # sell kegging stuff? looking for a corny keg and a co2 tank": the first part's two products)
            answers = [a for a in answers if not (a.not_recorded and a.unnamed)]
        elif any(any(s.kind == "claim" for s in a.sentences) for a in answers):
            # ... and where another part shows a line the shop records, hedged ("Is it dusty? my daughter has
            # asthma" and "Low dust, but not dust-free."), a part saying only "not recorded that" after it would deny
            # the line shown
            answers = [
                a
                for a in answers
                if not (a.not_recorded and a.unnamed and not any(s.kind == "claim" for s in a.sentences))
            ]
        # the sentence budget is shared by the parts that answer: "how much for gift wrap, and can you leave the
        # price out? it's for my sister" is three parts, of which one finds its FAQ entry and keeps its price line
        budget = max(1, self.max_sentences // max(1, len(answers)))
        said: set[str] = set()
        for answer in answers:
            # a sentence an earlier part already quotes takes none of a later part's budget ("can I return pots?
            # who pays the return postage?": the second part's rule after the returns lead-in both parts quote)
            fresh = [s for s in answer.sentences if s.text not in said]  # (nor the town an earlier part placed)
            if fresh and not _without_bare_leads(fresh):
                # "… but it records this." before a line an earlier part quotes: this part adds nothing
                answer.sentences = []
                continue
            claims = [s for s in answer.sentences if s.kind == "claim"]
            if (
                id(answer) in after_place
                and claims
                and claims[0].text in said
                and _states(after_place[id(answer)], claims[0].text)
            ):
                # "... to Perth, and how long does it take?": the destination's line an earlier part quotes answers
                # it when it states what is asked (a time, a price); the lines after it would be about something else
                answer.sentences = []
                continue
            answer.sentences = _first(fresh if any(s.kind == "claim" for s in fresh) else answer.sentences, budget)
            said |= {s.text for s in answer.sentences}
        answers = [a for a in answers if a.sentences]
        unanswered = all(a.not_recorded for a in answers)
        stated = _STATED_THEN_ASKED.match(query) if unanswered and len(parts) == 1 else None
        if stated is not None:
            # "I'm buying Christmas gifts, what's the return deadline?": what the asker says of themselves found
            # nothing (or "nothing about gifts"); the question after it is answered on its own where it can be
            answer, work_notes, _ = self._answer(task, stated.group("question"), guarded=guarded)
            if answer is not None and answer.sentences and not (answers and answer.not_recorded):
                notes += work_notes
                answer.sentences = answer.sentences[: self.max_sentences]
                answers = [answer]
        if not answers:
            return self._no_answer(task, "no evidence sentence is relevant enough", *notes)
        if any(not a.not_recorded and any(s.kind == "claim" for s in a.sentences) for a in answers):
            # Another part is answered from the shop's data (the parts saying only "not recorded that" gave way before
            # the budget): a part saying an attribute is not recorded while another part states it ("how wide is the
            # base? seems wider than 48 inches?" → "not recorded the dimensions" beside "measures 48 x 48 x 72")
            # would contradict it, and a part whose every word another part's quoted line says ("what batteries does
            # it use, and are they included?" after "3 x CR2032 coin cell (included)") is answered there
            answers = [a for a in answers if not _stated_elsewhere(a, answers, asked.get(id(a), frozenset()))]
        merged = _Answer()
        for answer in answers:
            merged.extend(answer)
        merged.not_recorded = all(a.not_recorded for a in answers)
        if len(answers) > 1:
            merged.sentences = _without_repeats(merged.sentences, task, merged.docs)
        merged.sentences = _one_not_recorded(merged.sentences, task, merged.docs)
        merged.sentences = _titled_once(merged.sentences, task, merged.docs)
        sentences = _without_dangling_lead(merged.sentences[: self.max_sentences])
        has_claim = any(s.kind == "claim" for s in sentences)
        kind: DraftKind = "not_recorded" if merged.not_recorded or not has_claim else "answer"
        return Draft(
            sentences=sentences,
            kind=kind,
            generator=self.name,
            used_doc_ids=tuple(merged.docs),
            notes=tuple(notes),
            gaps=tuple(merged.gaps),
        )

    def _answer(
        self,
        task: Task,
        question: str,
        *,
        guarded: bool = False,
        places: tuple[str, ...] = (),
        town: str | None = None,
        carried: Sequence[Document] = (),
        town_customs: bool = True,
    ) -> tuple[_Answer | None, list[str], list[Document]]:
        """Answer one question: shipping to a country, a product, a catalogue search, else sentence selection.
        `places` are the countries an earlier part of the question named ("I live in Jersey, can you send me one?
        how much would postage be?"): a shipping part naming none asks about them; `town` is the town that part
        named, when it named one ("delivery to Perth …, and how long?"), read again as the shipping answer reads it;
        `carried` the products an earlier part named by title ("where's your gochugaru from, and what sizes?"), which
        a part naming none asks about when it asks about a product. Returns the answer, notes, and the products the
        part is about."""
        intent = _without_shop_name(parse_query(question), task.shop_name)
        # ... or the town it named, read again as the shipping answer reads a town, when the part asks only a cost or
        # a time ("... to Perth, and how long does it take?" is about Perth's zone, not all of Australia); a part about
        # delivery of its own ("... to Paris, and am I going to get hit with customs fees?") is not about the town's
        # rates
        elsewhere = f"{intent.text} (to {town})" if town else intent.text
        inherited = () if town else places
        if places and not town and intent.shipping and intent.shipping_place and not intent.countries:
            intent = replace(intent, countries=places)
        customs = town_customs and bool(
            town and intent.shipping and not intent.countries and _CUSTOMS.search(intent.lower)
        )
        if customs:
            # "shipping to manchester - how much and will I get hit with customs?": the customs of the town named
            # before, not of anywhere the policy says has none (where its lines say any: below)
            intent = replace(intent, text=elsewhere, shipping_place=True)
        if not intent.stems and not intent.countries and not intent.product_specific:
            return None, [], []
        work = _Work(
            task=task, intent=intent, embedder=self.embedder, cache=self._vectors, guarded=guarded, asked=intent.stems
        )
        targets = _targets(work, carried)
        if len(targets) == 1 and not intent.policy and (sized := with_extreme_size(question, targets[0])) is not None:
            # "the large one" of sizes written as measures: read as naming the largest ("the large (65 x 90 cm) one"),
            # but for delivery or returns, where a size named may be another's rule ("ship the big one to a PO box?")
            return self._answer(task, sized, guarded=guarded, places=places, town=town, carried=targets)
        if not targets and carried and _asks_of_product(intent):
            targets = list(carried)
        if places and not intent.shipping and ((intent.price and not targets) or intent.asks_duration):
            # "Do you ship to Australia? What does it cost?": a cost or a time after a destination is delivery's (a time
            # with a product in view too: "… tub to Honolulu, what does shipping cost and how long will it take?")
            intent = replace(intent, shipping=True, shipping_place=True, countries=inherited, text=elsewhere)
        # What the question asks is read without the product's name: "Aldergrove 3L Waterproof Jacket" asks nothing.
        work.intent = _with_history(_without_mentions(intent, targets), task)
        if names_in_view(intent.service_object, targets):
            work.intent = as_product_price(work.intent)
        elif intent.service_object:  # "how much to true a wheel?" of a "Wheel Truing Stand": the service's price still
            work.intent = replace(work.intent, price=False, policy=True, service_object=intent.service_object)
        answer = (
            (unstocked_dispatch(work, targets[0]) if len(targets) == 1 else None)
            or _shipping(work, targets)
            or (own_service_price(work, targets[0]) if len(targets) == 1 else None)
            or _product(work, targets)
            or _catalogue(work, targets)
            or _not_offered(work, targets)
            or _select(work, targets)
            or untargeted_guide(work, targets)
        )
        if customs and not (answer is not None and any(_CUSTOMS.search(s.text) for s in answer.sentences)):
            # the town's lines say nothing of customs ("Region: Europe, Cost: £12.95"): the part is read on its own
            return self._answer(
                task, question, guarded=guarded, places=places, town=town, carried=carried, town_customs=False
            )
        if (
            answer is not None
            and targets
            and answer.not_recorded
            and not any(s.kind == "claim" for s in answer.sentences)
        ):
            # "hydrometer or refractometer for a total beginner?": the products in view do not record it, but an FAQ
            # entry was asked as the same question ("Should I use a hydrometer or a refractometer?")
            answer = _asked_in_faq(work, targets) or answer
        if answer is None and targets and work.intent.policy:
            # a word that reads as a policy question found no policy line ("contact" in "is it safe for contact lens
            # wearers?"): the product in view answers from its own units
            work.intent = replace(work.intent, policy=False)
            answer = _product(work, targets)
        return answer, work.notes, targets

    def _overviews(self, task: Task, intent: Intent) -> Draft | None:
        """ "Tell me about these" with ids: a short overview of each resolved product (its link comes with it)."""
        docs = [task.documents[d] for d in task.resolution.doc_ids if d in task.documents]
        products = [d for d in docs if d.kind == "product"][:3]
        if not products:
            return None
        work = _Work(task=task, intent=intent, embedder=self.embedder, cache=self._vectors, asked=intent.stems)
        merged = _Answer()
        for doc in products:
            part = _overview(work, doc)
            part.sentences = part.sentences[: 2 if len(products) > 1 else self.max_sentences]
            merged.extend(part)
        if not merged.sentences:
            return None
        return Draft(
            sentences=tuple(merged.sentences[: max(self.max_sentences, 2 * len(products))]),
            kind="answer",
            generator=self.name,
            used_doc_ids=tuple(merged.docs),
        )

    def _empty(self, task: Task) -> Draft:
        name = "help" if task.operation_requested else "empty_query"
        return Draft(
            sentences=(Sentence(phrase(name, shop=task.shop_name), kind="meta"),),
            kind="empty_query",
            generator=self.name,
        )

    def _no_answer(self, task: Task, why: str, *details: str) -> Draft:
        return Draft(
            sentences=(Sentence(phrase("no_answer", shop=task.shop_name), kind="meta"),),
            kind="no_answer",
            generator=self.name,
            notes=(why, *details),
        )


def _asks_of_product(intent: Intent) -> bool:
    """A part naming no product that asks about one ("what sizes?", "is it vegan?", "how much?"), not about delivery,
    a policy or the catalogue."""
    if intent.shipping or intent.policy or intent.catalogue or intent.countries:
        return False
    return refers_to_product(intent)


def _asked_in_faq(work: _Work, targets: list[Document]) -> _Answer | None:
    """The evidence's answer from an FAQ entry whose question reads as the question (similarity at least
    `FAQ_QUESTION_MATCH`), or None."""
    faqs = [d for d in work.task.documents.values() if d.kind == "faq"]
    if not faqs:
        return None
    asked = {
        d.id for d, s in zip(faqs, work.similarity([d.title for d in faqs]), strict=True) if s >= FAQ_QUESTION_MATCH
    }
    if not asked:
        return None
    answer = _select(work, targets)
    if answer is None or answer.not_recorded or not asked & set(answer.docs):
        return None
    return answer


def _gap_concepts(answer: _Answer) -> frozenset[str]:
    """The attributes of the lexicon that an answer's "not recorded" gaps name (by fact key or option word)."""
    names: set[str] = set()
    for gap in answer.gaps:
        words = {stem(w) for w in gap.field.split()}
        for concept in CONCEPTS:
            if gap.key in concept.keys or any(stem(k) in words for k in concept.keys):
                names.add(concept.name)
    return frozenset(names)


def _stated_elsewhere(answer: _Answer, answers: Sequence[_Answer], words: frozenset[str] = frozenset()) -> bool:
    """`answer` only says something is not recorded, and another part states it: the very attribute its gaps name
    (an answered part), or every word its part asked with (`words`, said by any other part's quoted lines)."""
    if not answer.not_recorded or any(s.kind == "claim" for s in answer.sentences):
        return False
    claims = [(other, s.text) for other in answers if other is not answer for s in other.sentences if s.kind == "claim"]
    if words and words <= frozenset().union(*(content_stems(text) for _, text in claims)):
        return True
    asked = _gap_concepts(answer)
    return bool(asked) and any(
        mentions_concept(text, name) for other, text in claims if not other.not_recorded for name in asked
    )


_LISTING_FRAME = content_stems("comes in")  # the frame of the options sentence (`commerce._commerce`)


def _without_repeats(sentences: Sequence[Sentence], task: Task, doc_ids: Sequence[str]) -> list[Sentence]:
    """Claims of a many-part answer without one that says nothing an earlier one did not ("Its weight is 1.38 kg",
    the closest fact one part offers, then "The weight of the X is 1.38 kg", another part's answer); the
    product's name does not count as something said."""
    names = frozenset().union(*(_title_stems(task.documents[d]) for d in doc_ids if d in task.documents))
    names |= _LISTING_FRAME  # "The X comes in A, B and C" after "The shades of the X are A, B and C" says nothing new
    kept: list[Sentence] = []
    said: list[frozenset[str]] = []
    for sentence in sentences:
        core = content_stems(sentence.text) - names
        if sentence.kind == "claim" and core and any(core <= earlier for earlier in said):
            continue
        kept.append(sentence)
        if sentence.kind == "claim":
            said.append(core)
    return kept


@lru_cache(maxsize=1)
def _not_recorded_frame() -> tuple[str, str]:
    """What comes before and after the predicate in the `not_recorded` phrase ("The shop has not recorded ", ".")."""
    marker = "\x00"
    head, _, tail = phrase("not_recorded", subject="", predicate=marker).partition(marker)
    return head, tail


def _one_not_recorded(sentences: Sequence[Sentence], task: Task, doc_ids: Sequence[str]) -> list[Sentence]:
    """The "not recorded" sentences of an answer as one, naming the product once: "The shop has not recorded any
    sizes or the age requirement of the X", "... whether the X is vegan or needs batteries", not a sentence for each;
    an unnamed one ("... that for the X") goes when another names what is missing. The sentences are found by the
    `not_recorded` phrase they were rendered from (prompts/phrases.j2), so a reworded phrase is still found."""
    head, tail = _not_recorded_frame()
    gaps = [s for s in sentences if s.kind == "meta" and s.text.startswith(head) and s.text.endswith(tail)]
    if len(gaps) < 2:
        return list(sentences)
    # how the product is called in a sentence: "the Trail Mug", or "The Daily Balm" for a title with its own article
    docs = [task.documents[d] for d in doc_ids if d in task.documents]
    called = [(doc, name) for doc in docs for name in (_articles(f"the {doc.title}"), f"the {doc.title}")]
    unnamed = {phrase("not_recorded", subject=name, predicate="") for _, name in called}
    named = [s for s in gaps if s.text not in unnamed]
    drop = {id(s) for s in gaps if s.text in unnamed} if named else set()
    # "any sizes for the X" and "the age requirement of the X": what is missing, then the product it is missing for
    # ... and "whether the X is vegan" with "whether the X needs batteries": the product, then what is not known
    groups: dict[tuple[str, bool], list[tuple[Sentence, str]]] = {}
    for s in named:
        predicate = s.text[len(head) : len(s.text) - len(tail)]
        for doc, name in called:
            if predicate.startswith(f"whether {name} "):
                groups.setdefault((doc.id, True), []).append((s, predicate[len(f"whether {name} ") :]))
                break
            if predicate.startswith(("whether ", "when ", "how ")):
                continue
            ending = next((j + name for j in (" of ", " for ") if predicate.endswith(j + name)), None)
            if ending is not None:
                groups.setdefault((doc.id, False), []).append((s, predicate[: -len(ending)]))
                break
    merged: dict[int, Sentence] = {}
    for (doc_id, whether), parts in groups.items():
        if len(parts) < 2:
            continue
        doc = task.documents[doc_id]
        whats = list(dict.fromkeys(what for _, what in parts))
        verb = whats[0].split(" ", 1)[0] + " "
        if whether and len(whats) > 1 and all(w.startswith(verb) and len(w) > len(verb) for w in whats):
            whats = [whats[0]] + [w[len(verb) :] for w in whats[1:]]  # "is vegan or waterproof", not "... or is ..."
        what = whats[0] if len(whats) == 1 else ", ".join(whats[:-1]) + " or " + whats[-1]
        if whether:
            text, markdown = f"whether the {doc.title} {what}", f"whether the **{doc.title}** {what}"
        else:
            text, markdown = f"{what} of the {doc.title}", f"{what} of the **{doc.title}**"
        merged[id(parts[0][0])] = Sentence(
            text=_articles(phrase("not_recorded", subject="", predicate=text)),
            markdown=_articles(phrase("not_recorded", subject="", predicate=markdown)),
            kind="meta",
        )
        drop |= {id(s) for s, _ in parts[1:]}
    return [merged.get(id(s), s) for s in sentences if id(s) not in drop]


def _titled_once(sentences: Sequence[Sentence], task: Task, doc_ids: Sequence[str]) -> list[Sentence]:
    """A product's quoted lines name it before the first only ("Marlow Curtains — sold as a pair. 168 x 183 cm …"):
    the parts of a question are answered apart, and each would name it again."""
    titles = [task.documents[d].title for d in doc_ids if d in task.documents and task.documents[d].kind == "product"]
    named: set[str] = set()
    out: list[Sentence] = []
    for s in sentences:
        for title in titles:
            prefix = f"{title} — "
            if s.text.startswith(prefix) and title in named:
                rest = s.text[len(prefix) :]
                md = s.markdown
                if md and md.startswith(f"**{title}** — "):
                    md = md[len(f"**{title}** — ") :]
                s = replace(s, text=rest[:1].upper() + rest[1:], markdown=md if md != rest else None)
            if title in s.text:
                named.add(title)
        out.append(s)
    return out


def _first(sentences: Sequence[Sentence], n: int) -> list[Sentence]:
    """The first `n` sentences, and the claim after them where the last is the engine's own lead into it ("The shop
    does not say exactly that …, but it records this." and the line it records): a lead without its line says
    nothing."""
    out = list(sentences[:n])
    if out and out[-1].text.endswith(_HEDGE_END) and len(sentences) > n and sentences[n].kind == "claim":
        out.append(sentences[n])
    return out


# how the engine's lead into a line it shows as what the shop records ends (prompts/phrases.j2)
_HEDGE_END = phrase("not_stated_exactly", subject="\x00").split("\x00")[-1]


def _without_bare_leads(sentences: Sequence[Sentence]) -> list[Sentence]:
    """`sentences` without the engine's lead into a line it shows as what the shop records ("The shop does not say
    exactly that …, but it records this.") where no line follows it."""
    return [
        s
        for n, s in enumerate(sentences)
        if not s.text.endswith(_HEDGE_END) or (n + 1 < len(sentences) and sentences[n + 1].kind == "claim")
    ]


def _without_dangling_lead(sentences: Sequence[Sentence]) -> tuple[Sentence, ...]:
    """The answer without a closing lead-in whose list did not fit ("Opening hours:" and nothing after it)."""
    out = list(sentences)
    while len(out) > 1 and out[-1].text.rstrip().endswith(":"):
        out.pop()
    return tuple(out)


def _states(intent: Intent, text: str) -> bool:
    """`text` states what `intent` asks for, a price or a duration ("... and am I responsible for customs?" asks for
    neither: its own lines answer it)."""
    return bool((intent.price and AMOUNT_RE.search(text)) or (intent.asks_duration and _DURATION.search(text)))


def _part_town(task: Task, part: str) -> Town | None:
    """The town a part of the question names as a destination, read as the buyer's or the shop's country's."""
    return town_named(part, buyer_then_home(task))


def _variant_namer(task: Task) -> Callable[[str], bool] | None:
    """A test of whether a question part names a variant of the one product in view by its option values ("the
    travel size", "in navy"), so that a "how much?" after it asks about that variant."""
    docs = [task.documents[d] for d in task.resolution.doc_ids if d in task.documents]
    if len(docs) != 1 or len(docs[0].variants) < 2:
        return None
    options = _options(docs[0])
    return lambda part: bool(_match_options(parse_query(part), options)[0])
