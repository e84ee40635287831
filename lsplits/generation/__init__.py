"""k-best candidates by beam search from any Hugging Face model, in the form ``lsplits ue`` reads.

:func:`lsplits.generation.generate_beams` (defined in :mod:`.search`) runs beam search (``num_beams=k, num_return_sequences=k``) on a model a user
already holds, inside their own evaluation loop: a seq2seq model (``AutoModelForSeq2SeqLM``: AMR
parsers, text-to-SQL models) or a causal LM given a prompt template with ``{text}``, of whose output
only the continuation is kept. Inputs are batched longest first under a token budget (what beam
search keeps in memory grows with ``k * (input + max_new_tokens)``), in bf16 on a GPU that has it.

``lsplits beams MODEL INPUTS --k 10 --out beams.jsonl`` (:mod:`lsplits.cli.beams`) does the same for a text
file (one input a line), a JSONL file or a Hub dataset, and writes one ``{"id", "candidates"}`` line
per input, best candidate first, in input order: the beams file of ``lsplits ue``. The work is cut
into shards cached under ``--cache-dir`` (one atomically written file per shard, keyed by the
inputs, the model and the settings), so a killed run resumes without generating a finished shard
again, and under ``accelerate launch`` each process generates its share of the shards
(:mod:`lsplits.lm.shards`). ``--format penman`` checks every candidate with the AMR metrics' own
reader and reports the invalid ones; they are kept, since the study counts them.
"""

from lsplits.runtime.lazy import lazy_exports

__all__ = ["generate_beams"]
_LAZY = {"generate_beams": "lsplits.generation.search"}
"""Short public names -> the module defining them, imported on first use (importing this package loads no torch)."""
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
