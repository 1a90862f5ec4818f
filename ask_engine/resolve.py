"""Resolution: request ids, products named in the query, and conversation history → the resources a question is about."""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ask_engine.language import OWNED_AGE_RE, text_cue, value_words
from ask_engine.plaintext import fold
from ask_engine.sources import alias_key
from ask_engine.spelling import english_word
from ask_engine.types import Resolution, Turn, Unresolved

if TYPE_CHECKING:
    from ask_engine.indexes import ShopIndex

# Words that never identify a product on their own.
_STOPWORDS = frozenset(
    """
a an the and or of for with in on at to by from by into onto over under up out off per
is are was were be been being do does did has have had can could will would should shall may might must
i me my we us our you your he she it its they them their this that these those there here what which who whom
how when where why whether if than then so not no yes any some all each every both either neither one ones
about as also just only very more most much many such own same other another new x vs versus
""".split()  # noqa: SIM905 - a word list reads best as text
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# Words that point back at what the conversation was just about.
_BACK_REFERENCE = re.compile(
    r"\b(?:it|its|it's|itself|this|that|these|those|they|them|their|theirs|one|ones|same|either|both|"
    r"the\s+(?:product|item|one|ones|pair|former|latter|first|second|last|other))\b"
    r"|\bhow\s+much\b|\bwhat\s+about\b|\bhow\s+about\b|\bwhat\s+else\b|\bany\s+other\b",
    re.IGNORECASE,
)
_CONTINUATION = re.compile(r"^\s*(?:and|also|plus|but|or|what\s+about|how\s+about|ok(?:ay)?|so|then)\b", re.IGNORECASE)
_SHORT_FOLLOW_UP_WORDS = 3
# A single title word names its product when it is at least this long and at most this many documents use it.
_NAME_MIN_CHARS = 4
_NAME_MAX_DOCUMENTS = 3
# with a product fixed by id, the share of another title the question must use (more than), beyond the words the
# fixed product's title explains, to name that one too
_NAMED_COVER = 0.5
# a model code: letters and digits in one word ("c3s", "wh-1000xm5"), not a measure ("65w", "250g", "10ml")
_CODE = re.compile(r"(?=[\w-]*\d)(?=[\w-]*[a-z])[a-z0-9-]{2,}")
_MEASURE_CODE = re.compile(
    r"\d+(?:[.,]\d+)?(?:mm|cm|m|km|in|ft|g|kg|mg|lb|lbs|oz|ml|cl|l|w|kw|v|mah|wh|gb|tb|mb|hz|pc|pcs|pk|x|p|k|th|st|nd|rd)"
)


def _stem(word: str) -> str:
    """Possessives and English plurals folded, so "boots" and "boot's" match a title's "Boot"."""
    word = re.sub(r"['’]s?$", "", word)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


# "my iPhone 15 Pro", "our Galaxy Watch 6": what the buyer owns, up to a word that ends the phrase
_OWNED = re.compile(
    r"\b(?:my|our)\s+(?:(?!(?:with|and|or|for|to|in|on|at|from|of|by|is|are|was|does|do|did|will|would|can|could|"
    r"if|when|that|which|but|so)\b)[\w'’.+-]+\s*){1,5}",
    re.IGNORECASE,
)


def _tokens(text: str) -> list[str]:
    folded = fold(unicodedata.normalize("NFKC", text)).casefold()
    return [_stem(w) for w in _WORD.findall(folded) if w not in _STOPWORDS and _stem(w) not in _STOPWORDS]


_CAPITALISED = re.compile(r"(?<![.!?:;\n]\s)(?<!^)\b[A-Z][\w'’]*")


def _capitalised(text: str) -> set[str]:
    """Tokens written with a capital inside a sentence (names), none when the text is shouted in capitals."""
    letters = [c for c in text if c.isalpha()]
    if letters and sum(c.isupper() for c in letters) > 0.6 * len(letters):
        return set()
    found: set[str] = set()
    for match in _CAPITALISED.finditer(text.strip()):
        found.update(_tokens(match.group()))
    return found


@dataclass(frozen=True)
class _Title:
    doc_id: str
    tokens: frozenset[str]
    # the words of each option value beyond the title's (figures and units aside): "500 g tin" → {"tin"}
    values: tuple[frozenset[str], ...] = ()


class TitleMatcher:
    """Finds products a query names by title ("Is the Marsh Rain Boot waterproof?"), without ids.

    A product is named when the query holds its whole title (stopwords aside), or at least two of its title words
    including one that few titles share (a distinctive word such as a model name), or one title word written as a
    name: capitalised inside the question, in this product's title alone, and hardly used elsewhere in the shop
    ("Where is the Pinecrest made?"; never "gift" or "bottle", nor "great" in "Is it a great tent?").
    Plurals and possessives match.
    """

    def __init__(self, index: ShopIndex) -> None:
        self._titles = [
            _Title(
                doc.id,
                tokens := frozenset(_tokens(doc.title)),
                tuple(w for _, values in doc.options for v in values if (w := value_words(v, tokens, _tokens))),
            )
            for doc in index.documents.values()
            if doc.kind == "product" and doc.title.strip()
        ]
        df: dict[str, int] = {}
        for title in self._titles:
            for token in title.tokens:
                df[token] = df.get(token, 0) + 1
        self._df = df
        self._by_id = {t.doc_id: t.tokens for t in self._titles}
        self._kinds = {d.id: frozenset(_tokens(d.product_type or "")) for d in index.documents.values()}
        # A word is distinctive when it names only a handful of the shop's products, and is no word of the shop's own
        # name: that is its trade ("cloth nappies" at "Little Bundle Cloth Co" names no "Cloth Nappy Starter Bundle")
        self._distinctive_df = max(2, math.ceil(0.05 * len(self._titles)))
        self._trade = frozenset(_tokens(index.shop.name))
        # How many documents use each unique title word anywhere: a model name stays within its product (and a page
        # or two mentioning it); an ordinary word spreads.
        unique = {t for t, n in df.items() if n == 1 and len(t) >= _NAME_MIN_CHARS and not t.isdigit()}
        spread: dict[str, int] = dict.fromkeys(unique, 0)
        if unique:
            for doc in index.documents.values():
                text = " ".join([doc.title, *(p.text for p in index.passages_of(doc.id))])
                for token in unique.intersection(_tokens(text)):
                    spread[token] += 1
        self._names = frozenset(t for t, n in spread.items() if n <= _NAME_MAX_DOCUMENTS)
        # a model code in one title ("C3S", "2C1A"), however it is typed: letters and digits together name a product
        self._codes = frozenset(
            t for t, n in df.items() if n == 1 and _CODE.fullmatch(t) and not _MEASURE_CODE.fullmatch(t)
        )

    def distinctive(self, token: str) -> bool:
        return 0 < self._df.get(token, 0) <= self._distinctive_df and token not in self._trade

    def names_in(self, query: str) -> frozenset[str]:
        """The title words `query` writes as names (capitalised, in one product's title, hardly used elsewhere), and
        those no English word list holds however they are written ("the kugel or the werkstatt?")."""
        return self._names & (
            frozenset(_capitalised(query))
            | frozenset(t for t in _tokens(query) if t in self._names and not english_word(t))
        )

    def title_words(self, doc_id: str) -> frozenset[str]:
        return self._by_id.get(doc_id, frozenset())

    def candidates(self, query: str, *, codes: bool = True) -> list[tuple[str, float, frozenset[str]]]:
        """(doc_id, title coverage, matched words) for every product the query names (by a model code too, with
        `codes`)."""
        words = set(_tokens(query))
        if not words:
            return []
        names = self.names_in(query) | (self._codes & words if codes else frozenset())
        # the words as written: "e-bikes" is one word, however many parts it reads as
        written = [frozenset(_tokens(w)) for w in query.split()]
        found: list[tuple[str, frozenset[str], float]] = []
        for title in self._titles:
            if not title.tokens:
                continue
            matched = title.tokens & words
            if not matched:
                continue
            whole = matched == title.tokens
            named = len({w & matched for w in written} - {frozenset()}) >= 2 and any(
                self.distinctive(t) for t in matched
            )
            if whole or named or bool(matched & names):
                # an option value it says beside the title's words names the product further ("the 500g tin of hot
                # chocolate" is the drinking chocolate sold in a "500 g tin", not the hot chocolate bombes)
                valued = frozenset().union(*(v for v in title.values if v <= words))
                found.append((title.doc_id, matched | valued, len(matched) / len(title.tokens)))
        # The query names the product whose title it covers best: "Marsh Rain Boot" is not also a mention of
        # "Marsh Rain Boot Liner", and words that only match a subset of another match do not count.
        best_cover: dict[frozenset[str], float] = {}
        for _, matched, cover in found:
            best_cover[matched] = max(best_cover.get(matched, 0.0), cover)
        all_sets = list(best_cover)
        # words several titles share, none of them whole, that are all words of their kind name the kind and not
        # one of them ("how much to resole a pair of climbing shoes?" at a shop with two, typed Climbing Shoes; not
        # "the Langdale hiking boots", the men's and the women's)
        sharing = Counter(matched for _, matched, _ in found)
        kept: list[tuple[str, float, frozenset[str]]] = []
        for doc_id, matched, cover in found:
            kind = sharing[matched] > 1 and best_cover[matched] < 1 and matched <= self._kinds.get(doc_id, frozenset())
            if cover < best_cover[matched] or kind:
                continue
            if any(matched < other for other in all_sets):
                continue
            kept.append((doc_id, cover, matched))
        return kept


_MATCHERS: OrderedDict[tuple[int, str], TitleMatcher] = OrderedDict()
_MATCHERS_LOCK = threading.Lock()
_MATCHERS_MAX = 8


def title_matcher(index: ShopIndex) -> TitleMatcher:
    """The (cached) title matcher of an open index."""
    key = (id(index), str(getattr(index, "path", "")))
    with _MATCHERS_LOCK:
        matcher = _MATCHERS.get(key)
        if matcher is not None:
            _MATCHERS.move_to_end(key)
            return matcher
    matcher = TitleMatcher(index)
    with _MATCHERS_LOCK:
        _MATCHERS[key] = matcher
        while len(_MATCHERS) > _MATCHERS_MAX:
            _MATCHERS.popitem(last=False)
    return matcher


_PAID_WITH = text_cue("paid_with", re.IGNORECASE)


def mentioned_products(query: str, index: ShopIndex, *, named: Sequence[str] = ()) -> list[str]:
    """Product document ids the query names by title, best match first (ties broken by BM25).

    `named`: documents the request already names by id. Words their titles explain are taken to mean them
    ("Is the Aldergrove jacket warm?" with the women's Aldergrove's id is not also about the men's).
    """
    matcher = title_matcher(index)
    # "can my 17 year old son sign for it?" names a person by age, not the "12 Year Old" whisky
    query = OWNED_AGE_RE.sub(" ", query)
    # "I paid with a gift card, can I return the gloves?": what the asker paid with is no product asked about
    query = _PAID_WITH.sub(" ", query)
    if named:
        # with the product fixed by id, "will this cable work with my iPhone 15?" names the buyer's own phone, not
        # the shop's iPhone 15 case
        query = _OWNED.sub(" ", query)
    # with a product fixed by id, a model code in the question is more often the buyer's own device's ("will it fit
    # my S24?") than another product's name
    candidates = matcher.candidates(query, codes=not named)
    if named and candidates:
        words = set(_tokens(query))
        explained = [matcher.title_words(d) & words for d in named]
        candidates = [c for c in candidates if not any(c[2] <= seen for seen in explained if seen)]
        # with the product fixed by id, another is named only by most of its title or by a name ("is the mist
        # fragrance free?" is not about the "Oat Cream Cleanser – Fragrance Free"; "is it lighter than the
        # Pinecrest?" is about the Pinecrest)
        names = matcher.names_in(query)
        # (... nor by a figure the named product's own versions give: "10kg mealworms in stock?" of the mealworms sold
        # in 10 kg bags is not about the "Layer Mash 10kg")
        values = _value_words(index, named)
        seen = frozenset().union(*explained) | values

        def names_it(doc_id: str, matched: frozenset[str]) -> bool:
            title = matcher.title_words(doc_id)
            return len(matched - seen) > _NAMED_COVER * len(title) or bool(matched & names - values)

        candidates = [c for c in candidates if names_it(c[0], c[2])]
    if not candidates:
        return []
    lexical: dict[str, float] = {}
    if len(candidates) > 1:
        for hit in index.lexical.search(query, max(50, 4 * len(candidates))):
            passage = index.passage_by_id.get(hit.passage_id)
            if passage is not None:
                lexical[passage.doc_id] = max(lexical.get(passage.doc_id, 0.0), hit.score)
    ranked = sorted(candidates, key=lambda c: (-c[1], -len(c[2]), -lexical.get(c[0], 0.0)))
    return [doc_id for doc_id, _, _ in ranked]


def _value_words(index: ShopIndex, doc_ids: Sequence[str]) -> frozenset[str]:
    """The words of the option values of the products `doc_ids`, a figure and its unit also as one ("10 kg", "10kg")."""
    docs = [index.documents[d] for d in doc_ids if d in index.documents]
    values = " ".join(v for doc in docs for _, vs in doc.options for v in vs)
    return frozenset(_tokens(values)) | frozenset(_tokens(_FIGURE_UNIT.sub(r"\1\2", values)))


_FIGURE_UNIT = re.compile(r"(\d)\s+([^\W\d_])")


def refers_back(query: str) -> bool:
    """True when the query leans on the previous turn: a pronoun, "how much", a leading "and ...", or very short."""
    text = query.strip()
    if not text:
        return False
    if _BACK_REFERENCE.search(text) or _CONTINUATION.match(text):
        return True
    return len(_WORD.findall(text.casefold())) <= _SHORT_FOLLOW_UP_WORDS


_AFTER_DEMONSTRATIVE = (
    r"(?=\s*(?:[?.!,;:]|$)|\s+(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|come|comes|"
    r"cost|costs|fit|fits|run|runs|work|works|weigh|weighs|include|includes|need|needs|take|takes|last|lasts|in|on|"
    r"for|with|from|at|to|available)\b)"
)
_REFERENCES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:it|that|this)['’]s\b", re.IGNORECASE), "{title} is"),
    (re.compile(r"\b(?:they|these|those)['’]re\b", re.IGNORECASE), "{title} are"),
    (re.compile(r"\b(?:its|their)\b", re.IGNORECASE), "{title}'s"),
    (re.compile(r"\b(?:it|they|them)\b", re.IGNORECASE), "{title}"),
    (re.compile(rf"\b(?:this|that|these|those)\b{_AFTER_DEMONSTRATIVE}", re.IGNORECASE), "{title}"),
)


