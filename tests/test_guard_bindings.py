"""Claims whose words all occur in the evidence: figures bound to the wrong words, sweeping quantifiers, label flips,
a "not recorded" that goes on to claim something, negations of what the evidence never states, and product fact
lines in a sentence that names no product while the question leaves the product open. Invented shops only."""

from __future__ import annotations

from typing import Any

import pytest

from ask_engine.guard import ground
from ask_engine.guard.bindings import flipped_label, quantifier_words, unbound_figures, unsupported_quantifier
from ask_engine.guard.claims import check_claims, further_claims
from ask_engine.guard.faithfulness import FaithfulnessScorer
from ask_engine.types import Draft, Evidence, Passage, Resolution, Sentence, Task

FLASK = (
    "Summit Flask 1 L by Northfold (Flasks).\n"
    "Price: £30.00.\n"
    "A steel flask that keeps soup warm for 8 hours or iced water cold for 20 hours."
)
COURIER = (
    "Delivery.\n"
    "Standard parcels arrive in 2-4 working days; pallets arrive in 6 working days.\n"
    "Collection from the depot is ready in 1 working day."
)


def test_a_figure_bound_to_the_words_the_evidence_binds_to_another_figure_is_unsupported() -> None:
    assert unbound_figures("The flask keeps soup warm for up to 20 hours.", [FLASK]) == ["20 hour"]
    assert unbound_figures("The flask keeps soup warm for 8 hours.", [FLASK]) == []
    assert unbound_figures("It keeps iced water cold for 20 hours.", [FLASK]) == []
    assert unbound_figures("Collection is ready in 6 working days.", [COURIER]) == ["6 working day"]
    assert unbound_figures("Collection is ready in 1 working day.", [COURIER]) == []
    assert unbound_figures("Standard parcels arrive in 2-4 working days.", [COURIER]) == []


def test_a_figure_with_words_the_evidence_does_not_use_is_left_to_the_other_checks() -> None:
    # a paraphrase ("costs" for "Price:") binds to nothing else in the evidence: not a binding error
    assert unbound_figures("It costs £30.", [FLASK]) == []
    # a figure the evidence never states is the hard check's, not this one's
    assert unbound_figures("The flask keeps soup warm for 9 hours.", [FLASK]) == []


def test_the_scorer_rejects_a_recombined_figure(embedder: Any) -> None:
    scorer = FaithfulnessScorer(embedder)
    wrong = scorer.support("The Summit Flask keeps soup warm for 20 hours.", [FLASK])
    assert not wrong.supported and "20 hour" in wrong.missing_tokens
    assert scorer.support("The Summit Flask keeps soup warm for 8 hours.", [FLASK]).supported


def test_a_sweeping_quantifier_needs_the_supporting_sentence_to_make_it() -> None:
    assert unsupported_quantifier("We only deliver to Ireland.", ["We deliver to Ireland and Iceland."]) == "exclusive"
    assert unsupported_quantifier("Returns are always free.", ["Returns are free within 14 days."]) == "universal"
    assert unsupported_quantifier("Refunds are paid as vouchers only.", ["Refunds are paid as vouchers only."]) is None
    assert (
        unsupported_quantifier("Ireland only gets standard delivery.", ["Ireland gets standard delivery only."]) is None
    )
    # the evidence's "only" governs another word: it does not make this sentence's exclusivity claim
    assert (
        unsupported_quantifier("We only ship to Ireland.", ["Lamp oil can only go by road to Ireland."]) == "exclusive"
    )
    assert unsupported_quantifier("Returns are free within 14 days.", ["Returns are free within 14 days."]) is None


def test_a_prohibition_needs_a_supporting_sentence_that_says_it_is_not_done() -> None:
    vat = "For orders of €150 or less we collect VAT at checkout, so there is nothing more to pay on delivery."
    assert unsupported_quantifier("No, you cannot pay VAT on delivery.", [vat]) == "prohibitive"
    # a verb negation, a prohibition or a "Label: no" line says it
    assert unsupported_quantifier("The Arran coat cannot be tumble dried.", ["Tumble dry: no."]) is None
    assert unsupported_quantifier("You cannot tumble dry it.", ["Do not tumble dry."]) is None
    assert unsupported_quantifier("You can't return opened items.", ["Opened items cannot be returned."]) is None
    # ... about the same thing
    assert unsupported_quantifier("You cannot return opened items.", ["Lamp oil cannot be posted."]) == "prohibitive"


