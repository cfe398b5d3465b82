"""Our byte-level BPE against Hugging Face `tokenizers` on the same vocab.json and merges.txt, and
the stand-in's word tokenizer."""

from __future__ import annotations

import pytest

from generator.errors import InputError
from generator.forward.bpe import BPETokenizer
from generator.forward.tokens import ENDOFTEXT, WordTokenizer
from tests.forward_helpers import write_tiny_checkpoint

tokenizers = pytest.importorskip("tokenizers")

TEXTS = [
    "the cat sat on the mat",
    " the  cat\n\nthe hat",
    "The cat's hat isn't there, we'll see; they've 42 cats — or 3.14?",
    "naïve café über 東京 🙂 ok",
    "a_b__c   tail spaces   ",
    "<|endoftext|> is text here",
    "x² + y³ = ½ and ²²",  # \p{N} holds superscripts and fractions; re's \d does not
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("bpe"))


@pytest.fixture(scope="module")
def reference(files):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.BPE.from_file(str(files["vocab.json"]), str(files["merges.txt"])))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tok


@pytest.mark.parametrize("text", TEXTS)
def test_ids_equal_hugging_face_tokenizers(files, reference, text):
    ours = BPETokenizer.from_files(files["vocab.json"], files["merges.txt"])
    expected = reference.encode(text).ids
    assert ours.encode(text) == expected
    assert ours.decode(expected) == text


def test_merges_apply_and_token_text_is_the_original_text(files):
    ours = BPETokenizer.from_files(files["vocab.json"], files["merges.txt"])
    ids = ours.encode(" the cat")
    assert [ours.token_text(i) for i in ids] == [" the", " cat"]
    assert ours.token_text(ours.bos_id) == "<|endoftext|>"


def test_word_tokenizer_round_trip_and_unknown_word():
    tok = WordTokenizer((ENDOFTEXT, ".", "The", "quick", "brown", "fox"))
    ids = tok.encode("The quick brown fox.")
    assert "".join(tok.token_text(i) for i in ids) == " The quick brown fox."
    with pytest.raises(InputError, match="'zebra' is not in the stand-in's vocabulary") as caught:
        tok.encode("The zebra")
    assert "ITM_GPT2_WEIGHTS" in str(caught.value)


def test_a_vocabulary_without_endoftext_is_an_input_error(tmp_path) -> None:
    """The page's prompt starts with <|endoftext|>: a vocabulary without it is named, not a crash."""
    (tmp_path / "vocab.json").write_text('{"a": 0, "b": 1}', encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        BPETokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert "<|endoftext|>" in str(caught.value) and caught.value.file.endswith("vocab.json")


def test_regex_is_a_declared_dependency_of_the_site():
    """The split needs `regex`; `make site` installs the declared dependencies and the site's."""
    import tomllib

    from tests.site_helpers import ROOT

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["site"]
    assert any(d.split(">")[0].split("=")[0].strip() == "regex" for d in declared)
