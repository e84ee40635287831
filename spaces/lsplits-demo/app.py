"""lsplits demo Space: Likelihood Splits and black-box uncertainty with PRR, in two tabs.

Run locally with ``python spaces/lsplits-demo/app.py`` (``--help`` for options). On a Space the
``lsplits`` package and the demo assets sit next to this file (``lsplits push-space`` puts them
there); locally the installed package is used and missing assets are built on first use (see
:class:`ui_common.SpaceSettings`). The logic lives in the library; ``splits_tab`` and
``uncertainty_tab`` adapt it to the components defined here.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path


def arguments() -> argparse.ArgumentParser:
    """The app's command line (defined before the heavy imports, so that ``--help`` answers at once)."""
    parser = argparse.ArgumentParser(description="Run the lsplits demo app.")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME"))
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--demo-data", type=Path, default=None,
                        help="built dataset to open on page load (default: the one shipped with a Space, else "
                             "out/demo-likelihood of this checkout when `make demo` built it, else the lsplits "
                             "cache's space/data/demo-likelihood, built on first start)")
    return parser


if __name__ == "__main__" and {"-h", "--help"} & set(sys.argv[1:]):
    arguments().parse_args()  # prints the help and exits before Gradio, torch and the tabs load (27 s on 2 cores)

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the vendored lsplits and the tab modules

from lsplits.runtime.extras import missing_extra  # noqa: E402
from lsplits.runtime.logs import configure_logging  # noqa: E402

try:
    import gradio as gr
except ImportError:
    sys.exit(missing_extra("gradio", "the Space (spaces/lsplits-demo/app.py)"))
import parse_tab  # noqa: E402
import splits_tab  # noqa: E402
import uncertainty_tab  # noqa: E402
from limits import budget_notes, request_budget  # noqa: E402
from ui_common import SpaceSettings, optional_number, user_errors  # noqa: E402

from lsplits.building.settings import DEFAULT_EVAL_FRACTION, BuildSettings  # noqa: E402
from lsplits.similarity.registry import DEFAULT_SIMILARITY  # noqa: E402
from lsplits.uncertainty.bounds import DEFAULT_DELTA  # noqa: E402
from lsplits.uncertainty.live import DEFAULT_PARSE_K  # noqa: E402
from lsplits.uncertainty.selective import DEFAULT_MULTIPLE_TESTING, MULTIPLE_TESTING  # noqa: E402
from lsplits.uncertainty.study_config import PAPER_QUALITIES  # noqa: E402

logger = logging.getLogger("lsplits.space_app")

CSS = """
/* a column is at least as wide as its name: "ll_score", not "ll_scor" over "e" (tables with wrap=True squeeze) */
.gradio-container th.header-cell .header { white-space: nowrap; word-break: normal; overflow-wrap: normal; }
"""
"""The app's style sheet: every launcher passes it (``launch(css=CSS)``; Gradio 6 takes CSS at launch only)."""

TORCH_THREADS = 1
"""Torch threads of the served app: one per request, since the queue runs two at once (a basic Space has 2 vCPUs).
Two threads per request on busy cores spin-wait for each other: a k=5 "Parse a sentence" took 14 s of CPU (median
of 20 sentences) with 2 threads and 0.40 s with 1, on 2 cores at load 6 (at load 3, two threads gave 0.39 s, with
outliers of 6 s)."""

PROGRESS = gr.Progress(track_tqdm=True)
"""Default of handlers' ``progress`` argument: Gradio shows the library's tqdm bars as the event's progress."""

INTRO = """# lsplits: harder splits and honest uncertainty
**Likelihood Splits** re-split a dataset so that the examples a language model finds *least likely* form the
evaluation set: a benchmark of the long tail. **Uncertainty & PRR** estimates, from a parser's beam alone, which
predictions to distrust, and measures with the Prediction Rejection Ratio how well that works."""

SPLITS_HELP = """Open a dataset built by `lsplits build` (a local folder or a Hub dataset repo id); the demo
dataset is preloaded. Each config is one way of choosing eval; `random` and `length` are baselines."""

SCORE_HELP = """### Score your own
Paste one example per line, or upload a CSV/JSONL file and name its text field. Each example is scored
with an LM as it is (`scratch`: the demo's small LM, offline; or a Hub causal LM id such as `gpt2` when online),
frozen: nothing is trained on your examples (the `pt` setting, so the split is `ll_split_pt`). Then the least
likely share goes to eval."""