def test_praise_is_a_claim_the_shop_must_make() -> None:
    facts = ["Kirkstone 2 Tent by Northfold (Tents).", "Capacity: 2 person."]
    assert unsupported_quantifier("The Kirkstone 2 is a fantastic tent.", facts) == "praise"
    assert unsupported_quantifier("It is the best tent for two.", facts) == "praise"
    said = ["A great tent for wild camping and festivals."]
    assert unsupported_quantifier("It is a great tent for wild camping.", said) is None
    assert unsupported_quantifier("Best before March 2027.", ["Best before: March 2027."]) is None


def test_an_abbreviation_that_reads_as_a_word_must_be_in_the_evidence(embedder: Any) -> None:
    from ask_engine.guard.words import missing_acronyms

    evidence = ["Delivery.\nUK delivery takes 3-5 working days; EU delivery takes 4-7 working days."]
    assert missing_acronyms("It takes 1 extra day for US delivery.", evidence) == ["US"]
    assert missing_acronyms("Contact us for US delivery.", ["We deliver to the US in 5 days."]) == []
    assert missing_acronyms("THE US PRICE IS SHOWN AT CHECKOUT.", evidence) == []  # written in capitals
    assert missing_acronyms("That is OK for UK delivery.", evidence) == []
    scorer = FaithfulnessScorer(embedder)
    result = scorer.support("UK delivery takes 3-5 working days and US delivery 4-7 working days.", evidence)
    assert not result.supported and "US" in result.missing_tokens
    assert scorer.support("UK delivery takes 3-5 working days.", evidence).supported


def test_the_quantifiers_are_language_data() -> None:
    groups = quantifier_words("en")
    assert {"exclusive", "universal", "prohibitive", "praise"} <= set(groups)
    assert "only" in groups["exclusive"] and "always" in groups["universal"]
    assert quantifier_words("xx") == groups  # a language without its own file reads the English data


def test_the_scorer_rejects_an_only_the_evidence_does_not_make(embedder: Any) -> None:
    scorer = FaithfulnessScorer(embedder)
    evidence = ["Delivery.\nWe deliver to Ireland and Iceland by courier."]
    result = scorer.support("We only deliver to Ireland and Iceland by courier.", evidence)
    assert not result.supported and "quantifier: exclusive" in result.missing_tokens
    assert scorer.support("We deliver to Ireland and Iceland by courier.", evidence).supported


@pytest.mark.parametrize(
    ("sentence", "flipped"),
    [
        ("No, the Arran coat dishwasher safe is not possible.", True),
        ("The Arran coat is not dishwasher safe.", True),
        ("No, the Arran coat is dishwasher safe.", True),
        ("Yes, the Arran coat is dishwasher safe.", False),
        ("No, it is not waterproof, but it is dishwasher safe.", False),
    ],
)
def test_a_negated_sentence_against_a_label_yes_line_is_a_flip(sentence: str, flipped: bool) -> None:
    assert flipped_label(sentence, "Dishwasher safe: yes.") is flipped
    assert not flipped_label(sentence, "Dishwasher safe: no.")


def test_a_not_recorded_sentence_that_goes_on_to_claim_something_is_checked_on_its_claim(embedder: Any) -> None:
    assert further_claims("The shop has not recorded gift wrap prices, so you can't have a gift box.") == [
        "you can't have a gift box"
    ]
    assert further_claims("The shop has not recorded whether the lamp is dimmable.") == []
    scorer = FaithfulnessScorer(embedder)
    task = _task([("", "Gifts.\nGift boxes cost £3 and are added at checkout.")], query="Can I get a gift box?")
    claim = "The shop has not recorded gift wrap prices, so you can't have a gift box."
    plain = "The shop has not recorded gift wrap prices."
    kept, removed = ground(Draft(sentences=(Sentence(claim),), generator="model"), task, scorer)
    # the claim goes; its not-recorded part stays, so that the engine can still refute it
    assert [(s.text, s.kind) for s in kept.sentences] == [(plain, "meta")]
    assert [s.text for s in removed] == [claim]
    kept, removed = ground(Draft(sentences=(Sentence(plain),), generator="model"), task, scorer)
    assert [s.text for s in kept.sentences] == [plain] and not removed


