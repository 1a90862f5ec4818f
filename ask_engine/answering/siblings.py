"""An attribute the question names that the catalogue records for other products, not for the one in view.

"Bed temp for the silk PLA?" where other filaments record "Bed temperature" and the silk PLA only "Nozzle
temperature": the nozzle's figure is the nearest recorded fact, not the answer. The labels come from the shop's own
metafields (`Task.fact_labels`), so the reading holds for any trade's attributes and none is written here."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ask_engine.answering.addressing import stated_kinds
from ask_engine.answering.facts import _key_concepts, fact_text
from ask_engine.answering.nearest import speaks_of_asked
from ask_engine.answering.units import Unit
from ask_engine.language import content_stem_sequence, content_stems, parse_query, text_cue
from ask_engine.types import Document, Fact

# "temp" is "temperature", "max" is "maximum": a shopper's clipped word (three or four letters) stands for the label's
# longer one that starts with it ("under" is a word of its own, not "underwire" clipped)
_CLIPPED = range(3, 5)


# kept by text: the catalogue's labels are read question after question
_stems = lru_cache(maxsize=1 << 14)(content_stem_sequence)


def _same(asked: str, written: str) -> bool:
    return asked == written or (len(asked) in _CLIPPED and len(written) > len(asked) and written.startswith(asked))


def names_label(text: str, label: str) -> bool:
    """`text` says `label`'s words one after another ("bed temp" says "Bed temperature"; "what type of camera does
    it fit" does not say "Fit type")."""
    words, wanted = _stems(text), _stems(label)
    if not wanted:
        return False
    return any(
        all(_same(w, s) for w, s in zip(words[i : i + len(wanted)], wanted, strict=True))
        for i in range(len(words) - len(wanted) + 1)
    )


def unrecorded_label(question: str, doc: Document, labels: Iterable[str]) -> str | None:
    """The catalogue's attribute label the question names (two words or more) that `doc` records no fact under, the
    longest when several; None when the question names none, or names one `doc` records ("is the mounting type over
    the door?" of a product recording its mounting type)."""
    own = {f.label.lower() for f in doc.facts}
    if any(names_label(question, f.label) for f in doc.facts if len(_stems(f.label)) >= 2):
        return None
    named = [label for label in labels if label.lower() not in own and names_label(question, label)]
    if not named:
        return None
    return max(named, key=lambda label: len(_stems(label)))


def same_attribute(label: str, fact: Fact) -> bool:
    """`fact` records what `label` names under another name ("Made in" and "Country of origin" both record where a
    product comes from): the lexicon ties both to one attribute."""
    return bool(_key_concepts(fact.key) & _key_concepts(re.sub(r"\W+", "_", label.lower()).strip("_")))


@lru_cache(maxsize=1 << 12)
def _concepts(text: str) -> frozenset[str]:
    return frozenset(parse_query(text).concepts)


def other_attribute(label: str, asked: Iterable[str]) -> bool:
    """`label` says the attribute asked about only to qualify another: "Weight capacity" (a capacity) for "how much
    does it weigh?" (`asked`, the question's concepts, holds weight), where "Weight" alone is the asked one."""
    wanted = frozenset(asked)
    whole = _concepts(label)
    if not wanted or not whole or whole & wanted:
        return False
    return any(_concepts(word) & wanted for word in re.findall(r"[^\W\d_]+", label))


def answers_asked(unit: Unit, asked: Sequence[str]) -> bool:
    """A unit the ranker chose may answer the attributes the question asks (`asked`, its concepts): not a fact of
    another attribute qualified by an asked one's word (`other_attribute`), nor the product's type, brand or tags
    where they name no attribute asked ("what teas are in the box?" and "Category: … > Tea & Infusions")."""
    if unit.kind == "fact":
        return not other_attribute(unit.label, asked)
    return unit.kind != "identity" or speaks_of_asked(unit.text, asked)


_MEASURED_PART = text_cue("measured_part", re.IGNORECASE)  # "how long is the hand controller cable on the …?"


def measured_part(text: str, naming: frozenset[str]) -> frozenset[str] | None:
    """The words naming the part of the product a measure question asks about ("how long is the hand controller cable
    on the nexstar?" → the stems of "hand controller cable"): the question says whose part it is, the product (a word
    of `naming`, its title, type, tags and option values, or a pronoun), and the part's last word does not name the
    product itself (nor ends a word of `naming`: "the board of it" of a surfboard)."""
    match = _MEASURED_PART.search(text)
    if match is None:
        return None
    owner = match.group("owner").lower()
    words = content_stem_sequence(match.group("part"))
    if not words or not (owner in _POINTING or content_stems(owner) & naming):
        return None
    if words[-1] in naming or any(n.endswith(words[-1]) for n in naming if len(n) > len(words[-1])):
        return None
    return frozenset(words) - naming


_POINTING = frozenset({"it", "this", "that", "these", "those", "them", "one"})


def names_part(text: str, part: frozenset[str] | None) -> bool:
    """`text` (a fact as "Label: value", or a line) states no length or weight, or names a word of the `part` asked
    about, if any: the focal length of a telescope is no length of its hand controller's cable, and "Base weight:
    13 kg" is the base's."""
    return part is None or not stated_kinds(text) & _PHYSICAL or any(_same(p, w) for p in part for w in _stems(text))


_PHYSICAL = frozenset({"length", "weight"})  # the kinds of figure a part has of its own (a duration is the product's)


def of_part(text: str, naming: frozenset[str], facts: list[Fact], units: list[Unit]) -> tuple[list[Fact], list[Unit]]:
    """The `facts` and `units` that may state the measure of the part the question (`text`) asks about, if it names
    one beyond the product (`naming`): "how long is the hand controller cable?" is not answered by the focal length."""
    part = measured_part(text, naming)
    return [f for f in facts if names_part(fact_text(f), part)], [u for u in units if names_part(u.text, part)]
