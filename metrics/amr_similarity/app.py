"""Gradio demo of the amr_similarity metric (evaluate's launch_gradio_widget fails on gradio >= 4)."""

import re
from pathlib import Path

import evaluate

from lsplits.hub.metric_common import compute_button, form_result
from lsplits.similarity.registry import DEFAULT_SIMILARITY

MODULE_FILE = str(Path(__file__).with_name("amr_similarity.py"))
METRICS = ["smatchpp", "smatch", "s2match", "sema", "wlk", "sembleu"]


def split_graphs(text: str) -> list[str]:
    """PENMAN graphs separated by blank lines."""
    return [block.strip() for block in re.split(r"\n\s*\n", text) if block.strip()]


def compute(predictions: str, references: str, metric: str) -> dict:
    """Scores of the typed graphs, or the reason they cannot be scored."""
    return form_result(lambda: evaluate.load(MODULE_FILE, metric).compute(predictions=split_graphs(predictions),
                                                                          references=split_graphs(references)),
                       errors=(Exception,))  # whatever the graphs raise is shown to the user, not a stack trace


def build_demo():
    """The Space's page: predicted and reference graphs in, per-example and corpus scores out."""
    import gradio as gr  # imported here so that the compute functions load fast (and test) without it

    with gr.Blocks(title="AMR Similarity") as demo:
        gr.Markdown("# AMR Similarity\nPENMAN graphs, one per block (blank line between graphs).")
        predictions = gr.Textbox(label="predictions", lines=8,
                                 value="(w / want-01\n   :ARG0 (b / boy))\n\n(d / dog)")
        references = gr.Textbox(label="references", lines=8,
                                value="(w / want-01\n   :ARG0 (b / boy)\n   :ARG1 (g / go-02))\n\n(c / cat)")
        metric = gr.Dropdown(choices=METRICS, value=DEFAULT_SIMILARITY, label="metric")
        compute_button(compute, [predictions, references, metric], "scores")
    return demo


if __name__ == "__main__":
    build_demo().launch()