PARSE_HELP = """### Parse a sentence
Type one sentence per line: the parser returns its k best AMR graphs (beam search) with their log-probabilities,
and every uncertainty estimator rates each sentence: black-box ones from how much the k graphs agree (under the
similarity chosen here), gray-box ones from the parser's own probabilities, hybrid ones from both. The percentile
places each uncertainty among the test sentences'."""

UE_HELP = """### Evaluate uncertainty against gold
Paste beam candidates as JSONL (`{"id": ..., "candidates": [top-1, top-2, ...]}`, PENMAN strings)
and the gold graphs (PENMAN with `# ::id` lines, or JSONL), upload them (one JSONL file or one PENMAN file per
beam rank), or load a built-in example: the shipped parser's real beams (k = 5, with their scores, so the gray-box
and hybrid estimators run too) of the 143 test sentences of *The Little Prince*, or a synthetic one: 12 real gold
graphs with candidates made by controlled edits. Uploads take precedence over pasted text."""


SELECTIVE_HELP = """### Which outputs to keep?
Give a target risk (the mean of 1 - quality over the outputs you keep) and delta: **Certify a threshold**
calibrates, on the examples analysed above, the uncertainty threshold that keeps the risk under the target with
probability at least 1 - delta for new outputs of the same kind (risk-controlled selective prediction), and
marks it on the curves. Few examples certify only loose targets."""


SYSTEMS_HELP = """### Compare systems
Upload one beam file per system (JSONL, as above), name them, and compare them on the gold graphs given above
(the similarity chosen above): **Table 1** (top-1 corpus Smatch and Smatch++), **Figure 1** (mean PRR per
system and quality metric), **Figure 2** (mean PRR against beam size) and, for every two systems, the
difference of their mean PRR with a paired bootstrap interval. Every system must cover the same examples.
Online, a system's beams can also be generated from a Hub model for pasted sentences."""


def build_demo(settings: SpaceSettings | None = None) -> gr.Blocks:
    """The whole app; ``settings`` default to :meth:`SpaceSettings.from_environment`."""
    settings = settings or SpaceSettings.from_environment()
    models = splits_tab.LanguageModels(settings)
    with gr.Blocks(title="lsplits: Likelihood Splits and uncertainty") as demo:
        gr.Markdown(INTRO)
        with gr.Tabs():
            with gr.Tab("Likelihood Splits", id="splits"):
                _splits_tab(demo, settings, models)
            with gr.Tab("Uncertainty & PRR", id="uncertainty"):
                _uncertainty_tab(demo, settings)
    return demo


