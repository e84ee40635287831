"""Gradio demo of the beam_uncertainty metric (evaluate's launch_gradio_widget fails on gradio >= 4)."""

import json
from pathlib import Path

import evaluate

from lsplits.hub.metric_common import compute_button, form_result
from lsplits.similarity.registry import DEFAULT_SIMILARITY, available

MODULE_FILE = str(Path(__file__).with_name("beam_uncertainty.py"))
EXAMPLE = [["(w / want-01 :ARG0 (b / boy))", "(w / want-01 :ARG0 (b / boy))"],
           ["(w / want-01 :ARG0 (b / boy))", "(s / sleep-01 :ARG0 (g / girl))"]]


def compute(candidates_json: str, similarity: str) -> dict:
    """Uncertainties for a JSON list of candidate lists, or the reason it cannot run."""
    return form_result(lambda: evaluate.load(MODULE_FILE, similarity).compute(candidates=json.loads(candidates_json)),
                       errors=(ValueError, TypeError))


def build_demo():
    """The Space's page: candidates and a similarity function in, one uncertainty per estimator out."""
    import gradio as gr  # imported here so that the compute functions load fast (and test) without it

    with gr.Blocks(title="Beam Uncertainty") as demo:
        gr.Markdown("# Beam Uncertainty\nA JSON list with, per example, its beam candidates; "
                    "higher = more uncertain.")
        candidates = gr.Textbox(label="candidates (JSON)", value=json.dumps(EXAMPLE, indent=1), lines=8)
        similarity = gr.Dropdown(choices=available(), value=DEFAULT_SIMILARITY, label="similarity function")
        compute_button(compute, [candidates, similarity], "uncertainty per example")
    return demo


if __name__ == "__main__":
    build_demo().launch()
