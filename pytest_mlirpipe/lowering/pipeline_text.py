"""Parse MLIR's textual pass-pipeline syntax far enough to name every pass and where it is."""

from __future__ import annotations

from dataclasses import dataclass

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class PipelineSyntaxError(ValueError):
    """The text is not a pass pipeline; `offset` is the 0-based column of the problem."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Element:
    """A pass (`name{options}`) or an op anchor with a nested pipeline (`func.func(...)`)."""

    name: str
    options: str | None
    children: tuple[Element, ...] | None
    offset: int
    text: str

    @property
    def is_anchor(self) -> bool:
        return self.children is not None

    def passes(self, anchors: tuple[str, ...] = ()) -> list[tuple[Element, tuple[str, ...]]]:
        """Every pass below this element, with the op anchors it is nested in."""
        if self.children is None:
            return [(self, anchors)]
        out: list[tuple[Element, tuple[str, ...]]] = []
        for child in self.children:
            out.extend(child.passes((*anchors, self.name)))
        return out


def parse_pipeline(text: str) -> tuple[Element, ...]:
    """Split `text` into its top-level elements; raise PipelineSyntaxError on malformed text."""
    parser = _Parser(text)
    elements = parser.parse_list(top=True)
    return tuple(elements)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def _skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def parse_list(self, top: bool) -> list[Element]:
        elements: list[Element] = []
        self._skip_ws()
        if self.pos >= len(self.text) or (not top and self.text[self.pos] == ")"):
            return elements
        while True:
            elements.append(self.parse_element())
            self._skip_ws()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                self.pos += 1
                continue
            break
        self._skip_ws()
        if top and self.pos < len(self.text):
            raise PipelineSyntaxError(
                f"unexpected '{self.text[self.pos]}' in pass pipeline", self.pos
            )
        return elements

    def parse_element(self) -> Element:
        self._skip_ws()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _NAME_CHARS:
            self.pos += 1
        name = self.text[start : self.pos]
        if not name:
            found = self.text[self.pos] if self.pos < len(self.text) else "end of text"
            raise PipelineSyntaxError(f"expected a pass name, found '{found}'", self.pos)
        options = None
        self._skip_ws()
        if self.pos < len(self.text) and self.text[self.pos] == "{":
            options = self._balanced("{", "}")
        self._skip_ws()
        children = None
        if self.pos < len(self.text) and self.text[self.pos] == "(":
            open_at = self.pos
            self.pos += 1
            children = tuple(self.parse_list(top=False))
            self._skip_ws()
            if self.pos >= len(self.text):
                raise PipelineSyntaxError(f"'(' after '{name}' is never closed", open_at)
            if self.text[self.pos] != ")":
                raise PipelineSyntaxError(
                    f"unexpected '{self.text[self.pos]}' in pass pipeline", self.pos
                )
            self.pos += 1
        return Element(name, options, children, start, self.text[start : self.pos].strip())

    def _balanced(self, open_ch: str, close_ch: str) -> str:
        start = self.pos
        depth = 0
        quote = None
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == open_ch:
                depth += 1
            elif ch == close_ch:
                depth -= 1
                if depth == 0:
                    self.pos += 1
                    return self.text[start + 1 : self.pos - 1]
            self.pos += 1
        raise PipelineSyntaxError(f"'{open_ch}' is never closed", start)


def parse_options(text: str | None) -> dict[str, str]:
    """`a=1 b c="x y"` -> {'a': '1', 'b': 'true', 'c': 'x y'} (MLIR pass-option syntax)."""
    if not text:
        return {}
    import shlex

    try:
        items = shlex.split(text)
    except ValueError:  # shlex's only complaint: a quote without its closing partner
        quote, at = _unclosed_quote(text)
        raise PipelineSyntaxError(f"a {quote} in the pass options is never closed", at) from None
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        out[key] = value if sep else "true"
    return out


def _unclosed_quote(text: str) -> tuple[str, int]:
    """The quote character that is left open in `text` (shell rules) and its offset."""
    state, start, i = None, 0, 0
    while i < len(text):
        c = text[i]
        if c == "\\" and state != "'":
            i += 2
            continue
        if state is None and c in "'\"":
            state, start = c, i
        elif c == state:
            state = None
        i += 1
    return state or '"', start
