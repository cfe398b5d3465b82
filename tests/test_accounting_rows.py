"""Accounting rows without torch: formulas, context handling, and the figures the seeds print."""

from __future__ import annotations

import pytest

from generator import accounting as acc
from generator.accounting import Row
from generator.config import CONFIGS
from generator.errors import InputError
from generator.render.numbers import fmt_flops, row_tex, row_text


def test_row_value_text_and_tex_come_from_the_terms():
    row = Row("x", "x", ((768, 2304), (2304,)))
    assert row.value == 768 * 2304 + 2304
    assert row_text(row) == "768 × 2,304 + 2,304"
    assert row_tex(row) == "768 \\times 2{,}304 + 2{,}304"
    empty = Row("nothing", "nothing", ())
    assert (empty.value, row_text(empty), row_tex(empty)) == (0, "0", "0")


def test_flops_only_attention_depends_on_context():
    cfg = CONFIGS["gpt2"]
    for component in acc.COMPONENTS:
        grows = acc.flops_per_token(cfg, component, 1024) - acc.flops_per_token(cfg, component, 1)
        expected = 4 * cfg.d_model * 1023 if component in ("attention", "block") else 0
        if component == "model":
            expected = 4 * cfg.d_model * 1023 * cfg.n_layer
        assert grows == expected, component


def test_context_outside_the_model_is_an_input_error():
    with pytest.raises(InputError, match="outside 1..1024"):
        acc.flop_rows(CONFIGS["gpt2"], "attention", 1025)
    with pytest.raises(InputError, match="unknown component"):
        acc.param_rows(CONFIGS["gpt2"], "attn")


def test_seed_000_mflops_per_token():
    """Seed 000 prints 3.5 and 1.2 MFLOPs / token for GPT-2's two attention projections."""
    rows = acc.flop_rows(CONFIGS["gpt2"], "attention", 1024)
    assert fmt_flops(rows[0].value) == "3.5 MFLOPs"
    assert fmt_flops(rows[-1].value) == "1.2 MFLOPs"
    assert row_text(rows[1]) == "2 × 12 × 1,024 × 64"


def test_seed_003_attention_figures_for_gpt2_small():
    """The component page seed states GPT-2 small's attention parameters; we reproduce them."""
    cfg = CONFIGS["gpt2"]
    rows = acc.param_rows(cfg, "attention")
    assert [row_text(row) for row in rows] == ["768 × 2,304 + 2,304", "768 × 768 + 768"]
    assert [row_tex(row) for row in rows] == [
        "768 \\times 2{,}304 + 2{,}304",
        "768 \\times 768 + 768",
    ]
    assert [row.value for row in rows] == [1_771_776, 590_592]
    assert acc.params_total(cfg, "attention") == 28_348_416
