"""language: question reading, the attribute lexicon, stems and countries (pure functions, no model)."""

from __future__ import annotations

import pytest

from ask_engine.language import (
    content_stems,
    country_codes_in,
    country_name,
    fact_key_matches,
    group_members,
    join_and,
    mentions_concept,
    parse_query,
    third_person,
    with_shop_synonyms,
)


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("Do you ship to Norway?", ("NO",)),
        ("do you deliver to the uk", ("GB",)),
        ("Can I get it sent to Northern Ireland?", ("GB",)),  # not Ireland
        ("Shipping to the USA?", ("US",)),
        ("Is it in stock in the US?", ("US",)),
        ("ship to Papua New Guinea", ("PG",)),  # not Guinea
        ("How much is delivery to NZ?", ("NZ",)),
        ("Can you send it to us?", ()),  # the pronoun
        ("IS IT WATERPROOF", ()),  # capitals that are also English words
        ("Do you deliver to South Korea?", ("KR",)),
    ],
)
def test_countries_in_a_question(text: str, codes: tuple[str, ...]) -> None:
    assert country_codes_in(text, query=True) == codes


def test_countries_in_merchant_text_keep_their_order_and_read_demonyms() -> None:
    row = "Destination: EU Zone 1, Countries: Ireland, France, Germany, Netherlands, Belgium, Luxembourg."
    assert country_codes_in(row) == ("IE", "FR", "DE", "NL", "BE", "LU")
    assert country_codes_in("Canadian orders arrive in 6-9 business days.") == ("CA",)
    assert country_codes_in("Addresses in Northern Ireland and the Isle of Man") == ("GB", "IM")
    assert country_codes_in("Our partners in North America") == ()


def test_region_groups_are_read_only_when_the_text_names_them() -> None:
    groups = group_members("EU: for orders of €150 or less we collect EU VAT.")
    assert set(groups) == {"eu"} and "FR" in groups["eu"] and "NO" not in groups["eu"]
    assert "NO" in group_members("We deliver across Europe.")["europe"]
    assert "JP" in group_members("We ship worldwide.")["worldwide"]
    assert group_members("Every parcel is tracked.") == {}


def test_country_names_read_in_a_sentence() -> None:
    assert country_name("NO") == "Norway"
    assert country_name("GB") == "the United Kingdom"
    assert country_name("ZZ") == "ZZ"


@pytest.mark.parametrize(
    ("query", "concepts"),
    [
        ("Is the Tarn Wellington Boot waterproof?", ("waterproof",)),
        ("What is it made of?", ("material",)),
        ("How heavy is it?", ("weight",)),
        ("Can I put it in the washing machine?", ("care",)),
        ("Where is it made?", ("origin",)),
        ("Does it contain nuts?", ("ingredients", "allergens")),  # in the order the question says them
        ("Is it warm enough for winter camping?", ("warmth",)),
        ("How long does it burn?", ()),  # no lexicon word: matched against the shop's own fact labels
        # "nuts" in an idiom or hardware asks about no allergen (a blind probe shop: "will it tip over when my cat
        # goes nuts on it?" was answered "The shop has not recorded the allergens …")
        ("Will it tip over when my cat goes nuts on it?", ()),
        ("Are the wheel nuts included?", ("contents",)),
        ("Does it come with nuts and bolts?", ("contents",)),
        ("Any tree nuts in it?", ("allergens",)),
    ],
)
def test_lexicon_reads_the_attribute_asked(query: str, concepts: tuple[str, ...]) -> None:
    assert parse_query(query).concepts == concepts


def test_question_shapes() -> None:
    price = parse_query("and how much is it?")
    assert price.price and not price.yes_no and price.wh == "how much"
    weight = parse_query("How much does it weigh?")
    assert not weight.price and weight.concepts == ("weight",)
    stock = parse_query("Is size 42 in stock?")
    assert stock.stock and stock.yes_no and "42" in stock.numbers
    colour = parse_query("Do they come in blue?")
    assert colour.options and colour.colours == ("blue",)
    ship = parse_query("Do you ship to Norway?")
    assert ship.shipping and ship.shipping_place and ship.countries == ("NO",)
    tracking = parse_query("How do I track my delivery?")
    assert tracking.shipping and not tracking.shipping_place
    assert not parse_query("What's the capital of France?").shipping
    assert parse_query("Can I return these boots?").policy
    assert parse_query("Can I return these boots?").permission_verb == "return"
    assert parse_query("Do you sell tents?").catalogue
    assert parse_query("Which is warmer, the Helvellyn or the Glencoe?").comparison


