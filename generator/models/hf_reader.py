"""A row of transformers config defaults read into ModelConfig's fields, each value checked for
its kind (a whole number, a number, a flag) and refused naming the row's own field."""

from __future__ import annotations

from collections.abc import Callable
from math import isfinite
from typing import Any

from generator.errors import InputError
from generator.models.config import Experts, Latent, Yarn
from generator.models.pinned_defaults import Defaults, Value


class RowReader:
    """A row's fields read as the spec's, each checked for its kind, naming the row's field."""

    def __init__(self, name: str, row: Defaults, file: str) -> None:
        self.name, self.row, self.file = name, row, file

    def refuse(self, key: str, what: str, fix: str) -> InputError:
        return InputError(
            f"size {self.name!r}: {key} {what}", file=self.file, entry=f"{self.name}.{key}", fix=fix
        )

    def value(self, key: str) -> Value:
        """The row's value of `key`, which it must hold (a KeyError was a traceback)."""
        if key not in self.row.fields:
            raise self.refuse(
                key, "is missing", f"write transformers' default of {key} (in unset if None)"
            )
        return self.row.fields[key]

    def number(self, key: str, kind: type[int] | type[float]) -> int | float:
        value = self.value(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not isfinite(value):
            raise self.refuse(
                key, f"is {value!r}, not a number", "write the number transformers sets"
            )
        if kind is int and value != int(value):  # 32.9 heads were read as 32
            raise self.refuse(key, f"is {value!r}, not a whole number", "write a whole number")
        return kind(value)

    def whole(self, key: str) -> int:
        return int(self.number(key, int))

    def flag(self, key: str) -> bool:
        value = self.value(key)
        if not isinstance(value, bool):  # bool() made True of inf, "no" or [0]
            raise self.refuse(key, f"is {value!r}, not True or False", "write True or False")
        return value

    def optional(self, key: str, read: Callable[[str], Any]) -> Any:
        return None if self.row.fields.get(key) is None else read(key)

    def fields(
        self, layer_types: Callable[[int], tuple[str, ...]] | None, router: str | None
    ) -> dict[str, Any]:
        f = self.row.fields
        heads = (
            "num_attention_heads" if f.get("num_key_value_heads") is None else "num_key_value_heads"
        )
        found: dict[str, Any] = dict(
            n_layer=self.whole("num_hidden_layers"),
            n_head=self.whole("num_attention_heads"),
            n_kv_head=self.whole(heads),
            d_model=self.whole("hidden_size"),
            d_mlp=self.whole("intermediate_size"),
            n_ctx=self.whole("max_position_embeddings"),
            vocab_size=self.whole("vocab_size"),
            norm_eps=self.number("rms_norm_eps", float),
            rope_theta=self.number("rope_theta", float),
            sliding_window=self.optional("sliding_window", self.whole),
            tied_embeddings=self.flag("tie_word_embeddings"),
        )
        if f.get("head_dim") is not None:
            found["head_dim"] = self.whole("head_dim")
        found |= self._biases()
        if layer_types is not None:
            found["layer_types"] = layer_types(found["n_layer"])
        if f.get("rope_type") == "yarn":
            found["rope_scaling"] = self._yarn()
        if "kv_lora_rank" in f:
            found["latent"] = Latent(
                kv_rank=self.whole("kv_lora_rank"),
                q_rank=self.optional("q_lora_rank", self.whole),
                nope_dim=self.whole("qk_nope_head_dim"),
                rope_dim=self.whole("qk_rope_head_dim"),
                v_dim=self.whole("v_head_dim"),
            )
            found["rope_interleave"] = self.flag("rope_interleave")
        if "num_experts_per_tok" in f:
            assert router is not None, "a family with experts names its router"
            found["experts"] = self._experts(router)
        for key in ("swiglu_alpha", "swiglu_limit"):
            if key in f:
                found[key] = self.number(key, float)
        return found

    def _yarn(self) -> Yarn:
        """A row's rope_type "yarn" parameters (rope_factor, rope_beta_fast, …)."""
        f = self.row.fields

        def real(key: str, default: float | None) -> float | None:
            return default if f.get(key) is None else self.number(key, float)

        return Yarn(
            factor=self.number("rope_factor", float),
            original_max_position_embeddings=self.whole("rope_original_max_position_embeddings"),
            beta_fast=real("rope_beta_fast", 32.0) or 32.0,
            beta_slow=real("rope_beta_slow", 1.0) or 1.0,
            truncate=self.flag("rope_truncate") if "rope_truncate" in f else True,
            mscale=real("rope_mscale", None),
            mscale_all_dim=real("rope_mscale_all_dim", None),
        )

    def _biases(self) -> dict[str, Any]:
        f = self.row.fields
        if "mlp_bias" not in f:  # one attention_bias, the experts' biases with it (gpt-oss)
            return {"bias": self.flag("attention_bias")}
        if self.flag("attention_bias") != self.flag("mlp_bias"):
            raise self.refuse(
                "attention_bias",
                f"is {f['attention_bias']!r} and mlp_bias {f['mlp_bias']!r}: biases on attention "
                "only or on the MLP only are not modelled",
                "give attention_bias and mlp_bias the same value",
            )
        return {"bias": self.flag("attention_bias")}

    def _experts(self, router: str) -> Experts:
        f = self.row.fields
        count = "num_local_experts" if "num_local_experts" in f else "n_routed_experts"
        width = "moe_intermediate_size" if "moe_intermediate_size" in f else "intermediate_size"
        return Experts(
            n_experts=self.whole(count),
            top_k=self.whole("num_experts_per_tok"),
            d_expert=self.whole(width),
            router=router,  # type: ignore[arg-type]
            n_shared=self.whole("n_shared_experts") if "n_shared_experts" in f else 0,
            first_dense=self.whole("first_k_dense_replace") if "first_k_dense_replace" in f else 0,
            n_group=self.whole("n_group") if "n_group" in f else 1,
            topk_group=self.whole("topk_group") if "topk_group" in f else 1,
            norm_topk_prob=self.flag("norm_topk_prob") if "norm_topk_prob" in f else True,
            routed_scaling=self.number("routed_scaling_factor", float)
            if "routed_scaling_factor" in f
            else 1.0,
            router_bias=router == "topk-softmax",
        )
