"""Signed messages between the processes of a job (jaxdbg/job/message_signing.py)."""

import json

import pytest

from jaxdbg.job import message_signing as signing

SECRET = b"the job's secret"


def test_a_signed_message_opens_with_the_secret_at_its_key():
    text = signing.sign(SECRET, "jaxdbg/t/p1-1-ab/in/0", {"op": "execute", "line": "p y"})
    assert signing.open_signed(SECRET, "jaxdbg/t/p1-1-ab/in/0", text) == {"op": "execute", "line": "p y"}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"op": "execute", "line": "p y"}),  # unsigned
        signing.sign(b"another secret", "k/in/0", {"op": "execute"}),  # wrong secret
        signing.sign(SECRET, "k/in/1", {"op": "execute"}),  # signed for another key
        "not json",
        json.dumps({"body": 3, "mac": "x"}),
        json.dumps([1]),  # not a message
    ],
)
def test_anything_else_is_refused(text):
    with pytest.raises(signing.Refused):
        signing.open_signed(SECRET, "k/in/0", text)


def test_a_changed_body_is_refused():
    envelope = json.loads(signing.sign(SECRET, "k", {"line": "p y"}))
    envelope["body"] = envelope["body"].replace("p y", "import os")
    with pytest.raises(signing.Refused):
        signing.open_signed(SECRET, "k", json.dumps(envelope))


def test_the_job_tag_depends_on_secret_and_coordinator_and_hides_the_secret():
    tag = signing.job_tag(SECRET, "127.0.0.1:1234")
    assert tag == signing.job_tag(SECRET, "127.0.0.1:1234")
    assert tag != signing.job_tag(b"other", "127.0.0.1:1234") != signing.job_tag(SECRET, "10.0.0.1:1")
    assert SECRET.hex()[:12] not in tag and len(tag) == 12