def test_a_negation_of_something_the_evidence_never_states_is_unsupported() -> None:
    evidence = ["Arran Coat by Northfold (Coats).\nDishwasher safe: yes.\nTumble dry: no.\nColours: moss, slate."]
    check = check_claims("No, the Arran coat is not machine washable.", evidence)
    assert check.verdict == "unsupported" and check.detail.startswith("negation")
    assert check_claims("The Arran coat cannot be tumble dried.", evidence).verdict == "ok"


PRODUCTS = [
    ("Arran Coat", "Arran Coat by Northfold (Coats).\nCountry of origin: Portugal.\nWeight: 900 g."),
    ("Brora Boot", "Brora Boot by Northfold (Boots).\nCountry of origin: Peru.\nWeight: 1,200 g (pair)."),
    ("", "Delivery.\nWe deliver to Ireland and Iceland by courier."),
]


def _task(passages: list[tuple[str, str]], *, query: str, resolved: tuple[str, ...] = ()) -> Task:
    evidence = tuple(
        Evidence(
            number=n,
            passage=Passage(
                id=f"{kind_id}#0",
                doc_id=kind_id,
                text=text,
                title=title or text.split("\n")[0].rstrip("."),
                url="u",
                kind="product" if title else "policy",
                link_type="product" if title else "shipping_policy",
            ),
            score=1.0,
        )
        for n, (title, text) in enumerate(passages, start=1)
        for kind_id in [f"product:{title}" if title else f"policy:{n}"]
    )
    return Task(query=query, evidence=evidence, documents={}, resolution=Resolution(doc_ids=resolved), shop_name="N")


def _kept(task: Task, *texts: str, embedder: Any) -> list[str]:
    draft = Draft(sentences=tuple(Sentence(t) for t in texts), generator="model")
    kept, _ = ground(draft, task, FaithfulnessScorer(embedder))
    return [s.text for s in kept.sentences]


def test_a_product_fact_line_in_a_sentence_naming_no_product_needs_the_product_placed(embedder: Any) -> None:
    open_question = _task(PRODUCTS, query="Compare these two for weight")
    lines = ("Country of origin: Peru.", "We deliver to Ireland and Iceland by courier.")
    # the question leaves the product open: a bare fact line could be about either product
    assert _kept(open_question, *lines, embedder=embedder) == [lines[1]]
    # the request's ids resolved to the boot: its fact line is about the boot
    resolved = _task(PRODUCTS, query="Compare these two for weight", resolved=("product:Brora Boot",))
    assert _kept(resolved, *lines, embedder=embedder) == list(lines)
    # a sentence that names its product may use that product's facts
    assert _kept(open_question, "The Brora Boot is made in Peru.", embedder=embedder) == [
        "The Brora Boot is made in Peru."
    ]


def test_a_sentence_about_the_product_asked_about_may_not_use_another_products_facts(embedder: Any) -> None:
    task = _task(PRODUCTS, query="Where is the Arran coat made?")
    assert _kept(task, "The Arran coat is made in Peru.", "The Arran coat is made in Portugal.", embedder=embedder) == [
        "The Arran coat is made in Portugal."
    ]


def test_the_claim_scorer_counts_a_negation_of_the_unstated_as_unsupported(embedder: Any) -> None:
    from ask_engine.evaluation.claim_score import sentence_claims

    scorer = FaithfulnessScorer(embedder)
    evidence = ["Arran Coat by Northfold (Coats).\nDishwasher safe: yes.\nTumble dry: no."]
    unstated = sentence_claims(
        scorer.support("No, the Arran coat is not machine washable.", evidence), evidence, scorer
    )
    assert [c.supported for c in unstated if c.kind == "negation"] == [False]
    stated = sentence_claims(scorer.support("The Arran coat cannot be tumble dried.", evidence), evidence, scorer)
    assert all(c.supported for c in stated if c.kind == "negation")
