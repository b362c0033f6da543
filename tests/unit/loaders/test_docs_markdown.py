"""load_docs on Markdown/MDX/HTML files and directories, including the Adobe Commerce guides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from apiatlas.errors import LoaderError
from apiatlas.loaders.docs import load_docs, slugify

PAGE = """---
title: Locations guide
description: "How to manage locations"
---
import { Tabs } from '@components'

<Fragment src="../includes/intro.md"/>

Welcome to the locations guide.

# Locations guide

Locations are the places where a seller does business.

<InlineAlert variant="info" slots="text"/>

Keep the `<TOKEN>` placeholder and <ACCESS_TOKEN> in prose.

## Create a location

Use `POST /v2/locations` to create a location.

```python
# This is a comment, not a heading
import requests
<Details summary="kept in code"/>
```

## Update a location

### Request

Send the changed fields.

## Empty sibling

## Errors & limits

Too many requests return 429.

## Create a location

A second section with the same heading.

##### Deep heading stays text

More text.
"""


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "guide.mdx"
    path.write_text(PAGE, encoding="utf-8")
    return path


def test_sections_follow_the_headings(page: Path) -> None:
    [doc] = load_docs(page)
    assert doc.title == "Locations guide"
    assert doc.source == str(page.resolve())
    paths = [s.section_path for s in doc.sections]
    assert paths == [
        ["Locations guide"],
        ["Locations guide"],
        ["Locations guide", "Create a location"],
        ["Locations guide", "Update a location", "Request"],
        ["Locations guide", "Errors & limits"],
        ["Locations guide", "Create a location"],
    ]
    anchors = [s.anchor for s in doc.sections]
    assert anchors == [
        "",
        "locations-guide",
        "create-a-location",
        "request",
        "errors--limits",
        "create-a-location-1",
    ]
    assert all(s.source == doc.source and s.title == doc.title for s in doc.sections)


def test_preamble_and_mdx_are_cleaned(page: Path) -> None:
    [doc] = load_docs(page)
    preamble, intro = doc.sections[0], doc.sections[1]
    assert preamble.text == "Welcome to the locations guide."
    assert "Fragment" not in preamble.text and "import {" not in preamble.text
    assert "InlineAlert" not in intro.text
    assert "`<TOKEN>`" in intro.text and "<ACCESS_TOKEN>" in intro.text


def test_code_blocks_are_kept_whole(page: Path) -> None:
    [doc] = load_docs(page)
    create = doc.sections[2]
    assert "# This is a comment, not a heading" in create.text
    assert "import requests" in create.text
    assert '<Details summary="kept in code"/>' in create.text


def test_empty_sections_merge_into_the_next(page: Path) -> None:
    [doc] = load_docs(page)
    request = doc.sections[3]
    assert request.text == "Send the changed fields."
    errors = doc.sections[4]
    assert errors.text.startswith("Empty sibling\n\nToo many requests")
    assert doc.sections[-1].text.endswith("##### Deep heading stays text\n\nMore text.")


def test_title_falls_back_to_first_h1_then_file_stem(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Intro\n\n# Real *title*\n\nBody\n", encoding="utf-8")
    (tmp_path / "b-notes.markdown").write_text("## Only h2\n\nBody\n", encoding="utf-8")
    (tmp_path / "skip.txt").write_text("# not a doc\n", encoding="utf-8")
    hidden = tmp_path / ".git"
    hidden.mkdir()
    (hidden / "x.md").write_text("# hidden\n", encoding="utf-8")
    pages = load_docs(str(tmp_path))
    assert [p.title for p in pages] == ["Real title", "b-notes"]
    assert pages[1].sections[0].section_path == ["b-notes", "Only h2"]


def test_html_files_are_sanitised_and_split(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<title>Webhooks</title><script>alert(1)</script><nav>Menu</nav>"
        "<h1>Webhooks</h1><p>Intro.</p><h2>Subscribe</h2><p>Call <code>POST /hooks</code>.</p>",
        encoding="utf-8",
    )
    [doc] = load_docs(path)
    assert doc.title == "Webhooks"
    assert [(s.section_path, s.anchor, s.text) for s in doc.sections] == [
        (["Webhooks"], "webhooks", "Intro."),
        (["Webhooks", "Subscribe"], "subscribe", "Call `POST /hooks`."),
    ]


def test_slugify_matches_github() -> None:
    assert slugify("Step 2. Create sources") == "step-2-create-sources"
    assert slugify("POST /V1/orders (async)") == "post-v1orders-async"
    assert slugify("Héllo wörld_x") == "héllo-wörld_x"


def test_missing_path_is_a_loader_error(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="no such file") as info:
        load_docs(tmp_path / "missing.md")
    assert info.value.source.endswith("missing.md")


def test_undecodable_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes(b"# Title\n\nline two \xff\xfe\n")
    with pytest.raises(LoaderError, match="not valid UTF-8") as info:
        load_docs(path)
    assert info.value.source == str(path.resolve())
    assert info.value.line == 3


def test_invalid_front_matter_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "fm.md"
    path.write_text("---\ntitle: ok\nbad: [unclosed\n---\n# T\n", encoding="utf-8")
    with pytest.raises(LoaderError, match="front matter") as info:
        load_docs(path)
    assert info.value.line is not None and info.value.line >= 3


def test_directory_without_docs_and_unsupported_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(LoaderError, match="no documentation files"):
        load_docs(tmp_path)
    with pytest.raises(LoaderError, match="not a documentation file"):
        load_docs(tmp_path / "notes.txt")


ADOBE_COMPONENTS = re.compile(r"<(InlineAlert|Fragment|CodeBlock|Details|Edition)\b")


@pytest.mark.shared_data
def test_adobe_commerce_docs_tree_loads(shared_data: Path) -> None:
    root = shared_data / "adobe-commerce" / "docs" / "src" / "pages"
    pages = load_docs(root)
    assert len(pages) == 134
    assert [p.source for p in pages] == sorted(p.source for p in pages)
    by_source = {Path(p.source).relative_to(root).as_posix(): p for p in pages}
    assert by_source["rest/tutorials/inventory/create-sources.md"].title == "Step 2. Create sources"
    sections = [s for p in pages for s in p.sections]
    assert len(sections) > 900
    assert all(s.section_path and s.section_path[0] == s.title for s in sections)
    assert all(s.text.strip() for s in sections)
    leftovers = [s.uri for s in sections if _prose_has_component(s.text)]
    assert leftovers == []
    for page in pages:
        anchors = [s.anchor for s in page.sections]
        assert len(anchors) == len(set(anchors)), page.source


def _prose_has_component(text: str) -> bool:
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return ADOBE_COMPONENTS.search(prose) is not None


@pytest.mark.shared_data
def test_create_sources_tutorial_names_the_endpoint(shared_data: Path) -> None:
    path = (
        shared_data / "adobe-commerce" / "docs" / "src" / "pages"
        / "rest" / "tutorials" / "inventory" / "create-sources.md"
    )
    [page] = load_docs(path)
    first = next(s for s in page.sections if s.anchor == "create-the-first-source")
    assert first.section_path == ["Step 2. Create sources", "Create the first source"]
    assert "`POST V1/inventory/sources`" in first.text
    assert "POST <host>/rest/default/V1/inventory/sources" in first.text
    intro = page.sections[0]
    assert "physical locations" in intro.text


def test_components_spanning_lines_are_dropped_and_inner_text_kept(tmp_path: Path) -> None:
    path = tmp_path / "multi.mdx"
    path.write_text(
        "# Page\n\n<InlineAlert\n  variant=\"info\"\n  slots=\"text\"\n/>\n\n"
        "<Details summary=\"More\">\nInner <b>bold</b> text.\n</Details>\n"
        "export const meta = {}\n",
        encoding="utf-8",
    )
    [page] = load_docs(path)
    assert page.sections[0].text == "Inner bold text."
