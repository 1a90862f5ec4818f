"""The read-only boundary: requests to change carts, orders, discounts, returns or accounts are detected and
refused, and the answer says nothing was changed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ask_engine.guard.untrusted import _CHANGED, _norm, is_injection
from ask_engine.models import Message
from ask_engine.types import Sentence


@dataclass(frozen=True)
class Operation:
    """A state change the query asked for, which `ask` never performs."""

    object: str  # "cart" | "order" | "discount" | "return" | "account" | "subscription" | "booking" | "stock" | ...
    action: str  # the verb as asked, lower-cased: "add", "cancel", "apply", ...
    text: str  # the part of the query that asked for it
    remainder: str  # the informational rest of the query, to be answered ("" when there is none)
    objects: tuple[str, ...] = ()  # every object asked about, first one first
    request: str = ""  # the request as a verb phrase, without "please"/"can you": "cancel my order"


# Whose state each kind of operation would have changed, as the "nothing changed" phrases name it: (owner, thing)
# pairs, so that several operations name each thing once ("your orders, returns or refunds", not "your orders or
# your orders, returns or refunds").
_OBJECT_NOUNS: dict[str, tuple[tuple[str, str], ...]] = {
    "cart": (("your", "cart"),),
    "order": (("your", "orders"),),
    "discount": (("your", "cart"), ("your", "orders"), ("", "prices")),
    "return": (("your", "orders"), ("your", "returns"), ("your", "refunds")),
    "account": (("your", "account"),),
    "subscription": (("your", "subscriptions"),),
    "booking": (("your", "bookings"),),
    "stock": (("the shop's", "stock"),),
    "wishlist": (("your", "wishlist"),),
    "payment": (("your", "payments"),),
    "price": (("", "prices"),),
}


def _object_phrase(objects: Sequence[str]) -> str:
    """What the operations would have changed, each thing once: "your cart, orders or prices"."""
    things = list(dict.fromkeys(pair for o in objects for pair in _OBJECT_NOUNS.get(o, (("", "anything"),))))
    if ("", "prices") in things and any(owner == "your" for owner, _ in things):
        # "your cart, orders or prices": the prices a request would change are the shopper's own
        things = list(dict.fromkeys(("your", t) if t == "prices" else (o, t) for o, t in things))
    groups: list[str] = []
    for owner in dict.fromkeys(o for o, _ in things):
        names = _join_phrases([t for o, t in things if o == owner])
        groups.append(f"{owner} {names}" if owner else names)
    if len(groups) <= 1:
        return groups[0] if groups else ""
    last = ", or " if len(groups) > 2 or any(" or " in g for g in groups) else " or "
    return ", ".join(groups[:-1]) + last + groups[-1]


_NUM = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|a pair of|another|more)"
_PRON = r"(?:it|this|that|these|those|them|one|ones|both|all)"
_DET = r"(?:my|the|this|that|these|those|our|its|their|a|an|your)"
_CART = r"(?:cart|carts|basket|baskets|trolley|bag|shopping bag)"
_CODE_WORD = r"(?:(?:discount|promo|promotion|coupon|voucher|gift|offer|referral|student|sale)\s+)?(?:codes?|coupons?|vouchers?|discounts?|promos?|gift\s*cards?|promotions?)"
# A literal code as shoppers paste it: capitals and digits, e.g. SAVE10, WELCOME-15.
_LITERAL_CODE = r"(?-i:[A-Z][A-Z0-9_-]*\d[A-Z0-9_-]*|\d+[A-Z][A-Z0-9_-]*)"
_ORDERISH = r"(?:orders?|purchases?|delivery|deliveries|shipments?|parcels?|packages?)"
_ACCOUNTISH = (
    r"(?:account|profile|password|e-?mail(?:\s+address)?|(?:shipping\s+|delivery\s+|billing\s+|home\s+)?address(?:es)?|"
    r"phone(?:\s+number)?|name|(?:card|payment)(?:\s+(?:details|method|info))?|details|personal\s+(?:data|information)|"
    r"data|preferences|username|login)"
)
_BOOKINGISH = r"(?:booking|bookings|appointment|appointments|reservation|reservations|fitting|slot|session|consultation|class|table|tour|workshop)"

# Verb phrases that ask for a state change, tried in order on the start of a clause (after any request prefix).
# (object, action, pattern); patterns are matched case-insensitively against the start of the clause.
_ACTS: tuple[tuple[str, str, str], ...] = (
    # discounts and codes first: "add SAVE10 to my order" is a discount, not a cart change
    ("discount", "apply", r"(?:apply|applying|redeem|redeeming)\b"),
    (
        "discount",
        "use",
        rf"(?:use|using|add|adding|enter|entering|put|putting|stack|stacking|activate|activating)\s+"
        rf"(?:{_DET}\s+|{_NUM}\s+)?(?:[\w%-]+\s+)?(?:{_CODE_WORD}|{_LITERAL_CODE})\b",
    ),
    (
        "discount",
        "give",
        r"(?:give|giving|get|getting|send|sending|offer|offering|grant|granting|email|e-mail)\s+(?:me|us)\s+"
        r"(?:an?\s+|the\s+|some\s+|your\s+)?(?:[\w%-]+\s+){0,3}?(?:discounts?|coupons?|vouchers?|promos?|codes?|"
        r"deals?|\d+\s*%|\d+\s*percent|price\s+match|(?:special|better|lower|cheaper)\s+prices?)",
    ),
    ("discount", "discount", r"(?:knock|take|taking|knocking)\s+(?:\d+\s*%|\d+\s*percent|[£$€]?\d+(?:\.\d+)?)\s+off\b"),
    (
        "discount",
        "discount",
        r"(?:discount|reduce|reducing|lower|lowering|cut|cutting)\s+(?:the\s+price|my\s+order|my\s+total|the\s+total|"
        r"my\s+bill|it|this|that|them)\b",
    ),
    ("discount", "make", r"(?:make|making)\s+(?:it|this|that|them|my\s+order)\s+(?:cheaper|free|\d+\s*%)"),
    ("discount", "price match", r"price[-\s]match(?:ing)?\s+(?:it|this|that|these|my)"),
    # returns, refunds, exchanges
    (
        "return",
        "refund",
        r"(?:give|giving|send|sending|get|getting|issue|issuing|process|processing)\s+(?:me\s+)?"
        r"(?:a\s+|my\s+|the\s+)?(?:full\s+|partial\s+)?(?:refund|money\s+back|store\s+credit|replacement)",
    ),
    (
        "return",
        "start",
        rf"(?:start|starting|begin|beginning|initiate|initiating|open|opening|file|filing|submit|submitting|create|"
        rf"creating|raise|raising|lodge|lodging|arrange|arranging|process|processing|book|booking|log|logging)\s+"
        rf"(?:{_DET}\s+|a\s+new\s+)?(?:return|returns|refund|refunds|exchange|exchanges|warranty\s+claim|claim|rma|"
        rf"return\s+request|replacement)\b",
    ),
    (
        "return",
        "refund",
        rf"(?:refund|refunding|reimburse|reimbursing)\s+(?:me|us|{_DET}\b|it|them|this|that|these|those)",
    ),
    (
        "return",
        "return",
        rf"(?:return|returning|send\s+back|sending\s+back|exchange|exchanging|swap|swapping)\s+"
        rf"(?:{_PRON}\b|{_DET}\s+|{_NUM}\s+)",
    ),
    # mailing lists and subscriptions, before the cart ("add me to your mailing list")
    (
        "subscription",
        "subscribe",
        r"(?:sign|signing)\s+(?:me|us)\s+(?:up|in|on)\b|(?:subscribe|subscribing|unsubscribe|unsubscribing|opt|opting)\s+"
        r"(?:me|us)\b|(?:unsubscribe|unsubscribing)\b|(?:add|adding|put|putting)\s+(?:me|us|my\s+e-?mail)\s+(?:to|on)\s+"
        r"(?:\w+\s+){0,2}(?:list|newsletter|mailing)|(?:take|taking|remove|removing)\s+(?:me|us|my\s+e-?mail)\s+off\b|"
        r"(?:stop|stopping)\s+(?:sending|e-?mailing|texting|messaging)\s+(?:me|us)\b",
    ),
    # cart, wishlist, holding stock
    (
        "cart",
        "remove",
        rf"(?:remove|removing|delete|deleting|take|taking|drop|dropping|clear|clearing|empty|emptying)\b.*?\b"
        rf"(?:from|out\s+of|off)\s+{_DET}\s+{_CART}\b",
    ),
    ("cart", "empty", rf"(?:empty|emptying|clear|clearing|reset|resetting)\s+{_DET}\s+{_CART}\b"),
    (
        "wishlist",
        "add",
        rf"(?:add|adding|put|putting|save|saving|place|placing)\b.*?\b(?:to|in|into|on)\s+{_DET}\s+"
        r"(?:wish\s*list|favou?rites|saved\s+items)\b",
    ),
    (
        "stock",
        "hold",
        rf"(?:put|putting|set|setting|keep|keeping|save|saving)\s+(?:me\s+)?(?:{_PRON}|{_NUM}\s+\w+|{_DET}\s+\w+)"
        # ("will you set it up for me?" asks for a service, not for stock held)
        r"(?:\s+(?!up\b)\w+)?\s+(?:aside|on\s+hold|back\s+for\s+me|for\s+me)\b",
    ),
    (
        "cart",
        "add",
        rf"(?:add|adding|put|putting|place|placing|pop|popping|throw|throwing|stick|sticking|drop|dropping|move|"
        rf"moving|include|including|get|getting)\b.*?\b(?:to|in|into|on)\s+{_DET}\s+{_CART}\b",
    ),
    ("order", "add", rf"(?:add|adding|include|including)\b.*?\b(?:to|in|into|on)\s+{_DET}\s+(?:order|purchase)\b"),
    (
        "order",
        "remove",
        rf"(?:remove|removing|delete|deleting|take|taking|drop|dropping)\b.*?\b(?:from|out\s+of|off)\s+{_DET}\s+"
        r"(?:order|purchase)\b",
    ),
    # accounts (before the bare "add ..." below: "add my new address")
    (
        "account",
        "change",
        rf"(?:change|changing|update|updating|edit|editing|correct|correcting|fix|fixing|amend|amending|modify|"
        rf"modifying|reset|resetting|add|adding|remove|removing|replace|replacing)\s+(?:{_DET}\s+)?(?:\w+\s+)?"
        rf"{_ACCOUNTISH}\b",
    ),
    (
        "account",
        "delete",
        rf"(?:delete|deleting|close|closing|deactivate|deactivating|remove|removing|erase|erasing|wipe|wiping)\s+"
        rf"(?:{_DET}\s+|all\s+(?:of\s+)?my\s+)?(?:\w+\s+)?(?:account|profile|data|details|information)\b",
    ),
    (
        "account",
        "create",
        rf"(?:create|creating|open|opening|make|making|set\s+up|setting\s+up|register|registering)\s+(?:me\s+)?"
        rf"(?:{_DET}\s+|a\s+new\s+)?(?:\w+\s+)?(?:account|profile|membership)\b",
    ),
    ("account", "register", r"(?:register|registering|enrol|enroll|enrolling)\s+(?:me|us)\b"),
    # (not a note or a message sent with the order: "can you gift wrap it and add a note?" asks for a service)
    (
        "cart",
        "add",
        rf"(?:add|adding)\s+(?:{_PRON}\b|{_NUM}\b|{_DET}\s+|me\s+)"
        r"(?!\s*(?:(?:gift|personal|short|handwritten|little)\s+)?(?:note|message|card|comment|dedication)s?\b)",
    ),
    # orders and checkout
    ("order", "check out", r"(?:check\s*out|checking\s*out)(?:\s+(?:now|for\s+me|my|with|using|please)\b|\s*[.!]*$)"),
    (
        "order",
        "place",
        rf"(?:place|placing|put\s+in|putting\s+in|submit|submitting|complete|completing|finali[sz]e|finali[sz]ing|"
        rf"confirm|confirming|process|processing|make|making)\s+(?:{_DET}\s+|a\s+new\s+)?(?:order|purchase|payment)\b",
    ),
    (
        "order",
        "buy",
        rf"(?:buy|buying|purchase|purchasing|order|ordering)\s+(?:me\s+|us\s+)?"
        rf"(?:{_PRON}\b|{_NUM}\s+|.*?\b(?:for\s+me|for\s+us|now|right\s+away|immediately|today)\b)",
    ),
    (
        "order",
        "cancel",
        rf"(?:cancel|cancelling|canceling|void|voiding|stop|stopping|halt|halting|withdraw|withdrawing)\s+"
        rf"(?:{_DET}\s+)?(?:\w+\s+)?(?:{_ORDERISH}|it|that|this|everything)\b",
    ),
    (
        "subscription",
        "cancel",
        rf"(?:cancel|cancelling|canceling|end|ending|pause|pausing|stop|stopping)\s+(?:{_DET}\s+)?(?:\w+\s+)?"
        r"(?:subscriptions?|memberships?|newsletters?|plan)\b",
    ),
    (
        "booking",
        "cancel",
        rf"(?:cancel|cancelling|canceling|move|moving|reschedule|rescheduling)\s+(?:{_DET}\s+)?(?:\w+\s+)?{_BOOKINGISH}\b",
    ),
    (
        "order",
        "change",
        rf"(?:change|changing|update|updating|edit|editing|amend|amending|modify|modifying|alter|altering|upgrade|"
        rf"upgrading|downgrade|downgrading|split|splitting|combine|combining|merge|merging|expedite|expediting|"
        rf"redirect|redirecting|reroute|rerouting|hold|holding)\s+(?:{_DET}\s+)?(?:\w+\s+)?{_ORDERISH}\b",
    ),
    (
        "order",
        "change",
        rf"(?:change|changing|swap|swapping|switch|switching|upgrade|upgrading)\s+(?:{_PRON}|{_DET}\s+\w+)\s+(?:to|for|into)\s+",
    ),
    (
        "booking",
        "book",
        rf"(?:book|booking|schedule|scheduling)\s+(?:me|us|{_DET}|a|an)\b.*?(?:\b{_BOOKINGISH}\b|\bin\b|\bfor\b)",
    ),
    (
        "stock",
        "reserve",
        rf"(?:reserve|reserving|hold|holding|set\s+aside|setting\s+aside|put\s+aside|putting\s+aside)\s+"
        rf"(?:me\s+|us\s+)?(?:{_PRON}\b|{_NUM}\s+|{_DET}\s+)",
    ),
    (
        "payment",
        "charge",
        r"(?:charge|charging|bill|billing)\s+(?:me|my|it|this|the)\b|(?:pay|paying)\s+for\s+(?:it|this|that|them|my)\b",
    ),
)
# Whatever the request is phrased as, a verb of change applied to a thing whose state the shop keeps is an
# operation: "change the price of the laptop to $1", "switch the payment method on my order", "mark my order paid".
# Tried after the specific patterns above; the object is the kind of the thing changed.
_CHANGE_VERB = (
    r"(?:change|changing|update|updating|set|setting|switch|switching|swap|swapping|modify|modifying|alter|altering|"
    r"edit|editing|adjust|adjusting|amend|amending|raise|raising|increase|increasing|decrease|decreasing|lower|"
    r"lowering|reduce|reducing|drop|dropping|cut|cutting|mark|marking|override|overriding|reset|resetting|replace|"
    r"replacing|waive|waiving|remove|removing|delete|deleting|cancel|cancelling|canceling|void|voiding|refund|"
    r"refunding|approve|approving|restore|restoring|revert|reverting|move|moving|transfer|transferring|upgrade|"
    r"upgrading|downgrade|downgrading|expedite|expediting|unlock|unlocking|credit|crediting|zero|zeroing)"
)
_STATE_NOUNS: tuple[tuple[str, str], ...] = (
    (
        "price",
        r"(?:prices?|pricing|costs?|totals?|tax(?:es)?|fees?|charges?|(?:shipping|delivery)\s+(?:costs?|fees?|rates?))",
    ),
    (
        "payment",
        r"(?:payments?(?:\s+(?:methods?|details|cards?|options?|plans?|info))?|billing(?:\s+\w+)?|"
        r"(?:credit|debit|gift)\s+cards?|invoices?)",
    ),
    (
        "order",
        rf"(?:{_ORDERISH}|(?:order|delivery|shipping|shipment)\s+(?:status|dates?|methods?|options?|speed)|"
        r"status|tracking|delivery\s+dates?)",
    ),
    ("stock", r"(?:stock(?:\s+levels?)?|inventory|availability|quantit(?:y|ies))"),
    ("return", r"(?:returns?|refunds?|exchanges?|rma)"),
    ("account", _ACCOUNTISH),
    ("cart", _CART),
    ("discount", _CODE_WORD),
    ("subscription", r"(?:subscriptions?|memberships?|plans?)"),
    ("booking", _BOOKINGISH),
)
_ACTS = (
    *_ACTS,
    *((obj, "change", rf"{_CHANGE_VERB}\s+(?:{_DET}\s+)?(?:[\w'-]+\s+){{0,2}}?{noun}\b") for obj, noun in _STATE_NOUNS),
    # "confirm my order was cancelled", "confirm that the refund has gone through": the answer would claim a change
    *(
        (
            obj,
            "confirm",
            rf"(?:confirm|confirming|verify|acknowledge|state|say|certify)\s+(?:to\s+me\s+)?(?:that\s+)?"
            rf"(?:{_DET}\s+)?(?:[\w'-]+\s+){{0,2}}?{noun}\s+(?:\w+\s+){{0,3}}?(?:was|were|is|are|has|have|had|got|"
            rf"gets|been|will\s+be)\s+(?:\w+\s+){{0,2}}?(?:{_CHANGED}|gone\s+through)\b",
        )
        for obj, noun in _STATE_NOUNS
    ),
    (
        "order",
        "confirm",
        r"(?:confirm|confirming)\s+(?:the\s+|my\s+|this\s+)?(?:cancellation|refund|change|changes|update|"
        r"price\s+change|adjustment|credit)\b",
    ),
)
_ACT_RES = tuple((obj, action, re.compile(pattern, re.IGNORECASE)) for obj, action, pattern in _ACTS)

# A clause that begins like this asks *about* something: it is informational whatever verb follows
# ("how do I apply a discount code?", "can I return this?", "what happens if I cancel my order?").
_INFO_START = re.compile(
    r"^(?:what|what's|whats|which|who|whom|whose|where|where's|when|when's|why|how|how's|hows|"
    r"can\s+i|could\s+i|may\s+i|might\s+i|should\s+i|shall\s+i|must\s+i|do\s+i|did\s+i|am\s+i|would\s+i|will\s+i|"
    r"can\s+we|could\s+we|do\s+we|should\s+we|"
    r"is|isn't|are|aren't|was|wasn't|were|does|doesn't|do\s+(?!you\s+mind)|don't|did|didn't|has|have|had|"
    r"will\s+(?:it|they|this|that|there|my|the|these|those)|would\s+(?:it|they|this|that|there|my|the)|"
    r"if|when|whenever|once|after|before|in\s+case|suppose|supposing|assuming|"
    r"tell\s+me|let\s+me\s+know|explain|show\s+me|describe|list|compare|recommend|suggest|"
    r"i\s+(?:want|would\s+like|'d\s+like|d\s+like|need|wish)\s+to\s+(?:know|understand|find\s+out|learn|check|see|ask)|"
    r"i\s+wonder|i'm\s+wondering|i\s+am\s+wondering|i\s+was\s+wondering\s+(?:if|whether)\s+(?!you\b)|"
    r"i'm\s+curious|i\s+am\s+curious|any\s+idea|is\s+it\s+possible\s+to|"
    r"check\s+(?:if|whether|that|how|when|what)|find\s+out|look\s+up)\b",
    re.IGNORECASE,
)

# Phrases that turn what follows into a request to the shop ("can you cancel my order?").
_REQUEST_PREFIX = re.compile(
    r"^(?:(?:please|pls|plz|kindly|just|now|ok|okay|so|also|then|and|but|hi|hello|hey|right|alright|actually|"
    r"go\s+ahead\s+and|quickly|immediately|asap|you\s+should|you\s+must|you\s+need\s+to|"
    r"would\s+you\s+mind|do\s+you\s+mind|would\s+you\s+be\s+able\s+to|are\s+you\s+able\s+to|"
    r"can\s+you|could\s+you|would\s+you|will\s+you|can\s+u|could\s+u|would\s+u|will\s+u|"
    r"is\s+it\s+possible\s+for\s+you\s+to|would\s+it\s+be\s+possible\s+for\s+you\s+to|"
    r"can\s+i\s+get\s+you\s+to|could\s+i\s+get\s+you\s+to|i\s+was\s+wondering\s+if\s+you\s+(?:could|can|would)|"
    r"i\s+(?:want|need|would\s+like|'d\s+like|d\s+like)\s+you\s+to|i'd\s+like\s+you\s+to|i\s+wish\s+you\s+would|"
    r"help\s+me(?:\s+to)?|let's|lets|let\s+us|"
    r"i\s+(?:want|wanna|need|would\s+like|'d\s+like|d\s+like|wish|intend|am\s+going|'m\s+going|plan)\s+to|"
    r"i'd\s+like\s+to|i'd\s+love\s+to|i\s+would\s+love\s+to|i'm\s+trying\s+to|i\s+am\s+trying\s+to|"
    r"i\s+(?:hereby\s+)?(?:request|ask)\s+(?:you\s+)?to)\b[\s,]*)+",
    re.IGNORECASE,
)
# A clause opening on "buying …" with no request before it, and not for the asker ("buying it for me"), describes
# the asker's own shopping.
_SHOPPING_NOW = re.compile(r"(?:buying|purchasing|ordering)\b(?!.*\bfor\s+(?:me|us)\b)", re.IGNORECASE)
# First-person wishes ("I want to buy boots", "I'd like to order a tent") are shopping intent, not orders.
_WISH_PREFIX = re.compile(
    r"(?:^|\s)i\s+(?:want|wanna|need|would\s+like|'d\s+like|d\s+like|wish|intend|am\s+going|'m\s+going|plan|'d\s+love|would\s+love)\s+to\s*$"
    r"|(?:^|\s)i'd\s+(?:like|love)\s+to\s*$|(?:^|\s)(?:i'm|i\s+am)\s+trying\s+to\s*$|(?:^|\s)help\s+me(?:\s+to)?\s*$",
    re.IGNORECASE,
)
# "I want a refund", "I'd like an exchange", "I need a discount": a request without an action verb.
_WANT_NOUN = re.compile(
    r"^(?:please\s+)?i\s+(?:want|need|would\s+like|'d\s+like|d\s+like|demand|expect|deserve|am\s+owed|'m\s+owed)\s+"
    r"(?:a\s+|an\s+|my\s+|the\s+|some\s+|to\s+get\s+(?:a\s+|an\s+|my\s+)?)?(?:full\s+|partial\s+)?(?:[\w%-]+\s+){0,2}?"
    r"(?P<noun>refund|money\s+back|exchange|replacement|return\s+label|discount|coupon|voucher|promo\s+code|"
    r"\d+\s*%\s*off|\d+\s*percent\s*off)\b",
    re.IGNORECASE,
)
_WANT_OBJECTS = {
    "refund": "return",
    "money back": "return",
    "exchange": "return",
    "replacement": "return",
    "return label": "return",
}

# Sentence and clause boundaries. A conjunction only splits when a new request or question follows it, so that
# "add the boots and the socks to my cart" stays one clause.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;:])\s+|\s+[-–—]+\s+|\n+|(?<=\?)(?=\S)")
_FOLLOWER = (
    r"(?:what|which|who|where|when|why|how|is|are|was|were|do|does|did|can|could|will|would|should|shall|may|"
    r"has|have|tell|let|show|explain|also|please|then|i|i'm|i'd|if|and)\b"
)
_ACTION_START = (
    r"(?:please\s+)?(?:add|put|remove|delete|cancel|apply|use|redeem|give|refund|return|exchange|reserve|hold|"
    r"book|subscribe|unsubscribe|sign|change|update|check\s*out|checkout|buy|order|place|empty|clear|start|process|"
    r"make|send|charge)\b"
)
_CONJ_SPLIT = re.compile(
    rf"\s*,\s*(?:and\s+|but\s+|then\s+|also\s+|so\s+)?(?={_FOLLOWER})"
    rf"|\s+(?:and\s+then|and\s+also|and|but|then|also)\s+(?=(?:{_FOLLOWER}|{_ACTION_START}))",
    re.IGNORECASE,
)


def _clauses(query: str) -> list[tuple[str, bool]]:
    """The query's clauses, each with whether it continues the previous one after a conjunction or comma."""
    parts: list[tuple[str, bool]] = []
    for sentence in _SENTENCE_SPLIT.split(query):
        if not sentence or not sentence.strip():
            continue
        for n, piece in enumerate(_CONJ_SPLIT.split(sentence)):
            if piece and piece.strip(" ,;:-–—"):
                parts.append((piece.strip(), n > 0))
    return parts


