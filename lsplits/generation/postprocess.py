"""``lsplits beams --postprocess MODULE:FUNCTION``: a parser's raw output turned into PENMAN before it is written.

Most released AMR parsers emit a linearisation (amrlib's serialized graphs, AMRBART's and SPRING's token
sequences), not PENMAN. A postprocess is a function ``raw text -> PENMAN string``, or ``None`` for an output it
cannot convert; it runs on every candidate, after the cache (which keeps the raw text, so a changed function
needs no new generation) and before the beams file is written. A ``None`` is written as an empty candidate,
which ``lsplits ue`` counts as invalid; the candidate keeps its place, so the scores stay aligned with it.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from lsplits.errors import ConfigError, InvalidOption
from lsplits.generation.scores import Scored

logger = logging.getLogger(__name__)

Postprocess = Callable[[str], "str | None"]
"""Raw candidate text -> PENMAN string, or None where the output is not a graph."""

SPEC_FORM = "MODULE:FUNCTION (a module name or a .py file, then the function, e.g. my_parser.amr:to_penman)"

BUILT_INS: dict[str, str] = {"amrlib": "lsplits.generation.postprocess:amrlib_to_penman"}
"""``--postprocess`` names that stand for a function lsplits ships."""


def postprocess_spec(model: str, given: str | None = None) -> str | None:
    """The postprocess a model's candidates go through: ``given``, else the one an lsplits AMR parser folder names
    (its output is a linearisation), else none. The one decision of ``lsplits beams``, the Space and Python."""
    from lsplits.amr_parser.model import parser_postprocess

    return given or parser_postprocess(model)


def load_postprocess(spec: str) -> Postprocess:
    """The function ``spec`` names (a :data:`BUILT_INS` name or ``MODULE:FUNCTION``, where ``MODULE`` is an
    importable module or a ``.py`` file); InvalidOption naming ``postprocess`` for one that cannot be had, so a
    bad spec is refused before any model is loaded."""
    full = BUILT_INS.get(spec, spec)
    module_name, colon, function_name = full.rpartition(":")
    if not colon or not module_name.strip() or not function_name.strip():
        raise InvalidOption(name="postprocess", problem=f"must be {SPEC_FORM} or one of {', '.join(BUILT_INS)}",
                            value=spec)
    module = _module(module_name, spec)
    function = module
    for part in function_name.split("."):
        if not hasattr(function, part):
            raise InvalidOption(name="postprocess", problem=f"names {function_name!r}, which {module_name} does "
                                "not define", value=spec)
        function = getattr(function, part)
    if not callable(function):
        raise InvalidOption(name="postprocess", problem=f"names {function_name!r}, which is a "
                            f"{type(function).__name__}, not a function", value=spec)
    if spec in BUILT_INS:
        function()  # a built-in called with nothing checks that its package is installed (MissingExtra)
    return function


def _module(name: str, spec: str):
    """The module ``name``: a ``.py`` file loaded as it is, else imported; InvalidOption when it cannot be."""
    if name.endswith(".py"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise InvalidOption(name="postprocess", problem=f"names the file {name}, which does not exist",
                                value=spec)
        found = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(found)  # type: ignore[arg-type]
        loader = found.loader  # type: ignore[union-attr]
        try:
            loader.exec_module(module)
        except SyntaxError as exc:
            raise InvalidOption(name="postprocess", problem=f"names {name}, which is not valid Python ({exc.msg}, "
                                f"line {exc.lineno})", value=spec) from None
        return module
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise InvalidOption(name="postprocess", problem=f"names module {name!r}, which cannot be imported "
                            f"({exc}); install it or give its .py file", value=spec) from None


def postprocess_beams(beams: Sequence[Scored], ids: Sequence[str], function: Postprocess,
                      spec: str) -> tuple[list[Scored], int]:
    """Every candidate of ``beams`` through ``function``, in place (a None written as an empty candidate, which
    ``lsplits ue`` counts as invalid), and how many it returned None for.

    Raises:
        ConfigError: the function raised or returned neither a string nor None; one line naming ``spec``, the
            example, the candidate's rank and the start of its text.
    """
    converted, invalid = [], 0
    for example, scored in zip(ids, beams, strict=True):
        candidates = []
        for rank, raw in enumerate(scored.candidates, start=1):
            try:
                result = function(raw)
            except Exception as exc:  # the user's function: whatever it raises names the candidate
                raise ConfigError(f"{{opt:postprocess}} {spec} raised {type(exc).__name__}: {_first_line(exc)} on "
                                  f"candidate {rank} of example {example!r} ({_start(raw)})") from exc
            if result is not None and not isinstance(result, str):
                raise ConfigError(f"{{opt:postprocess}} {spec} returned {type(result).__name__} for candidate {rank} of "
                                  f"example {example!r} ({_start(raw)}): it must return a PENMAN string or None")
            invalid += result is None
            candidates.append("" if result is None else result)
        converted.append(dataclasses.replace(scored, candidates=candidates))
    if invalid:
        logger.warning("the postprocess function %s found %d of %d candidates invalid (written as empty candidates, which "
                       "lsplits ue counts as invalid)", spec, invalid, sum(len(s.candidates) for s in beams))
    return converted, invalid


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]


def _start(text: str, width: int = 60) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


def amrlib_to_penman(serialized: str | None = None) -> str | None:
    """amrlib's deserializer (``PenmanDeSerializer``, as amrlib's own parse_xfm inference uses it): an amrlib
    serialized graph -> PENMAN, None where it cannot rebuild a graph. Called with nothing, it only checks that
    amrlib is installed (``pip install 'lsplits[amrlib]'``)."""
    from lsplits.runtime.extras import require

    for package in ("amrlib", "unidecode"):
        require(package, "{opt:postprocess} amrlib")
    from amrlib.models.parse_xfm.penman_serializer import PenmanDeSerializer

    if serialized is None:
        return None
    return PenmanDeSerializer(serialized).get_graph_string()
