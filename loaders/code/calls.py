"""The calls in one source file that may reach an API, read with tree-sitter.

One walk serves every language: the grammars name their nodes differently (a Python ``call``, a
JavaScript or Go ``call_expression``, a Java ``method_invocation``), and the tables below say
which is which. For each call the walk reads:

- the **path** it sends: the first argument (or ``url=`` / ``{url: ...}``) that reads as a path
  or URL: a literal, an f-string or template literal, a concatenation, a format call
  (``"/x/{}".format(i)``, ``fmt.Sprintf("/x/%s", i)``, ``path_template("/x/{id}", ...)``), or a
  variable assigned one earlier in the same function or at file level. Interpolated parts
  become ``{}``; a nested call whose path the outer call sends is not a call of its own;
- the **method** it states: its name's first word (``get``, ``_post``, ``postMethod``,
  ``getForObject``; ``fetch`` is a GET unless told otherwise), a verb argument (``"POST"``,
  ``http.MethodPost``), a ``method=`` keyword or ``{method: ...}`` entry, or a verb call in the
  builder chain around it (Java's ``.POST(body)``);
- a ``METHOD /path`` **route** string argument;
- otherwise, when the callee is a member (``client.create_location``) whose name has two words
  or more, the **name** alone, for the linker to compare with operation ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

import tree_sitter as ts

from apiatlas.loaders.code.models import TEXT_CHARS, CodeCall, Language

HTTP_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
_METHOD_KEYS = frozenset({"method", "http_verb", "http_method", "verb", "type"})
_URL_KEYS = frozenset({"url", "uri", "path", "endpoint", "route"})
_ROUTE = re.compile(r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(/\S*)$")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_FORMAT_VERB = re.compile(r"%[-+# 0]*\d*(?:\.\d+)?[sdvqxXfiu]|\{[^{}/]*\}")
_DOTTED = re.compile(r"^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$")
_PATH_CHARS = re.compile(r"^[\w.{}\-/~:%@=&?+,]+$")

_CALLS = frozenset({"call", "call_expression", "method_invocation", "new_expression",
                    "object_creation_expression"})  # fmt: skip
_MEMBERS = frozenset({"attribute", "member_expression", "selector_expression",
                      "field_access", "scoped_identifier"})  # fmt: skip
_STRINGS = frozenset({"string", "template_string", "interpreted_string_literal",
                      "raw_string_literal", "string_literal", "concatenated_string"})  # fmt: skip
_HOLES = frozenset({"interpolation", "template_substitution"})
_QUOTES = frozenset({"string_start", "string_end", '"', "'", "`", '"""'})
_BINARY = frozenset({"binary_operator", "binary_expression"})
_PARENS = frozenset({"parenthesized_expression"})
_FUNCTIONS = frozenset({"function_definition", "function_declaration", "method_definition",
                        "method_declaration", "constructor_declaration",
                        "generator_function_declaration", "function_item"})  # fmt: skip
_CLASSES = frozenset({"class_definition", "class_declaration", "interface_declaration"})
_KEYWORD_ARGS = frozenset({"keyword_argument"})
_OBJECTS = frozenset({"object", "dictionary"})
_PAIRS = frozenset({"pair"})


@cache
def _language(language: Language, tsx: bool) -> ts.Language:
    if language == "python":
        import tree_sitter_python as grammar

        return ts.Language(grammar.language())
    if language == "javascript":
        import tree_sitter_javascript as grammar

        return ts.Language(grammar.language())
    if language == "typescript":
        import tree_sitter_typescript as grammar

        return ts.Language(grammar.language_tsx() if tsx else grammar.language_typescript())
    if language == "go":
        import tree_sitter_go as grammar

        return ts.Language(grammar.language())
    import tree_sitter_java as grammar

    return ts.Language(grammar.language())


def parse(source: bytes, language: Language, *, tsx: bool = False) -> ts.Tree:
    """The file's syntax tree (tree-sitter recovers from errors; see :func:`first_error`).
    ``tsx``: TypeScript with JSX (``.tsx`` files)."""
    return ts.Parser(_language(language, tsx)).parse(source)


def first_error(tree: ts.Tree) -> int | None:
    """The 1-based line of the first text the parser could not read, or ``None``."""
    if not tree.root_node.has_error:
        return None
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node.start_point.row + 1
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return tree.root_node.start_point.row + 1


def words(name: str) -> list[str]:
    """``postMethod`` -> ``["post", "method"]``; ``_get_api_list`` -> ``["get", "api", "list"]``."""
    return [w.lower() for w in _WORDS.findall(name)]