_LEAD_FILLER = re.compile(r"^(?:[\s,;:.…-]|and\b|but\b|also\b|then\b|so\b|ok\b|okay\b|oh\b|well\b)+", re.IGNORECASE)
_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|hiya|thanks|thank\s+you|thx|cheers|please|pls|ok|okay|great|cool|yes|no|sure|go\s+ahead|"
    r"good\s+(?:morning|afternoon|evening))(?:\s+(?:there|so\s+much|a\s+lot|team|again))?[\s!,.]*$",
    re.IGNORECASE,
)
# "how do I do that?" after an operation refers to the operation itself.
_DO_THAT = re.compile(r"\b(?:do|doing|done)\s+(?:it|that|this|so)\b", re.IGNORECASE)
_BARE_VERB_START = re.compile(_ACTION_START, re.IGNORECASE)


def _clause_operation(clause: str, *, after_question: bool = False) -> tuple[str, str, str] | None:
    """(object, action, verb phrase) when the clause asks for a state change, else None.

    `after_question`: the clause continues a question after "and"/a comma ("can I return boots and order a new
    size?"); a bare verb there shares the question's mood.
    """
    text = _LEAD_FILLER.sub("", _norm(clause)).strip()
    if not text:
        return None
    want = _WANT_NOUN.match(text)
    if want:
        noun = re.sub(r"\s+", " ", want.group("noun").casefold())
        return (_WANT_OBJECTS.get(noun, "discount"), noun, text)
    prefix = _REQUEST_PREFIX.match(text)
    if prefix is None:
        if _INFO_START.match(text) or (after_question and _BARE_VERB_START.match(text)):
            return None
        rest = text
    else:
        rest = text[prefix.end() :]
    if _INFO_START.match(rest) and not re.match(r"(?:check\s*out|checkout)\b", rest, re.IGNORECASE):
        return None
    wish = bool(prefix and _WISH_PREFIX.search(prefix.group().rstrip(" ,")))
    for obj, action, pattern in _ACT_RES:
        if not pattern.match(rest):
            continue
        if wish and obj == "order" and action == "buy":
            # "I'd like to buy a tent for winter" is someone shopping; "buy it for me" asks the shop to act.
            continue
        if obj == "order" and action == "buy" and prefix is None and _SHOPPING_NOW.match(rest):
            # "buying Christmas gifts now, what's the return deadline?" says what the asker is doing
            continue
        return (obj, action, rest.rstrip(" ?!.,"))
    return None


