"""Gradio demo of the PRR metric (written here because evaluate's launch_gradio_widget fails on gradio >= 4)."""

import re
from pathlib import Path

import evaluate

MODULE = evaluate.load(str(Path(__file__).with_name("prr.py")))


def parse_numbers(text: str) -> list[float]:
    """``"0.1, 0.5 0.9" -> [0.1, 0.5, 0.9]`` (commas, spaces or new lines between numbers)."""
    return [float(part) for part in re.split(r"[,\s]+", text.strip()) if part]


def compute(uncertainties: str, qualities: str, n_bootstrap: float) -> dict:
    """The metric's output for the two lists typed in the form, or the reason it cannot run."""
    try:
        return MODULE.compute(uncertainties=parse_numbers(uncertainties), qualities=parse_numbers(qualities),
                              n_bootstrap=int(n_bootstrap))
    except ValueError as error:
        return {"error": str(error)}


def build_demo():
    """The Space's page: two lists of numbers in, PRR and its parts out."""
    import gradio as gr  # imported here so that the compute functions load fast (and test) without it

    with gr.Blocks(title="PRR") as demo:
        gr.Markdown("# Prediction Rejection Ratio\nOne uncertainty and one quality per example; "
                    "PRR is 1 when the uncertainties rank the qualities perfectly, 0 for random.")
        uncertainties = gr.Textbox(label="uncertainties (higher = less trustworthy)", value="0.1, 0.4, 0.3, 0.9")
        qualities = gr.Textbox(label="qualities (higher = better)", value="0.9, 0.6, 0.7, 0.2")
        n_bootstrap = gr.Number(label="bootstrap resamples", value=1000, precision=0)
        button = gr.Button("Compute")
        output = gr.JSON(label="result")
        button.click(compute, [uncertainties, qualities, n_bootstrap], output)
    return demo


if __name__ == "__main__":
    build_demo().launch()
