"""ModelConfig for every family: inconsistent sizes are refused, derived widths follow the fields
they come from, the registry finds each family and size, and Llama 2 7B / Mistral 7B v0.1 are
transformers' LlamaConfig() / MistralConfig() defaults, read from transformers field by field."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.config import CONFIGS, SIZES
from generator.errors import InputError
from generator.models import FAMILIES, get_family, get_size
from generator.models.config import ModelConfig
from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.llama.sizes import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent


def size(**fields) -> ModelConfig:
    settings = dict(
        name="odd", label="odd", family="llama", names=LLAMA_NAMES, n_layer=2, n_head=4, d_model=32, n_ctx=16,
        vocab_size=50, norm="rmsnorm", mlp="swiglu", positions="rope", bias=False,
    )  # fmt: skip
    settings.update(fields)
    return ModelConfig(**settings)


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"n_head": 5}, "n_head", ("n_head 5 does not divide d_model 32",)),
        ({"n_kv_head": 3}, "n_kv_head", ("n_kv_head 3 does not divide n_head 4",)),
        ({"n_kv_head": 8}, "n_kv_head", ("n_kv_head 8 does not divide n_head 4",)),
        ({"d_model": 12, "n_head": 4}, "n_head", ("RoPE", "3 wide (odd)")),
        ({"n_layer": 0}, "n_layer", ("n_layer is 0",)),
        ({"d_mlp": -64}, "d_mlp", ("d_mlp is -64",)),
        ({"vocab_size": 0}, "vocab_size", ("vocab_size is 0",)),
        ({"n_kv_head": 0}, "n_kv_head", ("n_kv_head is 0",)),
        ({"sliding_window": 0}, "sliding_window", ("sliding_window is 0",)),
        ({"norm": "batchnorm"}, "norm", ("'batchnorm'",)),
        ({"rope_theta": 0.0}, "rope_theta", ("rope_theta is 0.0",)),
        ({"norm_eps": -1e-6}, "norm_eps", ("norm_eps",)),
    ],
)
def test_inconsistent_sizes_are_refused_naming_family_size_and_field(fields, field, words) -> None:
    with pytest.raises(InputError) as caught:
        size(**fields)
    error = caught.value
    assert error.problem.startswith("llama size 'odd': "), error.problem
    assert error.entry == f"odd.{field}"
    assert error.fix
    for word in words:
        assert word in error.problem, (word, error.problem)


def test_an_odd_head_is_fine_without_rope() -> None:
    """GPT-2's learned positions rotate nothing: a 3-wide head is a valid (toy) size."""
    cfg = ModelConfig("t", "t", n_layer=1, n_head=2, d_model=6, n_ctx=4, vocab_size=3)
    assert cfg.d_head == 3 and cfg.family == "gpt2"


def test_derived_widths_follow_replace_and_explicit_ones_stay() -> None:
    """A GPT-2 size with other heads or width keeps n_kv_head = n_head and d_mlp = 4 · d_model
    (tests shrink GPT-2 small this way); a width given explicitly is kept."""
    small = CONFIGS["gpt2"]
    shrunk = dataclasses.replace(small, n_head=2, d_model=16)
    assert (shrunk.n_kv_head, shrunk.d_mlp, shrunk.d_head) == (2, 64, 8)
    llama = get_size("llama-2-7b")
    wider = dataclasses.replace(llama, d_model=8192, n_head=64)
    assert (wider.d_mlp, wider.n_kv_head) == (11008, 32)  # given explicitly: kept
    assert dataclasses.replace(small, d_mlp=100).d_mlp == 100
    assert (
        dataclasses.replace(dataclasses.replace(small, d_mlp=100), d_model=16, n_head=2).d_mlp
        == 100
    )


def test_gpt2_sizes_keep_their_derived_widths() -> None:
    for name in SIZES:
        cfg = CONFIGS[name]
        assert cfg.family == "gpt2" and FAMILIES["gpt2"].sizes[name] is cfg
        assert (cfg.d_head, cfg.d_attn, cfg.d_mlp, cfg.n_kv_head) == (
            64, cfg.d_model, 4 * cfg.d_model, cfg.n_head,
        )  # fmt: skip
        assert (cfg.norm, cfg.mlp, cfg.positions, cfg.bias, cfg.tied_embeddings) == (
            "layernorm", "gelu", "learned", True, True,
        )  # fmt: skip
        assert cfg.layer_norm_eps == cfg.norm_eps == 1e-5


