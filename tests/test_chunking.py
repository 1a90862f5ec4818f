"""chunking: products as fact sheets, policies and pages split on headings, FAQ entries as question + answer."""

from __future__ import annotations

from pathlib import Path

from ask_engine.chunking import FACT_SHEET_LIMIT, SECTION_LIMIT, passages, quotable_lines
from ask_engine.sources import load_documents
from ask_engine.types import Disclosure, Document, Fact, Section, ShopInfo, Variant

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SHOP = ROOT / "eval" / "shops" / "fjord-fell"
SHOP = ShopInfo(name="Fjord & Fell", url="https://ff.example", currency="GBP", gid_namespace="ff")


def boot(variants: int = 3, description: str = "A classic boot.\nHand-finished in Portugal.") -> Document:
    colours = ["Olive", "Black", "Navy", "Red"]
    made = tuple(
        Variant(
            gid=f"gid://ff/ProductVariant/{n}",
            title=f"{colours[n % 4]} / {37 + n // 4}",
            sku=f"FF-TARN-{n}",
            price="65.00",
            compare_at_price="80.00" if n == 1 else None,
            available=n != 0,
            options=(("Colour", colours[n % 4]), ("Size", str(37 + n // 4))),
        )
        for n in range(variants)
    )
    return Document(
        id="product:gid://ff/Product/1",
        kind="product",
        title="Tarn Wellington Boot",
        url="https://ff.example/products/tarn",
        link_type="product",
        source="products.json",
        gid="gid://ff/Product/1",
        handle="tarn",
        body=description,
        facts=(
            Fact("vendor", "Brand", "Fjord & Fell", "field"),
            Fact("product_type", "Type", "Wellington boots", "field"),
            Fact("price", "Price", "£65.00", "field"),
            Fact("material", "Material", "natural rubber"),
            Fact("fit", "Fit", "runs half a size small"),
            Fact("care", "Care", "rinse with cold water"),
            Fact("availability", "Availability", "in stock, except Olive / 37 (sold out)", "field"),
        ),
        variants=made,
        disclosures=(Disclosure("allergens", "Contains natural latex."),),
        vendor="Fjord & Fell",
        product_type="Wellington boots",
        tags=("waterproof", "__label:New"),
        currency="GBP",
    )


def policy(sections: tuple[Section, ...]) -> Document:
    return Document(
        id="policy:refund_policy",
        kind="policy",
        title="Refund policy",
        url="https://ff.example/policies/refund-policy",
        link_type="refund_policy",
        source="policies/refund-policy.md",
        sections=sections,
    )


def test_small_product_is_one_fact_sheet_with_every_fact_price_and_variant() -> None:
    doc = boot()
    (passage,) = passages(doc, SHOP)
    assert passage.id == f"{doc.id}#0"
    assert (passage.doc_id, passage.kind, passage.link_type, passage.gid) == (doc.id, "product", "product", doc.gid)
    assert (passage.title, passage.url) == (doc.title, doc.url)
    lines = passage.text.split("\n")
    assert lines[0] == "Tarn Wellington Boot by Fjord & Fell (Wellington boots)."
    for fact in doc.facts:
        if fact.key not in ("vendor", "product_type"):
            assert f"{fact.label}: {fact.value}." in lines
    assert "Variant Olive / 37 (SKU FF-TARN-0): £65.00, sold out." in lines
    assert "Variant Black / 37 (SKU FF-TARN-1): £65.00, reduced from £80.00, in stock." in lines
    assert "A classic boot." in lines and "Hand-finished in Portugal." in lines
    assert quotable_lines(passage) == lines


def test_fact_sheet_names_disclosures_but_never_carries_their_text() -> None:
    (passage,) = passages(boot(), SHOP)
    assert "Disclosures recorded: allergens." in passage.text.split("\n")
    assert "latex" not in passage.text


def test_theme_switch_tags_are_left_out_and_shopper_tags_kept() -> None:
    (passage,) = passages(boot(), SHOP)
    assert "Tags: waterproof." in passage.text.split("\n")
    assert "__label" not in passage.text


def test_many_variants_are_summarised_when_the_sheet_fits_in_one_passage() -> None:
    doc = boot(variants=16, description="Boot.")
    (passage,) = passages(doc, SHOP)
    assert "16 variants." in passage.text
    assert "Variant " not in passage.text


def test_long_product_splits_into_overview_facts_and_variants_passages() -> None:
    description = "\n".join(f"Feature number {n} of this boot is described here in a full sentence." for n in range(18))
    doc = boot(variants=16, description=description)
    found = passages(doc, SHOP)
    assert [p.id for p in found] == [f"{doc.id}#{n}" for n in range(len(found))]
    assert len(found) >= 3
    header = "Tarn Wellington Boot by Fjord & Fell (Wellington boots)."
    assert all(p.text.split("\n")[0] == header for p in found)
    assert all(len(p.text) <= FACT_SHEET_LIMIT for p in found)
    assert "Price: £65.00." in found[0].text and "Feature number 0" in found[0].text
    everything = "\n".join(p.text for p in found)
    for fact in doc.facts[2:]:
        assert f"{fact.label}: {fact.value}." in everything
    for n in range(16):
        assert f"(SKU FF-TARN-{n})" in everything
    for n in range(18):
        assert f"Feature number {n} " in everything


def test_default_variant_product_has_no_variant_lines_but_keeps_its_sku() -> None:
    doc = boot(variants=0)
    single = Variant(gid="gid://ff/ProductVariant/9", title="Default Title", sku="FF-ONE", price="5.00", available=True)
    doc = Document.from_dict({**doc.to_dict(), "variants": [single.__dict__]})
    (passage,) = passages(doc, SHOP)
    assert "Variant " not in passage.text
    assert "SKU: FF-ONE." in passage.text.split("\n")


def test_section_passages_carry_section_urls_and_titles() -> None:
    url = "https://ff.example/policies/refund-policy"
    doc = policy(
        (
            Section("Refund policy", "We want you to love your kit.", url),
            Section(
                "Returns window",
                "30 days from delivery.\nItems must be unworn.",
                url + "#returns-window",
                "returns-window",
            ),
        )
    )
    lead, window = passages(doc, SHOP)
    assert (lead.id, lead.title, lead.url) == ("policy:refund_policy#0", "Refund policy", url)
    assert lead.text == "Refund policy.\nWe want you to love your kit."
    assert (window.title, window.url) == ("Refund policy — Returns window", url + "#returns-window")
    assert window.text.split("\n")[0] == "Refund policy — Returns window."
    assert quotable_lines(window) == ["30 days from delivery.", "Items must be unworn."]
    assert (window.kind, window.link_type, window.gid) == ("policy", "refund_policy", None)


def test_long_section_splits_on_paragraphs_with_the_heading_repeated() -> None:
    paragraphs = [f"Paragraph {n}: " + "We ship by tracked courier to this zone. " * 4 for n in range(12)]
    url = "https://ff.example/policies/shipping#eu"
    doc = policy((Section("EU", "\n".join(p.strip() for p in paragraphs), url, "eu"),))
    found = passages(doc, SHOP)
    assert len(found) > 1
    assert all(p.text.startswith("Refund policy — EU.\n") and p.url == url for p in found)
    assert all(len(p.text) <= SECTION_LIMIT for p in found)
    quoted = [line for p in found for line in quotable_lines(p)]
    assert quoted == [p.strip() for p in paragraphs]


def test_one_overlong_paragraph_splits_on_sentences() -> None:
    sentence = "Returns are free for UK customers using the prepaid label we email to you."
    doc = policy((Section("Returns", " ".join([sentence] * 30), "https://ff.example/p#r", "r"),))
    found = passages(doc, SHOP)
    assert len(found) > 1
    for p in found:
        assert len(p.text) <= SECTION_LIMIT
        assert all(line == " ".join([sentence] * line.count(sentence)) for line in quotable_lines(p))


def test_faq_passage_is_the_question_then_the_answer() -> None:
    doc = Document(
        id="faq:norway",
        kind="faq",
        title="Do you ship to Norway?",
        url="https://ff.example/pages/faq#norway",
        link_type="faq",
        source="faq.yaml",
        body="Yes, in 5-7 working days.\nDuties are paid by you.",
        sections=(
            Section(
                "Do you ship to Norway?",
                "Yes, in 5-7 working days.\nDuties are paid by you.",
                "https://ff.example/pages/faq#norway",
                "norway",
            ),
        ),
    )
    (passage,) = passages(doc, SHOP)
    assert passage.id == "faq:norway#0"
    assert passage.text == "Do you ship to Norway?\nYes, in 5-7 working days.\nDuties are paid by you."
    assert (passage.title, passage.url, passage.link_type) == (doc.title, doc.url, "faq")
    assert quotable_lines(passage) == ["Yes, in 5-7 working days.", "Duties are paid by you."]


def test_sample_shop_passages_are_stable_unique_and_bounded() -> None:
    info, docs = load_documents(SAMPLE_SHOP)
    first = [p for d in docs for p in passages(d, info)]
    again = [p for d in load_documents(SAMPLE_SHOP)[1] for p in passages(d, info)]
    assert first == again
    round_trip = [p for d in docs for p in passages(Document.from_dict(d.to_dict()), info)]
    assert round_trip == first
    assert len({p.id for p in first}) == len(first)
    assert all(len(p.text) <= FACT_SHEET_LIMIT for p in first)
    by_doc = {d.id: d for d in docs}
    for p in first:
        doc = by_doc[p.doc_id]
        assert p.id.startswith(doc.id + "#")
        assert (p.kind, p.link_type, p.gid) == (doc.kind, doc.link_type, doc.gid)
        if doc.kind in ("policy", "page"):
            assert p.url in {s.url for s in doc.sections}
    section_urls = {s.url for d in docs if d.kind in ("policy", "page") for s in d.sections}
    assert section_urls <= {p.url for p in first}, "every section has a passage"


def test_sample_shop_fact_sheets_hold_every_fact_and_each_notice_as_readable_text() -> None:
    info, docs = load_documents(SAMPLE_SHOP)
    for doc in docs:
        if doc.kind != "product":
            continue
        text = "\n".join(p.text for p in passages(doc, info))
        for fact in doc.facts:
            if fact.key not in ("vendor", "product_type"):
                assert f"{fact.label}: {fact.value}" in text, (doc.title, fact)
        for disclosure in doc.disclosures:
            # the notice as a reader sees it (a fact, above), never its markdown
            assert ("**" not in disclosure.content) or disclosure.content not in text
            assert disclosure.code.replace("_", " ") in text
