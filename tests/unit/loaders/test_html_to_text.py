"""html_to_text: sanitising hostile HTML and keeping the structure the splitter needs."""

from __future__ import annotations

from apiatlas.loaders.html import html_to_text

NASTY = """<!doctype html>
<html><head><title>Locations &amp; Stores</title>
<style>body { background: url(javascript:alert(1)) }</style>
<script>document.cookie = "stolen"</script></head>
<body onload="alert('body')">
<nav><ul><li><a href="/">Home</a></li><li><a href="/pricing">Pricing menu</a></li></ul></nav>
<header><div class="logo">Site banner</div></header>
<main><article>
<header><h1>Create a location</h1></header>
<p>Call <code>POST /v2/locations</code>.<img src="x" onerror="alert('img')">
<a href="javascript:alert('link')">Click here</a> or read <a href="../auth">the auth guide</a>.</p>
<h2>Request</h2>
<div hidden>hidden attribute text</div>
<p style="display: none">display none text</p>
<span aria-hidden="true">aria hidden text</span>
<h3>Body <em>fields</em></h3>
<pre><code class="language-json">{
  "name": "Main street",
  "nested": {"a": 1}
}</code></pre>
<ol><li>First step<ul><li>Sub step</li></ul></li><li>Second step</li></ol>
<table><thead><tr><th>Field</th><th>Type</th></tr></thead>
<tbody><tr><td>name</td><td>string</td></tr><tr><td>a|b</td><td>int</td></tr></tbody></table>
<iframe src="https://evil.example/frame">iframe fallback</iframe>
<form action="/search"><input name="q"><button>Search button</button>Form text</form>
<h2>Response</h2><p>Returns the <strong>location</strong>.</p>
</article></main>
<aside>Related links</aside>
<footer>Copyright footer</footer>
<script>alert("late")</script>
</body></html>"""


def test_title_comes_from_the_title_element() -> None:
    title, _ = html_to_text(NASTY)
    assert title == "Locations & Stores"


def test_scripts_styles_handlers_and_iframes_are_gone() -> None:
    _, text = html_to_text(NASTY)
    for bad in ("alert", "cookie", "background", "onerror", "onload", "javascript", "iframe"):
        assert bad not in text


def test_page_chrome_and_hidden_content_are_dropped() -> None:
    _, text = html_to_text(NASTY)
    for chrome in ("Home", "Pricing menu", "Site banner", "Related links", "Copyright footer",
                   "Form text", "Search button", "hidden attribute text", "display none text",
                   "aria hidden text"):
        assert chrome not in text


def test_headings_become_markdown_headings_in_order() -> None:
    _, text = html_to_text(NASTY)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# Create a location", "## Request", "### Body fields", "## Response"]


def test_code_blocks_keep_their_formatting_and_language() -> None:
    _, text = html_to_text(NASTY)
    assert '```json\n{\n  "name": "Main street",\n  "nested": {"a": 1}\n}\n```' in text
    assert "`POST /v2/locations`" in text


def test_lists_and_tables_become_readable_rows() -> None:
    _, text = html_to_text(NASTY)
    assert "1. First step\n  - Sub step\n2. Second step" in text
    assert "| Field | Type |\n| --- | --- |\n| name | string |\n| a\\|b | int |" in text


def test_links_keep_text_and_resolve_against_the_base_url() -> None:
    _, text = html_to_text(NASTY, base_url="https://docs.example.com/guides/locations/")
    assert "[the auth guide](https://docs.example.com/guides/auth)" in text
    assert "Click here" in text and "[Click here]" not in text


def test_fragment_without_title_uses_first_h1() -> None:
    title, text = html_to_text("<h1>Only <b>heading</b></h1><p>Body</p>")
    assert title == "Only heading"
    assert text == "# Only heading\n\nBody"


def test_untitled_fragment_has_empty_title() -> None:
    assert html_to_text("<p>Just text</p>") == ("", "Just text")
