"""Publishing: uploads, the metric modules as Spaces, the demo Space."""

from pathlib import Path

SHIPPED = Path(__file__).resolve().parents[1] / "_shipped"
"""The repository's ``metrics/`` and ``spaces/`` as the package carries them: in a checkout ``_shipped/metrics``
and ``_shipped/spaces`` are committed symlinks to those folders, and the wheel holds their files, so
``push-metrics`` and ``push-space`` need no checkout."""

GRADIO_SDK_VERSION = "6.31.0"
"""The Gradio ``sdk_version`` of every Space lsplits publishes (the metric Spaces and the demo): the version the
tests run the apps with (``gradio>=6.0`` in pyproject). Staging writes it into each Space's README header."""


def pin_sdk_version(readme: Path) -> None:
    """Set the ``sdk_version:`` line of a Space README's YAML header to :data:`GRADIO_SDK_VERSION`."""
    lines = readme.read_text(encoding="utf-8").split("\n")
    end = lines.index("---", 1) if lines[:1] == ["---"] and "---" in lines[1:] else 0
    if not end:  # no YAML header: the Hub gives the Space its default SDK version, nothing to pin
        return
    line = f"sdk_version: {GRADIO_SDK_VERSION}"
    found = next((i for i in range(1, end) if lines[i].startswith("sdk_version:")), None)
    if found is None:
        lines.insert(end, line)
    else:
        lines[found] = line
    readme.write_text("\n".join(lines), encoding="utf-8")
