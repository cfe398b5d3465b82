"""The stand-in's word tokenizer: one token per word or punctuation mark, from a fixed list.

The stand-in model is trained on sequences of these tokens; its token ids mean nothing to GPT-2
(and GPT-2's mean nothing to it), so a page always pairs a model with its own tokenizer.
"""

from __future__ import annotations

import re

from generator.errors import InputError

ENDOFTEXT = "<|endoftext|>"  # token 0: the start of every sequence, as GPT-2's prompts often begin
SPLIT = re.compile(r"\w+|[^\w\s]")


class WordTokenizer:
    """encode(text) -> ids of its words; token_text(id) -> the word, with a leading space."""

    name = "stand-in word vocabulary"

    def __init__(self, words: tuple[str, ...]) -> None:
        self.words = words
        self.ids = {word: i for i, word in enumerate(words)}
        self.bos_id = self.ids[ENDOFTEXT]

    def encode(self, text: str) -> list[int]:
        ids = []
        for word in SPLIT.findall(text):
            if word not in self.ids:
                known = ", ".join(w for w in self.words if w != ENDOFTEXT)
                raise InputError(
                    f"the word {word!r} is not in the stand-in's vocabulary",
                    entry=word,
                    fix=f"write the prompt with these words only: {known}; or give GPT-2's "
                    "weights (ITM_GPT2_WEIGHTS) to use any text",
                )
            ids.append(self.ids[word])
        return ids

    def token_text(self, token_id: int) -> str:
        word = self.words[int(token_id)]
        if word == ENDOFTEXT or not word[0].isalnum():
            return word
        return " " + word

    def decode(self, ids: list[int]) -> str:
        return "".join(self.token_text(i) for i in ids)
