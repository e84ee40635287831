"""Parsing Python source while finalizers that parse run: the CI failure of test_imports (CPython gh-106905)."""

import ast
import gc
from pathlib import Path

import lsplits
from lsplits.runtime.pysource import parse_file, parse_python

SOURCE = Path(lsplits.__file__).parent / "uncertainty" / "study.py"


class _ParsesWhenCollected:
    """A cycle whose finalizer parses, as a tqdm whose ``__del__`` error prints a 3.11 traceback does."""

    ran = 0

    def __init__(self) -> None:
        self.itself = self

    def __del__(self) -> None:
        type(self).ran += 1
        ast.parse("x = (1 + 2) * 3")


def test_a_parse_with_parsing_finalizers_pending_gives_the_plain_parse():
    source = SOURCE.read_text(encoding="utf-8")
    expected = ast.dump(ast.parse(source))
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 10**6, 10**6)  # young collections only: cheap in a process holding torch
    try:
        for _ in range(10):
            for _ in range(20):
                _ParsesWhenCollected()
            assert ast.dump(parse_python(source)) == expected  # plain ast.parse: SystemError here on 3.11.7
            gc.collect()
    finally:
        gc.set_threshold(*thresholds)
        gc.collect()
    assert _ParsesWhenCollected.ran >= 200  # the finalizers did run
    assert gc.isenabled()


def test_the_collector_stays_off_when_it_was_off_and_errors_are_python_s():
    gc.disable()
    try:
        assert isinstance(parse_python("1 + 1", mode="eval"), ast.Expression)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert ast.dump(parse_file(SOURCE)) == ast.dump(ast.parse(SOURCE.read_text(encoding="utf-8")))
    try:
        parse_python("def (", filename="broken.py")
    except SyntaxError as error:
        assert error.filename == "broken.py"
    else:
        raise AssertionError("a syntax error was accepted")
    assert gc.isenabled()
