"""Counting tokens with the model's own tokenizer, through the llama.cpp server.

Budgets in the prompt are only honest if counted by the tokenizer that will read the prompt;
the server's ``/tokenize`` is that tokenizer. Results are cached because prompt sections
repeat across steps.
"""

from __future__ import annotations

from collections import OrderedDict

import httpx

from terrarium.errors import ModelError


class LlamaTokenizer:
    """``count(text)`` via ``POST {base_url}/tokenize``; same shape as the prompt Tokenizer.

    ``base_url`` is the server root (without ``/v1``).
    """

    def __init__(self, base_url: str, *, timeout: float = 10.0, cache_size: int = 4096) -> None:
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self._http = httpx.Client(timeout=timeout)
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size

    def count(self, text: str) -> int:
        """Number of tokens ``text`` encodes to (no BOS/special tokens added)."""
        if text == "":
            return 0
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit
        n = len(self.tokenize(text))
        self._cache[text] = n
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return n

    def tokenize(self, text: str) -> list[int]:
        """The token ids of ``text``."""
        try:
            resp = self._http.post(
                f"{self.base_url}/tokenize", json={"content": text, "add_special": False}
            )
        except httpx.HTTPError as exc:
            raise ModelError(
                f"could not reach the tokenizer at {self.base_url}/tokenize ({exc})"
            ) from exc
        if resp.status_code != 200:
            raise ModelError(
                f"the tokenizer at {self.base_url}/tokenize answered HTTP {resp.status_code}: "
                f"{resp.text[:200]}"
            )
        try:
            tokens = resp.json()["tokens"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelError(
                f"the tokenizer at {self.base_url}/tokenize sent an unexpected answer"
            ) from exc
        return [int(t) for t in tokens]

    def close(self) -> None:
        """Close the kept-alive connection to the server (else a socket left to the GC)."""
        self._http.close()

    def __enter__(self) -> LlamaTokenizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "LlamaTokenizer",
]
