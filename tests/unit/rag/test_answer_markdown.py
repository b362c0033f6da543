"""Answers show the docs' links and code safely: only http(s), mailto and relative links stay
links, and hidden characters read as escapes."""

from __future__ import annotations

import pytest

from apiatlas.rag.answer.markdown import safe_markdown

RLO = "\u202e"
ZWSP = "\u200b"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("see [the demo](javascript:alert(1))", "see the demo"),
        ("an ![image](data:image/png;base64,AAAA) here", "an image here"),
        ("open [it]( JavaScript:alert(1) )", "open it"),
        ("a <javascript:alert(1)> link", "a javascript:alert(1) link"),
        ("[ref]: vbscript:msgbox\n", "[ref]: #\n"),
        ("[local](file:///etc/passwd)", "local"),
    ],
)
def test_a_link_to_anything_but_the_web_is_shown_as_its_text(text: str, shown: str) -> None:
    assert safe_markdown(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "[the guide](https://docs.example.com/a_(b)#c)",
        "[next](../guides/shipping.md#labels)",
        "[mail us](mailto:api@example.com)",
        "<https://docs.example.com/>",
        "[1]: https://docs.example.com/ref",
    ],
)
def test_web_mail_and_relative_links_stay(text: str) -> None:
    assert safe_markdown(text) == text


def test_bidi_controls_are_escaped_everywhere_and_hidden_characters_in_code() -> None:
    text = (f"1. `GET /{RLO}gnp.exe` — Download {RLO}the file\n"
            f"```bash\ncurl https://api.example.com/v1/{ZWSP}files\n```\n"
            f"Prose keeps a zero-width joiner: 👩\u200d💻")
    assert safe_markdown(text) == (
        "1. `GET /\\u202egnp.exe` — Download \\u202ethe file\n"
        "```bash\ncurl https://api.example.com/v1/\\u200bfiles\n```\n"
        "Prose keeps a zero-width joiner: 👩\u200d💻"
    )


def test_a_link_inside_code_is_left_as_code() -> None:
    text = "`[x](javascript:alert(1))` is how the guide writes it"
    assert safe_markdown(text) == text