def calls(tree: ts.Tree, source: bytes) -> list[CodeCall]:
    """Every call of the file that may reach an API, in source order."""
    walk = _Walk(source)
    walk.collect(tree.root_node)
    # A call that built a path a later call sends (``url = fmt.Sprintf(...)``) is not a site.
    kept = [c for key, c in zip(walk.keys, walk.found, strict=True) if key not in walk.consumed]
    return sorted(kept, key=lambda c: (c.line, c.column))


@dataclass
class _Scope:
    """A function (or the file): its name and what its variables were last assigned, by line."""

    name: str
    assigned: dict[str, list[tuple[int, ts.Node]]] = field(default_factory=dict)


@dataclass
class _Walk:
    source: bytes
    found: list[CodeCall] = field(default_factory=list)
    keys: list[tuple[int, int]] = field(default_factory=list)
    consumed: set[tuple[int, int]] = field(default_factory=set)
    scopes: list[_Scope] = field(default_factory=lambda: [_Scope("")])

    def text(self, node: ts.Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def collect(self, root: ts.Node) -> None:
        stack: list[tuple[ts.Node, bool]] = [(root, False)]
        classes: list[str] = []
        while stack:
            node, leaving = stack.pop()
            if leaving:
                if node.type in _FUNCTIONS:
                    self.scopes.pop()
                elif node.type in _CLASSES:
                    classes.pop()
                continue
            if node.type in _FUNCTIONS:
                name = self.text(node.child_by_field_name("name"))
                qualified = ".".join([*classes[-1:], name]) if name else ""
                self.scopes.append(_Scope(qualified or self.scopes[-1].name))
                stack.append((node, True))
            elif node.type in _CLASSES:
                classes.append(self.text(node.child_by_field_name("name")))
                stack.append((node, True))
            self._assignment(node)
            if node.type in _CALLS and _key(node) not in self.consumed:
                self._call(node)
            stack.extend((child, False) for child in reversed(node.children))

    # -- assignments ---------------------------------------------------------------------------

    def _assignment(self, node: ts.Node) -> None:
        pairs: list[tuple[ts.Node | None, ts.Node | None]] = []
        if node.type in {"assignment", "assignment_expression", "assignment_statement"}:
            pairs = _zip(node.child_by_field_name("left"), node.child_by_field_name("right"))
        elif node.type in {"variable_declarator", "short_var_declaration", "var_spec",
                           "const_spec"}:  # fmt: skip
            left = node.child_by_field_name("name") or node.child_by_field_name("left")
            right = node.child_by_field_name("value") or node.child_by_field_name("right")
            pairs = _zip(left, right)
        for left, right in pairs:
            if left is not None and right is not None and left.type == "identifier":
                seen = self.scopes[-1].assigned.setdefault(self.text(left), [])
                seen.append((node.start_point.row, right))

    def _value(self, name: str, row: int) -> ts.Node | None:
        for scope in (self.scopes[-1], self.scopes[0]):
            before = [n for r, n in scope.assigned.get(name, []) if r <= row]
            if before:
                return before[-1]
        return None

    # -- templates -----------------------------------------------------------------------------

    def template(self, node: ts.Node | None, row: int, depth: int = 0) -> str | None:
        """The string a node stands for, unknown parts as ``{}``; ``None`` if it holds none."""
        if node is None or depth > 8:
            return None
        kind = node.type
        if kind in _STRINGS:
            return self._string(node, row, depth)
        if kind in _PARENS and node.named_child_count:
            return self.template(node.named_children[0], row, depth + 1)
        if kind in _BINARY:
            operator = self.text(node.child_by_field_name("operator"))
            left = self.template(node.child_by_field_name("left"), row, depth + 1)
            if operator == "%" and left is not None:
                return _FORMAT_VERB.sub("{}", left)
            if operator != "+":
                return None
            right = self.template(node.child_by_field_name("right"), row, depth + 1)
            if left is None and right is None:
                return None
            return (left if left is not None else "{}") + (right if right is not None else "{}")
        if kind == "identifier":
            value = self._value(self.text(node), row)
            if value is not None and value.start_point.row <= row:
                return self.template(value, value.start_point.row - 1, depth + 1)
            return None
        if kind in _CALLS:
            return self._formatted(node, row, depth)
        return None

    def _string(self, node: ts.Node, row: int | None = None, depth: int = 0) -> str:
        """A string's text, each interpolated part as ``{}``, or as the string a plain name in
        it was assigned (``f"{BASE}/v2/x"``) when ``row`` says where to look the name up."""
        if node.type == "concatenated_string":
            return "".join(self._string(c, row, depth) for c in node.named_children
                           if c.type in _STRINGS)  # fmt: skip
        parts: list[str] = []
        content = [c for c in node.children if c.type not in _QUOTES]
        if not content and node.type in {"string_literal", "raw_string_literal"}:
            return self.text(node).strip("\"'`")
        for child in content:
            parts.append(self._hole(child, row, depth) if child.type in _HOLES else self.text(child))
        return "".join(parts)

    def _hole(self, hole: ts.Node, row: int | None, depth: int) -> str:
        names = [c for c in hole.named_children if c.type != "comment"]
        if row is not None and len(names) == 1 and names[0].type == "identifier":
            found = self.template(names[0], row, depth + 1)
            if found is not None:
                return found
        return "{}"

    def _formatted(self, node: ts.Node, row: int, depth: int) -> str | None:
        """A format call's template: ``"/x/{}".format(i)``, ``fmt.Sprintf("/x/%s", i)``,
        ``path_template("/x/{id}", id=i)``, a tagged template ``path`/x/${i}```."""
        function = node.child_by_field_name("function")
        if function is not None and function.type in _MEMBERS:
            owner = function.child_by_field_name("object") or function.child_by_field_name(
                "operand"
            )
            if owner is not None and owner.type in _STRINGS:
                found = self._string(owner)
                return _FORMAT_VERB.sub("{}", found)
        arguments = node.child_by_field_name("arguments")
        if arguments is not None and arguments.type in _STRINGS:
            return _FORMAT_VERB.sub("{}", self._string(arguments))
        first = next(iter(_positional(arguments)), None)
        found = self.template(first, row, depth + 1)
        if found is not None and _looks_like_path(_FORMAT_VERB.sub("{}", found), known=False):
            return _FORMAT_VERB.sub("{}", found)
        return None

    # -- calls ---------------------------------------------------------------------------------

    def _call(self, node: ts.Node) -> None:
        function = (node.child_by_field_name("function")
                    or node.child_by_field_name("constructor")
                    or node.child_by_field_name("type"))  # fmt: skip
        name_node = node.child_by_field_name("name")
        owner = node.child_by_field_name("object")
        if node.type == "method_invocation":
            callee = ".".join(t for t in (self.text(owner), self.text(name_node)) if t)
            name = self.text(name_node)
            receiver = owner is not None
        else:
            callee = self.text(function)
            name = _last_identifier(callee)
            receiver = function is not None and function.type in _MEMBERS
        if not name:
            return
        row = node.start_point.row
        arguments = node.child_by_field_name("arguments")
        method, stated = self._method(name, arguments, node)
        style, path = self._target(arguments, row, known=stated)
        if style == "route" and path is not None:
            method, path = path.split(" ", 1)
        elif path is None:
            if not (receiver and _DOTTED.match(callee)
                    and len(words(" ".join(member_chain(callee)))) >= 2):
                return
            style = "name"
        if path is not None and name == "fetch" and method is None:
            method = "GET"
        first_line = self.text(node).splitlines()[0] if node.end_byte > node.start_byte else ""
        self.keys.append(_key(node))
        self.found.append(
            CodeCall(
                line=row + 1,
                column=node.start_point.column,
                function=self.scopes[-1].name,
                callee=callee[:TEXT_CHARS],
                name=name,
                method=method,
                path=path,
                receiver=receiver,
                style=style,
                text=first_line.strip()[:TEXT_CHARS],
            )
        )

    def _target(self, arguments: ts.Node | None, row: int, *, known: bool) -> tuple[str, str | None]:
        """``("route", "POST /x")``, ``("path", "/x/{}")`` or ``("path", None)``."""
        if arguments is None:
            return "path", None
        if arguments.type in _STRINGS:  # a tagged template is the whole argument list
            found = _FORMAT_VERB.sub("{}", self._string(arguments))
            return ("path", found) if _looks_like_path(found, known=known) else ("path", None)
        for value, key in _arguments(arguments):
            if (key is not None and key not in _URL_KEYS) or self._verb(value):
                continue
            found = self.template(value, row)
            if found is None:
                continue
            route = _ROUTE.match(found.strip())
            if route:
                self._consume(value, row)
                return "route", f"{route.group(1)} {_clean(route.group(2))}"
            found = _clean(found)
            if _looks_like_path(found, known=known):
                self._consume(value, row)
                return "path", found
        return "path", None

    def _consume(self, value: ts.Node, row: int, depth: int = 0) -> None:
        """A call inside the argument that gave the path, or inside what a name in it was
        assigned, is not a call of its own."""
        stack = [value]
        while stack:
            node = stack.pop()
            if node.type in _CALLS:
                self.consumed.add(_key(node))
            elif node.type == "identifier" and depth < 8:
                assigned = self._value(self.text(node), row)
                if assigned is not None and assigned.start_point.row <= row:
                    self._consume(assigned, assigned.start_point.row - 1, depth + 1)
            stack.extend(node.children)

    def _method(self, name: str, arguments: ts.Node | None, node: ts.Node) -> tuple[str | None, bool]:
        """The method, and whether an argument states it (only then may the path be a bare
        word: ``config.get("models")`` is no request)."""
        for value, key in _arguments(arguments) if arguments is not None else ():
            if key is not None and key not in _METHOD_KEYS:
                continue
            verb = self._verb(value)
            if verb:
                return verb, True
        named = words(name)
        if named and named[0] in HTTP_VERBS:
            return named[0].upper(), False
        if len(named) == 2 and named[0] == "http" and named[1] in HTTP_VERBS:
            return named[1].upper(), False  # new HttpGet(url)
        return self._chained_verb(node), False

    def _verb(self, value: ts.Node) -> str | None:
        if value.type in _STRINGS:
            text = self._string(value).strip().lower()
            return text.upper() if text in HTTP_VERBS else None
        text = self.text(value)
        last = _last_identifier(text)
        lowered = last.lower().removeprefix("method")
        if value.type in _MEMBERS | {"identifier"} and lowered in HTTP_VERBS and (
            last.isupper() or last.lower().startswith("method")
        ):
            return lowered.upper()
        return None

    def _chained_verb(self, node: ts.Node) -> str | None:
        """A verb call in the builder chain the call sits in (``.uri(u).POST(body)``)."""
        parent = node.parent
        steps = 0
        while parent is not None and steps < 12:
            if parent.type in _CALLS:
                name = _last_identifier(self.text(parent.child_by_field_name("name")
                                                  or parent.child_by_field_name("function")))  # fmt: skip
                if name.lower() in HTTP_VERBS:
                    return name.upper()
            elif parent.type not in _MEMBERS | {"argument_list", "arguments"}:
                return None
            parent = parent.parent
            steps += 1
        return None


def _key(node: ts.Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _zip(left: ts.Node | None, right: ts.Node | None) -> list[tuple[ts.Node | None, ts.Node | None]]:
    if left is None or right is None:
        return []
    if left.type == "expression_list" and right.type == "expression_list":
        return list(zip(left.named_children, right.named_children, strict=False))
    if right.type == "expression_list" and right.named_child_count == 1:
        return [(left, right.named_children[0])]
    return [(left, right)]


def _positional(arguments: ts.Node | None) -> Iterator[ts.Node]:
    for value, key in _arguments(arguments) if arguments is not None else ():
        if key is None:
            yield value


def _arguments(arguments: ts.Node) -> Iterator[tuple[ts.Node, str | None]]:
    """Each argument with its keyword (``url=``, or an object literal's key), or ``None``."""
    for child in arguments.named_children:
        if child.type in _KEYWORD_ARGS:
            key = child.child_by_field_name("name")
            value = child.child_by_field_name("value")
            if key is not None and value is not None:
                yield value, key.text.decode("utf-8", "replace").lower() if key.text else ""
        elif child.type in _OBJECTS:
            for pair in child.named_children:
                if pair.type in _PAIRS:
                    key = pair.child_by_field_name("key")
                    value = pair.child_by_field_name("value")
                    if key is not None and value is not None and key.text:
                        yield value, key.text.decode("utf-8", "replace").strip("\"'").lower()
        elif child.type != "comment":
            yield child, None


def member_chain(callee: str) -> list[str]:
    """The names after the receiver of a dotted callee: ``octokit.rest.issues.create`` ->
    ``[rest, issues, create]``, ``self._client.files.list`` -> ``[_client, files, list]``."""
    return callee.split(".")[1:]


def _last_identifier(text: str) -> str:
    found = re.findall(r"[A-Za-z_$][A-Za-z0-9_$]*", text.split("(")[0])
    return found[-1] if found else ""


def _clean(path: str) -> str:
    """The path without its query string or fragment."""
    return path.strip().split("?", 1)[0].split("#", 1)[0]


def _looks_like_path(text: str, *, known: bool) -> bool:
    """A URL, a ``/path``, or (``a.b``, ``a/b``) a relative one; a bare word only when an
    argument of the call states its HTTP method."""
    if text.startswith(("http://", "https://")):
        return len(text) > len("https://")
    if not text or any(c.isspace() for c in text) or not _PATH_CHARS.match(text):
        return False
    if text.startswith("{}"):
        text = text[2:]
    if text.startswith("/"):
        return len(text.strip("/{}")) > 0
    if text.startswith((".", "-")) or not any(c.isalpha() for c in text):
        return False
    if "/" in text or re.search(r"[a-z]\.[a-z]", text, re.IGNORECASE):
        return True
    return known
