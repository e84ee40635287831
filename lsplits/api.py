"""The Python API: Likelihood Splits of a ``datasets.Dataset`` (or DataFrame, list, file, Hub id) in a notebook.

:func:`likelihood_splits` and :func:`score` are the engine of ``lsplits build`` and ``lsplits score``
too (the CLI resolves its options into the same calls): :func:`resolve_data` turns any input into a
:class:`~lsplits.building.pipeline.DatasetSpec` and checked examples (a builder's when ``builder`` names one),
:func:`build` scores and splits them into a :class:`LikelihoodSplits`, whose :meth:`~LikelihoodSplits.write`
writes what ``lsplits build --out`` writes and :meth:`~LikelihoodSplits.push_to_hub` pushes it in one commit.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsplits.builders.registry import builder_names, is_builder, load_builder
from lsplits.building.card import CardInfo
from lsplits.building.pipeline import BuildResult, DatasetSpec, build_splits, export_dataset, score_records
from lsplits.building.settings import BuildSettings, ScoreSettings, default_cache_dir
from lsplits.data.labels import decode_class_labels
from lsplits.data.loading import (
    LoadedData,
    LoadOptions,
    dataset_sources,
    hub_dataset,
    load_sources,
    prepare_examples,
)
from lsplits.data.tasks import Setting, generic_task, resolve_setting
from lsplits.errors import ConfigError, DataError, InvalidOption
from lsplits.params import refuse
from lsplits.runtime.tempfolders import temporary_folder

if TYPE_CHECKING:
    import datasets
    import pandas as pd

    from lsplits.lm.plan import RunPlan

logger = logging.getLogger(__name__)

Sources = list[tuple[str, list[dict[str, Any]], str]]
UNNAMED_SOURCE = "data"
"""The source name (and id prefix, ``data-0``...) of examples given without a split: a DataFrame, a list,
a Dataset whose split is unknown; ``lsplits build --data-files data.jsonl`` names them the same way."""

_KINDS = "a datasets.Dataset or DatasetDict, a pandas DataFrame, a list of dicts, a file path or a Hub dataset id"


def _sources(data: Any) -> Sources | str:
    """In-memory ``data`` as ``[(source, records, description)]``; a path or Hub id is returned as a string."""
    if isinstance(data, (str, os.PathLike)):
        return str(data)
    import datasets
    import pandas as pd

    if isinstance(data, datasets.DatasetDict):  # splits in order, ids "{split}-{index}" as the builders make them
        return [(str(split), part.to_list(), f"the DatasetDict's {split!r} split") for split, part in data.items()]
    if isinstance(data, datasets.Dataset):
        name = str(data.split) if data.split is not None else UNNAMED_SOURCE
        return [(name, data.to_list(), "the Dataset")]
    if isinstance(data, pd.DataFrame):
        frame = data.astype(object).where(data.notna(), None)  # NaN -> None, numpy scalars -> Python values
        return [(UNNAMED_SOURCE, frame.to_dict("records"), "the DataFrame")]
    if isinstance(data, Sequence) and not isinstance(data, (bytes, bytearray)):
        for index, record in enumerate(data):
            if not isinstance(record, Mapping):
                raise DataError(f"expected a dict per example, got {type(record).__name__}", source="the list",
                                line=index + 1)
        return [(UNNAMED_SOURCE, [dict(record) for record in data], "the list")]
    raise ConfigError(f"data: expected {_KINDS}, got {type(data).__name__}")


def _input_features(data: Any) -> datasets.Features | None:
    """The ``datasets.Features`` of a Dataset (of a DatasetDict whose splits share them), else None."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data.features
    if isinstance(data, datasets.DatasetDict) and data:
        features = [part.features for part in data.values()]
        return features[0] if all(f == features[0] for f in features) else None
    return None