def _splits_tab(demo: gr.Blocks, settings: SpaceSettings, models: splits_tab.LanguageModels) -> None:
    gr.Markdown(SPLITS_HELP)
    opened = gr.State(None)
    with gr.Row():
        source = gr.Textbox(value=splits_tab.display_path(settings.demo_data), scale=4, elem_id="dataset-source",
                            label="Built dataset: folder or Hub repo id" if settings.open_local else
                            "Built dataset: the demo's folder or a Hub dataset repo id (org/name)")
        open_button = gr.Button("Open", variant="primary", scale=1, elem_id="open-dataset")
    with gr.Row():
        config = gr.Dropdown(choices=[], label="Config", scale=1, allow_custom_value=True, elem_id="config")
        overview = gr.Markdown(elem_id="overview")
    statistics = gr.Dataframe(label="Statistics per split (one column each)", interactive=False,
                              elem_id="split-statistics")
    rare_sentence = gr.Markdown(elem_id="rare-sentence")
    with gr.Row():
        scatter = gr.Plot(show_label=False, label="Score against length", elem_id="score-vs-length")
        lengths = gr.Plot(show_label=False, label="Length, train vs eval", elem_id="length-histograms")
    rare = gr.Plot(show_label=False, label="Rare words per config", elem_id="rare-words")
    count = gr.Slider(1, 50, value=8, step=1, label="Examples to browse")
    least = gr.Dataframe(label="Least likely (eval material)", interactive=False, wrap=True, elem_id="least-likely")
    most = gr.Dataframe(label="Most likely", interactive=False, wrap=True, elem_id="most-likely")

    @user_errors
    def open_source(text: str, progress=PROGRESS):
        progress(0, desc="reading the dataset")
        dataset = splits_tab.open_dataset(text, settings)
        return dataset, gr.update(choices=dataset.configs, value=dataset.configs[0]), \
            splits_tab.overview_markdown(dataset)

    @user_errors
    def show_config(dataset, name: str, n: int):
        table, sentence = splits_tab.statistics_view(dataset, name)
        return (table, sentence, *splits_tab.config_figures(dataset, name), *splits_tab.extremes(dataset, name, n))

    @user_errors
    def browse(dataset, name: str, n: int):
        return splits_tab.extremes(dataset, name, n)

    config_outputs = [statistics, rare_sentence, scatter, lengths, rare, least, most]
    opening = dict(fn=open_source, inputs=[source], outputs=[opened, config, overview])
    showing = dict(fn=show_config, inputs=[opened, config, count], outputs=config_outputs)
    open_button.click(**opening, api_name="open_dataset").success(**showing, api_visibility="private")
    source.submit(**opening, api_visibility="private").success(**showing, api_visibility="private")
    demo.load(**opening, api_visibility="private").success(**showing, api_visibility="private")
    config.input(**showing, api_name="select_config")
    count.release(browse, [opened, config, count], [least, most], api_name="browse")

    gr.Markdown(SCORE_HELP)
    with gr.Row():
        lines = gr.Textbox(lines=6, label="Your examples, one per line", elem_id="own-lines", scale=3,
                           placeholder="A man is playing a guitar on the street.\nA xylophonist juggles kumquats.")
        with gr.Column(scale=2):
            upload = gr.File(label="...or a CSV / JSONL file", file_types=[".csv", ".jsonl", ".json", ".tsv"],
                             type="filepath", height=140, elem_id="own-file")
            text_field = gr.Textbox(value="text", label="Text field of the file (scored)")
            template = gr.Textbox(value=BuildSettings.prompt_template, label="Prompt template (optional, not scored), e.g. Title: {title}")
    with gr.Row():
        lm = gr.Textbox(value=splits_tab.SCRATCH, label="LM: 'scratch' or a Hub causal LM id", elem_id="own-lm")
        fraction = gr.Slider(0.05, 0.5, value=DEFAULT_EVAL_FRACTION, step=0.05, label=splits_tab.EVAL_SHARE)
        length_control = gr.Checkbox(value=False, label="Length-controlled (within each length)")
        score_button = gr.Button("Score and split", variant="primary", elem_id="score-own")
    own_summary = gr.Markdown(elem_id="own-summary")
    with gr.Row():
        own_table = gr.Dataframe(label="Your examples, least likely first", interactive=False, wrap=True,
                                 elem_id="own-table", scale=3)
        own_plot = gr.Plot(show_label=False, label="Your examples: score against length", elem_id="own-plot", scale=2)

    @user_errors
    def score(text, file, field, prompt, model_name, share, by_length, request: gr.Request, progress=PROGRESS):
        progress(0, desc="loading the LM (a missing scratch LM trains first: 1-3 minutes)")
        with budget(demo, settings, request):
            return splits_tab.score_own(text, file, field, prompt, model_name, share, by_length, models)

    score_button.click(score, [lines, upload, text_field, template, lm, fraction, length_control],
                       [own_summary, own_table, own_plot], api_name="score_own")


def budget(demo: gr.Blocks, settings: SpaceSettings, request: gr.Request | None):
    """The request's time budget: its work stops when the budget runs out or its browser leaves."""
    return request_budget(settings.limits, demo, getattr(request, "session_hash", None))


