"""The distribution: a wheel and an sdist built with ``python -m build`` carry the SPDX
licence (PEP 639) and install into a clean venv, where the package imports and asks.

scripts/test builds them (``$ANSWER_INBOX_PY_DIST`` names the directory); run alone, the
test builds them itself when ``build`` is installed, and is skipped, saying so, when not."""

from __future__ import annotations

import email
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import CLIENT_DIR, REPO_DIR


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    named = os.environ.get("ANSWER_INBOX_PY_DIST")
    if named:
        return Path(named)
    pytest.importorskip("build", reason="python -m build is not installed (pip install build)")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(CLIENT_DIR)],
        check=True,
        capture_output=True,
    )
    return out


def one(dist: Path, pattern: str) -> Path:
    (found,) = dist.glob(pattern)
    return found


def test_the_licence_is_an_spdx_expression_with_its_file(dist: Path) -> None:
    wheel = one(dist, "answer_inbox-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(metadata_name))
        names = archive.namelist()
    assert metadata["License-Expression"] == "MIT"
    assert metadata["License-File"] == "LICENSE"
    assert not any(c.startswith("License ::") for c in metadata.get_all("Classifier") or [])
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    # The licence shipped is the repository's.
    assert (CLIENT_DIR / "LICENSE").read_bytes() == (REPO_DIR / "LICENSE").read_bytes()

    sdist = one(dist, "answer_inbox-*.tar.gz")
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("/LICENSE") for n in archive.getnames())


@pytest.mark.parametrize("kind", ["answer_inbox-*.whl", "answer_inbox-*.tar.gz"])
def test_each_installs_into_a_clean_venv_and_imports(
    dist: Path, kind: str, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # The package has no dependencies; the sdist builds in pip's isolated build
    # environment with the setuptools pyproject.toml asks for.
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(one(dist, kind))],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr
    check = subprocess.run(
        [
            str(python),
            "-c",
            "import answer_inbox, inspect; "
            "assert inspect.iscoroutinefunction(answer_inbox.ask_async); "
            "print(answer_inbox.__file__)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert check.returncode == 0, check.stderr
    assert str(venv) in check.stdout, "imported from the venv, not the source tree"
