"""The FLOP ledger against the counters that install here: torch's FlopCounterMode counts what
the site calls the exact forward FLOPs (a multiply-add as 2), fvcore counts multiply-adds once
(plus, by its own rule, 5 per element of a LayerNorm with a gain and shift); every ledger row is
an identity of the rows the counters check, on small models of every family (GPT-2, Llama,
Mistral, and the frontier families with real routing)."""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
fvcore_nn = pytest.importorskip("fvcore.nn")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from generator import scaling  # noqa: E402
from generator.config import CONFIGS  # noqa: E402
from generator.models import FAMILIES  # noqa: E402
from generator.models.weights import random_weights  # noqa: E402
from tests import engine_helpers, frontier_helpers, llama_helpers  # noqa: E402

pytestmark = pytest.mark.slow
T = 9


def small_models():
    gpt2 = dataclasses.replace(CONFIGS["gpt2"], n_layer=2, n_head=4, d_model=32, n_ctx=16)
    yield gpt2, engine_helpers.hf_model(random_weights(gpt2, 1), gpt2)
    for size in FAMILIES["llama"].sizes.values():
        cfg = dataclasses.replace(
            size, n_layer=2, n_head=4, n_kv_head=2, d_model=32, d_mlp=48, n_ctx=16, vocab_size=53,
            sliding_window=None,  # eager counts every cell: the window's count is tested apart
        )  # fmt: skip
        yield cfg, llama_helpers.hf_model(random_weights(cfg, 2), cfg)
    for name in frontier_helpers.CLASSES:
        for size in FAMILIES[name].sizes.values():
            cfg = frontier_helpers.tiny(size, 4)
            if cfg.sliding_window is not None:  # a window no shorter than T: every cell counted
                cfg = dataclasses.replace(cfg, sliding_window=T)
            yield cfg, frontier_helpers.hf_model(random_weights(cfg, 3), cfg)


MODELS = list(small_models())


class Logits(torch.nn.Module):
    """The model's logits alone: fvcore traces a module that returns a tensor."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids, use_cache=False).logits


@pytest.mark.parametrize(("cfg", "model"), MODELS, ids=[c.name for c, _ in MODELS])
def test_the_ledger_equals_the_counters(cfg, model) -> None:
    rows = {row.key: row.value for row in scaling.flop_relations(cfg, T)}
    ids = torch.as_tensor(np.random.default_rng(0).integers(0, cfg.vocab_size, T))[None, :]
    model = model.float()  # fvcore traces in float32; the counts do not depend on the dtype
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(ids, use_cache=False)
    assert counter.get_total_flops() == rows["forward"] * T
    assert rows["forward"] == rows["2n"] + rows["grid"] + rows["unembedding"]
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():  # tracing warns about data-dependent control flow (routing)
        warnings.simplefilter("ignore")
        analysis = fvcore_nn.FlopCountAnalysis(Logits(model), ids)
        analysis.unsupported_ops_warnings(False)
        analysis.uncalled_modules_warnings(False)
        fvcore_total = analysis.total()
    logging.disable(logging.NOTSET)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
    norm_elements = sum(T * m.normalized_shape[0] for m in norms)
    assert fvcore_total == rows["macs"] * T + 5 * norm_elements
    assert rows["no_unembedding"] == rows["forward"] - rows["unembedding"]
    assert rows["train"] == 3 * rows["forward"]
    assert rows["palm"] == rows["6n"] + 3 * rows["grid"]
    assert rows["2p"] == 2 * sum(p.numel() for p in model.parameters())
    # a causal kernel: the query at position t sees t keys, of the T × T grid
    assert rows["causal_sequence"] * 2 * T == rows["grid_sequence"] * (T + 1)
    assert math.gcd(rows["grid_sequence"], T * T) == T * T


@pytest.mark.parametrize("window", [None, 1, 3, 9, 20])
def test_causal_cells_count_the_mask_transformers_builds(window):
    """The causal ledger row's cells, in closed form, against the cells transformers' own mask
    functions let a query see (sliding_window_causal_mask_function with a window)."""
    from transformers.masking_utils import (
        causal_mask_function,
        sliding_window_causal_mask_function,
    )

    from generator.models.layer_kinds import causal_cells

    cfg = dataclasses.replace(FAMILIES["llama"].sizes["mistral-7b-v0.1"], sliding_window=window)
    mask = causal_mask_function if window is None else sliding_window_causal_mask_function(window)
    for length in (1, 2, 8, 9, 31):
        q, k = torch.meshgrid(torch.arange(length), torch.arange(length), indexing="ij")
        seen = int(mask(torch.tensor(0), torch.tensor(0), q, k).sum())
        assert causal_cells(cfg, 0, length) == seen, (window, length)
