"""Secrets out of everything fanout renders: messages, reprs, logs, reports, records.

Two layers:

* the keys fanout knows (each ``Fanout`` registers its client's ``api_key``), replaced
  wherever they appear;
* the credentials among the headers the client sends (:func:`register_headers`: its
  ``default_headers`` and a call's ``extra_headers``): the value of every header
  whose name says credential (``Ocp-Apim-Subscription-Key``, ``X-Auth-Token``, ...)
  or whose value looks like one (a long random token), replaced wherever they appear;
* key-shaped strings, whatever their source — a key from a callable
  (``AsyncOpenAI(api_key=<callable>)`` leaves fanout nothing to register), a proxy's
  token, a server echoing the request back: ``sk-...`` keys, ``Bearer``/``Basic``
  credentials, the value of an ``Authorization``, ``X-Api-Key`` or ``api_key`` field,
  or of any field whose compound name ends in a credential word (``X-Auth-Token``,
  ``client_secret``, ``Ocp-Apim-Subscription-Key``), in any rendering
  (``Authorization: x``, ``'authorization': 'x'``, ``api_key=x``), and the password
  of a URL, in its user info or its query (``redis://:***@host``, ``?password=***``).

:func:`redact` applies both to text fanout renders (errors, reprs, logs). An answer's
text is data, and may rightly hold a key-shaped string (an answer about API keys): the
JSONL writer takes only the known keys out of it (:func:`redact_registered`).
:func:`scrub_exception` redacts an exception chain in place, so a traceback rendered
from it (``__cause__`` included) holds no key either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "mask_url",
    "redact",
    "redact_registered",
    "register_headers",
    "register_secret",
    "scrub_exception",
]

MASK = "***"
_SECRETS: set[str] = set()

_URL_PASSWORD = re.compile(r"\b([a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@/\s]+@", re.IGNORECASE)
_URL_QUERY_SECRET = re.compile(
    r"(?i)([?&](?:password|passwd|pwd|pass|secret|token|access_token|auth|api[-_]?key|key)=)"
    r"[^&#\s'\"]+"
)
_CREDENTIAL_WORDS = r"key|token|secret|auth|password|passwd|signature|credentials?|cookie"
# A header name that says credential: one of the words as a part of it (``X-Auth-Token``).
_CREDENTIAL_NAME = re.compile(
    rf"(?i)(?:^|[-_])(?:{_CREDENTIAL_WORDS}|authorization|apikey|session)(?:[-_]|$)"
)
_SCHEME = re.compile(r"(?i)^(?:bearer|basic|token|apikey|key)\s+")
_SHAPES: list[tuple[re.Pattern[str], str]] = [
    # The value of a credential field, in any rendering; a scheme word before it goes too.
    (
        re.compile(r"""(?ix)\b((?:proxy-)?authorization|x-api-key|api[-_]key)
                    (["']?\s*[:=]\s*["']?)
                    (?:(?:bearer|basic|token)\s+)?
                    (?=[^\s"',;}]*[A-Za-z0-9])[^\s"',;}]{6,}"""),
        rf"\1\2{MASK}",
    ),
    # A compound name ending in a credential word (``x-auth-token``, ``client_secret``).
    (
        re.compile(rf"""(?ix)\b((?:[a-z0-9]+[-_])+(?:{_CREDENTIAL_WORDS}))
                    (["']?\s*[:=]\s*["']?)
                    (?:(?:bearer|basic|token)\s+)?
                    (?=[^\s"',;}}]*[A-Za-z0-9])[^\s"',;}}]{{6,}}"""),
        rf"\1\2{MASK}",
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {MASK}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), MASK),
    (_URL_PASSWORD, rf"\1{MASK}@"),
    (_URL_QUERY_SECRET, rf"\1{MASK}"),
]


def register_secret(value: object) -> None:
    """Never let ``value`` (an API key) appear in fanout's logs, errors or reports."""
    if isinstance(value, str) and len(value) >= 6:
        _SECRETS.add(value)


def _credential_shaped(value: str) -> bool:
    """A long random token: 16+ characters of a key's alphabet, letters and digits
    mixed, at least 10 of them different (not a date, a version, a word)."""
    return (
        len(value) >= 16
        and re.fullmatch(r"[A-Za-z0-9._~+/=:-]+", value) is not None
        and any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and len(set(value)) >= 10
    )


def register_headers(headers: object) -> None:
    """Register the credentials among ``headers`` (a client's ``default_headers``, a
    call's ``extra_headers``): the value of each header whose name says credential,
    or whose value looks like one; with its scheme word (``Bearer``) and without."""
    if not isinstance(headers, Mapping):
        return
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            continue  # the SDK's Omit/NotGiven markers
        value = value.strip()
        bare = _SCHEME.sub("", value)
        # A short word under a credential's name is a setting (``X-Auth-Mode: enabled``).
        named = _CREDENTIAL_NAME.search(name) and not (bare.isalpha() and len(bare) < 16)
        if named or _credential_shaped(bare):
            register_secret(value)
            register_secret(bare)


def redact_registered(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(text: str) -> str:
    """``text`` with registered secrets and key-shaped strings replaced by ``***``."""
    text = redact_registered(text)
    for pattern, replacement in _SHAPES:
        text = pattern.sub(replacement, text)
    return text


def mask_url(url: str) -> str:
    """``url`` with its password, if any, masked: ``redis://:***@host:6379/0``, and
    ``redis://host/0?password=***``."""
    return _URL_QUERY_SECRET.sub(rf"\1{MASK}", _URL_PASSWORD.sub(rf"\1{MASK}@", url))


def _redact_data(value: object) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redact_data(v) for v in value)
    return value


def scrub_exception(exc: BaseException) -> None:
    """Redact ``exc`` and the exceptions chained to it (``__cause__``,
    ``__context__``) in place: their ``args``, and the ``message`` and ``body`` the
    openai SDK's errors carry (a server's reply, which may echo the key). What
    ``str()``, ``repr()`` and ``traceback`` render comes from these. The exceptions
    are fanout's own or the SDK's raised for fanout's request: nothing else holds them."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        try:
            current.args = tuple(_redact_data(a) for a in current.args)
            for name in ("message", "body"):
                value = getattr(current, name, None)
                if isinstance(value, (str, dict, list)):
                    setattr(current, name, _redact_data(value))
        except (AttributeError, TypeError):  # pragma: no cover - read-only attributes
            pass
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
