"""A product's overview: what "tell me about it" answers, from the first lines of its description and its price."""

from __future__ import annotations

from ask_engine.answering.facts import _COMMERCE_KEYS, _fact_sentence
from ask_engine.answering.sentences import _looks_like_item
from ask_engine.answering.work import MAX_CHARS, _Answer, _cites_for, _is_untrusted, _Work
from ask_engine.faithfulness import split_sentences
from ask_engine.types import Document


def _overview(work: _Work, doc: Document) -> _Answer:
    answer = _Answer()
    answer.use(doc.id)
    description = [s for s in split_sentences(doc.body) if not _is_untrusted(s)]
    # the first two sentences; a lead-in among them ("What's inside:") brings the items of its list that fit, or is
    # left out: never quoted without its list
    picked: list[str] = []
    listing = False
    for n, sentence in enumerate(description):
        if (n >= 2 and not (listing and _looks_like_item(sentence.strip()))) or len(picked) >= 6:
            break
        if sum(len(s) for s in picked) + len(sentence) > MAX_CHARS - 80:
            break
        picked.append(sentence)
        listing = listing or sentence.rstrip().endswith(":")
    while picked and picked[-1].rstrip().endswith(":"):
        picked.pop()
    # a lead-in and its items are one sentence, as a list unit is ("What's inside: Hand cream, 50 ml; Twine; …")
    merged: list[str] = []
    listing = False
    for sentence in picked:
        if listing:
            merged[-1] += f"{' ' if merged[-1].endswith(':') else '; '}{sentence.strip().rstrip('.')}"
            continue
        merged.append(sentence.strip())
        listing = sentence.rstrip().endswith(":")
    if listing:
        merged[-1] += "."
    for sentence in merged:
        answer.claim(sentence, _cites_for(work.task, doc, sentence), doc=doc.id)
    price = doc.fact("sale") or doc.fact("price")
    if price is not None:
        _fact_sentence(answer, work, doc, price, lead=False)
    if not answer.sentences:
        for fact in [f for f in doc.facts if f.key not in _COMMERCE_KEYS][:2]:
            _fact_sentence(answer, work, doc, fact, lead=False)
    return answer