def _uncertainty_tab(demo: gr.Blocks, settings: SpaceSettings) -> None:
    """The uncertainty tab: a live parse, one study of pasted or uploaded beams, its certified threshold and the
    systems."""
    _parse_section(demo, settings)
    gr.Markdown(UE_HELP)
    state = gr.State(None)
    with gr.Row():
        beams_text = gr.Textbox(lines=8, max_lines=12, label="Beam candidates (JSONL)", elem_id="beams-text")
        gold_text = gr.Textbox(lines=8, max_lines=12, label="Gold graphs (PENMAN or JSONL)", elem_id="gold-text")
    with gr.Row():
        beam_files = gr.File(file_count="multiple", label="...or upload beams (1 JSONL or k PENMAN files)",
                             type="filepath", height=140, elem_id="beam-files")
        gold_file = gr.File(label="...or upload gold", type="filepath", height=140, elem_id="gold-file")
    choices = uncertainty_tab.similarity_choices()
    names = [name for _, name in choices]
    with gr.Row():
        example_buttons = (gr.Button("Load the example (real beams)", elem_id="load-example"),
                           gr.Button("Load the synthetic example", elem_id="load-synthetic-example"))
        default = DEFAULT_SIMILARITY if DEFAULT_SIMILARITY in names else names[0]
        similarity = gr.Dropdown(choices, value=default, label="Similarity between candidates", elem_id="similarity")
        quality = gr.Dropdown(choices, value=default, label="Quality metric (top-1 vs gold)", elem_id="quality")
        estimators = gr.CheckboxGroup(uncertainty_tab.ESTIMATOR_CHOICES, value=uncertainty_tab.DEFAULT_ESTIMATORS,
                                      label="Estimators", elem_id="estimators")
        metrics = gr.CheckboxGroup(uncertainty_tab.METRIC_CHOICES, value=uncertainty_tab.DEFAULT_METRICS,
                                   label="Metrics", elem_id="ue-metrics")
        # empty by default (no quality is bad for every task, and the library has no default); a text box, as a
        # gr.Number shows an empty value as 0
        bad_below = gr.Textbox(value="", label="Bad below (ROC/PR-AUC)", placeholder="none; e.g. 0.8", max_lines=1,
                               elem_id="bad-below")
        run_button = gr.Button("Run", variant="primary", elem_id="run-ue")
    summary = gr.Markdown(elem_id="ue-summary")
    prr_table = gr.Dataframe(label="PRR with 95% confidence interval", interactive=False, elem_id="prr-table")
    with gr.Row():
        curves = gr.Plot(show_label=False, label="Prediction-rejection curves", elem_id="rejection-curves")
        with gr.Column():
            example_id = gr.Dropdown(choices=[], label="Example for the heatmap", allow_custom_value=True,
                                     elem_id="heatmap-example")
            heatmap = gr.Plot(show_label=False, label="Similarity between candidates", elem_id="heatmap")
    _selective_section(state, curves)
    per_example = gr.Dataframe(label="Per-example quality and uncertainty (u)", interactive=False,
                               elem_id="per-example")

    @user_errors
    def run(beams, gold, beam_uploads, gold_upload, sim, qual, chosen, chosen_metrics=uncertainty_tab.DEFAULT_METRICS,
            threshold=None, request: gr.Request = None, progress=PROGRESS):
        progress(0, desc="reading the input")
        threshold = optional_number(threshold)
        with budget(demo, settings, request) as notes:
            result, text, table, values, figure = uncertainty_tab.run_uncertainty(
                beams, gold, beam_uploads, gold_upload, sim, qual, chosen, settings, metrics=chosen_metrics,
                bad_below=threshold)
            first = result.ids[0]
            heatmap_of_first = uncertainty_tab.heatmap_figure(result, first, settings)
        text = "\n\n".join(filter(None, [text, budget_notes(notes)]))
        return (result, text, table, values, figure, gr.update(choices=result.ids, value=first), heatmap_of_first)

    @user_errors
    def show_heatmap(result, chosen_id, request: gr.Request = None):
        with budget(demo, settings, request):
            return uncertainty_tab.heatmap_figure(result, chosen_id, settings)


    _example_loaders(settings, example_buttons, [beams_text, gold_text, beam_files, gold_file])
    run_button.click(run, [beams_text, gold_text, beam_files, gold_file, similarity, quality, estimators, metrics,
                           bad_below],
                     [state, summary, prr_table, per_example, curves, example_id, heatmap], api_name="run_uncertainty")
    example_id.input(show_heatmap, [state, example_id], [heatmap], api_name="heatmap")

    def offer(beams, uploads):  # beams with scores: the gray-box and hybrid estimators too
        return gr.update(choices=uncertainty_tab.offered_estimators(beams, uploads, settings))

    beam_files.change(offer, [beams_text, beam_files], [estimators], api_visibility="private")
    beams_text.blur(offer, [beams_text, beam_files], [estimators], api_visibility="private")

    _systems_section(demo, settings, choices, similarity, gold_text, gold_file)


