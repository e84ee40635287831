"""Gradio demo of the PRR metric (written here because evaluate's launch_gradio_widget fails on gradio >= 4)."""

from pathlib import Path

import evaluate

from lsplits.hub.metric_common import compute_button, form_result, parse_numbers, score_boxes
from lsplits.uncertainty.prr import DEFAULT_BOOTSTRAP

MODULE = evaluate.load(str(Path(__file__).with_name("prr.py")))


def compute(uncertainties: str, qualities: str, n_bootstrap: float) -> dict:
    """The metric's output for the two lists typed in the form, or the reason it cannot run."""
    return form_result(lambda: MODULE.compute(uncertainties=parse_numbers(uncertainties),
                                              qualities=parse_numbers(qualities), n_bootstrap=int(n_bootstrap)))


def build_demo():
    """The Space's page: two lists of numbers in, PRR and its parts out."""
    import gradio as gr  # imported here so that the compute functions load fast (and test) without it

    with gr.Blocks(title="PRR") as demo:
        gr.Markdown("# Prediction Rejection Ratio\nOne uncertainty and one quality per example; "
                    "PRR is 1 when the uncertainties rank the qualities perfectly, 0 for random.")
        uncertainties, qualities = score_boxes()
        n_bootstrap = gr.Number(label="bootstrap resamples", value=DEFAULT_BOOTSTRAP, precision=0)
        compute_button(compute, [uncertainties, qualities, n_bootstrap], "result")
    return demo


if __name__ == "__main__":
    build_demo().launch()
