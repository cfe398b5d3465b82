"""Which layers of a model are alike: grouped by their attention's reach and their MLP (dense or
experts), told apart in words, and the keys a query of each sees."""

from __future__ import annotations

from generator.models.config import ModelConfig


def seen_keys(cfg: ModelConfig, layer: int, T: int) -> int:
    """The keys a query of layer `layer` is compared with, at sequence length T: T, or the window
    W when the layer has one (a kernel computes those; the masked rest is never needed)."""
    window = cfg.window(layer)
    return T if window is None else min(T, window)


def causal_cells(cfg: ModelConfig, layer: int, T: int) -> int:
    """The cells of a causal T × T grid a kernel computes in layer `layer`: seen_keys summed over
    the query positions 1 … T (t keys at position t, at most the window W), in closed form."""
    W = seen_keys(cfg, layer, T)  # the queries at positions up to W see every key before them
    return W * (W + 1) // 2 + (T - W) * W


def layer_groups(cfg: ModelConfig, *, by_window: bool = True) -> list[tuple[str, tuple[int, ...]]]:
    """The model's layers grouped by what their rows depend on: their window (FLOPs; not for
    parameters, by_window=False) and whether they have experts: (kind, layers), in order of each
    kind's first layer. One group when every layer is alike."""
    groups: dict[str, list[int]] = {}
    for i in range(cfg.n_layer):
        kinds: list[str] = [cfg.layer_type(i)] if by_window else []
        if cfg.experts is not None:
            kinds.append("experts" if cfg.moe_layer(i) else "dense")
        groups.setdefault(" ".join(kinds) or "full", []).append(i)
    return [(kind, tuple(layers)) for kind, layers in groups.items()]


def _traits(cfg: ModelConfig, layer: int) -> tuple[str, str]:
    """What layer `layer` is, in words: its attention's reach and what its MLP is."""
    attention = "full attention" if cfg.window(layer) is None else "sliding-window attention"
    return attention, "experts" if cfg.moe_layer(layer) else "a dense MLP"


def layer_phrases(cfg: ModelConfig, groups: list[tuple[int, ...]]) -> list[str]:
    """What sets each group of layers apart from the others, in words, for "… with {phrase}":
    the traits (attention's reach, the MLP) alike within each group and different between them
    ("sliding-window attention", "a dense MLP"); the layers' numbers when no trait tells them
    apart."""
    traits = [{_traits(cfg, i) for i in layers} for layers in groups]
    telling = [
        n
        for n in range(2)
        if all(len({t[n] for t in kinds}) == 1 for kinds in traits)
        and len({t[n] for kinds in traits for t in kinds}) > 1
    ]
    if not telling:
        return [f"layers {', '.join(map(str, layers))}" for layers in groups]
    return [" and ".join(next(iter(kinds))[n] for n in telling) for kinds in traits]


def has(cfg: ModelConfig, component: str, layer: int) -> bool:
    """Whether layer `layer` has `component`: experts in an MoE layer, a dense MLP elsewhere."""
    if component == "experts":
        return cfg.moe_layer(layer)
    if component == "mlp":
        return not cfg.moe_layer(layer)
    return True


def typical_layer(cfg: ModelConfig, component: str) -> int:
    """The layer whose instance stands for a layer part on a page: the first that has it (a
    block: the first with experts, if any; else the first)."""
    wanted = "experts" if component == "block" and cfg.experts is not None else component
    return next((i for i in range(cfg.n_layer) if has(cfg, wanted, i)), 0)