def _load_with(builder: Any, name: str, *, data_files: list[str] | None, options: LoadOptions | None,
               sources: Sources | None) -> LoadedData:
    """``builder.load(...)`` with the keywords it takes; ConfigError when it cannot take one that is needed.

    ``options`` left at their defaults and ``sources`` of None are not passed, so a builder whose ``load``
    takes ``data_files`` alone still builds from its own data.
    """
    import inspect

    wanted = {"options": options if options not in (None, LoadOptions()) else None, "sources": sources}
    accepted = inspect.signature(builder.load).parameters
    for keyword, value in wanted.items():
        if value is not None and keyword not in accepted:
            what = "in-memory data" if keyword == "sources" else "load options (missing_labels, rename, drop_labels)"
            raise ConfigError(f"the builder {name!r} takes no {what}: its load() has no {keyword!r} parameter")
    return builder.load(data_files=data_files, **{k: v for k, v in wanted.items() if v is not None})


def resolve_data(data: Any = None, *, builder: str | None = None, query_field: str | None = None,
                 prompt_template: str | None = None, label_field: str | None = None,
                 data_files: Sequence[str] | None = None,
                 options: LoadOptions | None = None) -> tuple[DatasetSpec, LoadedData]:
    """The dataset spec and the checked, filtered examples (with stable ids) of ``data`` or ``data_files``.

    ``builder`` (or ``data`` itself being a builder name such as ``"snli"``) applies that builder: its
    fields, conversion, filters, split policy and card; otherwise ``query_field`` (and optionally
    ``prompt_template``, ``label_field``) describe a generic dataset. ``options``: missing labels and
    field renames (:class:`~lsplits.data.loading.LoadOptions`).

    >>> spec, loaded = resolve_data([{"text": "a b"}, {"text": ""}, {"text": "c"}], query_field="text")
    >>> [example["id"] for example in loaded.examples], loaded.dropped
    (['data-0', 'data-2'], {'empty query': 1})
    """
    if builder is None and isinstance(data, str) and is_builder(data):
        builder, data = data, None
    sources = _sources(data) if data is not None else None
    if builder is not None:
        if not is_builder(builder):
            raise ConfigError(f"builder: unknown builder {builder!r}; choose from {', '.join(builder_names())}")
        if query_field or prompt_template or label_field:
            raise InvalidOption(name="query_field", problem=f"must be left out with the builder {builder!r}, which has "
                                "its own fields (so must {opt:prompt_template} and {opt:label_field})")
        module = load_builder(builder)
        files = list(data_files) if data_files else None
        if isinstance(sources, str):  # a local file is named by split as the official files are
            if Path(sources).expanduser().is_file():
                files, sources = [sources], None
            else:
                sources = load_sources(sources)
        return module.SPEC, _load_with(module, builder, data_files=files, options=options, sources=sources)
    if not query_field:
        raise InvalidOption(name="query_field", problem="is needed for a generic dataset: the field the LM scores")
    generic = generic_task(query_field, prompt_template or "", label_field)
    sources_given = sources
    features = _input_features(data)
    if isinstance(sources, list):
        name = "data"
        if features is not None:  # ClassLabel ids read as names, as text labels do; the export writes ids again
            sources = [(source, decode_class_labels(records, features), description)
                       for source, records, description in sources]
    else:
        name = Path(data_files[0].split("=")[-1]).stem if data_files else str(sources)
        hub = None if data_files else hub_dataset(sources)  # a Hub id or dataset folder keeps its features
        features = _input_features(hub)
        sources = load_sources(sources, data_files) if hub is None else [
            (source, decode_class_labels(records, features), description)
            for source, records, description in dataset_sources(hub, str(sources))]
    hub_source = not isinstance(sources_given, list) and not data_files and not Path(name).exists()
    spec = DatasetSpec(task=generic, card=CardInfo(pretty_name=f"{name} (Likelihood Splits)",  # re-split from a Hub id
                                                   source_datasets=(name,) if hub_source else ()))
    return spec, prepare_examples(sources, generic, options, features=features)


