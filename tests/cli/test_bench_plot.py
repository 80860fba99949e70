"""`--plot`: a valid PNG (read back by matplotlib) and a valid, self-contained HTML file."""

from __future__ import annotations

import struct
import zlib
from html.parser import HTMLParser
from typing import ClassVar

ARGS = (
    "bench",
    "--quiet",
    "--repeat",
    "1",
    "--size",
    "3",
    "--workload",
    "loop",
    "--workload",
    "storage-growth",
)


def test_png(cli, tmp_path):
    path = tmp_path / "bench.png"
    code, _out, err = cli(*ARGS, "--plot", str(path))
    assert code == 0, err
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    assert width > 300 and height > 200
    assert zlib.crc32(data[12:29]) == struct.unpack(">I", data[29:33])[0]
    import matplotlib.image

    assert matplotlib.image.imread(str(path)).shape[:2] == (height, width)


class _Collect(HTMLParser):
    VOID: ClassVar[set[str]] = {
        "meta",
        "br",
        "img",
        "link",
        "input",
        "hr",
        "rect",
        "line",
        "polyline",
    }

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [v for k, v in attrs if k in ("src", "href") and v]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()


def test_html(cli, tmp_path):
    path = tmp_path / "bench.html"
    code, _out, err = cli(*ARGS, "--compare", "langgraph", "--plot", str(path))
    assert code == 0, err
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    parser = _Collect()
    parser.feed(text)
    parser.close()
    assert parser.stack == []  # every element closed, in order
    assert parser.tags.count("svg") == 2  # throughput bars and the storage lines
    assert "script" not in parser.tags and parser.refs == []  # self-contained
    assert "langgraph" in text and "storage-growth" in text and "polyline" in text
