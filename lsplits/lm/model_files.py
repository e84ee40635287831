"""Cheap checks of a causal LM's files before anything loads or trains on it.

:func:`model_folder` says where a model lives (a local folder, or its snapshot in the Hugging Face
cache) and refuses, in one line, a path that does not exist or a Hub id that is not cached while
downloads are off. :func:`weights_problem` finds a weights file cut short (a broken download or copy)
from its header alone. :func:`load_tokenizer` refuses the tokenizer that transformers quietly builds
for a folder without tokenizer files: it has an empty vocabulary and turns every text into 0
tokens, so every example would get the same score and a "split" would be a list of ties.
"""

from __future__ import annotations

import hashlib
import json
import logging
import zipfile
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.lm.defaults import SCRATCH_LM
from lsplits.runtime.failures import offline_variable

logger = logging.getLogger(__name__)

TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "vocab.json",
                   "vocab.txt", "merges.txt")
"""Files that hold a tokenizer's vocabulary (one of them is needed; GPT-2's slow BPE needs vocab.json
and merges.txt together)."""
_PROBE = "The quick brown fox jumps over the lazy dog."


def looks_local(name: str) -> bool:
    """Whether ``name`` is meant as a path (``./x``, ``/x``, ``~/x``, ``a/b/c``) rather than a Hub id."""
    return name.startswith(("/", "./", "../", "~", ".\\")) or name.count("/") > 1 or name in (".", "..")


def offline() -> bool:
    """Whether downloads from the Hub are switched off (``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE``)."""
    return offline_variable() is not None


def model_folder(name: str) -> Path | None:
    """The folder holding model ``name``: itself, or its snapshot in the Hub cache (None: not cached, online).

    Raises:
        ConfigError: a local-looking path that does not exist or has no ``config.json``; a Hub id
            that is not in the cache while downloads are off.
    """
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ConfigError(f"{name} is not a model folder (no config.json in it)")
        return path
    if looks_local(name):
        raise ConfigError(f"no such folder {name}: give a local model folder or a Hub model id")
    cached = _cached_config(name)
    if cached is not None:
        return cached.parent
    if offline():
        where = f"no folder {name} here, and " if "/" in name else ""
        raise ConfigError(f"{where}Hub model {name!r} is not in the local Hugging Face cache and downloads are "
                          f"off ({offline_variable()} is set): download it once while online, or give a local folder")
    return None


def _cached_config(name: str) -> Path | None:
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(name, "config.json")
    except ValueError:  # not a valid repo id (huggingface_hub's validation error is a ValueError)
        return None
    return Path(found) if isinstance(found, str) else None


def check_model_files(name: str) -> None:
    """Refuse, before loading, a model whose folder is missing or whose weights are cut short."""
    folder = model_folder(name)
    if folder is None:
        return
    for path in weight_files(folder):
        problem = weights_problem(path)
        if problem is not None:
            raise ConfigError(f"{path}: {problem}; download or save the model again")


def model_identity(name: str) -> dict[str, str | None]:
    """What pins down the weights of LM ``name``, for ``lsplits.json``: a Hub model's cached revision (its
    snapshot's commit), a local folder's weights hash (SHA-256 of its weight files, first 16 hex digits),
    nothing for the scratch LM (its recipe and seed are recorded instead) or an uncached Hub id."""
    if name == SCRATCH_LM:
        return {"kind": SCRATCH_LM, "revision": None, "weights_sha256": None}
    path = Path(name).expanduser()
    if path.is_dir():
        digest = hashlib.sha256()
        for weights in weight_files(path):
            with weights.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        return {"kind": "local", "revision": None, "weights_sha256": digest.hexdigest()[:16]}
    cached = _cached_config(name)
    revision = cached.parent.name if cached is not None and cached.parent.parent.name == "snapshots" else None
    return {"kind": "hub", "revision": revision, "weights_sha256": None}


def weight_files(folder: Path) -> list[Path]:
    """The weight files transformers would read: ``*.safetensors`` when there are any, else ``*.bin``."""
    safetensors = sorted(folder.glob("*.safetensors"))
    return safetensors or sorted(folder.glob("*.bin"))


def weights_problem(path: Path) -> str | None:
    """What is wrong with a weights file, judged from its header (None when it looks complete)."""
    size = path.stat().st_size
    if path.suffix == ".safetensors":
        return _safetensors_problem(path, size)
    with path.open("rb") as handle:
        is_zip = handle.read(2) == b"PK"
    if is_zip:  # torch.save's format; the legacy pickle format has no header to check
        try:
            with zipfile.ZipFile(path):
                pass
        except zipfile.BadZipFile:
            return f"the weights file is truncated or damaged ({size:,} bytes; its zip directory is missing)"
    return None


def _safetensors_problem(path: Path, size: int) -> str | None:
    """A safetensors file is an 8-byte header length, a JSON header with every tensor's byte range, the data."""
    with path.open("rb") as handle:
        head = handle.read(8)
        header_size = int.from_bytes(head, "little") if len(head) == 8 else -1
        if header_size < 0 or 8 + header_size > size:
            return f"the weights file is truncated ({size:,} bytes, shorter than its own header)"
        try:
            header = json.loads(handle.read(header_size))
            end = max((int(entry["data_offsets"][1]) for key, entry in header.items() if key != "__metadata__"),
                      default=0)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return "the weights file is damaged (its safetensors header is not valid)"
    expected = 8 + header_size + end
    if size < expected:
        return f"the weights file is truncated ({size:,} of {expected:,} bytes)"
    return None


def load_tokenizer(name: str | Path):
    """The tokenizer of model ``name``, refused when it turns text into no tokens.

    Raises:
        ConfigError: the folder has no tokenizer files (transformers would build an empty
            tokenizer), or the tokenizer cannot be loaded or gives 0 tokens for plain English.
    """
    from transformers import AutoTokenizer

    name = str(name)
    path = Path(name).expanduser()
    folder = path if path.is_dir() else model_folder(name)  # a tokenizer's own folder has no config.json
    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError, TypeError) as exc:
        raise ConfigError(f"cannot load the tokenizer of {name!r}: {first_line(exc)}") from exc
    if not tokenizer(_PROBE, add_special_tokens=False, verbose=False)["input_ids"]:
        present = [] if folder is None else [f for f in TOKENIZER_FILES if (folder / f).is_file()]
        if folder is not None and not present:
            raise ConfigError(f"model folder {folder} has no tokenizer files (none of {', '.join(TOKENIZER_FILES)}): "
                              "transformers would build an empty tokenizer that turns every text into 0 tokens")
        raise ConfigError(f"the tokenizer of {name!r} turns plain text into 0 tokens "
                          f"(files: {', '.join(present) or 'unknown'}); it cannot score anything")
    return tokenizer


def check_vocabulary(name: str | Path, tokenizer, rows: int | None = None) -> None:
    """Refuse a tokenizer with more tokens than the model's embedding has rows (``rows``, else its config's
    ``vocab_size``): its larger ids would index past the embedding, an IndexError deep in the first batch."""
    if rows is None:
        from transformers import AutoConfig

        try:
            rows = getattr(AutoConfig.from_pretrained(str(name)), "vocab_size", None)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load the config of {str(name)!r}: {first_line(exc)}") from exc
    if isinstance(rows, int) and len(tokenizer) > rows:
        raise ConfigError(f"the tokenizer of {str(name)!r} has {len(tokenizer):,} tokens but the model's embedding "
                          f"has {rows:,} rows (vocab_size), so token ids {rows:,} and up cannot be looked up: use the "
                          "tokenizer the model was trained with, or resize the model's embeddings to it")


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (library errors often span several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