def setting_configs(spec: DatasetSpec, setting: Setting | None) -> tuple[str, ...]:
    """The dataset's standard configs whose likelihood scores come from ``setting`` (None: all of them).

    Configs that read no score (``random``, ``length``, Spider's ``template``, ``tmcd``) are always in.

    >>> from lsplits.builders import snli
    >>> setting_configs(snli.SPEC, "pt")
    ('ll_split_pt', 'll_split_pt_len', 'random')
    """
    if setting is None:
        return tuple(spec.configs)
    setting = resolve_setting(setting)
    available = spec.available_configs
    return tuple(name for name in spec.configs if available[name].setting in (None, setting))


class LikelihoodSplits(Mapping[str, "datasets.DatasetDict"]):
    """A Likelihood-Split build: config name -> ``datasets.DatasetDict`` with train / validation / test.

    Each split keeps every original field (a ``Dataset``'s features unchanged: ``ClassLabel``, ``Value`` dtypes,
    sequences, nested columns) and adds the columns of :func:`likelihood_splits`, typed as in the written parquet
    files, except that a text label stays text here (the files store it as a ``ClassLabel``). A config is turned
    into a DatasetDict when first read.

    >>> import tempfile
    >>> rows = [{"text": f"a {w} on a mat", "topic": t} for w in ["cat", "dog"] * 5 for t in "xy"]
    >>> splits = likelihood_splits(rows, query_field="text", label_field="topic", lm="scratch",
    ...                            configs=["ll_split"], eval_size=4, max_steps=2, folds=2)
    >>> eval_topics = [*splits["ll_split"]["validation"]["topic"], *splits["ll_split"]["test"]["topic"]]
    >>> sorted(eval_topics)                                   # eval is balanced by label
    ['x', 'x', 'y', 'y']
    >>> folder = splits.write(tempfile.mkdtemp() + "/my-likelihood")  # what `lsplits build --out` writes
    >>> sorted(p.name for p in folder.iterdir())
    ['README.md', 'll_split', 'lsplits.json', 'plots']
    """

    def __init__(self, spec: DatasetSpec, result: BuildResult, settings: BuildSettings) -> None:
        self.spec = spec
        self.result = result
        self.settings = settings
        self._loaded: dict[str, datasets.DatasetDict] = {}
        self._schema: Any = None

    @property
    def skipped(self) -> dict[str, str]:
        """Configs asked for but not built, with the reason (prompting needs a pretrained LM)."""
        return dict(self.result.skipped)

    @property
    def eval_size(self) -> int:
        """Examples in validation + test of every config."""
        return self.result.eval_size

    def __getitem__(self, name: str) -> datasets.DatasetDict:
        self.result.configs[name]  # a KeyError for a config not built, as a Mapping must (``in``, ``.get``)
        if name not in self._loaded:
            import datasets
            from datasets.table import InMemoryTable

            from lsplits.building.export import dataset_schema, to_arrow

            if self._schema is None:  # every config and split gets the schema the written files get
                self._schema = dataset_schema({"": {"": self.result.config_table(name)}},
                                              features=self.result.features)
            schema, text_columns = self._schema
            self._loaded[name] = datasets.DatasetDict({
                split: datasets.Dataset(InMemoryTable(to_arrow(frame.reset_index(drop=True), schema, text_columns)))
                for split, frame in self.result.frames()[name].items()})
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.result.configs)

    def __len__(self) -> int:
        return len(self.result.configs)

    def __repr__(self) -> str:
        sizes = {split: len(rows) for split, rows in next(iter(self.result.configs.values())).indices.items()}
        return (f"LikelihoodSplits(configs={list(self)}, " + ", ".join(f"{k}={v}" for k, v in sizes.items()) + ")")

    def write(self, folder: str | Path, *, repo_hint: str | None = None) -> Path:
        """Write the Hub-layout folder ``lsplits build --out`` writes (parquet per config and split, card, plots,
        ``lsplits.json``); ``folder`` must be new, empty or written by lsplits. Returns the folder."""
        return export_dataset(self.spec, self.result, folder, self.settings, repo_hint=repo_hint)

    def push_to_hub(self, repo_id: str, *, private: bool = False, token: str | None = None) -> str:
        """Push every config, the card and the plots to the dataset repo ``repo_id`` in one commit; the commit URL.

        The token and the Hub's reachability are checked before anything is written.
        """
        from lsplits.hub.push import check_hub_access, push_folder

        check_hub_access(repo_id, token=token)
        with temporary_folder(prefix="lsplits-push-") as tmp:
            folder = self.write(Path(tmp) / "dataset", repo_hint=repo_id)
            return push_folder(folder, repo_id, repo_type="dataset", private=private, token=token)


