"""The Llama family's rotary walkthrough against transformers: the toy's q and k, their angles and
their rotation in the JSON the built page fetches equal LlamaForCausalLM's own (holding the same
toy weights, recorded at apply_rotary_pos_emb), and the Llama sizes beside each step equal what
transformers' default configs and LlamaRotaryEmbedding give. GPT-2's walkthrough keeps its steps."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from urllib.parse import urljoin

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator.models.llama.sizes import SIZES
from generator.walkthrough.rotary import SEED, rotary_toy, toy_config

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # imports torch / transformers

from transformers import LlamaConfig, MistralConfig  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding  # noqa: E402

from generator.engine import toy_token_ids  # noqa: E402
from generator.models.weights import random_weights  # noqa: E402
from tests.llama_helpers import float64_inside, hf_attention_trace, hf_model  # noqa: E402

PAGE = "llama/walkthrough/index.html"
ROUNDING = 5e-7  # the JSON keeps six decimals
DEFAULTS = {"llama-2-7b": LlamaConfig, "mistral-7b-v0.1": MistralConfig}


def page_json(site: Path) -> dict:
    html = (site / PAGE).read_text(encoding="utf-8")
    root = BeautifulSoup(html, "html.parser").select_one(".itm-wt[data-src]")
    assert root is not None, "the page has no walkthrough widget"
    path = urljoin("/" + PAGE, root["data-src"]).lstrip("/")
    return json.loads((site / path).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def data(built_site: Path) -> dict:
    return page_json(built_site)


@pytest.fixture(scope="module")
def theirs() -> dict[str, np.ndarray]:
    """transformers' layer 0 on the toy: q and k before and after apply_rotary_pos_emb."""
    cfg = toy_config()
    ids = toy_token_ids(cfg, SEED, len(rotary_toy().tokens))
    model = hf_model(random_weights(cfg, SEED), cfg)
    return hf_attention_trace(model, ids, "llama")[0]


def test_the_pages_q_and_k_and_their_rotation_are_transformers(data: dict, theirs) -> None:
    """Every grid of the three steps, against LlamaForCausalLM holding the toy's weights."""
    for key in ("q", "k", "q_rotated", "k_rotated"):
        shown = np.array(data["trace"][key])
        assert shown.shape == theirs[key].shape, key
        np.testing.assert_allclose(shown, theirs[key], rtol=0, atol=ROUNDING, err_msg=key)
        # and unrounded: the engine's trace the JSON was written from
        np.testing.assert_allclose(rotary_toy().trace[key], theirs[key], rtol=0, atol=1e-12)
    assert not np.allclose(theirs["q"][:, 1:], theirs["q_rotated"][:, 1:])  # it does turn
    assert [s["key"] for s in data["steps"]] == ["pairs", "angles", "rotate"]


def test_the_angles_are_llama_rotary_embeddings(data: dict) -> None:
    """The rates and the angle table are LlamaRotaryEmbedding's inv_freq and its cos/sin's
    angles, for the toy's head width and base; each rotated pair keeps its length."""
    cfg = toy_config()
    hf = LlamaConfig(
        hidden_size=cfg.d_model, num_attention_heads=cfg.n_head, head_dim=cfg.d_head,
        rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta},
    )  # fmt: skip
    positions = np.array(data["positions"])
    assert positions.tolist() == list(range(len(data["tokens"])))
    with float64_inside():
        rotary = LlamaRotaryEmbedding(hf).double()
        with torch.no_grad():
            cos, sin = rotary(torch.zeros(1, dtype=torch.float64), torch.as_tensor(positions)[None])
    inv_freq = rotary.inv_freq.double().numpy()
    np.testing.assert_allclose(data["rates"], inv_freq, rtol=0, atol=ROUNDING)
    angles = np.array(data["trace"]["angles"])  # [T, dh/2]
    half = cfg.d_head // 2
    np.testing.assert_allclose(np.cos(angles), cos[0, :, :half].numpy(), atol=2 * ROUNDING)
    np.testing.assert_allclose(np.sin(angles), sin[0, :, half:].numpy(), atol=2 * ROUNDING)
    for before, after in (("q", "q_rotated"), ("k", "k_rotated")):
        x, y = np.array(data["trace"][before]), np.array(data["trace"][after])
        pair_length = np.hypot(x[..., :half], x[..., half:])
        np.testing.assert_allclose(np.hypot(y[..., :half], y[..., half:]), pair_length, atol=1e-5)
    assert cfg.rope_theta == LlamaConfig().rope_parameters["rope_theta"]  # Llama 2's base


