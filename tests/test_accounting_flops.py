"""Forward FLOPs per token against torch's FlopCounterMode on transformers' GPT-2 (eager
attention), per module, for every size and several context lengths; and against Kaplan et al.
(2020) Table 1."""

from __future__ import annotations

import functools

import pytest

from generator import accounting as acc
from generator import scaling
from generator.config import CONFIGS, SIZES

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # runs torch / transformers

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers import GPT2LMHeadModel  # noqa: E402

from tests.engine_helpers import hf_config  # noqa: E402

CONTEXTS = (1, 7, 128, 1024)
ROOT = "GPT2LMHeadModel"


def count_flops(cfg, T: int, device: str = "meta") -> dict[str, int]:
    """FlopCounterMode's totals per module for one forward pass over T tokens.

    On the meta device only shapes exist, so a 4-D additive causal mask is passed (transformers'
    own mask builder reads values); the matmuls counted are the same as on real tensors.
    """
    model = build(cfg.name, device)
    with torch.device(device):
        ids = torch.zeros((1, T), dtype=torch.long)
        kwargs = {}
        if device == "meta":
            kwargs["attention_mask"] = torch.zeros((1, 1, T, T))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(ids, use_cache=False, **kwargs)
    return {name: sum(ops.values()) for name, ops in counter.get_flop_counts().items()}


@functools.cache
def build(name: str, device: str):
    with torch.device(device):
        return GPT2LMHeadModel(hf_config(CONFIGS[name])).eval()


def module_flops(counts: dict[str, int], module: str) -> int:
    return counts.get(f"{ROOT}.{module}" if module else ROOT, 0)


@pytest.mark.parametrize("name", SIZES + ("toy",))
@pytest.mark.parametrize("T", CONTEXTS)
def test_flops_per_module_equal_flop_counter(name, T):
    cfg = CONFIGS[name]
    if cfg.n_ctx < T:
        pytest.skip("longer than the model's context")
    counts = count_flops(cfg, T)
    per_token = {component: acc.flops_per_token(cfg, component, T) for component in acc.COMPONENTS}
    for i in range(cfg.n_layer):
        block = f"transformer.h.{i}"
        assert module_flops(counts, block) == per_token["block"] * T
        assert module_flops(counts, f"{block}.attn") == per_token["attention"] * T
        assert module_flops(counts, f"{block}.mlp") == per_token["mlp"] * T
        for ln in ("ln_1", "ln_2"):
            assert module_flops(counts, f"{block}.{ln}") == 0 == per_token["ln1"]
    # A block's row keys are GPT-2's module paths: each row is what torch counts for that module.
    rows = {row.key: row.value * T for row in acc.flop_rows(cfg, "block", T)}
    for key in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"):
        assert module_flops(counts, f"transformer.h.0.{key}") == rows[key]
    score_and_sum = sum(rows[f"attn.{key}"] for key in acc.ATTENTION_GRID)
    assert (
        module_flops(counts, "transformer.h.0.attn") - rows["attn.c_attn"] - rows["attn.c_proj"]
        == score_and_sum
    )
    for embedding_or_norm in ("transformer.wte", "transformer.wpe", "transformer.ln_f"):
        assert module_flops(counts, embedding_or_norm) == 0
    assert module_flops(counts, "lm_head") == per_token["unembed"] * T
    assert module_flops(counts, "") == per_token["model"] * T
    blocks = per_token["block"] * acc.instances(cfg, "block")
    assert per_token["model"] == blocks + per_token["unembed"]


def test_meta_device_counts_equal_real_cpu_counts():
    """The meta-device shortcut counts what a real forward (transformers' own mask) counts."""
    cfg = CONFIGS["toy"]
    assert count_flops(cfg, 9, device="meta") == count_flops(cfg, 9, device="cpu")


@pytest.mark.parametrize("name", SIZES)
@pytest.mark.parametrize("T", CONTEXTS)
def test_agreement_with_kaplan_table_1(name, T):
    """Exact = Kaplan's C_forward + 2·n_layer·T·d_attn (both T×T products over the full grid,
    where Kaplan's term is half of that) + 2·d_model·n_vocab (the de-embedding, which Kaplan
    lists but leaves out of C_forward). Kaplan's formula is rebuilt here from the paper."""
    cfg = CONFIGS[name]
    d, L, V = cfg.d_model, cfg.n_layer, cfg.vocab_size
    d_attn, d_ff = cfg.n_head * cfg.d_head, 4 * d
    N = 2 * d * L * (2 * d_attn + d_ff)
    C_forward = 2 * N + 2 * L * T * d_attn
    summary = scaling.model_summary(cfg, T)
    assert summary["kaplan_n"] == N and summary["kaplan_c_forward"] == C_forward
    exact = acc.flops_per_token(cfg, "model", T)
    assert exact - C_forward == 2 * L * T * d_attn + 2 * d * V == summary["flops_minus_kaplan"]
    # the bound that follows: exact / Kaplan stays within (2N + 4·L·T·d + 2dV) / (2N + 2·L·T·d)
    non_attention = acc.flops_per_token(cfg, "model", T) - L * 4 * T * d
    assert non_attention == 2 * N + 2 * d * V
    assert 1 <= exact / C_forward <= 1 + (2 * L * T * d_attn + 2 * d * V) / (2 * N)