def build(spec: DatasetSpec, loaded: LoadedData, settings: BuildSettings, *, cache_dir: str | Path | None = None,
          progress: bool = False, compile: bool = False) -> LikelihoodSplits:
    """Score ``loaded`` and split it into every config: what ``lsplits build`` and :func:`likelihood_splits` run.

    ``settings`` decide the result; ``cache_dir`` (scores and fold checkpoints kept for a rerun), ``progress``
    and ``compile`` only how the run goes.
    """
    result = build_splits(spec, loaded, settings, cache_dir=cache_dir, progress=progress, compile=compile)
    return LikelihoodSplits(spec, result, settings)


def _cache_dir(cache_dir: object) -> str | os.PathLike[str]:
    """``cache_dir``, or the score cache ``lsplits build`` and ``score`` use (None:
    :func:`~lsplits.building.settings.default_cache_dir`); InvalidOption naming ``cache_dir`` unless it is None, a
    path string or an ``os.PathLike``, before any data is loaded (a number would fail deep in the scoring)."""
    if cache_dir is None:
        return default_cache_dir()
    if not isinstance(cache_dir, (str, os.PathLike)) or cache_dir == "":
        raise refuse("cache_dir", "must be a folder path (a str or os.PathLike) or None", cache_dir)
    return cache_dir


def _renames(rename: Mapping[str, str] | None) -> tuple[str, ...]:
    return tuple(f"{old}={new}" for old, new in (rename or {}).items())


