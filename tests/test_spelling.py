"""Shoppers' spelling: a slipped word read as the shop's word one edit away ("caffiene" → "caffeine"), and British
and American spellings read as one word ("sulphate-free" finds "sulfate-free"). Unit tests of the reading, then
questions through `Engine.ask` on a small shop indexed with the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.engine import Engine
from ask_engine.language import content_stems, stem
from ask_engine.spelling import spelled
from tests.shop_helpers import ask_plain, inline_engine


def _uses(counts: dict[str, int]) -> Any:
    return lambda word: counts.get(word, 0)


def test_a_slipped_word_is_read_as_the_shops_word_one_edit_away() -> None:
    uses = _uses({"caffeine": 3, "dishwasher": 2, "earl": 1, "grey": 1})
    assert spelled("caffiene in the earl grey?", uses) == "caffeine in the earl grey?"  # two letters swapped
    assert spelled("is it dishwaser safe", uses) == "is it dishwasher safe"  # a letter dropped
    assert spelled("Caffiene?", uses) == "Caffeine?"  # capitalised at the start of a sentence


def test_the_word_the_shop_uses_most_wins() -> None:
    assert spelled("how much is shiping", _uses({"shipping": 12, "shining": 1})) == "how much is shipping"
    assert spelled("how much is shiping", _uses({"shipping": 1, "shining": 12})) == "how much is shining"


def test_english_words_names_and_short_words_are_left_as_typed() -> None:
    uses = _uses({"cheat": 4, "keston": 2, "tent": 3, "mugs": 5})
    assert spelled("is it cheap?", uses) == "is it cheap?"  # English, though the shop never says it
    assert spelled("Do you ship to Kestonn?", uses) == "Do you ship to Kestonn?"  # a name inside a sentence
    assert spelled("a tet", uses) == "a tet"  # fewer than four letters
    assert spelled("mugz2 or BRT-mugz", uses) == "mugz2 or BRT-mugz"  # codes
    # a word one edit from nothing the shop uses stays as typed
    assert spelled("is it fragrantt free", uses) == "is it fragrantt free"


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("sulphate", "sulfate"),
        ("colours", "colors"),
        ("flavoured", "flavored"),
        ("moisturiser", "moisturizer"),
        ("organised", "organized"),
        ("analyse", "analyze"),
        ("litres", "liters"),
        ("millilitre", "milliliter"),
        ("centre", "center"),
        ("catalogue", "catalog"),
        ("cancelled", "canceled"),
        ("travelling", "traveling"),
        ("grey", "gray"),
        ("jewellery", "jewelry"),
        ("enquiries", "inquiries"),
        ("fibre", "fiber"),
        ("aluminium", "aluminum"),
        ("instalments", "installments"),
    ],
)
def test_british_and_american_spellings_stem_alike(british: str, american: str) -> None:
    assert stem(british) == stem(american)


def test_the_spelling_rules_leave_other_words_apart() -> None:
    # "size" is not read as "sis", "hour"/"four"/"tour" keep their -our, a label is not a "labell"
    assert len({stem(w) for w in ("size", "sis", "hour", "four", "tour", "pour", "label", "labels")}) == 7
    assert stem("prize") != stem("price")


def test_contractions_typed_without_apostrophes_carry_no_meaning() -> None:
    assert content_stems("whats the ph of it") == content_stems("what's the ph of it") == {"ph"}
    assert content_stems("im not sure, dont know") == content_stems("not sure know")


_PRODUCTS = ",".join(
    f'{{"id":{pid},"title":"{title}","handle":"p{pid}","body_html":"{body}","product_type":"{kind}",'
    f'"variants":[{{"id":{pid}1,"title":"Default Title","price":"12.00"}}]}}'
    for pid, title, body, kind in (
        (
            1,
            "Rooibos Chai",
            "<p>All the warm spice of a masala chai on a rooibos base: cinnamon, ginger, cardamom and clove.</p>"
            "<ul><li>Naturally caffeine free</li><li>Steep 5 to 7 minutes in boiling water</li>"
            "<li>Lovely with a splash of oat milk</li><li>Loose leaf, 100 g tin</li></ul>",
            "Tea",
        ),
        (
            2,
            "Bond Repair Shampoo",
            "<p>For hair that has been bleached, coloured or heat-styled. A gentle, sulfate-free (no SLS/SLES) cleanse"
            " with a bond-building complex and rice protein. Smells of fig and vetiver.</p>"
            "<ul><li>Safe for colour-treated and keratin-treated hair</li>"
            "<li>The 1 L refill pouch tops up the 500 ml pump bottle twice</li></ul>",
            "Shampoo",
        ),
        (
            3,
            "Glass Pour-Over Carafe",
            "<p>Borosilicate glass carafe with a cork collar, 600 ml, for two to four cups.</p>"
            "<ul><li>Fits most cone drippers</li><li>Safe on a gas hob with a heat diffuser</li>"
            "<li>The cork collar comes off for cleaning; hand wash only, the cork cannot go in a dishwasher</li></ul>",
            "Carafe",
        ),
    )
)
FILES = {
    "shop.toml": '[shop]\nname = "Kettle & Leaf"\nurl = "https://kettle.example"\ncurrency = "USD"\n'
    'gid_namespace = "kl"\n',
    "products.json": '{"products":[' + _PRODUCTS + "]}",
}
CHAI, SHAMPOO, CARAFE = (f"gid://kl/Product/{n}" for n in (1, 2, 3))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("kettle") / "shop", FILES, embedder)


@pytest.mark.parametrize(
    ("question", "ids", "wanted"),
    [
        ("is the chai caffiene free?", [CHAI], "caffeine free"),
        ("is this sulphate free? i have balayage", [SHAMPOO], "sulfate-free"),
        ("can the carafe go in the dishwaser?", [CARAFE], "hand wash only"),
    ],
)
def test_questions_with_slipped_or_british_words_are_answered_from_the_shops_text(
    engine: Engine, question: str, ids: list[str], wanted: str
) -> None:
    answer = ask_plain(engine, question, *ids)
    assert wanted in answer, answer
    assert "not recorded" not in answer, answer
