"""Gradio demo of the ue_metrics metric (written here because evaluate's launch_gradio_widget fails on gradio >= 4)."""

from pathlib import Path

import evaluate

from lsplits.hub.metric_common import compute_button, form_result, parse_numbers, score_boxes
from lsplits.uncertainty.bounds import DEFAULT_DELTA
from lsplits.uncertainty.normalization import DEFAULT_NORMALIZER, NORMALIZERS
from lsplits.uncertainty.ue_metrics import METRICS

MODULE = evaluate.load(str(Path(__file__).with_name("ue_metrics.py")))


def compute(uncertainties: str, qualities: str, metrics: list[str], bad_below: str, normalizer: str,
            target_risk: str = "", delta: str = str(DEFAULT_DELTA)) -> dict:
    """The chosen metrics of the two lists typed in the form (and the certified threshold when a target risk is
    typed), or the reason they cannot be computed."""
    target = float(target_risk) if target_risk.strip() else None
    chosen = [*metrics, *(["selective_threshold"] if target is not None else [])]
    return form_result(lambda: MODULE.compute(
        uncertainties=parse_numbers(uncertainties), qualities=parse_numbers(qualities), metrics=chosen,
        bad_below=float(bad_below) if bad_below.strip() else None, normalizer=normalizer, target_risk=target,
        delta=float(delta)))


def build_demo():
    """The Space's page: uncertainties and qualities in, one value per chosen metric out."""
    import gradio as gr  # imported here so that the compute functions load fast (and test) without it

    with gr.Blocks(title="Uncertainty metrics") as demo:
        gr.Markdown("# Uncertainty-evaluation metrics\nOne uncertainty and one quality per example; "
                    "PRR, ROC-AUC, PR-AUC, AURC, E-AURC, RPP, Spearman, Kendall and ECE; "
                    "with a target risk, the certified rejection threshold.")
        uncertainties, qualities = score_boxes("qualities (higher = better, in [0, 1])")
        metrics = gr.CheckboxGroup(list(METRICS), value=list(METRICS), label="metrics")
        bad_below = gr.Textbox(label="bad below (quality threshold of ROC-AUC / PR-AUC)", value="0.5")
        normalizer = gr.Dropdown(list(NORMALIZERS), value=DEFAULT_NORMALIZER,
                                 label="normaliser before ECE")
        with gr.Row():
            target_risk = gr.Textbox(label="target risk (mean 1 - quality of the kept; blank: no threshold)", value="")
            delta = gr.Textbox(label="delta (allowed failure probability)", value=str(DEFAULT_DELTA))
        compute_button(compute, [uncertainties, qualities, metrics, bad_below, normalizer, target_risk, delta],
                       "result")
    return demo


if __name__ == "__main__":
    build_demo().launch()
