"""Every local input is read through one bounded reader (apiatlas.files.read_bounded): it refuses
what is not a regular file before opening it and stops reading at the limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from apiatlas.errors import LoaderError, SpecError
from apiatlas.files import read_bounded
from apiatlas.loaders import limits
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.fetch_policy import FetchPolicy
from apiatlas.loaders.openapi import load_openapi


def test_a_regular_file_within_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes(b"x" * 1024)
    assert read_bounded(path, 1024) == b"x" * 1024


def test_the_limit_is_checked_on_the_bytes_read_not_the_files_size(tmp_path: Path) -> None:
    # /proc files report a size of 0 whatever they hold; the reader counts what it reads.
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        pytest.skip("needs Linux's /proc")
    assert maps.stat().st_size == 0
    with pytest.raises(LoaderError, match=r"over the 16-byte limit") as e:
        read_bounded(maps, 16)
    assert e.value.source == str(maps)


def test_a_device_is_refused_before_it_is_read() -> None:
    with pytest.raises(SpecError, match=r"not a regular file \(a character device\)") as e:
        read_bounded(Path("/dev/zero"), 1 << 30, SpecError)
    assert e.value.source == "/dev/zero"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    with pytest.raises(SpecError, match=r"not a regular file \(a FIFO or pipe\)"):
        load_openapi(fifo)
    page = tmp_path / "guide.md"
    os.mkfifo(page)
    with pytest.raises(LoaderError, match=r"not a regular file \(a FIFO or pipe\)"):
        load_docs(page)


def test_a_ref_to_a_device_is_refused_by_name(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n"
        "      responses:\n        '200':\n          description: ok\n"
        "          content:\n            application/json:\n"
        "              schema: {$ref: 'zero.yaml#/x'}\n",
        encoding="utf-8",
    )
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    with pytest.raises(SpecError, match="leads outside the folder of the spec"):
        load_openapi(spec)  # by default a ref reads nothing outside the spec's folder
    allowed = FetchPolicy(read_outside=True)
    device = r"zero.yaml.*not a regular file \(a character device\)"
    with pytest.raises(SpecError, match=device) as e:
        load_openapi(spec, fetch_policy=allowed)
    assert e.value.source == str(spec)  # the referring document, with the $ref's pointer
    assert e.value.pointer is not None and e.value.pointer.endswith("/schema")


def test_a_doc_page_over_the_limit_is_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "guide.md"
    page.write_text("# Guide\n\n" + "words " * 400, encoding="utf-8")
    monkeypatch.setattr(limits, "MAX_DOCUMENT_BYTES", 1024)
    with pytest.raises(LoaderError, match=r"over the 1,024-byte limit") as e:
        load_docs(page)
    assert e.value.source == str(page)


def test_a_directory_skips_fifos_and_devices_among_its_files(tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n    get:\n"
        "      responses: {'200': {description: ok}}\n",
        encoding="utf-8",
    )
    os.mkfifo(tmp_path / "waiting.yaml")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    [spec] = load_openapi(tmp_path)
    assert [e.path for e in spec.endpoints] == ["/a"]
