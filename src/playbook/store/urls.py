"""A PostgreSQL URL's password, kept out of what Playbook writes and says.

`masked` is how a message names a target, `url_without_password` what a settings file may
hold, `scrub` a driver's message with the password nowhere in it. Below both `target.py`
(which opens a target) and `postgres/opening.py` (which reports why it could not).
"""

from __future__ import annotations

import re
from urllib.parse import unquote


def masked(url: str) -> str:
    """`url` with its password masked (`***`): how a message names a PostgreSQL target."""
    url = re.sub(r"(://[^/:@]*):[^/?]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url)


def url_without_password(url: str) -> str:
    """`url` with its password taken out (the user's, and a `password=` parameter): what a
    file may hold, since libpq finds the password in ~/.pgpass or $PGPASSWORD. For a
    writer of settings (`hooks install`); messages mask it instead (`str(Target)`)."""
    url = re.sub(r"(://[^/:@]*):[^/?]*@", r"\1@", url)
    url = re.sub(r"([?&])password=[^&]*&?", r"\1", url)
    return url[:-1] if url.endswith(("?", "&")) else url


def has_password(url: str) -> bool:
    return url_without_password(url) != url


def scrub(text: str, url: str) -> str:
    """`text` (a driver's message about `url`) with the URL masked and its password, as
    written or decoded, nowhere in it; when the password is too short to mask without
    garbling the message, the driver's words are dropped (libpq quotes whatever it could
    not parse: a password included)."""
    secrets: set[str] = set()
    user = re.search(r"://[^/:@]*:([^/?]*)@", url)
    if user:  # libpq ends the password at the first "@", this module at the last: both
        parts = user.group(1).split("@")
        secrets.update(
            "@".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)
        )
    secrets.update(re.findall(r"[?&]password=([^&]*)", url))
    secrets |= {unquote(s) for s in secrets}
    secrets.discard("")
    text = text.replace(url, masked(url))
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            if len(secret) < 4:
                return "(the driver's message is withheld: it quotes the password)"
            text = text.replace(secret, "***")
    return text