def facts(site: Path, size: str, step: str) -> dict[str, str]:
    html = BeautifulSoup((site / PAGE).read_text(encoding="utf-8"), "html.parser")
    section = html.select_one(f'.itm-wt__step[data-key="{step}"]')
    box = section.select_one(f'.itm-wt__big [data-wt-model="{size}"]')
    return {div.dt.get_text(): div.dd.get_text() for div in box.select("dl.itm-wt__facts > div")}


def number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


@pytest.mark.parametrize("size", list(SIZES))
def test_the_llama_sizes_beside_the_toy_are_transformers_defaults(built_site: Path, size) -> None:
    """d_head, the base and the first and last pairs' rates printed for each size equal what
    transformers' default config of that class and its LlamaRotaryEmbedding give."""
    hf = DEFAULTS[size]()
    d_head = hf.hidden_size // hf.num_attention_heads
    theta = hf.rope_parameters["rope_theta"]
    inv_freq = LlamaRotaryEmbedding(hf).inv_freq.double().numpy()
    half = len(inv_freq)
    assert half == d_head // 2
    pairs = facts(built_site, size, "pairs")
    assert pairs["Pairs per head"] == f"{d_head:,} ÷ 2 = {half:,}"
    kv = hf.num_key_value_heads or hf.num_attention_heads
    assert pairs["Heads rotated"] == f"{hf.num_attention_heads} query heads, {kv} key heads"
    angles = facts(built_site, size, "angles")
    assert number(angles["Base (rope_theta)"]) == theta
    fast = re.match(
        r"([\d.]+) rad per position, a turn every ([\d.,]+) positions", angles["Pair 0"]
    )
    slow = re.match(
        r"([\d.e-]+) rad per position, a turn every ([\d.,]+) positions", angles[f"Pair {half - 1}"]
    )
    assert fast and slow, angles
    assert number(fast[1]) == inv_freq[0] == 1
    assert number(fast[2]) == pytest.approx(2 * math.pi, abs=0.005)
    assert number(slow[1]) == pytest.approx(inv_freq[-1], rel=5e-3)  # three significant digits
    assert number(slow[2]) == round(2 * math.pi / inv_freq[-1])
    last = hf.max_position_embeddings - 1
    at_last = angles[f"Pair {half - 1} at position {last:,}"]
    assert number(at_last.removesuffix(" rad")) == pytest.approx(last * inv_freq[-1], abs=0.005)
    rotate = facts(built_site, size, "rotate")
    turned = (hf.num_attention_heads + kv) * half
    assert rotate["Pairs turned per token and layer"].endswith(f"= {turned:,}")
    assert number(rotate["… in all layers"]) == turned * hf.num_hidden_layers


def test_gpt2s_walkthrough_has_no_rotary_step(built_site: Path) -> None:
    """GPT-2 has no rotation: its walkthrough keeps its seven steps, none of them this page's."""
    from tests.test_walkthrough_data import page_json as gpt2_json

    gpt2 = [s["key"] for s in gpt2_json(built_site)["steps"]]
    assert len(gpt2) == 7
    assert not {"pairs", "angles", "rotate"} & set(gpt2)
    html = (built_site / "walkthrough/attention/index.html").read_text(encoding="utf-8")
    assert "rotat" not in BeautifulSoup(html, "html.parser").select_one("article").get_text()


def test_the_rope_and_attention_pages_lead_to_it(built_site: Path) -> None:
    """Besides its nav entry, readers reach the page from the RoPE page, its words and its Go
    deeper, and from the Llama attention page's words."""
    for page, where in (("llama/rope", "article"), ("llama/attention", "article")):
        html = BeautifulSoup((built_site / page / "index.html").read_text(), "html.parser")
        links = [a for a in html.select(f"{where} a") if a.get("href") == "../walkthrough/"]
        assert links, page
    rope = BeautifulSoup((built_site / "llama/rope/index.html").read_text(), "html.parser")
    deeper = rope.find("h2", id="go-deeper").find_next("ul").get_text(" ", strip=True)
    assert "Step through it at toy scale: the RoPE walkthrough" in deeper
