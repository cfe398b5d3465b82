"""A component page's numbers: its tensors' shapes, its parameter and FLOP tables per size (and
their LaTeX files), a whole model's count, RoPE's frequencies."""

from __future__ import annotations

from generator import accounting, blocks
from generator.config import ModelConfig
from generator.models import FAMILIES
from generator.models.component import Component
from generator.pages.blocks import (
    Dim,
    FlopCount,
    ModelCount,
    ParameterCount,
    ShapeList,
    Shapes,
    TensorShape,
)
from generator.pages.context import PageContext, family_sizes
from generator.render.numbers import fmt_int, tex_int
from generator.render.tables import latex_tabular, markdown_table

PARAM_HEAD = ("Component", "Calculation", "Parameters")
FLOP_HEAD = ("Operation", "Calculation", "FLOPs per token")


class ComponentNumbers(PageContext):
    """{{ shapes() }}, {{ parameters() }}, {{ flops() }}, {{ model_count() }}, {{ rope_table() }}."""

    def _together(self, c: Component, cfg: ModelConfig) -> list[Component]:
        """The components this page counts as one group with `c`: those on its page with as
        many instances (GPT-2's ln_1 and ln_2; Llama's two per-layer RMSNorms, not its final
        norm, which model_count() adds)."""
        count = accounting.instances(cfg, c.key)
        return [
            other
            for other in self.registry
            if other.page == c.page and accounting.instances(cfg, other.key) == count
        ]

    def shapes(self) -> str:
        """In/out shapes and the parameter summary, for each size."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            glossary = self.url_for("glossary.md")
            tensors = tuple(
                TensorShape(direction, blocks.Markup(t.symbol), dims(t.dims, cfg, glossary))
                for direction, group in (("in", c.inputs), ("out", c.outputs))
                for t in group
            )
            per = accounting.params_per_instance(cfg, c.key)
            count = accounting.instances(cfg, c.key)
            together = self._together(c, cfg)
            shapes = ShapeList(
                tensors=tensors,
                per_instance=fmt_int(per),
                instances=count,
                together=tuple(other.name for other in together),
                total=fmt_int(sum(accounting.params_total(cfg, other.key) for other in together)),
            )
            return self.render_block(shapes)

        return self.render_block(Shapes(tabs=blocks.Markup(self.size_tabs(render))))

    def parameters(self) -> str:
        """Per-instance accounting table per size, and the total across blocks."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            rows = accounting.param_rows(cfg, c.key)
            if not rows:
                why = self.family.no_params.get(c.key, "No parameters of its own.")
                untied = accounting.param_rows(cfg, c.key, tied=False)
                if not untied:
                    return f"{why}\n"
                table = markdown_table(
                    untied, head=PARAM_HEAD, total_label="Untied total", quantity="params.untied"
                )
                return f"{why}\n\n{table}"
            per = sum(r.value for r in rows)
            count = accounting.instances(cfg, c.key)
            table = markdown_table(
                rows,
                head=PARAM_HEAD,
                total_label="Per-instance total",
                quantity="params.table_total",
            )
            together = self._together(c, cfg)
            on_page = [
                other
                for other in self.registry  # every component on the page, Llama's final norm too
                if other.page == c.page and accounting.param_rows(cfg, other.key)
            ]
            latex = tuple(  # several: their module names; one: its short name ("8 experts")
                (
                    other.name if len(on_page) > 1 else other.short,
                    self._tex_link(other.key, "params", cfg),
                )
                for other in on_page
            )
            count_block = ParameterCount(
                per_instance=fmt_int(per),
                table=blocks.Markup(table),
                instances=count,
                together=tuple(other.name for other in together),
                total=fmt_int(sum(accounting.params_total(cfg, other.key) for other in together)),
                per_instance_tex=tex_int(per),
                total_tex=tex_int(per * count),
                latex=latex,
            )
            return self.render_block(count_block)

        return self.size_tabs(render)

    def model_count(self, keys: list[str], what: str) -> str:
        """How many of these components the whole model holds and their parameters, per size:
        {{ model_count(["ln1", "ln2", "lnf"], "LayerNorms") }}."""
        unknown = [key for key in keys if key not in self.by_key]
        if unknown:
            from generator.errors import InputError

            raise InputError(
                f"model_count() names {', '.join(unknown)}, which is no component",
                file=f"docs/{self.src_path}",
                entry="model_count",
                fix=f"use keys of the {self.family.name} registry: " + ", ".join(self.by_key),
            )
        parts = [self.by_key[key] for key in keys]

        def render(cfg: ModelConfig) -> str:
            counts = [accounting.instances(cfg, c.key) for c in parts]
            count = ModelCount(
                model=cfg.label,
                parts=tuple((c.name, fmt_int(n)) for c, n in zip(parts, counts, strict=True)),
                count=fmt_int(sum(counts)),
                what=what,
                total=fmt_int(sum(accounting.params_total(cfg, c.key) for c in parts)),
            )
            return self.render_block(count)

        return self.size_tabs(render)

    def flops(self) -> str:
        """Forward FLOPs per token per size, at the model's full context."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            if not accounting.flop_rows(cfg, c.key, cfg.n_ctx):
                return (
                    "No matrix multiplications: a lookup or an elementwise step, so it counts "
                    "0 FLOPs under the convention below.\n"
                )
            kinds = accounting.layer_kinds(cfg, c.key, cfg.n_ctx)  # one, unless layers differ
            tables = [
                (
                    f"The {fmt_int(len(layers))} layers with {phrase}" if phrase else "",
                    blocks.Markup(
                        markdown_table(
                            accounting.flop_rows(cfg, c.key, cfg.n_ctx, layers[0]),
                            head=FLOP_HEAD,
                            total_label="Per-instance total",
                            quantity="flops.per_token" if index == 0 else f"flops.kind{index}",
                        )
                    ),
                )
                for index, (phrase, layers) in enumerate(kinds)
            ]
            flops = FlopCount(
                n_ctx=fmt_int(cfg.n_ctx),
                table=tables[0][1],
                latex=self._tex_link(c.key, "flops", cfg),
                heading=tables[0][0],
                others=tuple(tables[1:]),
            )
            return self.render_block(flops)

        convention = f"{self._doc('glossary.md')}#flop-convention"
        windowed = any(cfg.sliding_window for cfg in family_sizes(self.family.name))
        keys = "the keys each query sees" if windowed else "the full T × T grid"
        return self.size_tabs(render) + (
            f"\nCounted as everywhere on this site: [forward, per token, matrix multiplications"
            f" only, over {keys}]({convention}).\n"
        )

    def rope_table(self) -> str:
        """Per size: the head's pairs of dimensions, the base, and how fast the fastest and the
        slowest pair turn (radians per position, and positions per full turn)."""
        import math

        def render(cfg: ModelConfig) -> str:
            pairs = cfg.d_head // 2
            slowest = cfg.rope_theta ** (-(2 * (pairs - 1)) / cfg.d_head)  # θ_i, i = pairs - 1
            rows = [
                ("Dimensions per head, d_head", fmt_int(cfg.d_head), "rope.d_head"),
                ("Pairs rotated, d_head / 2", fmt_int(pairs), "rope.pairs"),
                ("Base θ (rope_theta)", fmt_int(round(cfg.rope_theta)), "rope.theta"),
                ("Fastest pair (i = 0): radians per position", "1", "rope.fastest"),
                ("… positions per full turn, 2π", f"{2 * math.pi:.2f}", "rope.fastest_turn"),
                (
                    f"Slowest pair (i = {fmt_int(pairs - 1)}): radians per position",
                    f"{slowest:.3g}",
                    "rope.slowest",
                ),
                (
                    "… positions per full turn",
                    fmt_int(round(2 * math.pi / slowest)),
                    "rope.slowest_turn",
                ),
                (
                    "Context (the config's max_position_embeddings)",
                    fmt_int(cfg.n_ctx),
                    "rope.n_ctx",
                ),
            ]
            lines = ["| Quantity | Value |", "| :-- | --: |"]
            lines += [f'| {label} | <span data-q="{q}">{v}</span> |' for label, v, q in rows]
            return "\n".join(lines) + "\n"

        return self.size_tabs(render)

    def _tex_link(self, key: str, kind: str, cfg: ModelConfig) -> str:
        return self._doc(table_path(key, kind, cfg))


def dims(
    tensor_dims: tuple[str, ...], cfg: ModelConfig, glossary: str | None = None
) -> tuple[Dim, ...]:
    """ "B batch", "{d_model} d" -> the words of each dimension, sizes from the config, each
    symbol with its glossary link (none without a glossary page)."""
    fields = {
        "d_model": fmt_int(cfg.d_model),
        "d_mlp": fmt_int(cfg.d_mlp),
        "vocab_size": fmt_int(cfg.vocab_size),
        "n_ctx": fmt_int(cfg.n_ctx),
        "n_head": fmt_int(cfg.n_head),
        "n_kv_head": fmt_int(cfg.n_kv_head),
        "d_head": fmt_int(cfg.d_head),
    }
    from generator.glossary import SYMBOLS

    def word(w: str) -> tuple[str, str | None]:
        if glossary and w in SYMBOLS:
            return w, f"{glossary}#sym-{SYMBOLS[w].anchor}"
        return w, None

    return tuple(tuple(word(w) for w in d.format(**fields).split(" ")) for d in tensor_dims)


def table_path(key: str, kind: str, cfg: ModelConfig) -> str:
    return f"tables/{key}-{kind}-{cfg.name}.tex"


def latex_tables() -> dict[str, bytes]:
    """Every component's parameter and FLOP tables for every size of every family, as LaTeX
    files for the site."""
    tables = {}
    for family in FAMILIES.values():
        for c in (c for c in family.registry if c.tables):
            for cfg in family_sizes(family.name):
                rows = accounting.param_rows(cfg, c.key)
                if rows:
                    tables[table_path(c.key, "params", cfg)] = latex_tabular(
                        rows,
                        head=PARAM_HEAD,
                        total_label="Per-instance total",
                        caption=f"{cfg.label}: parameters of one instance of {c.title}",
                    ).encode()
                flops = accounting.flop_rows(cfg, c.key, cfg.n_ctx)
                if flops:
                    tables[table_path(c.key, "flops", cfg)] = latex_tabular(
                        flops,
                        head=FLOP_HEAD,
                        total_label="Per-instance total",
                        caption=f"{cfg.label}: forward FLOPs per token of one instance of"
                        f" {c.title} at a context of {fmt_int(cfg.n_ctx)} tokens",
                    ).encode()
    return tables