def test_stems_fold_plurals_endings_and_everyday_synonyms() -> None:
    assert content_stems("Do you have shops?") == content_stems("stores")
    assert content_stems("shipping") == content_stems("delivery") == content_stems("postage")
    assert content_stems("knives") == content_stems("knife")
    assert "down" in content_stems("a down jacket")  # a meaningful word in a shop, unlike a general stopword list
    assert content_stems("what is the") == frozenset()


def test_fact_keys_match_whole_parts() -> None:
    assert fact_key_matches("waterproof_rating", "waterproof")
    assert fact_key_matches("material", "material")
    assert not fact_key_matches("waterproofing_notes", "waterproof")
    # a part in the plural is the same attribute: `num_batteries` records the battery
    assert fact_key_matches("num_batteries", "battery")
    assert fact_key_matches("gift_boxes", "box")
    assert not fact_key_matches("packages", "age")
    assert not fact_key_matches("num_batteries", "battery_life")


def test_small_phrasing_helpers() -> None:
    assert [third_person(v) for v in ("fit", "wash", "carry", "have", "go", "stay")] == [
        "fits",
        "washes",
        "carries",
        "has",
        "goes",
        "stays",
    ]
    assert join_and(["a"]) == "a"
    assert join_and(["a", "b", "c"]) == "a, b and c"


def test_how_much_of_a_thing_is_needed_is_not_a_price_question() -> None:
    from ask_engine.language import parse_query

    assert not parse_query("How much do I need for a road tire?").price
    assert not parse_query("How much does it hold?").price
    assert parse_query("How much does it cost?").price
    assert parse_query("How much is the boot?").price


SYNONYMS = (("wellington", ("wellies", "welly")), ("sun cream", ("sunscreen", "sun block")))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Are the Wellies waterproof?", "Are the Wellies (wellington) waterproof?"),
        ("is SUN  BLOCK ok for kids", "is SUN  BLOCK (sun cream) ok for kids"),
        ("wellies or a welly?", "wellies (wellington) or a welly (wellington)?"),
        ("the wellington wellies", "the wellington wellies"),  # the shop's word is already there
        ("wellieshop returns", "wellieshop returns"),  # whole words only
        ("do sunscreens expire?", "do sunscreens (sun cream) expire?"),  # the plural of a listed word
        ("", ""),
    ],
)
def test_a_shops_own_word_is_read_beside_the_synonym_a_shopper_used(text: str, expected: str) -> None:
    assert with_shop_synonyms(text, SYNONYMS) == expected
    assert with_shop_synonyms(text, ()) == text


@pytest.mark.parametrize(
    ("text", "concept", "expected"),
    [
        ("For ages 3 years & up.", "age", True),
        ("Suitable for 18 months and over.", "age", True),
        ("Would a child of 18 months enjoy it?", "age", True),
        ("Does it smell like a real baby?", "age", False),  # a likeness, not who it is for
        ("Can I use it when it's raining?", "waterproof", True),
        ("How do I make a rainbow loom bracelet?", "waterproof", False),  # a rainbow is not rain
        ("How much does it hold?", "capacity", True),
        ("How much weight can the wagon hold?", "capacity", True),
        ("How much weight can the wagon hold?", "weight", False),  # what it carries, not what it weighs
        ("What is the weight limit?", "capacity", True),
        ("How well is it holding up?", "capacity", False),  # wear, not what it holds
        ("Can this board light up at night?", "weight", False),  # it glows; it is not light to carry
        ("Is it light enough to carry?", "weight", True),
        ("Is the package light?", "weight", True),
        ("Is this an LED light?", "weight", False),  # a lamp, not a weight
        ("Is the light beneath bright enough to trace with?", "weight", False),
        ("4 brand new c batteries and it's not turning on?", "brand", False),  # new, not who makes it
        ("Is it a brand-new item?", "brand", False),
        ("What brand is the motor?", "brand", True),
        ("Who is this by?", "brand", True),
        ("Who are these made by?", "brand", True),
        ("Who is this for?", "brand", False),
        ("Is it tested on animals?", "vegan", True),
        ("Does it contain animal products?", "vegan", True),
        ("What sort of animal is this for?", "vegan", False),  # which pet, not what it is made of
        ("Does it come with animal figures?", "vegan", False),
    ],
)
def test_attribute_cues_read_everyday_phrases(text: str, concept: str, expected: bool) -> None:
    assert mentions_concept(text, concept) is expected


@pytest.mark.parametrize(
    ("query", "stock"),
    [
        ("Any left?", True),
        ("How many are left in size 9?", True),
        ("Have you got any left in blue?", True),
        ("Can this be left outside?", False),  # where it may stay, not how many remain
        ("Can it be left plugged in overnight?", False),
        ("Does the left shoe run small?", False),
        ("Is it for left-handed people?", False),
    ],
)
def test_left_reads_as_stock_only_when_it_asks_what_remains(query: str, stock: bool) -> None:
    assert parse_query(query).stock is stock