def test_registry() -> None:
    assert set(FAMILIES) == {"gpt2", "llama", "mixtral", "gpt-oss", "deepseek-v3"}
    names = [name for family in FAMILIES.values() for name in family.sizes]
    assert len(names) == len(set(names))
    for family in FAMILIES.values():
        for name, cfg in family.sizes.items():
            assert get_size(name) is cfg and get_family(cfg.family) is family
            shapes = family.weight_shapes(cfg)
            assert next(iter(shapes))[-len("embed_tokens.weight") :] in (
                "embed_tokens.weight",
                "wte.weight",
            )
    with pytest.raises(InputError) as caught:
        get_size("llama-3-8b")
    assert "mistral-7b-v0.1" in caught.value.fix and "gpt2-xl" in caught.value.fix
    with pytest.raises(InputError) as caught:
        get_family("t5")
    assert "llama" in caught.value.fix


def test_the_registry_imports_no_numpy() -> None:
    """generator.config imports generator.models on every build, warm ones too."""
    code = "import sys, generator.config, generator.models\nprint('numpy' in sys.modules)\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    assert result.stdout.strip() == "False"


# -- the Llama family's sizes are transformers' config defaults -------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", list(DEFAULTS))
def test_sizes_are_the_transformers_config_defaults(name: str) -> None:
    """Read from transformers, not typed in: every field of the table, and every ModelConfig field."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    row = DEFAULTS[name]
    config = getattr(transformers, row.config_class)()
    model_class = getattr(transformers, row.config_class.replace("Config", "ForCausalLM"))
    with torch.device("meta"):  # no memory for 7B weights
        model = model_class(config)
    has_biases = any(n.endswith(".bias") for n, _ in model.named_parameters())
    for field, value in row.fields.items():
        if field == "rope_theta":
            assert config.rope_parameters["rope_theta"] == value
        elif field == "num_key_value_heads" and value is None:
            assert config.num_key_value_heads == config.num_attention_heads  # None: as many
        elif field == "head_dim" and value is None:  # None: the width shared among the heads
            assert config.head_dim == config.hidden_size // config.num_attention_heads
        elif field in ("attention_bias", "mlp_bias") and not hasattr(config, field):
            assert value is False and not has_biases  # Mistral's projections have none
        else:
            assert getattr(config, field, None) == value, field

    cfg = get_size(name)
    assert (cfg.family, cfg.norm, cfg.mlp, cfg.positions) == ("llama", "rmsnorm", "swiglu", "rope")
    assert config.hidden_act == "silu"
    expected = {
        "n_layer": config.num_hidden_layers,
        "n_head": config.num_attention_heads,
        "n_kv_head": config.num_key_value_heads,
        "d_model": config.hidden_size,
        "d_head": config.head_dim,
        "d_mlp": config.intermediate_size,
        "n_ctx": config.max_position_embeddings,
        "vocab_size": config.vocab_size,
        "norm_eps": config.rms_norm_eps,
        "rope_theta": config.rope_parameters["rope_theta"],
        "sliding_window": getattr(config, "sliding_window", None),
        "tied_embeddings": config.tie_word_embeddings,
        "bias": has_biases,
    }
    assert {field: getattr(cfg, field) for field in expected} == expected
    # And every tensor's name and shape, in the state dict's order.
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    assert list(shapes.items()) == list(FAMILIES["llama"].weight_shapes(cfg).items())


def test_the_7b_sizes_are_the_published_models() -> None:
    """Llama 2 7B: multi-head attention, no window; Mistral 7B v0.1: 8 kv heads, a 4,096 window."""
    llama, mistral = get_size("llama-2-7b"), get_size("mistral-7b-v0.1")
    assert (llama.n_kv_head, llama.sliding_window, llama.n_rep) == (32, None, 1)
    assert (mistral.n_kv_head, mistral.sliding_window, mistral.n_rep) == (8, 4096, 4)


FIELD_NAMES = {"rope_theta": "rope_theta", "rms_norm_eps": "norm_eps"}  # transformers' -> ours


@pytest.mark.parametrize(
    "change",
    [
        {"hidden_size": 4096.5},
        {"num_attention_heads": 32.9},
        {"sliding_window": 4096.7},
        {"rope_theta": float("inf")},
        {"rope_theta": float("nan")},
        {"rms_norm_eps": float("inf")},
        {"max_position_embeddings": float("inf")},
        {"hidden_size": float("-inf")},
        {"sliding_window": float("nan")},
        {"tie_word_embeddings": float("inf")},
        {"attention_bias": "no", "mlp_bias": "no"},  # bool("no") is True
    ],
)
def test_a_llama_row_with_a_fraction_or_an_infinity_is_refused(change) -> None:
    """Issue 24's re-run: 32.9 heads were read as 32 and a hidden size of 4096.5 as 4096 (int()
    truncates), and an infinite RoPE base was accepted: the pages would print another model.
    Issue 35: an infinite whole number (a context length) stopped `itm numbers` and the build
    with an OverflowError traceback, and bool() made True of an infinity or "no"."""
    from generator.models.llama.sizes import TABLE, Defaults

    row = DEFAULTS["mistral-7b-v0.1"]
    bad = Defaults(row.config_class, row.label, {**row.fields, **change}, row.pinned)
    with pytest.raises(InputError) as refused:  # a ValueError was a traceback in `itm numbers`
        TABLE.spec("bad", bad)
    field = next(iter(change))
    assert refused.value.entry in (f"bad.{field}", f"bad.{FIELD_NAMES.get(field, field)}")
    assert refused.value.fix


def test_a_size_refused_while_the_commands_load_is_a_clear_error(monkeypatch, capsys) -> None:
    """A DEFAULTS row edited into an inconsistent size stopped `itm numbers` with a traceback:
    the sizes are made when the commands are imported, before main() caught InputError."""
    from generator import cli

    def broken_sizes():
        raise InputError("llama size 'x': n_head 32 does not divide d_model 4095", entry="x.n_head")

    monkeypatch.setattr(cli, "build_parser", broken_sizes)
    assert cli.main(["numbers"]) == 2
    assert "does not divide d_model 4095" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_key_value_heads": 5}, "num_key_value_heads"),  # 5 does not divide 32
        ({"num_attention_heads": 3}, "num_attention_heads"),  # 3 does not divide 4096
        ({"hidden_size": 4064, "num_attention_heads": 32}, "num_attention_heads"),  # 127: odd
    ],
)
def test_an_inconsistent_llama_row_is_refused_in_its_own_names(change, field) -> None:
    """ModelConfig's check named no file and used its own field names (n_kv_head, d_model) for a
    row written in transformers' (num_key_value_heads, hidden_size) (review)."""
    from generator.models.llama.sizes import SIZES_FILE, TABLE, Defaults

    row = DEFAULTS["mistral-7b-v0.1"]
    bad = Defaults(row.config_class, row.label, {**row.fields, **change}, row.pinned)
    with pytest.raises(InputError) as refused:
        TABLE.spec("bad", bad)
    error = refused.value
    assert (error.file, error.entry) == (SIZES_FILE, f"bad.{field}")
    assert field in error.problem + error.fix
    ours = re.findall(r"\b(n_kv_head|n_head|d_model|d_head)\b", error.render())
    assert not ours, error.render()