def _parse_section(demo: gr.Blocks, settings: SpaceSettings) -> None:
    """The uncertainty tab's "Parse a sentence": the shipped parser (or a Hub one) on typed sentences, each
    candidate's log-probability and each estimator's uncertainty with its percentile."""
    gr.Markdown(PARSE_HELP)
    gr.Markdown(parse_tab.parser_status(settings), elem_id="parse-parser-status")
    choices = uncertainty_tab.similarity_choices()
    names = [name for _, name in choices]
    with gr.Row():
        sentences = gr.Textbox(lines=3, label=f"Sentences, one per line (at most {settings.limits.parse_sentences})",
                               placeholder="The little prince looked at the stars.", scale=3,
                               elem_id="parse-sentences")
        with gr.Column(scale=2):
            model = gr.Textbox(value=parse_tab.SHIPPED, elem_id="parse-model",
                               label=f"{parse_tab.PARSER_FIELD}: '{parse_tab.SHIPPED}' or a Hub seq2seq parser id "
                               "(online)" + (" or a local folder" if settings.open_local else ""))
            with gr.Row():
                k = gr.Slider(1, settings.limits.candidates, value=DEFAULT_PARSE_K, step=1, label="Candidates k",
                              elem_id="parse-k")
                similarity = gr.Dropdown(choices, value=DEFAULT_SIMILARITY if DEFAULT_SIMILARITY in names else
                                         names[0], label="Similarity (black-box, hybrid)", elem_id="parse-similarity")
    parse_button = gr.Button("Parse", variant="primary", elem_id="parse-run")
    summary = gr.Markdown(elem_id="parse-summary")
    uncertainty = gr.Dataframe(label="Uncertainty per sentence and estimator, and its percentile among the test "
                               "sentences'", interactive=False, elem_id="parse-uncertainty")
    with gr.Row():
        with gr.Column():
            candidates = gr.Markdown(elem_id="parse-candidates", max_height=520)
        graph = gr.Plot(show_label=False, label="Top graph of the first sentence", elem_id="parse-graph")
    scores = gr.Dataframe(label="Candidates' scores", interactive=False, wrap=True, elem_id="parse-scores")

    @user_errors
    def parse(text, name, size, sim, request: gr.Request = None, progress=PROGRESS):
        progress(0, desc="parsing (the parser loads on the first request)")
        with budget(demo, settings, request) as notes:
            said, graphs, scored, rated, drawing = parse_tab.parse(text, name, size, sim, settings)
        return "\n\n".join(filter(None, [said, budget_notes(notes)])), graphs, scored, rated, drawing

    parse_button.click(parse, [sentences, model, k, similarity], [summary, candidates, scores, uncertainty, graph],
                       api_name="parse_sentences")


def _example_loaders(settings: SpaceSettings, buttons: tuple[gr.Button, gr.Button], inputs: list) -> None:
    """The two example buttons: the shipped parser's real beams (``/load_example``) and the synthetic one."""
    for button, which, api_name in zip(buttons, ("parser", "synthetic"), ("load_example", "load_synthetic_example")):
        def load(which=which):
            return (*uncertainty_tab.example_texts(settings, which), None, None)

        button.click(user_errors(load), None, inputs, api_name=api_name)


def _selective_section(state: gr.State, curves: gr.Plot) -> None:
    """The uncertainty tab's certified threshold: target risk, delta and procedure for the study in ``state``; the
    certified thresholds redraw ``curves`` with their operating points."""
    gr.Markdown(SELECTIVE_HELP)
    with gr.Row():
        target_risk = gr.Number(value=0.3, minimum=0.001, maximum=0.999, label="Target risk (mean 1 - quality of "
                                "the kept outputs)", elem_id="target-risk")
        delta = gr.Number(value=DEFAULT_DELTA, minimum=0.001, maximum=0.999, label="delta (allowed failure probability)",
                          elem_id="delta")
        procedure = gr.Dropdown(choices=list(MULTIPLE_TESTING), value=DEFAULT_MULTIPLE_TESTING,
                                label="Testing procedure (all control the error at delta)", elem_id="procedure")
        certify_button = gr.Button("Certify a threshold", elem_id="certify")
    selective_summary = gr.Markdown(elem_id="selective-summary")
    selective_table = gr.Dataframe(label="Certified threshold and share of outputs kept, per estimator",
                                   interactive=False, elem_id="selective-table")
    p_values = gr.Plot(show_label=False, label="p-value of each candidate threshold", elem_id="p-value-curve")

    @user_errors
    def certify(result, risk, allowed, testing=DEFAULT_MULTIPLE_TESTING):
        return uncertainty_tab.certify_threshold(result, risk, allowed, testing)

    certify_button.click(certify, [state, target_risk, delta, procedure],
                         [selective_summary, selective_table, curves, p_values],
                         api_name="certify_threshold")


