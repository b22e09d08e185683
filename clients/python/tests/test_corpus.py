"""The hostile outcome corpus (tests/data/hostile/outcomes in the repository; its README.md
says how it is laid out), read by this client. The inbox's black-box test and the Rust
client's tests run the same cases: a check made where outcomes are written is made where
they are read.

Each case's request is placed with :func:`answer_inbox.place`, the case's outcome written
into ``answers/`` as a forger would, and one look (:func:`answer_inbox.wait` with no time
to wait) must give the case's verdict: a genuine outcome comes back with its status (or
as the error that status raises), a ``blocked`` one is :class:`UntrustedOutcome` naming
the problem. Unless refusing it needs what this client does not know (the case's
``needs``; the README says why): then the file is taken as the status it claims, and this
test says so. Who owns the file it always knows: a case's ``writer`` is the account the
file is given to (see ``crew`` in conftest.py), in a team spool of that account's group.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from conftest import CREW_MEMBERS, OUTSIDER, REPO_DIR, Crew, crew, team_spool, write_outcome

import answer_inbox
from answer_inbox import Declined, Expired, Placed, Rejected, UntrustedOutcome
from answer_inbox.questions import read_questions

CORPUS = REPO_DIR / "tests" / "data" / "hostile" / "outcomes"

#: What a reader may need to know to refuse a case, and what this client knows: the
#: outcome file with the request's id and version, and the questions of a request in the
#: inbox's own shapes, and who owns the file. Not whether a request is valid. Of the other
#: systems' dialects it knows LangGraph's HumanInterrupt and LangChain's HITL (see
#: :func:`knows`).
NEEDS = ("outcome", "questions", "dialect", "validity", "owner", "approvals")
KNOWS = ("outcome", "questions", "owner", "approvals")


def knows(needs: str, request: bytes) -> bool:
    """Whether this client knows what refusing a case needs: a dialect only when it reads
    the request's questions (HumanInterrupt, LangChain HITL; not MCP elicitation or
    AskUserQuestion)."""
    if needs == "dialect":
        return read_questions(request) is not None
    return needs in KNOWS

#: Who may own a case's outcome file (or approval files), and the account name each
#: stands for.
WRITERS = {
    "asker": pwd.getpwuid(os.geteuid()).pw_name,
    "member": CREW_MEMBERS[0],
    "second-member": CREW_MEMBERS[1],
    "outsider": OUTSIDER,
}

OPERATOR = f"operator:{pwd.getpwuid(os.geteuid()).pw_name}"


def manifest() -> Dict[str, Dict[str, Any]]:
    cases: Dict[str, Dict[str, Any]] = json.loads((CORPUS / "verdicts.json").read_text())
    return cases


def case_files(name: str) -> Tuple[bytes, bytes]:
    """The request as placed and the outcome as written, for request id ``<case>``."""
    entry = manifest()[name]
    id = name[: -len(".json")]
    request = (CORPUS / "requests" / f"{entry.get('request', 'confirm')}.json").read_text()
    request = request.replace("{{id}}", id)
    return request.encode(), fill((CORPUS / name).read_text(), name, request).encode()


def fill(template: str, name: str, request: str) -> str:
    """A template of case ``name`` with its names filled in (the README lists them)."""
    filled = template.replace("{{id}}", name[: -len(".json")])
    filled = filled.replace("{{sha256}}", hashlib.sha256(request.encode()).hexdigest())
    filled = filled.replace("{{operator}}", OPERATOR)
    writer = WRITERS[manifest()[name].get("writer", "asker")]
    filled = filled.replace("{{writer}}", f"operator:{writer}")
    filled = filled.replace("{{member}}", f"operator:{WRITERS['member']}")
    return filled.replace("{{second-member}}", f"operator:{WRITERS['second-member']}")


def approval_files(name: str) -> List[Tuple[str, str, bytes]]:
    """The approval files case ``name`` places: (the account it names, the role that owns
    it, its bytes)."""
    entry = manifest()[name]
    request = case_files(name)[0].decode()
    found = []
    for approval in entry.get("approvals", []):
        template = (CORPUS / "approvals" / f"{approval['file']}.json").read_text()
        account = WRITERS[approval["by"]]
        data = fill(template, name, request).replace("{{approver}}", f"operator:{account}")
        found.append((account, approval.get("owner", approval["by"]), data.encode()))
    return found


def owner(team: Crew, writer: str) -> Optional[int]:
    """The uid a case's file is given to, if not this account's."""
    uids = {"member": team.members[0], "second-member": team.members[1]}
    return {**uids, "outsider": team.outsider}.get(writer)


def write_approval(placed: Placed, account: str, data: bytes) -> Path:
    """Places ``account``'s approval file as an inbox does (whole, then linked), in
    ``approvals/``, made as the inbox makes it when missing (the spool's group and mode)."""
    approvals = Path(placed.spool, "approvals")
    if not approvals.exists():
        approvals.mkdir()
        spool_dir = Path(placed.spool).stat()
        os.chown(approvals, -1, spool_dir.st_gid)
        approvals.chmod(spool_dir.st_mode & 0o7777)
    tmp = Path(placed.spool, "tmp", f"{placed.id}+{account}.forged")
    tmp.write_bytes(data)
    tmp.chmod(0o640)
    path = approvals / f"{placed.id}+{account}.json"
    os.link(tmp, path)
    tmp.unlink()
    return path


def look(placed: Placed) -> Tuple[Optional[str], Optional[str]]:
    """What one look at the files gives: the status taken (``None`` if the file is
    refused) and the reason of a refusal."""
    try:
        return answer_inbox.wait(placed, timeout=0).status, None
    except Declined:
        return "declined", None
    except Expired:
        return "expired", None
    except Rejected:
        return "rejected", None
    except UntrustedOutcome as refusal:
        return None, refusal.reason


def test_the_corpus_is_there_and_says_what_each_case_needs() -> None:
    cases = manifest()
    assert len(cases) >= 19, sorted(cases)
    for name, entry in cases.items():
        assert (CORPUS / name).is_file(), name
        assert entry.get("needs", "outcome") in NEEDS, name
        assert entry.get("writer", "asker") in WRITERS, name
        for approval in entry.get("approvals", []):
            assert approval["by"] in WRITERS and approval.get("owner", "asker") in WRITERS, name
            assert (CORPUS / "approvals" / f"{approval['file']}.json").is_file(), name
        assert (CORPUS / "requests" / f"{entry.get('request', 'confirm')}.json").is_file(), name


@pytest.mark.parametrize("name", sorted(manifest()))
def test_the_client_gives_the_case_its_verdict(tmp_path: Path, name: str) -> None:
    entry = manifest()[name]
    request, outcome = case_files(name)
    team = crew()
    writer = entry.get("writer", "asker")
    if isinstance(team, str):
        if writer != "asker" or "approvals" in entry:
            pytest.skip(f"written by another account: {team}")
    else:
        team_spool(tmp_path / "spool", team)
    placed = answer_inbox.place(request, tmp_path / "spool")
    # The approvals first, as their inboxes place them before the outcome.
    for account, role, data in approval_files(name):
        path = write_approval(placed, account, data)
        if not isinstance(team, str) and owner(team, role) is not None:
            os.chown(path, owner(team, role), -1)
    write_outcome(placed, outcome)
    uid = None if isinstance(team, str) else owner(team, writer)
    if uid is not None:
        # Given away after it is in place: what a reader sees is the owner fstat reports.
        os.chown(placed.outcome_path, uid, -1)

    status, refusal = look(placed)
    if entry["verdict"] != "blocked":
        assert (status, refusal) == (entry["verdict"], None), entry["why"]
    elif knows(entry.get("needs", "outcome"), request):
        assert refusal is not None, f"{entry['why']}: taken as {status}"
        assert entry["reason"] in refusal, refusal
    else:
        # Refusing it needs what this client does not know (README.md): it is taken as
        # the status it claims.
        assert (status, refusal) == (json.loads(outcome)["status"], None), entry["why"]
