"""What the evaluate modules in ``metrics/`` and their Space apps share, so that each states only its texts.

A module builds its ``MetricInfo`` with :func:`metric_info` and its citation with :func:`citation`
from the BibTeX entries in :data:`BIBTEX`; an app parses its form with :func:`parse_numbers`, turns
a refused input into a message with :func:`form_result`, and builds its page with
:func:`score_boxes` and :func:`compute_button`. Nothing heavy is imported at import time: evaluate,
datasets and gradio are imported by the functions that need them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

BIBTEX: dict[str, str] = {
    "opitz-2023-smatch": """\
@inproceedings{opitz-2023-smatch,
  title = {{SMATCH}++: Standardized and Extended Evaluation of Semantic Graphs},
  author = {Opitz, Juri},
  booktitle = {Findings of the Association for Computational Linguistics: EACL 2023},
  pages = {1595--1607},
  year = {2023}
}""",
    "cai-knight-2013-smatch": """\
@inproceedings{cai-knight-2013-smatch,
  title = {Smatch: an Evaluation Metric for Semantic Feature Structures},
  author = {Cai, Shu and Knight, Kevin},
  booktitle = {Proceedings of the 51st Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)},
  pages = {748--752},
  year = {2013}
}""",
    "lin2024generating": """\
@article{lin2024generating,
  title = {Generating with Confidence: Uncertainty Quantification for Black-box Large Language Models},
  author = {Lin, Zhen and Trivedi, Shubhendu and Sun, Jimeng},
  journal = {Transactions on Machine Learning Research},
  year = {2024}
}""",
    "malinin-etal-2017-incorporating": """\
@inproceedings{malinin-etal-2017-incorporating,
  title = {Incorporating Uncertainty into Deep Learning for Spoken Language Assessment},
  author = {Malinin, Andrey and Ragni, Anton and Knill, Kate and Gales, Mark},
  booktitle = {Proceedings of the 55th Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)},
  pages = {45--50},
  year = {2017}
}""",
    "vashurin2025benchmarking": """\
@article{vashurin2025benchmarking,
  title = {Benchmarking Uncertainty Quantification Methods for Large Language Models with LM-Polygraph},
  author = {Vashurin, Roman and Fadeeva, Ekaterina and Vazhentsev, Artem and others},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {13},
  year = {2025}
}""",
    "geifman2017selective": """\
@inproceedings{geifman2017selective,
  title = {Selective Classification for Deep Neural Networks},
  author = {Geifman, Yonatan and El-Yaniv, Ran},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2017}
}""",
    "angelopoulos2021learn": """\
@article{angelopoulos2021learn,
  title = {Learn then Test: Calibrating Predictive Algorithms to Achieve Risk Control},
  author = {Angelopoulos, Anastasios N. and Bates, Stephen and Cand{\\`e}s, Emmanuel J. and Jordan, Michael I. and Lei, Lihua},
  journal = {arXiv preprint arXiv:2110.01052},
  year = {2021}
}""",
    "waudbysmith2023estimating": """\
@article{waudbysmith2023estimating,
  title = {Estimating Means of Bounded Random Variables by Betting},
  author = {Waudby-Smith, Ian and Ramdas, Aaditya},
  journal = {Journal of the Royal Statistical Society Series B: Statistical Methodology},
  volume = {86},
  number = {1},
  pages = {1--27},
  year = {2024}
}""",
}

Dtype = str | Sequence[str]
"""A column's type: a ``datasets.Value`` dtype (``"float64"``, ``"string"``), or ``[dtype]`` for a list of them."""


def citation(*keys: str) -> str:
    """The BibTeX entries of ``keys`` (keys of :data:`BIBTEX`), in that order, one after another."""
    return "".join(BIBTEX[key] + "\n" for key in keys)


def _feature(dtype: Dtype) -> Any:
    import datasets

    if isinstance(dtype, str):
        return datasets.Value(dtype)
    (inner,) = dtype
    return datasets.Sequence(_feature(inner))


def metric_info(description: str, citation: str, inputs_description: str, columns: Mapping[str, Dtype],
                urls: Sequence[str]) -> Any:
    """The ``evaluate.MetricInfo`` of a module: its texts, one feature per input column, its reference URLs."""
    import datasets
    import evaluate

    return evaluate.MetricInfo(
        description=description,
        citation=citation,
        inputs_description=inputs_description,
        features=datasets.Features({name: _feature(dtype) for name, dtype in columns.items()}),
        reference_urls=list(urls),
    )


def check_no_config(module: str, config_name: str) -> None:
    """Refuse, at ``evaluate.load``, a config name for a module that has none (evaluate accepts any name)."""
    if config_name != "default":
        from lsplits.errors import InvalidOption

        raise InvalidOption(f"{module} has no configs, got config name {config_name!r}; load it without one")


def parse_numbers(text: str) -> list[float]:
    """``"0.1, 0.5 0.9" -> [0.1, 0.5, 0.9]`` (commas, spaces or new lines between numbers)."""
    return [float(part) for part in re.split(r"[,\s]+", text.strip()) if part]


def form_result(compute: Callable[[], dict], errors: tuple[type[Exception], ...] = (ValueError,)) -> dict:
    """``compute()``, or ``{"error": "Type: message"}`` when it raises one of ``errors``: the form shows it, not a trace."""
    try:
        return compute()
    except errors as error:
        return {"error": f"{type(error).__name__}: {error}"}


def compute_button(compute: Callable[..., dict], inputs: list, label: str) -> None:
    """A "Compute" button under the form, calling ``compute(*inputs)`` and showing its dict as JSON under ``label``."""
    import gradio as gr

    button = gr.Button("Compute")
    output = gr.JSON(label=label)
    button.click(compute, inputs, output)


def score_boxes(qualities_label: str = "qualities (higher = better)") -> tuple[Any, Any]:
    """The form's two text boxes of per-example numbers, uncertainties and qualities, filled with an example."""
    import gradio as gr

    return (gr.Textbox(label="uncertainties (higher = less trustworthy)", value="0.1, 0.4, 0.3, 0.9"),
            gr.Textbox(label=qualities_label, value="0.9, 0.6, 0.7, 0.2"))
