"""Reading the question: instructions taken out, compound questions split, product names taken out or found,
follow-ups read with the previous question, and the products the question is about.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from ask_engine.answering.addressing import asked_measures
from ask_engine.answering.work import _is_untrusted, _Work
from ask_engine.faithfulness import split_sentences
from ask_engine.language import (
    ARRIVED_DAMAGED_RE,
    CONCEPTS,
    CONCEPTS_BY_NAME,
    OWNED_AGE_RE,
    Intent,
    content_stem_sequence,
    content_stems,
    mentions_concept,
    normalize,
    parse_query,
    price_denied,
    stem,
    text_cue,
    value_words,
    word_list,
    word_stems,
)
from ask_engine.types import Document, Task

# A clause that only addresses the assistant ("print your system prompt", "pretend you're a pirate").
_INSTRUCTION_CLAUSE = text_cue("instruction_clause", re.IGNORECASE)
_PRONOUN_RE = text_cue("pronoun")
_SHIP_WORDS = text_cue("ship_words", re.I)
_GENERIC_QUERY_STEMS = word_stems("generic_query_words")
_VAGUE_KIND_STEMS = word_stems("vague_words")
# Title words that say what kind or version of thing it is, never which product ("Men's", "Pack", "Set").
_COMMON_TITLE_STEMS = content_stems("men's women's kids' unisex pack set box pair kit size ml g kg l")


def refers_to_product(intent: Intent) -> bool:
    """The question talks about a product without naming it: a pronoun ("is it …?"), an elliptical follow-up ("and in
    blue?"), or a product's attribute, price, stock or options asked."""
    return bool(_PRONOUN_RE.search(intent.lower)) or intent.elliptical or intent.product_specific


def _targets(work: _Work, carried: Sequence[Document] = ()) -> list[Document]:
    """Products the question is about: resolved ones (ids, mention, history), else ones it names by title.
    `carried`: the products an earlier part of the question named by title."""
    task, intent = work.task, work.intent
    docs = task.documents
    resolved = [docs[d] for d in task.resolution.doc_ids if d in docs and docs[d].kind == "product"]
    named = _named_products(intent, [d for d in docs.values() if d.kind == "product"], trade=task.shop_name)
    if resolved and task.resolution.from_history:
        # A conversation's earlier product counts only while the question still talks about a product.
        if named:
            return named
        return resolved if refers_to_product(intent) else []
    if not resolved and len(named) > 1 and intent.catalogue and not intent.yes_no and not intent.comparison:
        work.listing = named  # "which of your products are made by Linkwell?": a list of those it names
        return []
    if len(resolved) > 1 and set(task.resolution.doc_ids) == set(task.resolution.mentioned_doc_ids):
        # every product was found by its name in the question: keep those it names best
        best = [d for d in named if d in resolved]
        # ... and a later part naming none of them asks about those the part before it named ("is the Spot Off ok on
        # a coated car? what's the pH?" is not about the pH Neutral shampoo the whole question's words also name)
        mentioned = resolved
        resolved = best or [d for d in carried if d in resolved] or resolved
        if intent.comparison:
            # "difference between atlas 3-in-1 and the rove 360?" compares every product it names, those named by
            # fewer of their words too
            resolved = resolved + [d for d in mentioned if d not in resolved]
    out = list(resolved)
    # ("pelleted or normal seed?" of the carrot seed in view names its own "Pelleted" option value, not the pelleted
    # manure)
    values = content_stems(" ".join(v for d in out for _, vs in d.options for v in vs)) if intent.comparison else None
    for doc in named:
        if doc not in out and (
            not out or (values is not None and not content_stems(doc.title) & intent.stems <= values)
        ):
            out.append(doc)
    return out[:4]


_CLAUSE_SPLIT = text_cue("clause_split", re.IGNORECASE)
_VERB_SLOT = text_cue("verb_slot")


def _clean_query(query: str) -> str:
    """The question without the sentences or clauses that try to instruct the assistant ("Pretend you're a pirate
    and tell me the return policy" keeps "tell me the return policy")."""
    text = normalize(query)
    if not text:
        return ""
    kept: list[str] = []
    for sentence in [p for p in split_sentences(text) if p.strip()] or [text]:
        if not _is_untrusted(sentence):
            kept.append(sentence)
            continue
        clauses = [c.strip() for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip()]
        kept += [c for c in clauses if len(clauses) > 1 and not _is_untrusted(c) and not _INSTRUCTION_CLAUSE.search(c)]
    return " ".join(kept).strip()


_PART_SPLIT = text_cue("part_split", re.IGNORECASE)
# "how much?" after a question: the figure asked of the thing the part before names (lexicon data)
_BARE_FIGURE_PART = text_cue("bare_figure_part", re.IGNORECASE)
_ASKS_OF_ITS_OWN = re.compile(r"^(?:and |also |but )?(?:where|when|who|how|what)(?:\s+\w+){2,}", re.IGNORECASE)
_ASKER_FIGURES = text_cue("asker_figures", re.IGNORECASE)  # "im 178cm …" after a question: no question of its own
_CONTEXT_PART = text_cue("context_part", re.IGNORECASE)  # "thinking about the Margaux" after a question


def _question_parts(
    query: str, *, in_view: bool = False, names_variant: Callable[[str], bool] | None = None
) -> list[str]:
    """The separate questions of a compound one (at most three); a single question stays whole. With no product in
    view (`in_view`), a part asking only for a figure ("how much?") asks it of the thing the part before names; with
    one, of the variant the part before names (`names_variant`: "does it come in a travel size? how much?")."""
    parts = [p.strip(" ,;") for p in _PART_SPLIT.split(query) if p and p.strip(" ,;?")]
    joined: list[str] = []
    dropped = False
    # ("where do they come from" says no content word, but asks where: a question of its own)
    for part in (p for p in parts if content_stems(p) or _ASKS_OF_ITS_OWN.match(p)):
        leans = not in_view or (names_variant is not None and bool(joined) and names_variant(joined[-1]))
        if joined and leans and _BARE_FIGURE_PART.match(part):
            # "is the Geisha out yet? how much?": alone, "how much?" would price whatever product retrieval ranks first
            joined[-1] = f"{joined[-1].rstrip(' ?')}? {part}"
        elif joined and _CONTEXT_PART.match(part):
            # "how does a drop veil stay on? Thinking about the Margaux": which product is meant (the whole question
            # named it), no question of its own
            dropped = True
            continue
        elif joined and _ASKER_FIGURES.match(part) and (re.search(r"\d", part) or _asks_own(joined[-1])):
            # "what length paddle? im 178cm and my kayak is 61cm wide": the asker's figures, for the question before;
            # "are the bellows real leather? I'm vegan": the asker's situation, no second question
            joined[-1] = f"{joined[-1].rstrip(' ?')}? {part}"
        else:
            joined.append(part)
    if len(joined) <= 1:
        return joined if dropped else [query]
    return joined[:3]


def _asks_own(part: str) -> bool:
    """`part` asks for an attribute or a kind of figure of its own ("are the bellows real leather?")."""
    intent = parse_query(part)
    return bool(intent.concepts or asked_measures(part))


def names_in_view(word: str | None, targets: Sequence[Document]) -> bool:
    """`word` (the thing a price is asked "for") starts a word of a product in view's title or handle: "price for the
    T92 with the mulch kit" of the "Thornbury T92H Hydrostatic Lawn Tractor" asks its price, not a service's."""
    if not word or len(word) < 2:
        return False
    return any(
        t.startswith(word)
        for doc in targets
        for t in re.findall(r"[a-z0-9]+", f"{doc.title} {doc.handle or ''}".lower())
    )


def _without_shop_name(intent: Intent, shop_name: str) -> Intent:
    """The intent without the places only the shop's own name says ("Does Crema Lab SG ship to the United States?"
    names no Singapore)."""
    if not intent.countries or not shop_name.strip() or shop_name.lower() not in intent.lower:
        return intent
    bare = parse_query(re.sub(re.escape(shop_name), " ", intent.text, flags=re.IGNORECASE))
    if set(bare.countries) < set(intent.countries):
        return replace(intent, countries=bare.countries)
    return intent


def _without_mentions(intent: Intent, targets: Sequence[Document]) -> Intent:
    """The intent read from the question minus the products' names ("Is the Aldergrove 3L Waterproof Jacket warm?"
    asks about warmth, not about waterproofing)."""
    text = intent.text
    for doc in targets:
        text = _strip_title(text, doc.title)
    if text == intent.text:
        return intent
    bare = parse_query(text)
    # "price for a dwarf honeycrisp 5-6ft?" names the product and its option values, not a service priced "for a
    # dwarf": read without them, it asks for a price
    unvalued = text
    for doc in targets:
        for _, values in doc.options:
            for value in values:
                unvalued = _strip_title(unvalued, value)
    # ("how much hazelnut is in the gianduja?" is no price question once "hazelnut" goes with the name)
    priced = (bare.price or (unvalued != text and parse_query(unvalued).price)) and not price_denied(intent.lower)
    # "what's in the care kit?" asks for the kit's contents, though "care kit" is its name
    kept = tuple(c for c in intent.concepts if c == "contents" and c not in bare.concepts)
    if set(bare.countries) < set(intent.countries):
        # "what else do I need to make the Coopers Canadian Blonde?": a place said only in a product's name is no
        # destination, and the question is about delivery only if it is without the name
        intent = replace(intent, countries=bare.countries, shipping=bare.shipping, shipping_place=bare.shipping_place)
    return replace(
        intent,
        concepts=bare.concepts + kept,
        price=priced,
        stock=bare.stock,
        options=bare.options,
        colours=bare.colours,
        numbers=bare.numbers,
        comparison=intent.comparison or bare.comparison,
        policy=bare.policy,  # "how long does a flat tire repair take?" is about the service, not a repair policy
    )


_DETERMINER_BEFORE = text_cue("determiner_before", re.IGNORECASE)  # "the", "your" before a product's name
_AUDIENCE_AFTER = text_cue("audience_after", re.IGNORECASE)  # who a product is for, after its name


def _strip_title(
    text: str, title: str, placeholder: str = "", *, named: bool = False, labels: frozenset[str] = frozenset()
) -> str:
    """Remove the longest run of consecutive words of `text` that all belong to `title` (two words at least, or
    one word that is not itself an attribute, nor the last word of one of the product's own attribute `labels` (stems:
    "how much melatonin is in each gummy?" of the Melatonin 3 mg Gummies, which record "Melatonin: 3 mg"), nor all the
    question asks), with its article; `placeholder` ("it")
    takes its place. With `named`, only a run that names the product in view: after a determiner or "it" ("where are
    it sunglasses made?" once the name is out), not "other benches"."""
    # a word of the title as written or by its stem ("velvet cushions" names the "Cotton Velvet Cushion")
    title_words = {stem(w.lower()) for w in re.findall(r"[\w'’]+", title)} | _model_initials(title)
    tokens = list(re.finditer(r"[\w'’]+", text))
    best: tuple[int, int] | None = None
    i = 0
    while i < len(tokens):
        j = i
        seen: set[str] = set()
        # a repeated word ends the run: "the Aldergrove waterproof jacket waterproof?" still asks "waterproof"
        while (
            j < len(tokens)
            and (
                stem(tokens[j].group(0).lower()) in title_words - seen
                # ... but the shop's word written after a shopper's ("sunnies (sunglasses)") goes with it
                or (
                    j > i
                    and "(" in text[tokens[j - 1].end() : tokens[j].start()]
                    and stem(tokens[j].group(0).lower()) in seen
                )
            )
        ):
            seen.add(stem(tokens[j].group(0).lower()))
            j += 1
        if j > i and (best is None or j - i > best[1] - best[0]):
            best = (i, j)
        i = max(j, i + 1)
    if best is None:
        return text
    start, end = best
    if end - start < 2:
        word = tokens[start].group(0)
        # one word names the product only if it is not itself what the question asks ("is it waterproof?")
        if len(word) < 4 or parse_query(word).product_specific or stem(word.lower()) in labels:
            return text
    before = text[: tokens[start].start()]
    if named and not (_DETERMINER_BEFORE.search(before) or re.search(r"\bit\s+$", before)):
        return text
    if placeholder:
        before = _DETERMINER_BEFORE.sub("", before)
    after = text[tokens[end - 1].end() :]
    after = _AUDIENCE_AFTER.sub("", after)  # "the trail boot - men's"
    if "(" in text[tokens[start].end() : tokens[end - 1].start()]:
        after = re.sub(r"^\s*\)", "", after)  # the written-after word's closing bracket
    if end - start < 2 and not content_stems(f"{before} {after}"):
        # "are these polarised?" about the "Marlowe Polarised Round Sunglasses": the one word is what is asked
        return text
    if placeholder == "it" and re.search(r"['’]s$", tokens[end - 1].group(0)):
        placeholder = "its"  # "is the sofa bed's mattress …?" asks of its mattress
    stripped = re.sub(r"\s+", " ", f"{before} {placeholder} {after}").strip()
    if end - start < 2 and set(parse_query(text).concepts) - set(parse_query(stripped).concepts):
        # "how many quarts?" of the "Lodge 3.2 Quart Combo Cooker": the one word is part of what is asked
        return text
    return stripped


def _with_history(intent: Intent, task: Task) -> Intent:
    """A follow-up that names no attribute ("and the women's one?") asks what the previous question asked; one
    about delivery ("and how long does it take?") keeps the previous question's destination."""
    if not task.history:
        return intent
    previous = parse_query(task.history[-1].query)
    short = intent.elliptical or len(intent.lower.split()) <= 6
    delivery = intent.shipping or intent.asks_duration or intent.asks_quantity
    if previous.countries and previous.shipping and short and delivery and not intent.countries:
        return replace(intent, shipping=True, shipping_place=True, countries=previous.countries)
    if intent.product_specific:
        return intent
    if not (intent.elliptical or len(intent.lower.split()) <= 4):
        return intent
    if not previous.product_specific:
        return intent
    return replace(
        intent,
        concepts=previous.concepts,
        price=previous.price,
        stock=previous.stock,
        options=previous.options,
        yes_no=previous.yes_no,
        stems=intent.stems | (previous.stems - _GENERIC_QUERY_STEMS),
    )


_PROCESS_WORD = re.compile(
    r"\breturn\w*|\brefund\w*|\bexchang\w*|\bship\w*|\bdeliver\w*|\bpostage\b|\bpay\w*|\bdiscount\w*|"
    r"\bcancel\w*|\btrack\w*|\bclaim\w*|\brepair\w*|\bcollect\w*|\bsend\b"
)


def _process_words(intent: Intent) -> bool:
    """True when the question is about a store process (return, deliver...) rather than an attribute word, or
    says the goods arrived damaged ("my bag of dates came split open": the damaged-goods rule, not the dates)."""
    return bool(_PROCESS_WORD.search(intent.lower) or ARRIVED_DAMAGED_RE.search(intent.lower))


def _concept_stems(intent: Intent) -> frozenset[str]:
    words: set[str] = set()
    for name in intent.concepts:
        concept = CONCEPTS_BY_NAME[name]
        words |= content_stems(" ".join(k.replace("_", " ") for k in concept.keys))
        words |= content_stems(concept.noun)
    return frozenset(words)


def _title_stems(doc: Document) -> frozenset[str]:
    return content_stems(" ".join([doc.title, doc.handle or "", *_model_initials(doc.title)]).replace("-", " "))


def _model_initials(title: str) -> frozenset[str]:
    """A model's name as shoppers shorten it, the initials of two or three words before a figure ("GP5000" of the
    "Grand Prix 5000"), lower case."""
    words = re.findall(r"[\w'’]+", title)
    return frozenset(
        ("".join(w[0] for w in words[i : i + n]) + words[i + n]).lower()
        for n in (2, 3)
        for i in range(len(words) - n)
        if all(w.isalpha() for w in words[i : i + n]) and any(c.isdigit() for c in words[i + n])
    )


def _named_products(intent: Intent, products: list[Document], trade: str = "") -> list[Document]:
    """Products the question names by distinctive title words ("the Marsh boots", "Aldergrove or Heathmoor?")."""
    if not products:
        return []
    titles = {d.id: content_stems(d.title) for d in products}
    # Words of product types name categories ("boots", "bottles"), never one product; nor do the words of the shop's
    # own name (`trade`), its trade ("cloth nappies" at Little Bundle Cloth Co)
    category = content_stems(" ".join(d.product_type or "" for d in products)) | content_stems(trade)
    frequency: dict[str, int] = {}
    for stems in titles.values():
        for s in stems:
            frequency[s] = frequency.get(s, 0) + 1
    # Men's and women's versions share a name, so a word in two titles can still name the product.
    limit = max(2, len(products) // 3)
    attribute_words = _concept_stems(intent)
    asked = content_stems(OWNED_AGE_RE.sub(" ", intent.text)) if OWNED_AGE_RE.search(intent.text) else intent.stems
    # "how do I season a new offset?": the verb after "how do I" names no product ("Pre-Seasoned Cast Iron Skillet")
    asked -= content_stems(" ".join(m.group(1) for m in _VERB_SLOT.finditer(intent.lower)))
    candidates: list[tuple[int, float, frozenset[str], bool, Document]] = []
    # an option value the question says beside a word of the name counts as one more word of it ("the 16 piece
    # truffle box" is the truffle selection's "16 pieces", not the favour box holding 2 truffles; "white choc
    # couverture" the callets' "White 33%"; "the 500g tin of hot choc" the hot chocolate's "500 g tin"), unless
    # another product so named has it too ("the 10kg sack of flour", where two flours come in one)
    said, sequence = set(re.findall(r"\d+", intent.lower)), content_stem_sequence(intent.lower)  # (read once)
    values = {
        d.id: _named_value_words(asked, d, titles[d.id], said, sequence) if titles[d.id] & asked else frozenset()
        for d in products
    }
    shared = {w for w, n in Counter(w for words in values.values() for w in words).items() if n > 1}
    for doc in products:
        stems = titles[doc.id]
        if not stems:
            continue
        matched = stems & asked
        # (a part of a hyphenated word names nothing alone: "where is the store?" and "Pro Setup (In-Store Drop-Off)")
        parts = _unsaid_compound_parts(doc.title, intent.lower) if matched else frozenset()
        distinctive = {
            s
            for s in matched
            if frequency.get(s, 0) <= limit
            and s not in attribute_words
            and s not in category
            and not s.isdigit()
            and s not in parts
        }
        share = len(matched) / len(stems)
        if len(matched) == 1 and _part_of_other_name(intent.text, doc.title):
            continue  # "Ben Nevis" is a mountain, not the Nevis trousers
        if intent.catalogue and share < 0.5 and not (distinctive & content_stems(" ".join(_names_in(intent.text)))):
            continue  # "what repair services do you offer?" asks for a kind of thing, not the Flat Tire Repair
        valued = values[doc.id] - shared
        if (
            (distinctive and (share >= 0.3 or (len(distinctive) >= 1 and any(len(s) >= 4 for s in distinctive))))
            or (share >= 0.75 and len(matched) >= 2)
            or valued
        ):
            words = sum(1 for m in matched if not m.isdigit())
            score = len(distinctive) + words + len(valued) + bool(valued)
            candidates.append((score, share, frozenset(matched | valued), bool(valued), doc))
    # A product whose matched words are a strict subset of another's is the less specific reading; of the rest,
    # the one named by more of its own words first ("the 11-32T Linkwell cassette" is the cassette, not the
    # Linkwell 11-speed chain)
    kept = [c for c in candidates if not any(c[2] < other[2] for other in candidates)]
    if intent.comparison and len(kept) > 2:
        # "which has the longer cable, the kugel or the werkstatt?": a product named only by a word another one named
        # records as an attribute's label ("Cable length") is the attribute compared, not a third product
        labels = {c[4].id: content_stems(" ".join(f.label for f in c[4].facts)) for c in kept}
        kept = [c for c in kept if not any(c[2] <= labels[o[4].id] for o in kept if o is not c)] or kept
    # a product named by every word of its title ("the pennine aran") is the one named, not one sharing words the
    # question asks with ("what needle size and gauge ...?" and the Needle & Hook Size Gauge)
    whole = [c for c in kept if c[1] >= 1.0 and len(c[2]) >= 2]
    if whole and not intent.comparison:
        kept = whole
    kept.sort(key=lambda c: (-c[0], -c[3], -c[1]))
    if kept and not intent.comparison:
        kept = [c for c in kept if c[0] == kept[0][0]]  # a product named by fewer of its words is not named
    return [doc for *_, doc in kept[:4]]


def _named_value_words(
    asked: frozenset[str], doc: Document, title: frozenset[str], said: set[str], sequence: Sequence[str]
) -> frozenset[str]:
    """The words of `doc`'s option values the question (its content stems `asked`, in order `sequence`; its figures
    `said`) says every word of (figures and units aside), beyond its title's: "16 pieces" in "the 16 piece truffle
    box", "White 33%" in "white choc couverture", "500 g tin" in "the 500g tin"; said with the value's figures, or
    beside a word of the title ("do you send gummies with ice packs?" names no "2-Pack" of the one gummies in packs)."""
    found: set[str] = set()
    beside = {w for n, w in enumerate(sequence) if {*sequence[max(0, n - 1) : n], *sequence[n + 1 : n + 2]} & title}
    for _, values in doc.options:
        for value in values:
            words = value_words(value, title)
            figures = set(re.findall(r"\d+", value))
            if words and words <= asked and ((figures and figures <= said) or words & beside):
                found |= words - title
    return frozenset(found)


_COMPOUND = re.compile(r"[\w'’]+(?:-[\w'’]+)+")  # "In-Store", "Drop-Off", "All-Solid"


def _unsaid_compound_parts(title: str, lower: str) -> frozenset[str]:
    """The stems of the parts of `title`'s hyphenated words that the question (lower-cased) does not write whole, with
    a hyphen, a space or nothing between the parts ("in-store", "in store", "instore")."""
    parts: set[str] = set()
    for match in _COMPOUND.finditer(title):
        pieces = match.group(0).lower().split("-")
        if not re.search(r"\b" + r"[\s-]?".join(map(re.escape, pieces)) + r"\b", lower):
            parts |= content_stems(" ".join(pieces))
    return frozenset(parts)


def _part_of_other_name(text: str, title: str) -> bool:
    """True when the question writes a title word as part of a longer capitalised name the title does not hold."""
    title_words = {w.lower() for w in re.findall(r"[\w'’]+", title)}
    tokens = re.findall(r"[\w'’]+", text)
    for i, token in enumerate(tokens):
        if token.lower() not in title_words:
            continue
        neighbours = tokens[max(0, i - 1) : i] + tokens[i + 1 : i + 2]
        if any(n[:1].isupper() and n.lower() not in title_words and i > 0 for n in neighbours[-1:]):
            return True
    return False


def _attribute_stems(intent: Intent, doc: Document) -> frozenset[str]:
    """The question's content words left after the product's own name and filler words."""
    return intent.stems - _title_stems(doc) - _GENERIC_QUERY_STEMS


# "Keswick", "Betws-y-Coed", "PayPal" (a capital inside a name: "AirPods", "WhatsApp"), "BFPO"
_NAME_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:[A-Z][a-z]+)*(?:[-'][A-Za-z]+)*|[A-Z]{2,})\b")
# Capitalised words that are not names of things a shop may or may not mention.
_NOT_NAMES = word_list("not_names")


def _names_in(text: str) -> list[str]:
    return [m.group(1) for m in _NAME_RE.finditer(text.strip()) if m.group(1) not in _NOT_NAMES]


def _query_names(text: str) -> frozenset[str]:
    """Stems of the proper names a question capitalises mid-sentence ("Keswick"): not its first word, and not
    acronyms, which are as often ordinary terms ("ID", "SPF", "USB")."""
    return frozenset(stem(name) for name in _names_in(text) if not name.isupper())


def _product_words(doc: Document) -> frozenset[str]:
    """Stems of what a product is called and filed under: its title, product type and tags."""
    return content_stems(" ".join([doc.title, doc.product_type or "", *doc.tags]))


def _head(phrase: str) -> str:
    """The stem of a phrase's last word, which names what it is ("bike lights" are lights, not bikes)."""
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", phrase)
    return next(iter(content_stems(words[-1])), "") if words else ""


def _heads(doc: Document) -> frozenset[str]:
    """What a product is, by the last word of its title, product type and tags ("Lumen 800 Front Light",
    "Bike Lights": a light)."""
    return frozenset(_head(text) for text in [doc.title, doc.product_type or "", *doc.tags] if text)


def _kind_stems(doc: Document) -> frozenset[str]:
    """Words that name a product or its kind in merchant text: its product type (a "Kit" names its kind, however
    common a title word "kit" is) and its distinctive title words."""
    kind = content_stems(doc.product_type or "") - _GENERIC_QUERY_STEMS
    # (a vague word names nothing: the "Over" of a "Pour-Over Kettle" is no kind "On EU orders over €150" speaks of)
    return (kind | (_title_stems(doc) - _GENERIC_QUERY_STEMS - _COMMON_TITLE_STEMS)) - _VAGUE_KIND_STEMS


def _without_named_values(text: str, doc: Document) -> str:
    """`text` without the option values it names a variant by ("is the boucle fabric stain resistant?", "is the blue
    one waterproof?"): a value followed by a word of its option's name or by "one", "version"; the rest is asked."""
    out = text
    lines = [line.lower() for line in doc.body.split("\n") if line.strip()]
    for name, values in doc.options:
        heads = "|".join([*(re.escape(w) for w in re.findall(r"[a-z]{3,}", name.lower())), "ones?", "versions?"])
        for value in values:
            if any(_says_only(line, value, values) for line in lines):
                continue  # "Large: 7.5 in, holds about 216 flies": what "the large one" does is recorded for it
            words = value.split()
            last = words[-1] if len(words) > 1 and len(words[-1]) >= 4 else None
            if last and sum(last.lower() in v.lower().split() for v in values) > 1:
                last = None  # "Oatmeal Boucle" by "boucle" only where no other value ends so
            for form in filter(None, (value, last)):
                out = re.sub(rf"\b{re.escape(form)}\s+(?:{heads})\b", "it", out, flags=re.IGNORECASE)
    return out if out != text and content_stems(out) else text


def _says_only(line: str, value: str, values: Sequence[str]) -> bool:
    """`line` (lower case) names `value` and no other of `values`."""

    def names(v: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(v.lower())}(?![\w-])", line) is not None

    return names(value) and not any(names(v) for v in values if v != value and v.lower() not in value.lower())


def _reference_stems(question: str, doc: Document) -> frozenset[str]:
    """The words the question names the product with beyond its title: a word next to the title's words that the
    product's own text uses too ("your SPF 50 sun cream" for "Sunscreen SPF 50", described as "sun cream"). They say
    which product is meant, not what is asked about it; a name, or a word that names an attribute, never is."""
    title = _title_stems(doc)
    own = content_stems(" ".join([doc.body, doc.product_type or "", *doc.tags]))
    tokens = re.findall(r"[\w'-]+", question)
    stems = [next(iter(content_stems(t)), "") for t in tokens]
    inside = [bool(st) and st in title for st in stems]
    changed = True
    while changed:
        changed = False
        for i, st in enumerate(stems):
            near = (i > 0 and inside[i - 1]) or (i + 1 < len(stems) and inside[i + 1])
            # a name ("Shimano SLX") is what is asked about, not how the product is called; the attribute check, the
            # costly one, comes last
            if (
                not inside[i]
                and near
                and st
                and st in own
                and tokens[i].islower()
                and not any(mentions_concept(tokens[i], c.name) for c in CONCEPTS)
            ):
                inside[i] = changed = True
    return frozenset(st for st, named in zip(stems, inside, strict=True) if named and st not in title)
