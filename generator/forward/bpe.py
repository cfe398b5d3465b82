"""GPT-2's byte-level BPE tokenizer, from the checkpoint's vocab.json and merges.txt.

The algorithm of OpenAI's encoder.py: split text with a regular expression into words, map each
word's UTF-8 bytes to printable characters (bytes_to_unicode), then merge adjacent symbols in
merge-rank order until no ranked pair is left; each final symbol is a vocabulary entry.
The split pattern uses Unicode classes (\\p{L}, \\p{N}), which Python's `re` cannot express, so
the `regex` package (a declared dependency, as in OpenAI's encoder.py) compiles it: every machine
splits "x²" as GPT-2 does.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import regex

from generator.checked_io import read_text_input
from generator.errors import InputError

ENDOFTEXT = "<|endoftext|>"
MAX_FILE_BYTES = 16 * 1024 * 1024  # GPT-2's vocab.json is 1.0 MB, merges.txt 0.5 MB
PATTERN_UNICODE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """Each byte 0..255 -> one printable character (printable bytes map to themselves)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = {b: chr(b) for b in printable}
    shift = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shift)  # unprintable bytes move past Latin-1
            shift += 1
    return table


class BPETokenizer:
    """encode(text) -> token ids; token_text(id) -> the text that token stands for."""

    name = "GPT-2 byte-level BPE"

    def __init__(self, encoder: dict[str, int], merges: list[tuple[str, str]]) -> None:
        self.encoder = encoder  # symbol string -> id
        self.decoder = {i: s for s, i in encoder.items()}
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}  # lower merges first
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
        self.pattern = regex.compile(PATTERN_UNICODE)
        self.bos_id: int = encoder[ENDOFTEXT]  # from_files checks that the vocabulary has it
        self._words: dict[str, list[str]] = {}

    @classmethod
    def from_files(cls, vocab_path: Path, merges_path: Path) -> BPETokenizer:
        fix = "use the checkpoint's own vocab.json"
        text = read_text_input(Path(vocab_path), max_bytes=MAX_FILE_BYTES, fix=fix)
        try:
            encoder = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise InputError(
                f"cannot read the vocabulary ({error})", file=str(vocab_path), fix=fix
            ) from None
        if not isinstance(encoder, dict) or ENDOFTEXT not in encoder:
            raise InputError(
                f"the vocabulary has no {ENDOFTEXT} token", file=str(vocab_path), fix=fix
            )
        merges = []
        fix = "use the checkpoint's own merges.txt"
        text = read_text_input(Path(merges_path), max_bytes=MAX_FILE_BYTES, fix=fix)
        for number, line in enumerate(text.splitlines()):
            if line.startswith("#version") or not line.strip():
                continue
            parts = line.split()
            if len(parts) != 2:
                raise InputError(
                    f"line {number + 1} is not two symbols",
                    file=str(merges_path),
                    fix=fix,
                )
            merges.append((parts[0], parts[1]))
        return cls(encoder, merges)

    def bpe(self, word: str) -> list[str]:
        """Merge the characters of one byte-mapped word into vocabulary symbols."""
        if word in self._words:
            return self._words[word]
        symbols = list(word)
        while len(symbols) > 1:
            pairs = {(a, b) for a, b in zip(symbols, symbols[1:], strict=False)}
            best = min(pairs, key=lambda pair: self.ranks.get(pair, float("inf")))
            if best not in self.ranks:
                break
            merged: list[str] = []
            i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        self._words[word] = symbols
        return symbols

    def encode(self, text: str) -> list[int]:
        ids = []
        for piece in self.pattern.findall(text):
            mapped = "".join(self.byte_encoder[b] for b in piece.encode("utf-8"))
            for symbol in self.bpe(mapped):
                if symbol not in self.encoder:
                    raise InputError(
                        f"symbol {symbol!r} of {piece!r} is not in the vocabulary",
                        entry=piece,
                        fix="use the vocab.json and merges.txt of the same checkpoint",
                    )
                ids.append(self.encoder[symbol])
        return ids

    def token_text(self, token_id: int) -> str:
        """The text of one token (bytes that are not whole UTF-8 characters show as �)."""
        symbol = self.decoder[int(token_id)]
        if symbol == ENDOFTEXT:
            return symbol
        return bytes(self.byte_decoder[c] for c in symbol).decode("utf-8", errors="replace")

    def decode(self, ids: list[int]) -> str:
        raw = b"".join(
            ENDOFTEXT.encode()
            if self.decoder[int(i)] == ENDOFTEXT
            else bytes(self.byte_decoder[c] for c in self.decoder[int(i)])
            for i in ids
        )
        return raw.decode("utf-8", errors="replace")
