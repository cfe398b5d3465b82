"""Parameter accounting against numel() of transformers' GPT-2 built from the same configs
(on the meta device: shapes only, no memory, no download)."""

from __future__ import annotations

import pytest

from generator import accounting as acc
from generator import scaling
from generator.config import CONFIGS, SIZES

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # runs torch / transformers

from transformers import GPT2LMHeadModel  # noqa: E402

from tests.engine_helpers import hf_config  # noqa: E402

# Which of transformers' parameters make up one instance of each component (block 0 for blocks).
PREFIXES = {
    "wte": ("transformer.wte.",),
    "wpe": ("transformer.wpe.",),
    "embed": (),
    "ln1": ("transformer.h.0.ln_1.",),
    "attention": ("transformer.h.0.attn.",),
    "ln2": ("transformer.h.0.ln_2.",),
    "mlp": ("transformer.h.0.mlp.",),
    "block": ("transformer.h.0.",),
    "lnf": ("transformer.ln_f.",),
}


def meta_model(cfg, tied: bool = True):
    with torch.device("meta"):
        return GPT2LMHeadModel(hf_config(cfg, tie_word_embeddings=tied))


def numel(model, prefixes: tuple[str, ...], skip_biases: bool = False) -> int:
    total = 0
    for name, parameter in model.named_parameters():
        if skip_biases and name.endswith(".bias") and (".attn.c_" in name or ".mlp.c_" in name):
            continue  # transformers' Conv1D always has a bias; the toy has none
        if name.startswith(prefixes):
            total += parameter.numel()
    return total


@pytest.fixture(scope="module", params=SIZES + ("toy",))
def sized(request):
    cfg = CONFIGS[request.param]
    return cfg, meta_model(cfg), meta_model(cfg, tied=False)


def test_per_component_counts_equal_numel(sized):
    cfg, model, _ = sized
    for component, prefixes in PREFIXES.items():
        expected = numel(model, prefixes, skip_biases=not cfg.bias) if prefixes else 0
        assert acc.params_per_instance(cfg, component) == expected, component


def test_every_block_has_the_same_count_and_instances_are_the_blocks(sized):
    cfg, model, _ = sized
    assert len(model.transformer.h) == acc.instances(cfg, "block") == cfg.n_layer
    per_block = {numel(model, (f"transformer.h.{i}.",), not cfg.bias) for i in range(cfg.n_layer)}
    assert per_block == {acc.params_per_instance(cfg, "block")}
    blocks = numel(model, ("transformer.h.",), not cfg.bias)
    assert acc.params_total(cfg, "block") == blocks
    for part in ("ln1", "attention", "ln2", "mlp"):
        assert acc.instances(cfg, part) == cfg.n_layer
    assert sum(acc.params_total(cfg, part) for part in ("ln1", "attention", "ln2", "mlp")) == blocks


def test_totals_tied_and_untied_equal_numel(sized):
    cfg, tied, untied = sized
    everything = ("transformer.", "lm_head.")
    # named_parameters() lists a tied tensor once, as transformers' own num_parameters() does
    assert acc.params_total(cfg, "model") == numel(tied, everything, not cfg.bias)
    assert acc.params_total(cfg, "model", tied=False) == numel(untied, everything, not cfg.bias)
    assert acc.params_total(cfg, "unembed") == 0
    assert acc.params_total(cfg, "unembed", tied=False) == untied.lm_head.weight.numel()
    assert tied.lm_head.weight is tied.transformer.wte.weight
    if cfg.bias:
        assert acc.params_total(cfg, "model") == tied.num_parameters()


def test_rows_sum_to_the_component_and_components_sum_to_the_model(sized):
    cfg, model, _ = sized
    parts = ("wte", "wpe", "embed", "ln1", "attention", "ln2", "mlp", "lnf", "unembed")
    assert sum(acc.params_total(cfg, c) for c in parts) == acc.params_total(cfg, "model")
    for component in acc.COMPONENTS:
        rows = acc.param_rows(cfg, component)
        assert sum(row.value for row in rows) == acc.params_per_instance(cfg, component)


def test_kaplan_n_is_exactly_the_block_matrices_and_close_to_non_embedding(sized):
    """Kaplan's N = 12·n_layer·d² counts the four weight matrices of each block, nothing else."""
    cfg, model, _ = sized
    matrices = sum(
        p.numel()
        for name, p in model.named_parameters()
        if name.startswith("transformer.h.") and name.endswith(".weight") and ".c_" in name
    )
    summary = scaling.model_summary(cfg)
    assert summary["kaplan_n"] == matrices
    non_embedding = numel(model, ("transformer.h.", "transformer.ln_f."), not cfg.bias)
    assert summary["non_embedding_params"] == non_embedding
    assert 0 < non_embedding - matrices <= 1.25 / cfg.d_model * matrices
