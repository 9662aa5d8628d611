"""Reading MIME multipart user data."""

from __future__ import annotations

import email


def parts(text: str) -> list[email.message.Message]:
    """The parts of a MIME multipart document."""
    message = email.message_from_string(text)
    assert message.is_multipart() and message.get_content_type() == "multipart/mixed"
    payload = message.get_payload()
    assert isinstance(payload, list)
    return [part for part in payload if isinstance(part, email.message.Message)]