@pytest.mark.parametrize(
    ("module", "size", "change", "field"),
    [
        ("mixtral", "mixtral-8x7b", {"num_experts_per_tok": 9}, "num_experts_per_tok"),
        ("mixtral", "mixtral-8x7b", {"num_local_experts": 0}, "num_local_experts"),
        ("deepseek_v3", "deepseek-v3", {"kv_lora_rank": 0}, "kv_lora_rank"),
        ("deepseek_v3", "deepseek-v3", {"q_lora_rank": 0}, "q_lora_rank"),
        ("deepseek_v3", "deepseek-v3", {"first_k_dense_replace": 99}, "first_k_dense_replace"),
        ("deepseek_v3", "deepseek-v3", {"n_group": 7}, "n_group"),
    ],
)
def test_an_inconsistent_frontier_row_is_refused_in_its_own_names(
    module, size, change, field
) -> None:
    """A row of a frontier family's sizes.toml is written in transformers' names; its refusal named
    the spec's instead (experts.top_k, latent.kv_rank, first_dense), fields the file lacks."""
    import importlib

    sizes = importlib.import_module(f"generator.models.{module}.sizes")
    row = sizes.DEFAULTS[size]
    bad = dataclasses.replace(row, fields={**row.fields, **change})
    with pytest.raises(InputError) as refused:
        sizes.TABLE.spec("bad", bad)
    error = refused.value
    assert (error.file, error.entry) == (sizes.SIZES_FILE, f"bad.{field}")
    assert field in error.problem + error.fix
    ours = r"\b(top_k|n_experts|d_expert|first_dense|kv_rank|q_rank|nope_dim|rope_dim|v_dim)\b"
    assert not re.findall(ours, error.render()), error.render()