def likelihood_splits(data: Any, *, query_field: str | None = BuildSettings.query_field,
                      prompt_template: str = BuildSettings.prompt_template,
                      label_field: str | None = BuildSettings.label_field, lm: str,
                      setting: Setting | None = None, configs: Sequence[str] | None = BuildSettings.configs,
                      eval_size: int | float | None = BuildSettings.eval_size, folds: int = BuildSettings.folds,
                      seed: int = BuildSettings.seed, max_steps: int | None = BuildSettings.max_steps,
                      patience: int | None = BuildSettings.patience,
                      builder: str | None = None, missing_labels: str = BuildSettings.missing_labels,
                      rename: Mapping[str, str] | None = None, drop_labels: Sequence[str] | None = None,
                      cache_dir: str | Path | None = None,
                      progress: bool = False, dtype: str = BuildSettings.dtype) -> LikelihoodSplits:
    """Likelihood Splits of ``data``: config name -> ``datasets.DatasetDict`` (train / validation / test).

    Every split keeps the input's fields, a ``Dataset``'s with their features unchanged (``ClassLabel``,
    ``float32``, sequences, nested columns; ``.write()`` and the card carry the same), and adds ``id`` (string:
    the data's own ``id`` as text, else ``"{source}-{index}"``), ``source_split`` (string: the split or file
    the example came from; a field of that name in the data is kept instead), ``ll_score`` (float64: the summed
    log-probability of the query), ``ll_tokens`` (int32: query tokens scored) and ``length`` (int32: NLTK
    words of the query). A field named like ``ll_score``, ``ll_tokens`` or ``length`` is refused unless renamed.

    Args:
        data: a ``datasets.Dataset``, a ``DatasetDict`` (its splits pooled; ids ``"{split}-{index}"``), a
            pandas DataFrame, a list of dicts, a local file (JSONL, JSON, CSV, parquet) or a Hub dataset id.
        query_field: the field the LM scores (the unlikely tail of it goes to eval); not with ``builder``.
        prompt_template: text before the query, with ``{field}`` placeholders (``"Context: {passage}"``).
        label_field: eval is balanced over this field's values.
        lm: ``"scratch"`` (a tiny GPT-2 trained on the data, offline), a Hub model id or a local model folder.
        setting: None (default): every standard config, as ``lsplits build`` builds them (the prompted ``pt``
            ones skipped with the scratch LM); ``"ft"`` or ``"pt"``: only those scored in that setting (k-fold
            fine-tuned, or frozen LM with a prompt) and those without scores (``random``, ...).
        configs: config names to build (``ll_split``, ``ll_split_len``, ``random``, ...), instead.
        eval_size: validation + test as a count or a fraction (default: the paper's proportion, or 20%).
        folds, seed, max_steps: k of the k-fold setting; the seed of folds, training and splits; training steps.
        patience: stop a fold once this many validation checks in a row have not improved its perplexity (0:
            never; None: the LM's default, 2 for the scratch LM, 0 for a pretrained LM: the paper's fixed steps).
        builder: ``"snli"``, ``"boolq"`` or ``"spider"`` applies that builder (fields, filters, Spider's policy).
        missing_labels: ``"error"`` (an example without a label stops the build) or ``"drop"``.
        rename: ``{old: new}`` field renames applied when loading (to keep a field named like one lsplits adds).
        drop_labels: label values whose examples are dropped when loading, counted (``--drop-label``): a
            class too small for its eval quota, say.
        cache_dir: where scores and fold checkpoints are cached, so a rerun reuses them (None: the folder
            ``lsplits build`` uses, :func:`~lsplits.building.settings.default_cache_dir`).
        progress: show progress bars.
        dtype: ``"auto"``, ``"fp32"`` or ``"bf16"`` (:mod:`lsplits.lm.dtype`): bf16 autocast where the
            hardware has it and the LM is large enough to gain; weights and summed log-probs stay fp32.

    Raises:
        ConfigError, DataError: one line naming the argument, example or field, before any training.

    >>> import datasets
    >>> data = datasets.Dataset.from_dict({"text": [f"the {w} sat on the mat" for w in ["cat", "dog"] * 20]})
    >>> splits = likelihood_splits(data, query_field="text", lm="scratch", configs=["ll_split", "random"],
    ...                            eval_size=10, max_steps=2)
    >>> splits
    LikelihoodSplits(configs=['ll_split', 'random'], train=30, validation=5, test=5)
    >>> splits["ll_split"]["test"].column_names
    ['id', 'text', 'source_split', 'll_score', 'll_tokens', 'length']
    """
    named = builder or (str(data) if isinstance(data, (str, os.PathLike)) else None)
    settings = BuildSettings(data=named, query_field=query_field, prompt_template=prompt_template,
                             label_field=label_field, lm=lm, folds=folds, seed=seed, max_steps=max_steps,
                             patience=patience,
                             missing_labels=missing_labels, rename=_renames(rename),
                             drop_labels=tuple(drop_labels or ()),
                             configs=tuple(configs) if configs is not None else None, eval_size=eval_size,
                             dtype=dtype)
    cache_dir = _cache_dir(cache_dir)
    spec, loaded = resolve_data(data, builder=builder, query_field=query_field, prompt_template=prompt_template,
                                label_field=label_field, options=settings.load_options())
    if settings.configs is None and setting is not None:
        settings = dataclasses.replace(settings, configs=setting_configs(spec, setting))
    return build(spec, loaded, settings, cache_dir=cache_dir, progress=progress)


def score_plan(spec: DatasetSpec, settings: ScoreSettings) -> RunPlan:
    """The LM run scoring ``spec``'s examples with ``settings`` (the dataset's paper steps, as a build plans it)."""
    from lsplits.lm.plan import RunPlan

    return RunPlan.make(settings.lm, settings.setting, folds=settings.folds, seed=settings.seed,
                        max_steps=settings.max_steps, paper_steps=spec.max_steps, patience=settings.patience,
                        dtype=settings.dtype)


