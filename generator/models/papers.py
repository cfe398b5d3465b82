"""The papers the site cites for why a model family is built as it is: each a reference a reader
can look up (authors, year, title, arXiv id), printed as text, never a link the site would load.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    authors: str  # as cited: "Zhang & Sennrich", "Touvron et al."
    year: int
    title: str
    arxiv: str  # the arXiv identifier: "1910.07467"

    @property
    def short(self) -> str:
        """ "Zhang & Sennrich 2019": how the words around a citation name it."""
        return f"{self.authors} {self.year}"


LLAMA = Paper(
    "Touvron et al.", 2023, "LLaMA: Open and Efficient Foundation Language Models", "2302.13971"
)
LLAMA_2 = Paper(
    "Touvron et al.", 2023, "Llama 2: Open Foundation and Fine-Tuned Chat Models", "2307.09288"
)
MISTRAL = Paper("Jiang et al.", 2023, "Mistral 7B", "2310.06825")
RMSNORM = Paper("Zhang & Sennrich", 2019, "Root Mean Square Layer Normalization", "1910.07467")
SWIGLU = Paper("Shazeer", 2020, "GLU Variants Improve Transformer", "2002.05202")
ROPE = Paper(
    "Su et al.", 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding", "2104.09864"
)
GQA = Paper(
    "Ainslie et al.",
    2023,
    "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints",
    "2305.13245",
)
PALM = Paper(
    "Chowdhery et al.", 2022, "PaLM: Scaling Language Modeling with Pathways", "2204.02311"
)
TYING = Paper(
    "Press & Wolf", 2017, "Using the Output Embedding to Improve Language Models", "1608.05859"
)
MOE = Paper(
    "Shazeer et al.",
    2017,
    "Outrageously Large Neural Networks: The Sparsely-Gated Mixture-of-Experts Layer",
    "1701.06538",
)
MIXTRAL = Paper("Jiang et al.", 2024, "Mixtral of Experts", "2401.04088")
DEEPSEEK_V2 = Paper(
    "DeepSeek-AI",
    2024,
    "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
    "2405.04434",
)
DEEPSEEK_V3 = Paper("DeepSeek-AI", 2024, "DeepSeek-V3 Technical Report", "2412.19437")
SINKS = Paper(
    "Xiao et al.", 2023, "Efficient Streaming Language Models with Attention Sinks", "2309.17453"
)
GPT_OSS = Paper("OpenAI", 2025, "gpt-oss-120b & gpt-oss-20b Model Card", "2508.10925")
GPT_3 = Paper("Brown et al.", 2020, "Language Models are Few-Shot Learners", "2005.14165")

# every paper above, by its name here: how a data file cites one (generator/models/llama/changes.toml)
PAPERS: dict[str, Paper] = {
    name: value for name, value in globals().items() if isinstance(value, Paper)
}
