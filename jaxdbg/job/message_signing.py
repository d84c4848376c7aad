"""Signed messages: what one process of a job writes to the store for another.

The coordination service has no authentication, so anyone who reaches the
coordinator's port can write its keys. Every debugger message is therefore signed
with HMAC-SHA256 under the job's secret (``$JAXDBG_DEBUG_SECRET``, set by the launcher
in every process; it never travels through the store). The signature covers the key
the message is written at as well as its body, so a signed message copied to another
key (another stop, a later command) is refused too.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any


class Refused(Exception):
    """A message that is not signed with the job's secret."""


def _mac(secret: bytes, key: str, body: str) -> str:
    return hmac.new(secret, f"{key}\n{body}".encode(), hashlib.sha256).hexdigest()


def sign(secret: bytes, key: str, message: dict[str, Any]) -> str:
    """``message`` as the text to write at ``key``."""
    body = json.dumps(message, sort_keys=True)
    return json.dumps({"body": body, "mac": _mac(secret, key, body)})


def open_signed(secret: bytes, key: str, text: str) -> dict[str, Any]:
    """The message written at ``key``; raises Refused unless it is signed with ``secret``."""
    try:
        envelope = json.loads(text)
        body, mac = envelope["body"], envelope["mac"]
    except (ValueError, TypeError, KeyError):
        raise Refused(f"{key}: not a signed message") from None
    if not isinstance(body, str) or not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(secret, key, body)):
        raise Refused(f"{key}: the signature does not match the job's secret")
    message = json.loads(body)
    if not isinstance(message, dict):
        raise Refused(f"{key}: not a message")
    return message


def job_tag(secret: bytes, coordinator: str) -> str:
    """A short name for the job's keys, the same in each of its processes; it says
    nothing about the secret."""
    return hmac.new(secret, f"jaxdbg job {coordinator}".encode(), hashlib.sha256).hexdigest()[:12]