def score_loaded(spec: DatasetSpec, loaded: LoadedData, settings: ScoreSettings, *, plan: RunPlan | None = None,
                 cache_dir: str | Path | None = None, progress: bool = False, compile: bool = False) -> pd.DataFrame:
    """``id``, ``ll_score``, ``ll_tokens`` of every example in order: what ``lsplits score`` and :func:`score` run.

    ``plan`` is :func:`score_plan`'s, when the caller has it already (the CLI records it).
    """
    from lsplits.lm.pipeline import compute_scores

    plan = plan or score_plan(spec, settings)
    return compute_scores(score_records(loaded.examples, spec.task, settings.setting), plan=plan,
                          cache_dir=cache_dir, progress=progress, compile=compile)


def score(data: Any, *, query_field: str | None = ScoreSettings.query_field,
          prompt_template: str = ScoreSettings.prompt_template, lm: str,
          setting: Setting = ScoreSettings.setting,
          folds: int = ScoreSettings.folds, seed: int = ScoreSettings.seed,
          max_steps: int | None = ScoreSettings.max_steps, patience: int | None = ScoreSettings.patience,
          builder: str | None = None,
          rename: Mapping[str, str] | None = None, cache_dir: str | Path | None = None,
          progress: bool = False, dtype: str = ScoreSettings.dtype) -> datasets.Dataset:
    """``data`` (any input :func:`likelihood_splits` takes) as a ``datasets.Dataset`` in input order, its fields
    (a ``Dataset``'s features) unchanged, with ``id``, ``source_split`` (as :func:`likelihood_splits` adds them),
    ``ll_score`` (float64: sum of the query tokens' log-probabilities given the prompt) and ``ll_tokens`` (int32)
    added.

    ``setting`` is ``"ft"`` (the default, as ``lsplits score``'s and the paper's: each example scored by an LM
    trained in ``folds`` folds on the others; the scratch LM needs it) or ``"pt"`` (a frozen pretrained LM with
    the prompt, no training). Examples the task's filters drop (an empty query) are left out, and logged.
    ``max_steps``, ``patience``, ``dtype`` and ``cache_dir`` are as for :func:`likelihood_splits`.

    >>> rows = [{"text": t} for t in ["a cat", "a dog", "the cat", "the dog", "a bird", "the bird"]]
    >>> scored = score(rows, query_field="text", lm="scratch", max_steps=2, folds=2)
    >>> list(scored["text"]) == [row["text"] for row in rows], scored.column_names
    (True, ['id', 'text', 'source_split', 'll_score', 'll_tokens'])
    """
    import datasets
    import pandas as pd
    from datasets.table import InMemoryTable

    from lsplits.building.export import dataset_schema, to_arrow

    named = builder or (str(data) if isinstance(data, (str, os.PathLike)) else None)
    settings = ScoreSettings(data=named, query_field=query_field, prompt_template=prompt_template, lm=lm,
                             folds=folds, seed=seed, max_steps=max_steps, patience=patience, rename=_renames(rename),
                             setting=setting, dtype=dtype)  # InvalidOption in Python's words (lm, setting)
    cache_dir = _cache_dir(cache_dir)
    spec, loaded = resolve_data(data, builder=builder, query_field=query_field, prompt_template=prompt_template,
                                options=settings.load_options())
    frame = score_loaded(spec, loaded, settings, cache_dir=cache_dir, progress=progress)
    table = pd.DataFrame(loaded.examples)
    by_id = frame.set_index("id").loc[table["id"]]  # in the examples' order, whatever the scorer's
    table = table.assign(ll_score=by_id["ll_score"].to_numpy(), ll_tokens=by_id["ll_tokens"].to_numpy())
    schema, text_columns = dataset_schema({"": {"": table}}, features=loaded.features)  # the input's features kept
    return datasets.Dataset(InMemoryTable(to_arrow(table, schema, text_columns)))
