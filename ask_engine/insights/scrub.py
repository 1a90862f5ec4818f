"""What the question log keeps of a query: the text with keys, emails, phone and order numbers replaced.

The rule, applied in this order (README, "Merchant insights"):

1. **Keys**: every configured secret (agent keys, the admin key, the LLM API key) is replaced by `[key]` wherever it
   appears, and so is any word that looks like one: a `Bearer` token, an `sk-`/`pk-`/`api_`/`key_`/`token_`
   prefixed word of 8+ characters, or a 24+ character word mixing letters and digits.
2. **Emails**: `local@domain.tld` → `[email]`.
3. **Order numbers**: a `#` followed by 3+ digits, or a word holding a digit right after "order", "invoice",
   "receipt", "confirmation", "reference", "ref" or "tracking" (with "number", "no.", "#" or "is" between) → `[order]`.
4. **Phone numbers**: numbers Google's libphonenumber (the `phonenumbers` package) finds as valid phone numbers, in
   international form (`+44 …`) or national form for the shopper's country (`context.address_country`, a
   two-letter code) → `[phone]`.
5. **Any long number**: a run of 7+ digits, counting spaces, dots, hyphens, slashes and brackets between them
   (national phone numbers of other countries, card, account and parcel numbers) → `[number]`.

Names and street addresses written into a question are not detected. The query is cut to `MAX_QUERY_CHARS`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_QUERY_CHARS = 1000
_MIN_SECRET_CHARS = 8

_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{6,}")
_PREFIXED_KEY = re.compile(r"(?i)\b(?:sk|pk|rk|api|key|token|secret)[-_][A-Za-z0-9_-]{8,}")
_LONG_TOKEN = re.compile(r"\b(?=[A-Za-z_-]*\d)(?=[0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ORDER_HASH = re.compile(r"#\s?\d{3,}\b")
_ORDER_WORD = re.compile(
    r"(?i)\b(order|invoice|receipt|confirmation|reference|ref|tracking)"
    r"(\s*(?:number|no\.?|nr\.?|#|id|code)?(?:\s+(?:is|was))?\s*[:#]?\s*)"
    r"(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{3,}\b"
)
_LONG_NUMBER = re.compile(r"(?:\+|\(|\b)\d(?:[\s./()-]{0,3}\d){6,}")


def scrub(query: str, *, secrets: Iterable[str] = (), country: str | None = None) -> str:
    """`query` as the question log keeps it (the module docstring's rule)."""
    text = query
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(secret, "[key]")
    text = _BEARER.sub("Bearer [key]", text)
    text = _PREFIXED_KEY.sub("[key]", text)
    text = _LONG_TOKEN.sub("[key]", text)
    text = _EMAIL.sub("[email]", text)
    text = _ORDER_HASH.sub("[order]", text)
    text = _ORDER_WORD.sub(lambda m: f"{m.group(1)}{m.group(2)}[order]", text)
    text = _phones(text, country)
    text = _LONG_NUMBER.sub("[number]", text)
    text = " ".join(text.split())
    return text if len(text) <= MAX_QUERY_CHARS else text[: MAX_QUERY_CHARS - 1] + "…"


def _phones(text: str, country: str | None) -> str:
    import phonenumbers

    region = country.upper() if country and len(country) == 2 and country.isalpha() else None
    matches = list(phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID))
    for match in reversed(matches):
        text = text[: match.start] + "[phone]" + text[match.end :]
    return text