def expand_follow_up(query: str, titles: Sequence[str]) -> str:
    """A follow-up made only of small words, with its pronouns replaced by what they refer to ("and how much is
    it?" → "and how much is the Marsh Rain Boot?"), so retrieval and answering have a subject.

    A follow-up with words of its own ("does it come in purple?") is left alone: those words are what it asks
    about, and a title's words ("Waterproof Jacket") would only blur them.
    """
    names = [t.strip() for t in titles if t.strip()][:3]
    if not names or not query.strip() or _tokens(query):
        return query
    subject = " and ".join(n if n.casefold().startswith("the ") else f"the {n}" for n in names)
    text = query
    for pattern, template in _REFERENCES:
        text = pattern.sub(template.format(title=subject).replace("\\", "\\\\"), text)
    return text


def _from_history(history: Sequence[Turn], index: ShopIndex) -> tuple[str, ...]:
    """The documents of the latest turn that had any; its products when it named products, else all of them."""
    for turn in reversed(history):
        known = [d for d in dict.fromkeys(turn.doc_ids) if d in index.documents]
        if not known:
            continue
        products = [d for d in known if index.documents[d].kind == "product"]
        return tuple(products or known)
    return ()


def _lookup(raw: str, index: ShopIndex) -> tuple[str, str | None] | None:
    """An id's target: the URL with its #anchor first (FAQ entries share a page URL), then without it."""
    for key in dict.fromkeys((alias_key(raw, fragment=True), alias_key(raw))):
        if key is not None and key in index.aliases:
            return index.aliases[key]
    return None