def detect_operation(query: str) -> Operation | None:
    """The state change the query asks for (ask performs none), with the informational rest of the query.

    Questions *about* operations ("can I return this?", "how do I apply a discount code?") are not operations;
    requests ("return this for me", "apply SAVE10 to my order", "add two to my cart") are.
    """
    if not query or not query.strip():
        return None
    found: list[tuple[str, str, str, str]] = []
    informational: list[str] = []
    previous_question = False
    for clause, continued in _clauses(query):
        op = _clause_operation(clause, after_question=continued and previous_question)
        if op is not None:
            found.append((op[0], op[1], clause, op[2]))
            previous_question = False
            continue
        text = _LEAD_FILLER.sub("", clause).strip()
        previous_question = bool(_INFO_START.match(_norm(text))) or text.endswith("?")
        if text and not is_injection(text) and not _SMALL_TALK.match(text):
            informational.append(text)
    if not found:
        return None
    obj, action, text, verb_phrase = found[0]
    objects = tuple(dict.fromkeys(o for o, _, _, _ in found))
    remainder = " ".join(informational)
    if remainder and _DO_THAT.search(remainder):
        remainder = _DO_THAT.sub(verb_phrase, remainder, count=1)
    return Operation(object=obj, action=action, text=text, remainder=remainder, objects=objects, request=verb_phrase)


def operation_sentence(op: Operation) -> Sentence:
    """The answer's first sentence when an operation was asked for: nothing was changed (prompts/phrases.j2)."""
    from ask_engine.phrases import phrase

    nouns = _object_phrase(op.objects or (op.object,))
    return Sentence(text=phrase("nothing_changed", object=nouns), kind="meta")


def operation_messages(op: Operation) -> list[Message]:
    """The `operation_not_performed` info message for a requested operation."""
    nouns = _object_phrase(op.objects or (op.object,))
    return [
        Message(
            type="info",
            code="operation_not_performed",
            content=f"Nothing was changed: ask answers questions and performs no operation on {nouns}.",
        )
    ]


def _join_phrases(items: list[str]) -> str:
    if len(items) <= 1:
        return items[0] if items else ""
    return ", ".join(items[:-1]) + " or " + items[-1]
