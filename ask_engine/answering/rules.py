"""The refund policy's rule for some goods: the section about the kind of goods a returns question asks of
("Large furniture: Sofas, beds … can be returned within 14 days. … a collection fee of £59 …"), and the words of a
line that end its noun phrases, which is how a line names goods ("Coffee beans and other food")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ask_engine.answering.query import _GENERIC_QUERY_STEMS, _kind_stems
from ask_engine.answering.sentences import _DURATION, PRODUCT_RULE_BONUS, with_lists
from ask_engine.answering.work import _Unit, _Work
from ask_engine.language import _PRICE_RE, Intent, content_stems, lexicon_section, text_cue, word_stems
from ask_engine.retrieve import AMOUNT_RE
from ask_engine.types import Document

_RETURN_STEMS = word_stems("return_words")
_RETURNED_GOODS = text_cue("returned_goods")
_NOT_GOODS = word_stems("not_goods")  # "return the delivery charge" returns no goods
# Words of store processes, which name no goods ("can I return a gift card?" names gift cards).
_PROCESS_STEMS = word_stems("process_words")
_VAGUE_STEMS = word_stems("vague_words")
# Verbs of "do you take / accept / offer X?": the question is about X alone.
_OFFER_STEMS = word_stems("offer_verbs")


# A section's sentence about some goods names them among its first words ("Sofas, beds and wardrobes can be …").
_SUBJECT_WORDS = 8
# What a sentence gains within its section for carrying the asked figure (a fee for "what does it cost …?"), and
# for each word it shares with the question beyond the goods ("postage", "fee").
_FIGURE_BONUS = 0.12
_SHARED_BONUS = 0.1
_NAMED_BONUS = 0.1


def _kind_section(work: _Work, ranked: list[_Unit], targets: Sequence[Document], intent: Intent) -> list[_Unit] | None:
    """For a returns (or cancelling) question, the refund policy's (or the terms') section about the goods asked of
    (the product in view's kind, or the goods the question returns, lexicon `returned_goods`): its sentence naming
    them ("Sofas, beds, wardrobes and dining tables can be returned within 14 days") or, under a heading naming them
    ("Rugs"), its first; then the section's sentence best answering the rest of the question, a figure of the asked
    kind counting ("… a collection fee of £59 is deducted" for "what does it cost to return a sofa?"), where that is
    another. A section naming the goods with a qualifier neither the question nor the product has ("Made-to-order
    sofas") comes after one naming them plainly. None where no section is about the goods."""
    # (cancelling is asked of the terms too: a "Book Club" section's "cancel at any time and we'll refund …")
    cancel = "cancel" in intent.stems
    if not intent.stems & _RETURN_STEMS and not cancel:
        return None
    if targets:
        kinds = frozenset().union(*(_kind_stems(d) for d in targets))
        if any(d.fact("sale") is not None for d in targets):
            # a product bought at a reduced price is also "sale" goods: the policy's "Sale and clearance items"
            kinds |= _REDUCED_STEMS
    else:  # with none in view, the goods the question returns ("return a sofa", "return postage for a lamp")
        goods = _RETURNED_GOODS.search(intent.lower)
        if goods is None:
            return None
        said = next((g for g in goods.groups() if g), "")  # (the goods as one of the cue's phrasings names them)
        kinds = content_stems(said) - _NOT_GOODS - _PROCESS_STEMS - _GENERIC_QUERY_STEMS - _RETURN_STEMS
        kinds -= _VAGUE_STEMS
    kinds = frozenset(k for k in kinds if not k.isdigit())
    if not kinds:
        return None
    known = intent.stems.union(
        *(content_stems(f"{d.title} {d.product_type or ''} {' '.join(d.tags)} {d.body}") for d in targets)
    )
    sections: dict[str, list[_Unit]] = {}
    for u in ranked:  # best-ranked section first
        if u.evidence.passage.link_type == "refund_policy" or (
            cancel and u.evidence.passage.link_type == "terms_of_service"
        ):
            sections.setdefault(u.evidence.passage.id, []).append(u)
    # the sections about the goods, each with its lead: a section naming them with a qualifier is left out
    plain: list[tuple[_Unit, list[_Unit]]] = []
    for group in sections.values():
        group.sort(key=lambda u: u.position)
        naming_lines = [(u, q) for u in group if (q := _names_kind(u.text, kinds)) is not None]
        naming, qualifiers = naming_lines[0] if naming_lines else (None, frozenset[str]())
        if naming is not None and not qualifiers - known:
            plain.append((naming, group))
        elif kinds & _head_stems(group[0].context):
            # under a heading naming the goods plainly ("Sale and clearance items"), the section is about them, whatever
            # its lines qualify ('Anything marked "Final Sale"'); not under "Made-to-order sofas"
            heading = _names_kind(group[0].context, kinds) if naming is not None else frozenset[str]()
            if heading is not None and not heading - known:
                plain.append((group[0], group))
    if not plain:
        return None  # only "Made-to-order sofas" for a sofa: a rule for some sofas, not for this one
    # the rest of the question, the goods left out, picks the section and its sentence ("what does it cost to
    # return", "if I haven't used them")
    named = kinds & frozenset().union(
        *(
            content_stems(" ".join(lead.text.split()[:_SUBJECT_WORDS])) | content_stems(lead.context)
            for lead, _ in plain
        )
    )
    # with a product in view its own words are all the goods; with none, the words a section names
    strip = kinds if targets else named
    rest = " ".join(w for w in intent.text.split() if not content_stems(w) & strip)
    units = [u for _, group in plain for u in group]
    sims = work.similarity([u.text for u in units], probe=rest)
    asked = intent.stems - strip - _RETURN_STEMS - _GENERIC_QUERY_STEMS
    asks_money = bool(intent.price or _PRICE_RE.search(intent.lower))  # "what does it cost to …"
    fit: dict[int, float] = {}
    for u, sim in zip(units, sims, strict=True):
        figure = (asks_money and AMOUNT_RE.search(u.text)) or (intent.asks_duration and _DURATION.search(u.text))
        shared = len(asked & content_stems(u.text))
        fit[id(u)] = float(sim) + _SHARED_BONUS * shared + (_FIGURE_BONUS if figure else 0.0)
    # (a section whose own line names the goods is about them more surely than one only headed by a name holding them:
    # "Because cheese and other chilled foods are perishable …" before the "Cheese of the Month Club" section)
    lined = {id(lead) for lead, group in plain if lead is not group[0] or _names_kind(lead.text, kinds) is not None}
    lead, group = max(  # the best-ranked section wins a tie
        plain, key=lambda p: max(fit[id(u)] for u in p[1]) + (_NAMED_BONUS if id(p[0]) in lined else 0.0)
    )
    best = max(group, key=lambda u: fit[id(u)])
    chosen = [lead] if best is lead else [lead, best]
    return sorted(with_lists(chosen, group), key=lambda u: u.position)


_REDUCED_STEMS = word_stems("reduced_price_words")


def _names_kind(text: str, kinds: frozenset[str]) -> frozenset[str] | None:
    """Where a sentence names goods of `kinds` among its first words ("Sofas, beds … can be returned"), the words
    qualifying them ("Made-to-order sofas": made, order); None where it names none."""
    words = text.split()[:_SUBJECT_WORDS]
    for i, word in enumerate(words):
        if content_stems(word) & kinds and content_stems(word) <= _head_stems(" ".join(words)):
            before: list[str] = []
            for w in reversed(words[:i]):
                if w.endswith((",", ";", ":")) or not content_stems(w):  # "tools and pots", "such as our …"
                    break
                before.append(w)
            return content_stems(" ".join(before))
    return None


def _head_stems(text: str) -> frozenset[str]:
    """The stems of the words that end a noun phrase of `text`: those not followed by another content word
    ("Coffee beans and other food": beans, food; "Workshop services once ...": services, not workshop). A product's
    tag names its kind only as a head ("food"), not as a word qualifying another thing ("workshop services")."""
    tokens = re.findall(r"[\w'’-]+|[^\w\s]", text)
    out: set[str] = set()
    for i, token in enumerate(tokens):
        stems = content_stems(token)
        if not stems:
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if not (after and after[0].isalnum() and content_stems(after)):
            out |= stems
    return frozenset(out)


def tagged_rules(units: Sequence[_Unit], targets: Sequence[Document]) -> None:
    """Raise the policy lines naming one of the products' own tags, every word of it ("can I send the Muskoka back?"
    of a product tagged "final sale", and "Clearance and final-sale items" among the things that cannot be returned);
    a tag of two words or more, not one naming the product itself or its kind ("custom 823", "riser recliner")."""
    tags = [
        stems
        for d in targets
        for t in d.tags
        if len(stems := content_stems(t) - _GENERIC_QUERY_STEMS) > 1
        and not stems & (content_stems(d.title) | _kind_stems(d))
    ]
    # (a tag of one word says too little: a pump tagged "workshop" has no rule in "Workshop services once the work
    # has been done", and "bulky" none in "… return of a bulky freight item")
    for u in units:
        if u.evidence.passage.kind != "product" and any(s <= content_stems(u.text) for s in tags):
            u.score += PRODUCT_RULE_BONUS


_ALIKE: dict[str, list[str]] = lexicon_section("verbs_alike")


def done_verbs(verb: str) -> str:
    """A pattern for the verb a question asks the time to do ("return"), and the phrasings a policy uses for it
    ("send it back": lexicon `verbs_alike`)."""
    return "(?:" + "|".join([re.escape(verb), *_ALIKE.get(verb.lower(), [])]) + ")"