def resolve(
    ids: Sequence[str],
    index: ShopIndex,
    *,
    query: str = "",
    history: Sequence[Turn] = (),
) -> Resolution:
    """What the question is about: ids first (request order), then products named in the query; with neither, the
    previous turn's resources when the query refers back to them."""
    doc_ids: list[str] = []
    variants: list[str] = []
    unresolved: list[Unresolved] = []
    for i, raw in enumerate(ids):
        target = _lookup(raw, index) if isinstance(raw, str) else None
        if target is None or target[0] not in index.documents:
            unresolved.append(Unresolved(path=f"$.ids[{i}]", value=raw if isinstance(raw, str) else str(raw)))
            continue
        doc_id, variant_gid = target
        if doc_id not in doc_ids:
            doc_ids.append(doc_id)
        if variant_gid and variant_gid not in variants:
            variants.append(variant_gid)
    mentioned = (
        [d for d in mentioned_products(query, index, named=doc_ids) if d not in doc_ids] if query.strip() else []
    )
    doc_ids.extend(mentioned)
    from_history = False
    if not doc_ids and history and refers_back(query):
        doc_ids = list(_from_history(history, index))
        from_history = bool(doc_ids)
    return Resolution(
        doc_ids=tuple(doc_ids),
        variant_gids=tuple(variants),
        from_history=from_history,
        unresolved=tuple(unresolved),
        mentioned_doc_ids=tuple(mentioned),
    )
