"""General faults two probe shops found (written by someone who had not read the answerer): a part asking only for a
figure after a question about a product the shop does not sell ("…? how much"), a policy sentence naming the
product in view among others, and measures the lexicon did not know (wavelengths, decibels). A small shop indexed
with the real embedding model, asked through `Engine.ask`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ask_engine.answering.addressing import asked_measures
from ask_engine.answering.query import _question_parts
from ask_engine.engine import Engine
from tests.shop_helpers import ask_plain, inline_engine

_PRODUCTS = ",".join(
    f'{{"id":{pid},"title":"{title}","handle":"p{pid}","body_html":"{body}","product_type":"{kind}",'
    f'"variants":[{{"id":{pid}1,"title":"Default Title","price":"{price}"}}]{extra}}}'
    for pid, title, body, kind, price, extra in (
        (
            1,
            "Nordvik C64 Flat Burr Grinder",
            "<p>Single-dose flat burr grinder with stepless adjustment and retention under 0.2 g.</p>",
            "Grinder",
            "549.00",
            ',"metafields":[{"namespace":"specs","key":"burrs","type":"single_line_text_field",'
            '"value":"64 mm flat, hardened steel"}]',
        ),
        (
            2,
            "Nordvik Brio 40 Conical Burr Grinder",
            "<p>An easy first grinder for drip and pour over, with 40 grind settings.</p>",
            "Grinder",
            "159.00",
            "",
        ),
        (
            3,
            "Lumaskin LED Light Therapy Mask",
            "<p>Three light modes for ten-minute sessions.</p><table><tr><th>Mode</th><th>Wavelength</th></tr>"
            "<tr><td>Red</td><td>633 nm</td></tr><tr><td>Near-infrared</td><td>830 nm</td></tr></table>"
            "<ul><li>Rechargeable, about 8 sessions per charge</li><li>CE marked</li></ul>",
            "Beauty device",
            "249.00",
            "",
        ),
        (4, "Lake Superior Stoneware Mug", "<p>Handmade stoneware mug, 12 fl oz.</p>", "Mug", "34.00", ""),
    )
)
FILES = {
    "shop.toml": '[shop]\nname = "Copper Kiln"\nurl = "https://copperkiln.example"\ncurrency = "USD"\n'
    'gid_namespace = "ck"\n',
    "products.json": '{"products":[' + _PRODUCTS + "]}",
    "faq.yaml": """- question: Can I use the Nordvik grinders outside the US?
  answer: >-
    The Nordvik C64 is 120 V only and won't work on 220-240 V power without a heavy-duty step-down transformer,
    which voids the warranty. The Nordvik Brio 40 has a 100-240 V power supply and just needs a plug adapter.
- question: Do you ship outside the US?
  answer: Canada is the only country outside the US we ship to.
""",
}
C64, MASK = "gid://ck/Product/1", "gid://ck/Product/3"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Engine]:
    yield from inline_engine(tmp_path_factory.mktemp("kiln") / "shop", FILES, embedder)


def test_a_part_asking_only_for_a_figure_asks_it_of_the_part_before_when_no_product_is_in_view() -> None:
    assert _question_parts("is the panama geisha out yet? how much") == ["is the panama geisha out yet? how much"]
    assert _question_parts("do you ship to anchorage? and how long?") == ["do you ship to anchorage? and how long?"]
    # with a product in view, "price?" is a question of its own about it
    assert _question_parts("is it waterproof? price?", in_view=True) == ["is it waterproof", "price?"]
    # a part naming its own thing stays apart
    assert _question_parts("do gift cards expire? can i use one on my subscription") == [
        "do gift cards expire",
        "can i use one on my subscription",
    ]


def test_how_much_after_a_product_the_shop_does_not_sell_prices_nothing(engine: Engine) -> None:
    answer = ask_plain(engine, "is the panama geisha out yet? how much")
    assert "$" not in answer, answer
    assert "couldn't find" in answer, answer


def test_a_policy_sentence_naming_the_product_in_view_among_others_answers_for_it(engine: Engine) -> None:
    answer = ask_plain(engine, "c64 grinder, can i use it in australia?", C64)
    assert "120 V only" in answer, answer
    assert "Brio" not in answer, answer


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("what wavelengths does the mask use", {"wavelength"}),
        ("how loud is it? decibels?", {"noise"}),
        ("how fast does the motor spin", {"speed"}),
        ("how much storage does it have", {"storage"}),
        ("what is the screen resolution", {"resolution"}),
        ("how much area does a bag cover", {"area"}),
        ("how much space does it take up", set()),
    ],
)
def test_more_kinds_of_figure_a_question_asks_for(question: str, kinds: set[str]) -> None:
    assert {m.name for m in asked_measures(question)} == kinds


def test_a_wavelength_question_is_answered_by_the_line_stating_one(engine: Engine) -> None:
    answer = ask_plain(engine, "what wavelengths does the mask use", MASK)
    assert " nm" in answer, answer
    assert "not recorded" not in answer, answer