def _systems_section(demo: gr.Blocks, settings: SpaceSettings, choices: list, similarity: gr.Dropdown,
                     gold_text: gr.Textbox, gold_file: gr.File) -> None:
    """The uncertainty tab's comparison of systems (one beams file each, or generated from a model) against the
    gold of the study above, with its ``similarity``."""
    names = [name for _, name in choices]
    gr.Markdown(SYSTEMS_HELP)
    with gr.Row():
        system_files = gr.File(file_count="multiple", label="Beam files, one JSONL per system", type="filepath",
                               height=140, elem_id="system-files")
        with gr.Column():
            system_names = gr.Textbox(label="System names, comma-separated (default: the file names)",
                                      elem_id="system-names")
            paper = [name for name in PAPER_QUALITIES if name in names]
            system_qualities = gr.CheckboxGroup(choices, value=paper or names[:1], label="Quality metrics",
                                                elem_id="system-qualities")
    with gr.Accordion("Generate a system's beams from a model (online)", open=False):
        with gr.Row():
            model_id = gr.Textbox(label=f"{uncertainty_tab.MODEL_FIELD}: a Hub id (seq2seq AMR parser)"
                                  + (" or a local folder" if settings.open_local else ""), scale=3,
                                  elem_id="beam-model")
            beam_size = gr.Slider(2, settings.limits.candidates, value=5, step=1, label="Beam size k", elem_id="beam-size")
        sentences = gr.Textbox(lines=4, label="Sentences, one per line (their ids are s1, s2, ...: give the gold "
                               "graphs '# ::id s1', '# ::id s2', ... above)", elem_id="beam-sentences")
        generate_button = gr.Button("Generate beams and add the system", elem_id="generate-beams")
    with gr.Row():
        systems_example_button = gr.Button("Load the 3-system example", elem_id="load-systems-example")
        compare_button = gr.Button("Compare systems", variant="primary", elem_id="compare-systems")
    systems_summary = gr.Markdown(elem_id="systems-summary")
    table1 = gr.Dataframe(label="Table 1: top-1 corpus Smatch and Smatch++", interactive=False,
                          elem_id="systems-table1")
    with gr.Row():
        figure1 = gr.Plot(show_label=False, label="Figure 1: mean PRR per system and quality metric", elem_id="systems-figure1")
        figure2 = gr.Plot(show_label=False, label="Figure 2: mean PRR against beam size", elem_id="systems-figure2")
    pairwise = gr.Dataframe(label="Is A more reliable than B? Difference of mean PRR, 95% paired bootstrap interval",
                            interactive=False, elem_id="systems-pairwise")

    @user_errors
    def load_systems_example():
        files, system_list, gold = uncertainty_tab.systems_example(settings)
        return files, system_list, gold, None

    @user_errors
    def compare(files, system_list, gold, gold_upload, sim, qualities, request: gr.Request, progress=PROGRESS):
        progress(0, desc="reading the systems")
        with budget(demo, settings, request) as notes:
            summary, *rest = uncertainty_tab.run_systems_comparison(files, system_list, gold, gold_upload, sim,
                                                                    qualities, settings)
        return ("\n\n".join(filter(None, [summary, budget_notes(notes)])), *rest)

    @user_errors
    def generate(model, text, k, files, system_list, request: gr.Request, progress=PROGRESS):
        progress(0, desc="generating beams")
        with budget(demo, settings, request):
            return uncertainty_tab.generate_system(model, text, k, files, system_list, settings)

    systems_example_button.click(load_systems_example, None, [system_files, system_names, gold_text, gold_file],
                                 api_name="load_systems_example")
    compare_button.click(compare, [system_files, system_names, gold_text, gold_file, similarity, system_qualities],
                         [systems_summary, table1, figure1, figure2, pairwise], api_name="compare_systems")
    generate_button.click(generate, [model_id, sentences, beam_size, system_files, system_names],
                          [system_files, system_names], api_name="generate_beams")


def main(argv: list[str] | None = None) -> None:
    """Launch the app (on a Space: 0.0.0.0:7860, the defaults Gradio reads from the environment)."""
    args = arguments().parse_args(argv)
    configure_logging()
    import torch

    torch.set_num_threads(TORCH_THREADS)
    settings = SpaceSettings.from_environment()
    if args.demo_data is not None:
        settings = SpaceSettings(**{**settings.__dict__, "demo_data": args.demo_data})
    if settings.demo_data.exists():
        logger.info("opening the demo dataset %s on page load", settings.demo_data)
    else:  # build before serving, so the first page load is quick
        splits_tab.dataset_folder(str(settings.demo_data), settings)
    build_demo(settings).queue(default_concurrency_limit=2).launch(
        server_name=args.host, server_port=args.port, max_file_size=settings.limits.upload_bytes, css=CSS)


if __name__ == "__main__":
    main()
