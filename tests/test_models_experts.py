"""generator/models/experts.py against transformers' own MoE modules holding the same weights.

MixtralSparseMoeBlock, GptOssMLP and DeepseekV3MoE run in torch float64 inside float64_inside()
(their routers' float32 casts made float64): each layer's output must equal the numpy one to 1e-12
on 24 seeded random tiny configs per family: one token, top-k of every expert, DeepSeek's groups
with fewer kept than there are, 64 experts (torch.topk's heap path), and built ties: "lattice"
configs put the input and the router on a grid of exact eighths, with router rows copied or
zeroed, so equal logits are equal in any summation order and ties decide routing. Without torch's
tie-breaking (lowest index first instead) those configs fail. torch.topk's own order is checked
on rows of many ties, NaN and −∞, n up to 700.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # runs torch / transformers

from transformers import DeepseekV3Config, GptOssConfig, MixtralConfig  # noqa: E402
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3MoE  # noqa: E402
from transformers.models.gpt_oss.modeling_gpt_oss import GptOssMLP  # noqa: E402
from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock  # noqa: E402

from generator.errors import InputError  # noqa: E402
from generator.models import FAMILIES as SPECS  # noqa: E402
from generator.models import experts  # noqa: E402
from generator.models.config import ModelConfig  # noqa: E402
from generator.models.decoder import moe  # noqa: E402
from generator.models.experts import route  # noqa: E402
from generator.models.topk import topk, torch_topk_order  # noqa: E402
from tests.llama_helpers import float64_inside  # noqa: E402

ATOL = 1e-12  # float64: outputs are O(1); their rounding is ~1e-15
CASES = range(24)
LATTICE = 8  # grid of the lattice configs' inputs and router rows: multiples of 1/8
Case = tuple[np.ndarray, dict[str, np.ndarray], ModelConfig, dict, torch.nn.Module]


def spec_of(family: str, s: dict, *, swiglu_alpha: float = 1.702, swiglu_limit: float = 7.0,
            **experts: object) -> ModelConfig:  # fmt: skip
    """The family's spec with the case's width, experts and clamp: what decoder.moe reads."""
    cfg = next(iter(SPECS[family].sizes.values()))
    assert cfg.experts is not None
    moe_spec = dataclasses.replace(cfg.experts, n_experts=s["E"], d_expert=s["I"], **experts)
    return dataclasses.replace(
        cfg, d_model=s["d"], n_head=1, n_kv_head=1, head_dim=None, experts=moe_spec,
        swiglu_alpha=swiglu_alpha, swiglu_limit=swiglu_limit,
    )  # fmt: skip


# -- torch.topk's choice among equal values --------------------------------------------------------
def tie_rows(seed: int, n_rows: int) -> list[tuple[list[float], int]]:
    """Rows of few distinct values (many ties), some −∞ and NaN, n up to 700, k in 1..n."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_rows):
        n = int(rng.choice([1, 2, 3, 5, 8, 9, 16, 17, 33, 64, 128, 130, 256, 700]))
        k = int(rng.integers(1, n + 1)) if rng.random() < 0.6 else int(rng.integers(1, n // 64 + 2))
        k = min(k, n)
        values = rng.integers(0, int(rng.choice([1, 2, 3, n])), size=n).astype(float)
        if rng.random() < 0.15:
            values[rng.random(n) < 0.2] = -np.inf
        if rng.random() < 0.1:
            values[rng.random(n) < 0.1] = np.nan
        rows.append((values.tolist(), k))
    return rows


def test_torch_topk_order_is_torchs_own() -> None:
    """The port returns torch.topk(sorted=False)'s indices in its order, ties included, on both
    of its paths (k·64 > n: nth_element; k·64 <= n: partial_sort)."""
    paths = set()
    for values, k in tie_rows(0, 3000):
        want = torch.topk(torch.tensor(values, dtype=torch.float64), k, sorted=False).indices
        assert torch_topk_order(values, k) == want.tolist(), (values, k)
        paths.add(k * 64 <= len(values))
    assert paths == {True, False}


def test_topk_keeps_torchs_set_largest_first() -> None:
    rows = [(values, k) for values, k in tie_rows(1, 800) if len(values) == 17]
    for k in sorted({k for _, k in rows}):
        values = np.array([v for v, kk in rows if kk == k])
        got = topk(values, k)
        want = torch.topk(torch.tensor(values), k).indices.numpy()
        assert [set(r) for r in got] == [set(r) for r in want]
        kept = np.take_along_axis(np.nan_to_num(values, nan=1e300), got, axis=-1)  # NaN: largest
        assert (np.diff(kept, axis=-1) <= 0).all()  # largest first
    equal = torch.topk(torch.zeros(1, 8, dtype=torch.float64), 2).indices[0].tolist()
    assert set(topk(np.zeros((1, 8)), 2)[0]) == set(equal) != {0, 1}  # not the lowest indices


# -- random configs --------------------------------------------------------------------------------
def sizes(case: int, rng: np.random.Generator, experts: list[int]) -> dict:
    """Tokens, width, experts, expert width and top-k of a case: T = 1 every 4th, k = E every
    6th, a lattice every 3rd, 64 experts with top-1 in the last (torch.topk's heap path)."""
    n_experts = 64 if case == CASES[-1] else int(rng.choice(experts))
    top_k = n_experts if case % 6 == 1 else int(rng.integers(1, n_experts + 1))
    return dict(
        T=1 if case % 4 == 0 else int(rng.integers(2, 40)),
        d=int(rng.choice([8, 12, 16])),
        E=n_experts,
        I=int(rng.choice([4, 6, 10])),
        k=1 if case == CASES[-1] else top_k,
        lattice=case % 3 == 2 or case == CASES[-1],
    )


def matrix(rng: np.random.Generator, *shape: int, fan_in: int) -> np.ndarray:
    return rng.standard_normal(shape) / math.sqrt(fan_in)


def router(rng: np.random.Generator, s: dict) -> np.ndarray:
    """[E, d]: Gaussian, or on the lattice with some rows copied from others and some zeroed."""
    if not s["lattice"]:
        return matrix(rng, s["E"], s["d"], fan_in=s["d"])
    w = rng.integers(-2, 3, size=(s["E"], s["d"])) / 2
    for row in range(1, s["E"]):
        if rng.random() < 0.4:
            w[row] = w[rng.integers(0, row)]
        elif rng.random() < 0.2:
            w[row] = 0.0
    return w


def tokens(rng: np.random.Generator, s: dict, scale: float = 1.0) -> np.ndarray:
    if s["lattice"]:
        return rng.integers(-4, 5, size=(s["T"], s["d"])) / (LATTICE / 2)
    return scale * rng.standard_normal((s["T"], s["d"]))


def hf_module(module_class: type, config, w: dict[str, np.ndarray]) -> torch.nn.Module:
    """transformers' module for config in float64, eval mode, holding exactly w (strict)."""
    module = module_class(config).to(torch.float64).eval()
    module.load_state_dict({name: torch.tensor(value) for name, value in w.items()}, strict=True)
    return module


def mixtral_case(case: int, experts_implementation: str = "eager") -> Case:
    rng = np.random.default_rng(case)
    s = sizes(case, rng, [2, 3, 4, 6, 8])
    w = {
        "gate.weight": router(rng, s),
        "experts.gate_up_proj": matrix(rng, s["E"], 2 * s["I"], s["d"], fan_in=s["d"]),
        "experts.down_proj": matrix(rng, s["E"], s["d"], s["I"], fan_in=s["I"]),
    }
    config = MixtralConfig(
        hidden_size=s["d"], intermediate_size=s["I"], num_local_experts=s["E"],
        num_experts_per_tok=s["k"], num_attention_heads=1, num_key_value_heads=1,
        experts_implementation=experts_implementation,
    )  # fmt: skip
    kwargs = {"top_k": s["k"]}
    spec = spec_of("mixtral", s, top_k=s["k"])
    return tokens(rng, s), w, spec, kwargs, hf_module(MixtralSparseMoeBlock, config, w)


def gpt_oss_case(case: int, experts_implementation: str = "eager") -> Case:
    rng = np.random.default_rng(1000 + case)
    s = sizes(case, rng, [2, 3, 4, 5, 8])
    bias = (
        rng.integers(-1, 2, size=s["E"]) / 4 if s["lattice"] else 0.1 * rng.standard_normal(s["E"])
    )
    w = {
        "router.weight": router(rng, s),
        "router.bias": bias,
        "experts.gate_up_proj": matrix(rng, s["E"], s["d"], 2 * s["I"], fan_in=s["d"] // 4),
        "experts.gate_up_proj_bias": 0.1 * rng.standard_normal((s["E"], 2 * s["I"])),
        "experts.down_proj": matrix(rng, s["E"], s["I"], s["d"], fan_in=s["I"]),
        "experts.down_proj_bias": 0.1 * rng.standard_normal((s["E"], s["d"])),
    }
    alpha, limit = (
        (1.702, 7.0) if case % 2 else (float(rng.uniform(0.5, 3)), float(rng.uniform(1, 3)))
    )
    config = GptOssConfig(
        hidden_size=s["d"], intermediate_size=s["I"], num_local_experts=s["E"],
        num_experts_per_tok=s["k"], swiglu_alpha=alpha, swiglu_limit=limit,
        num_attention_heads=1, num_key_value_heads=1, experts_implementation=experts_implementation,
    )  # fmt: skip
    kwargs = {"top_k": s["k"], "swiglu_alpha": alpha, "swiglu_limit": limit}
    spec = spec_of("gpt-oss", s, top_k=s["k"], swiglu_alpha=alpha, swiglu_limit=limit)
    return tokens(rng, s, scale=2.0), w, spec, kwargs, hf_module(GptOssMLP, config, w)


def deepseek_case(case: int, experts_implementation: str = "eager") -> Case:
    rng = np.random.default_rng(2000 + case)
    s = sizes(case, rng, [4, 6, 8, 12, 16])
    groups = [g for g in range(1, s["E"] // 2 + 1) if s["E"] % g == 0]
    n_group = int(rng.choice(groups[1:] or groups))  # more than one group where E allows
    topk_group = int(rng.integers(1, n_group)) if n_group > 1 and case % 5 else n_group
    # top-k within the experts of the groups kept (the spec refuses more, which torch would fill
    # from the dropped groups)
    s["k"] = min(s["k"], s["E"] // n_group * topk_group)
    shared = s["I"] * int(rng.integers(1, 3))  # moe_intermediate_size · n_shared_experts
    correction = (
        rng.integers(-1, 2, size=s["E"]) / 4 if s["lattice"] else rng.uniform(-0.1, 0.1, s["E"])
    )
    w = {
        "gate.weight": router(rng, s),
        "gate.e_score_correction_bias": correction,
        "experts.gate_up_proj": matrix(rng, s["E"], 2 * s["I"], s["d"], fan_in=s["d"]),
        "experts.down_proj": matrix(rng, s["E"], s["d"], s["I"], fan_in=s["I"]),
        "shared_experts.gate_proj.weight": matrix(rng, shared, s["d"], fan_in=s["d"]),
        "shared_experts.up_proj.weight": matrix(rng, shared, s["d"], fan_in=s["d"]),
        "shared_experts.down_proj.weight": matrix(rng, s["d"], shared, fan_in=shared),
    }
    kwargs = dict(
        top_k=s["k"], n_group=n_group, topk_group=topk_group, norm_topk_prob=bool(case % 4),
        routed_scaling_factor=2.5 if case % 2 else 1.0,
    )  # fmt: skip
    config = DeepseekV3Config(
        hidden_size=s["d"], moe_intermediate_size=s["I"], n_routed_experts=s["E"],
        num_experts_per_tok=s["k"], n_group=n_group, topk_group=topk_group,
        norm_topk_prob=kwargs["norm_topk_prob"], routed_scaling_factor=kwargs["routed_scaling_factor"],
        n_shared_experts=shared // s["I"], num_attention_heads=1, num_key_value_heads=1,
        experts_implementation=experts_implementation,
    )  # fmt: skip
    spec = spec_of(
        "deepseek-v3", s, top_k=s["k"], n_group=n_group, topk_group=topk_group,
        norm_topk_prob=kwargs["norm_topk_prob"], routed_scaling=kwargs["routed_scaling_factor"],
        n_shared=shared // s["I"],
    )  # fmt: skip
    return tokens(rng, s), w, spec, kwargs, hf_module(DeepseekV3MoE, config, w)


FAMILIES: dict[str, Callable[..., Case]] = {
    "mixtral": mixtral_case,
    "gpt-oss": gpt_oss_case,
    "deepseek": deepseek_case,
}


def hf_output(module: torch.nn.Module, x: np.ndarray) -> np.ndarray:
    with float64_inside(), torch.no_grad():
        out = module(torch.tensor(x)[None])
    return (out[0] if isinstance(out, tuple) else out)[0].numpy()  # GptOssMLP: (out, scores)


def max_error(family: str, case: int, experts_implementation: str = "eager") -> float:
    x, w, spec, _, module = FAMILIES[family](case, experts_implementation)
    return float(np.abs(moe(x, w, spec) - hf_output(module, x)).max())


@pytest.mark.parametrize("family", FAMILIES)
def test_layer_equals_transformers(family: str) -> None:
    errors = {case: max_error(family, case) for case in CASES}
    worst = max(errors, key=errors.__getitem__)
    assert errors[worst] <= ATOL, (
        f"{family} case {worst}: max |numpy − transformers| {errors[worst]:.3g}"
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_layer_equals_transformers_batched_kernel(family: str) -> None:
    """transformers' batched_mm experts give the same numbers. (grouped_mm, what a model loaded
    without experts_implementation runs, refuses float64 on CPU: compare with "eager".)"""
    for case in range(6):
        assert max_error(family, case, "batched_mm") <= ATOL, (family, case)


@pytest.mark.parametrize("family", FAMILIES)
def test_ties_decide_the_output(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lattice configs need torch's tie-breaking: lowest index first fails them."""

    def lowest_index_first(values: np.ndarray, k: int) -> np.ndarray:
        return np.argsort(-values, axis=-1, kind="stable")[:, :k]

    monkeypatch.setattr(experts, "topk", lowest_index_first)
    lattice = [case for case in CASES if case % 3 == 2 or case == CASES[-1]]
    assert max(max_error(family, case) for case in lattice) > 1e-3


def test_gpt_oss_cases_reach_the_clamp() -> None:
    """Some gate or up values pass the limit, so the clamp is exercised."""
    reached = []
    for case in CASES:
        x, w, _, kwargs, _ = gpt_oss_case(case)
        h = (
            np.einsum("td,edf->etf", x, w["experts.gate_up_proj"])
            + w["experts.gate_up_proj_bias"][:, None]
        )
        reached.append(np.abs(h).max() > kwargs["swiglu_limit"])
    assert any(reached)


def test_deepseek_cases_drop_groups() -> None:
    kept = [deepseek_case(case)[3] for case in CASES]
    assert sum(k["topk_group"] < k["n_group"] for k in kept) >= 12


# -- refusals --------------------------------------------------------------------------------------
def refusal(call: Callable[[], object]) -> InputError:
    with pytest.raises(InputError) as caught:
        call()
    return caught.value


@pytest.mark.parametrize(
    "setting, entry",
    [
        (dict(kind="softmax-topk", top_k=9), "top_k"),
        (dict(kind="sigmoid-grouped", top_k=2, n_group=3), "n_group"),
        (dict(kind="sigmoid-grouped", top_k=2, n_group=4, topk_group=5), "topk_group"),
        (dict(kind="softmax-then-topk", top_k=2), "kind"),
    ],
)
def test_impossible_routing_is_named(setting: dict, entry: str) -> None:
    assert refusal(lambda: route(np.zeros((3, 8)), **setting)).entry == entry
