"""Scanning a folder of code: what is read, what is skipped with a warning, what is reused."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from apiatlas.errors import LoaderError
from apiatlas.loaders.code.scan import scan

scan_module = importlib.import_module("apiatlas.loaders.code.scan")  # the package exports scan()

CLIENT = "import requests\n\ndef book():\n    return requests.post('https://api.ship.example/v2/shipments')\n"


def write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_reads_known_languages_and_skips_other_peoples_code(tmp_path: Path) -> None:
    write(tmp_path, "app/client.py", CLIENT)
    write(tmp_path, "web/api.ts", "export const f = () => fetch('/v2/carriers');\n")
    write(tmp_path, "web/types.d.ts", "declare function f(): void;\n")
    write(tmp_path, "node_modules/lib/index.js", "fetch('/v2/carriers');\n")
    write(tmp_path, ".venv/lib/x.py", CLIENT)
    write(tmp_path, "README.md", "fetch('/v2/carriers')\n")
    found = scan(tmp_path)
    assert [(f.path, f.language) for f in found.files] == [
        ("app/client.py", "python"), ("web/api.ts", "typescript")
    ]
    assert found.files[0].lines == 4 and found.files[0].calls[0].line == 4
    assert found.warnings == [] and found.parsed == 2


def test_binary_huge_and_broken_files_are_named_in_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_module, "MAX_CODE_BYTES", 1000)
    write(tmp_path, "bin.py", b"\x00\x01\x02 not text")
    write(tmp_path, "bundle.js", "fetch('/v2/x');\n" * 100)
    write(tmp_path, "broken.py", CLIENT + "\ndef oops(:\n    pass\n")
    found = scan(tmp_path)
    messages = {w.path: w.message for w in found.warnings}
    assert messages["bin.py"] == "binary content: not read"
    assert "larger than" in messages["bundle.js"] and "not read" in messages["bundle.js"]
    assert messages["broken.py"].startswith("does not parse as python at line 6")
    # a file read in part keeps the calls before the error
    assert [f.path for f in found.files] == ["broken.py"]
    assert found.files[0].calls[0].path == "https://api.ship.example/v2/shipments"


def test_links_out_of_the_folder_are_not_followed(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere", "secret.py", CLIENT)
    root = tmp_path / "repo"
    write(root, "app/client.py", CLIENT)
    os.symlink(outside, root / "app" / "linked.py")
    os.symlink(outside.parent, root / "linked_dir")
    os.symlink(root / "app" / "client.py", root / "app" / "inside.py")
    found = scan(root)
    assert [f.path for f in found.files] == ["app/client.py"]
    assert {w.path for w in found.warnings} == {"app/linked.py", "linked_dir"}
    assert all("outside the folder: not read" in w.message for w in found.warnings)


def test_an_unchanged_file_is_not_parsed_again(tmp_path: Path) -> None:
    write(tmp_path, "a.py", CLIENT)
    write(tmp_path, "b.py", CLIENT.replace("shipments", "carriers"))
    first = scan(tmp_path)
    write(tmp_path, "b.py", CLIENT.replace("shipments", "locations"))
    second = scan(tmp_path, {f.path: f for f in first.files})
    assert second.parsed == 1
    assert second.files[0] is first.files[0]
    assert second.files[1].calls[0].path == "https://api.ship.example/v2/locations"


def test_secrets_in_calls_are_scrubbed_before_they_are_kept(tmp_path: Path) -> None:
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    write(tmp_path, "pay.py", f"requests.post('https://api.ship.example/v2/x/{key}')\n")
    found = scan(tmp_path)
    (call,) = found.files[0].calls
    assert key not in call.text and key not in (call.path or "")
    assert "[REDACTED:" in call.text
    assert found.warnings[0].message.startswith("secret scrubbed at line 1")


def test_a_missing_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="not a folder of source code") as caught:
        scan(tmp_path / "nope")
    assert str(tmp_path / "nope") in str(caught.value)
