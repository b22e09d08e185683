"""Preparing a request: its bytes and its id, and what is refused before anything is
placed."""

from __future__ import annotations

import json
import re
import time

import pytest

from answer_inbox import InvalidRequest, is_valid_id, new_id, prepare


def test_the_id_comes_from_the_body_then_the_given_one_then_a_ulid() -> None:
    with_id = {"inbox": 1, "id": "abc", "questions": []}
    assert prepare(with_id).id == "abc"
    assert prepare(with_id, "abc").id == "abc"
    with pytest.raises(InvalidRequest, match='body has id "abc" but "xyz" was given'):
        prepare(with_id, "xyz")
    assert prepare([], "xyz").id == "xyz"
    generated = prepare([]).id
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", generated)


def test_a_human_interrupt_list_names_its_id_in_its_one_interrupt() -> None:
    interrupt = [
        {
            "id": "intr-1",
            "action_request": {"action": "rm", "args": {}},
            "config": {"allow_accept": True},
        }
    ]
    assert prepare(interrupt).id == "intr-1"
    # A bare array of questions has no body id, whatever its items carry.
    assert prepare([{"id": "q", "question": "?", "type": "confirm"}], "r1").id == "r1"


@pytest.mark.parametrize("bad", ["", "-a", ".hidden", "a/b", "../x", "a b", "é", "a" * 129, "a\n"])
def test_invalid_ids_are_refused(bad: str) -> None:
    assert not is_valid_id(bad)
    with pytest.raises(InvalidRequest, match="not a valid request id"):
        prepare([], bad)
    with pytest.raises(InvalidRequest, match="not a valid request id"):
        prepare({"id": bad, "questions": []})


def test_valid_ids() -> None:
    for good in ["a", "01J9Z", "deploy-spec-042", "x.y_z-1", "a" * 128]:
        assert is_valid_id(good)
    assert not is_valid_id(7)
    with pytest.raises(InvalidRequest):
        prepare({"id": 7, "questions": []})


def test_a_value_is_written_as_pretty_utf8_json_with_a_final_newline() -> None:
    prepared = prepare({"title": "Déploiement", "questions": [{"id": "go"}]}, "r")
    assert prepared.data.endswith(b"]\n}\n")
    assert "Déploiement".encode() in prepared.data
    assert json.loads(prepared.data) == {"title": "Déploiement", "questions": [{"id": "go"}]}


def test_text_must_be_json_and_is_kept_as_given() -> None:
    assert prepare(b"[ ]", "r").data == b"[ ]"
    with pytest.raises(InvalidRequest, match="not JSON"):
        prepare("{not json", "r")
    with pytest.raises(InvalidRequest, match="not UTF-8"):
        prepare(b'["\xff"]', "r")
    with pytest.raises(InvalidRequest, match="NaN is not JSON"):
        prepare("[NaN]", "r")
    with pytest.raises(InvalidRequest, match="cannot be written as JSON"):
        prepare({"questions": [float("inf")]}, "r")
    with pytest.raises(InvalidRequest, match="cannot be written as JSON"):
        prepare({"questions": {1, 2}}, "r")


def test_a_request_over_one_mebibyte_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="at most 1048576"):
        prepare({"questions": [], "padding": "x" * (1024 * 1024)}, "r")


def test_ulids_are_unique_and_sort_by_time() -> None:
    first = new_id()
    time.sleep(0.002)
    second = new_id()
    assert first != second and first < second
    assert len({new_id() for _ in range(1000)}) == 1000
