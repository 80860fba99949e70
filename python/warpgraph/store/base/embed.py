"""Embedding helpers of the stores: turn `index={"embed": ...}` into an embeddings object and
pick the texts of a stored value that get embedded.

An embeddings object is anything with `embed_documents` / `embed_query` (LangChain's
`Embeddings` or a look-alike: langchain-core is never required). A plain function
`texts -> vectors` (sync or async) is wrapped in `EmbeddingsLambda`; a "provider:model"
string goes through LangChain's `init_embeddings` when langchain is installed.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

__all__ = (
    "AEmbeddingsFunc",
    "EmbeddingsFunc",
    "EmbeddingsLambda",
    "ensure_embeddings",
    "get_text_at_path",
    "tokenize_path",
)

EmbeddingsFunc = Callable[[Sequence[str]], list[list[float]]]
"""A function embedding a batch of texts."""
AEmbeddingsFunc = Callable[[Sequence[str]], Awaitable[list[list[float]]]]
"""An async function embedding a batch of texts."""


def _embeddings_base() -> type:
    """LangChain's `Embeddings` ABC when langchain-core is installed, else a stand-in."""
    try:
        from langchain_core.embeddings import Embeddings
    except ImportError:
        return _Embeddings
    return Embeddings


class _Embeddings:
    """The embeddings interface the stores call (langchain-core's when it is installed)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def embed_query(self, text: str) -> list[float]:
        raise NotImplementedError

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.get_running_loop().run_in_executor(None, self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.get_running_loop().run_in_executor(None, self.embed_query, text)


def _is_embeddings(obj: Any) -> bool:
    return callable(getattr(obj, "embed_documents", None)) and callable(
        getattr(obj, "embed_query", None)
    )


def _is_coroutine_callable(func: Any) -> bool:
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


class EmbeddingsLambda(_Embeddings):
    """Embeddings backed by one function `texts -> vectors`, sync or async.

    A sync function also serves the async methods (in the default executor); an async one
    serves only the async methods."""

    def __init__(self, func: EmbeddingsFunc | AEmbeddingsFunc) -> None:
        if func is None:
            raise ValueError("func must be provided")
        self.func: Any = None
        self.afunc: Any = None
        if _is_coroutine_callable(func):
            self.afunc = func
        else:
            self.func = func

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.func is None:
            raise ValueError(
                "EmbeddingsLambda was initialized with an async function but no sync function. "
                "Use aembed_documents for async operation or provide a sync function."
            )
        return self.func(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.afunc is None:
            return await super().aembed_documents(texts)
        return await self.afunc(texts)

    async def aembed_query(self, text: str) -> list[float]:
        if self.afunc is None:
            return await super().aembed_query(text)
        return (await self.afunc([text]))[0]


def _init_embeddings_from_string(spec: str) -> Any:
    try:
        from langchain.embeddings import init_embeddings  # type: ignore[import-not-found]
    except ImportError:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = f"Found langchain version {version('langchain')}, but"
        except PackageNotFoundError:
            found = "langchain is not installed;"
        raise ValueError(
            f"Could not load embeddings from string '{spec}'. {found} "
            "loading embeddings by provider:identifier string requires langchain>=0.3.9 "
            "as well as the provider-specific package. "
            "Install LangChain with: pip install 'langchain>=0.3.9' "
            "and the provider-specific package (e.g., 'langchain-openai>=0.3.0'). "
            "Alternatively, specify 'embed' as a compatible Embeddings object or python function."
        ) from None
    return init_embeddings(spec)


def ensure_embeddings(embed: Any) -> Any:
    """An embeddings object for `embed`: an embeddings object itself, a sync or async
    function over a list of texts, or a "provider:model" string (needs langchain)."""
    if embed is None:
        raise ValueError("embed must be provided")
    if isinstance(embed, str):
        return _init_embeddings_from_string(embed)
    if _is_embeddings(embed):
        return embed
    return EmbeddingsLambda(embed)


# --- paths into stored values -------------------------------------------------------------


def tokenize_path(path: str) -> list[str]:
    """Split a field path into tokens: `a.b[0].c` -> ["a", "b", "[0]", "c"]; bracketed
    (`[*]`, `[-1]`) and braced (`{x, y.z}`) groups stay whole, nesting included."""
    tokens: list[str] = []
    word_start = 0
    i, n = 0, len(path)
    while i < n:
        ch = path[i]
        if ch == "." or ch in "[{":
            if i > word_start:
                tokens.append(path[word_start:i])
            if ch == ".":
                i += 1
            else:
                close = "]" if ch == "[" else "}"
                depth, j = 0, i
                while j < n:
                    if path[j] == ch:
                        depth += 1
                    elif path[j] == close:
                        depth -= 1
                        if depth == 0:
                            j += 1
                            break
                    j += 1
                tokens.append(path[i:j])
                i = j
            word_start = i
        else:
            i += 1
    if word_start < n:
        tokens.append(path[word_start:])
    return tokens


def _as_text(obj: Any) -> str | None:
    """The text a leaf contributes (None: nothing)."""
    if isinstance(obj, (str, int, float, bool)):
        return str(obj)
    if isinstance(obj, (list, dict)):
        return json.dumps(obj, sort_keys=True, ensure_ascii=False)
    return None


def _walk(obj: Any, tokens: Sequence[str], pos: int, out: list[str]) -> None:
    if pos == len(tokens):
        text = _as_text(obj)
        if text is not None:
            out.append(text)
        return
    token = tokens[pos]
    if token[:1] == "[" and token[-1:] == "]":
        if not isinstance(obj, list):
            return
        inner = token[1:-1]
        if inner == "*":
            for element in obj:
                _walk(element, tokens, pos + 1, out)
            return
        try:
            idx = int(inner)
        except ValueError:
            return
        if idx < 0:
            idx += len(obj)
        if 0 <= idx < len(obj):
            _walk(obj[idx], tokens, pos + 1, out)
    elif token[:1] == "{" and token[-1:] == "}":
        if not isinstance(obj, dict):
            return
        for field in token[1:-1].split(","):
            sub = tokenize_path(field.strip())
            if not sub:
                continue
            cur: Any = obj
            for part in sub:
                if not isinstance(cur, dict) or part not in cur:
                    break
                cur = cur[part]
            else:
                text = _as_text(cur)
                if text is not None:
                    out.append(text)
    elif token == "*":
        children = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ()
        for child in children:
            _walk(child, tokens, pos + 1, out)
    elif isinstance(obj, dict) and token in obj:
        _walk(obj[token], tokens, pos + 1, out)


def get_text_at_path(obj: Any, path: str | list[str]) -> list[str]:
    """The texts at `path` in `obj` ("$" or empty: the whole value as sorted-key JSON).
    Scalars become `str(x)`, lists and dicts JSON; missing parts give no text."""
    if isinstance(obj, Mapping) and not isinstance(obj, dict):
        obj = dict(obj)
    if not path or path == "$":
        return [json.dumps(obj, sort_keys=True, ensure_ascii=False)]
    out: list[str] = []
    _walk(obj, tokenize_path(path) if isinstance(path, str) else path, 0, out)
    return out


def _tokenized_fields(fields: Sequence[str] | str | None) -> list[tuple[str, Any]]:
    """[(path, tokens or "$")] for an index config's fields (default: the whole value)."""
    if fields is None:
        fields = ["$"]
    elif isinstance(fields, str):
        fields = [fields]
    return [(p, "$") if p == "$" else (p, tokenize_path(p)) for p in fields]


def texts_to_embed(
    value: Mapping[str, Any], paths: Sequence[tuple[str, Any]]
) -> list[tuple[str, str]]:
    """[(field name, text)] of a value for the given tokenized paths; a path with several
    texts names them `path.0`, `path.1`, ..."""
    out: list[tuple[str, str]] = []
    for path, tokens in paths:
        texts = get_text_at_path(value, tokens)
        if len(texts) == 1:
            out.append((path, texts[0]))
        else:
            out.extend((f"{path}.{i}", text) for i, text in enumerate(texts))
    return out


def __getattr__(name: str) -> Any:
    if name == "Embeddings":
        return _embeddings_base()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
