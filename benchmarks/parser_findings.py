"""The paper's findings in miniature, on real beams of the Little Prince AMR parser (issue 37, deliverable 4):

    .venv/bin/python benchmarks/parser_findings.py --out /tmp/parser-findings [--full spaces/lsplits-demo/parser]

Three parsers of different quality: the shipped one (``--full``, trained on all training graphs) and two trained
here with the same settings on a seeded quarter and half of the training graphs (cached in ``--work``, so a rerun
does not retrain). Each decodes the test sentences with k = 10 candidates and their scores (beam search, diverse
beam search, sampling: :mod:`lsplits.generation.decoding`); candidates go through the parser's postprocess into
PENMAN. Each (parser, decoding) pair is one system of the cross-system study ``lsplits ue --system`` runs
(:func:`lsplits.uncertainty.systems.run_systems`, beam sizes 3, 5, 8, 10 as the first k candidates, Smatch++ as
similarity and quality), twice: with the paper's estimators (Figure 1: top-1 Smatch++ against mean PRR, its
Spearman and Pearson correlation; Figure 2: mean PRR against k) and with every black-box, gray-box and hybrid
estimator side by side (its full report in ``OUT/report``). Prints the table and the time of each step; writes
``findings.csv``, ``correlation.csv``, ``families.csv``, ``timings.csv``, the beams and ``figures/`` under ``--out``.

Tiny scale (minutes on 2 cores): ``--epochs 1 --test-limit 20 --full /tmp/parser/tiny --max-new-tokens 64``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from data_paths import data_argument

from lsplits.amr_parser.model import POSTPROCESS, DecoderShape, load_parser, save_parser
from lsplits.amr_parser.train import ParserTraining, read_amr_jsonl, train_parser
from lsplits.generation.decoding import DECODINGS, Decoding
from lsplits.uncertainty.estimators import PAPER_ESTIMATORS
from lsplits.uncertainty.graybox import GRAYBOX_ESTIMATORS, HYBRID_ESTIMATORS
from lsplits.uncertainty.methods import FAMILIES, label_family
from lsplits.uncertainty.study_config import PAPER_BEAM_SIZES, StudyConfig
from lsplits.uncertainty.systems import SystemSpec, SystemsStudy, _spearman_pair, run_systems

REPO = Path(__file__).resolve().parents[1]
SHARES = {"quarter": 0.25, "half": 0.5}
"""The parsers trained here, by the share of the training graphs they see; ``full`` is the shipped one."""
MEASURE = "smatchpp"
"""The similarity of the candidates and the quality of the top-1 (the paper's Smatch++)."""
DEFAULT_MAX_NEW_TOKENS = 200  # as benchmarks/train_amr_parser.py measures the parser
FINDINGS_COLUMNS = ("system", "parser", "decoding", "train_share", "top1_smatch", "top1_smatchpp", "valid_share",
                    "mean_prr", *(f"mean_prr_k{k}" for k in PAPER_BEAM_SIZES),
                    *(f"{family}_mean_prr" for family in FAMILIES), *(f"{family}_best" for family in FAMILIES),
                    "beam_seconds")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """How the beams are made and studied."""

    k: int = 10
    decodings: tuple[str, ...] = DECODINGS
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    seed: int = 0
    n_bootstrap: int = 1000
    workers: int = 0
    progress: bool = True
    write_report: bool = True  # the library's full cross-system report of the all-estimator study in OUT/report


@dataclass
class Findings:
    """What the run measured: one table row per system, the Figure-1 correlations, the family PRRs, the timings."""

    table: list[dict[str, object]]
    correlations: list[dict[str, object]]
    families: list[dict[str, object]]
    without_mean: dict[str, str]
    timings: dict[str, float] = field(default_factory=dict)


class Timer:
    """The time of each named step, printed as it ends."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def step(self, name: str, work: Callable[[], object]) -> object:
        """Run ``work``, record and print how long it took."""
        start = time.perf_counter()
        result = work()
        self.seconds[name] = round(time.perf_counter() - start, 1)
        print(f"[{self.seconds[name]:7.1f} s] {name}", flush=True)
        return result


def _digest(*parts: object) -> str:
    """A short content key of ``parts`` (JSON-able values, bytes and files) for the caches in ``--work``."""
    hasher = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            for path in sorted(p for p in ([part] if part.is_file() else part.rglob("*")) if p.is_file()):
                hasher.update(path.relative_to(part.parent if part.is_file() else part).as_posix().encode())
                hasher.update(path.read_bytes())
        else:
            hasher.update(json.dumps(part, sort_keys=True, default=str).encode())
    return hasher.hexdigest()[:12]


def trained_parser(name: str, share: float, train_path: Path, training: ParserTraining, work: Path) -> Path:
    """The parser trained on a seeded ``share`` of the training graphs, from ``work`` when a run with the same
    data and settings made it, else trained now and saved there."""
    settings = dataclasses.replace(training, train_share=share)
    folder = work / "parsers" / f"{name}-{_digest(train_path, asdict(settings), asdict(DecoderShape()))}"
    if folder.is_dir():
        logger.info("parser %s: reused %s", name, folder)
        return folder
    rows = read_amr_jsonl(train_path)
    start = time.perf_counter()
    model, tokenizer = train_parser(rows, settings, DecoderShape())
    partial = folder.with_name(folder.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)  # a stopped run of this script left it
    save_parser(model, tokenizer, partial, card={
        "training": asdict(settings), "decoder": asdict(DecoderShape()), "train_file": train_path.name,
        "training_seconds": round(time.perf_counter() - start)})
    partial.rename(folder)
    return folder


def train_share(folder: Path) -> float | None:
    """The share of the training graphs the parser in ``folder`` saw, from its card (None when it does not say)."""
    card = json.loads((folder / "lsplits_parser.json").read_text(encoding="utf-8"))
    return card.get("training", {}).get("train_share")


def make_beams(folder: Path, rows: Sequence[dict], decoding: str, settings: Settings, path: Path) -> dict[str, float]:
    """Write the beams file of the parser in ``folder`` on ``rows`` (k candidates with their scores, through the
    parser's postprocess into PENMAN); returns the share of valid candidates and the seconds taken."""
    from lsplits.amr_parser.linearize import to_penman
    from lsplits.generation.cache import write_beams
    from lsplits.generation.postprocess import postprocess_beams
    from lsplits.generation.search import generate_beams

    model, tokenizer = load_parser(folder)
    ids = [str(row.get("id", index)) for index, row in enumerate(rows)]
    chosen = Decoding(strategy=decoding, seed=settings.seed) if decoding == "sample" else Decoding(strategy=decoding)
    start = time.perf_counter()
    beams = generate_beams(model, tokenizer, [row["snt"] for row in rows], k=settings.k, ids=ids,
                           max_new_tokens=settings.max_new_tokens, decoding=chosen, return_scores=True,
                           progress=settings.progress)
    seconds = time.perf_counter() - start
    converted, invalid = postprocess_beams(beams, ids, to_penman, POSTPROCESS)
    total = sum(len(scored.candidates) for scored in converted)
    write_beams(path, ids, converted)
    return {"valid_share": 1 - invalid / total, "beam_seconds": seconds}


def _write_csv(path: Path, rows: Sequence[dict[str, object]], columns: Sequence[str]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return sum(finite) / len(finite) if finite else math.nan


def family_rows(study: SystemsStudy) -> list[dict[str, object]]:
    """Every PRR of the all-estimator study with its family (black-box, gray-box, hybrid), per system and k; NaN
    where the library leaves it out of cross-system numbers (undefined, or a constant uncertainty)."""
    rows = []
    for system in study.names:
        for k in study.beam_sizes:
            for method in study.methods:
                result = study.prr(system, k, method, MEASURE)
                rows.append({"system": system, "k": k, "family": label_family(method), "method": method,
                             "prr": study.comparable_prr(system, k, method, MEASURE), "ci_low": result.ci_low,
                             "ci_high": result.ci_high, "constant_uncertainty": study.is_constant(system, k, method,
                                                                                                  MEASURE)})
    return rows


def correlation_rows(paper: SystemsStudy) -> list[dict[str, object]]:
    """Figure 1's correlations over the systems: top-1 Smatch++ (and the library's Smatch, as ``lsplits ue``
    reports it) against mean PRR of the paper's estimators, Spearman (exact p up to 9 points) and Pearson."""
    from scipy.stats import pearsonr

    from lsplits.uncertainty._format import MIN_CORRELATION_POINTS

    rows = []
    for performance in ("smatchpp", "smatch"):
        points = [(paper.table1[s][performance], paper.mean_by_system[s, MEASURE]) for s in paper.names
                  if not math.isnan(paper.mean_by_system[s, MEASURE])]
        x, y = [p[0] for p in points], [p[1] for p in points]
        rho, rho_p = _spearman_pair(x, y)
        r, r_p = math.nan, math.nan
        if len(points) >= MIN_CORRELATION_POINTS and len(set(x)) > 1 and len(set(y)) > 1:
            found = pearsonr(x, y)
            r, r_p = float(found.statistic), float(found.pvalue)
        rows.append({"performance": f"top1_{performance}", "prr": f"mean PRR, paper estimators, {MEASURE}",
                     "spearman": rho, "spearman_p": rho_p, "pearson": r, "pearson_p": r_p, "n": len(points)})
    return rows


def _style(paper: SystemsStudy, name: str) -> dict[str, object]:
    """A system's colour (its parser) and marker and line (its decoding), the same in both figures."""
    parsers = list(dict.fromkeys(system.split("-", 1)[0] for system in paper.names))
    parser, decoding = name.split("-", 1)
    index = DECODINGS.index(decoding) if decoding in DECODINGS else len(DECODINGS)
    return {"color": f"C{parsers.index(parser)}", "marker": "os^D"[index], "linestyle": ("-", "--", ":", "-.")[index]}


def _figures(paper: SystemsStudy, correlations: Sequence[dict[str, object]], folder: Path) -> None:
    """Figure 1 (top-1 Smatch++ against mean PRR, a point per system) and Figure 2 (mean PRR against k, a line per
    system), both over the paper's estimators; a system without a mean PRR is left out (the table says n/a)."""
    from lsplits.uncertainty._format import number
    from lsplits.uncertainty.plots import new_figure

    folder.mkdir(parents=True, exist_ok=True)
    figure = new_figure(6.4, 4.4)
    axes = figure.subplots()
    for name in paper.names:
        style = _style(paper, name)
        axes.scatter(paper.table1[name][MEASURE], paper.mean_by_system[name, MEASURE], label=name,
                     color=style["color"], marker=style["marker"])
    row = next(r for r in correlations if r["performance"] == f"top1_{MEASURE}")
    axes.set_title(f"Spearman rho = {number(row['spearman'])} (p = {number(row['spearman_p'])}), Pearson r = "
                   f"{number(row['pearson'])}, n = {row['n']}", fontsize=9)
    axes.set_xlabel("Top-1 Smatch++")
    axes.set_ylabel("Mean PRR (LexSim, EigV, Ecc, DegMat; all k)")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    figure.tight_layout()
    figure.savefig(folder / "figure1_smatchpp_vs_mean_prr.png", dpi=110, bbox_inches="tight")
    figure = new_figure(6.4, 4.4)
    axes = figure.subplots()
    for name in paper.names:
        axes.plot(paper.beam_sizes, [paper.mean_by_beam[name, k] for k in paper.beam_sizes], label=name,
                  **_style(paper, name))
    axes.axhline(0, color="black", linewidth=0.8, linestyle=":")
    axes.set_xticks(paper.beam_sizes)
    axes.set_xlabel("Beam size k (the first k candidates)")
    axes.set_ylabel("Mean PRR (LexSim, EigV, Ecc, DegMat)")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    figure.tight_layout()
    figure.savefig(folder / "figure2_mean_prr_by_k.png", dpi=110, bbox_inches="tight")


def without_mean(paper: SystemsStudy) -> dict[str, str]:
    """Why each system without a mean PRR has none: how many of its PRRs rest on a constant uncertainty and how
    many are undefined (a constant top-1 quality)."""
    reasons = {}
    for name in paper.names:
        if not math.isnan(paper.mean_by_system[name, MEASURE]):
            continue
        cells = [(k, m) for k in paper.beam_sizes for m in paper.methods]
        constant = sum(paper.is_constant(name, k, m, MEASURE) for k, m in cells)
        reasons[name] = (f"{constant} of {len(cells)} PRRs rest on an uncertainty constant over the examples, "
                         f"{len(cells) - constant} are undefined")
    return reasons


def _table(paper: SystemsStudy, everything: SystemsStudy, made: dict[str, dict[str, object]]) -> list[dict]:
    """One row per system: top-1 scores, valid share, the paper estimators' mean PRR (all k, then per k) and each
    family's mean and best PRR at the largest k."""
    largest = everything.beam_sizes[-1]
    table = []
    for system in paper.names:
        row: dict[str, object] = {"system": system, **made[system],
                                  "top1_smatch": paper.table1[system]["smatch"],
                                  "top1_smatchpp": paper.table1[system][MEASURE],
                                  "mean_prr": paper.mean_by_system[system, MEASURE]}
        for k in PAPER_BEAM_SIZES:
            row[f"mean_prr_k{k}"] = paper.mean_by_beam.get((system, k), math.nan)
        for family in FAMILIES:
            values = {m: everything.comparable_prr(system, largest, m, MEASURE) for m in everything.methods
                      if label_family(m) == family}
            defined = {m: v for m, v in values.items() if not math.isnan(v)}
            row[f"{family}_mean_prr"] = _mean(list(values.values()))
            row[f"{family}_best"] = (f"{max(defined, key=defined.__getitem__)} {max(defined.values()):.3f}"
                                     if defined else "n/a")
        table.append(row)
    return table


def run_findings(parsers: dict[str, Path], rows: Sequence[dict], out: Path, work: Path,
                 settings: Settings = Settings(), timer: Timer | None = None) -> Findings:
    """Beams of every parser x decoding on ``rows`` (``id``, ``snt``, ``amr``; cached in ``work``), the two
    cross-system studies, and the table, CSV files and figures in ``out``."""
    timer = timer or Timer()
    out.mkdir(parents=True, exist_ok=True)
    (out / "beams").mkdir(exist_ok=True)
    gold = out / "gold.jsonl"
    ids = [str(row.get("id", index)) for index, row in enumerate(rows)]
    gold.write_text("".join(json.dumps({"id": i, "amr": row["amr"]}) + "\n" for i, row in zip(ids, rows, strict=True)),
                    encoding="utf-8")
    specs, made = [], {}
    for parser, folder in parsers.items():
        for decoding in settings.decodings:
            system = f"{parser}-{decoding}"
            key = _digest(folder, [row["snt"] for row in rows], ids, decoding, settings.k, settings.max_new_tokens,
                          settings.seed)
            cached = work / "beams" / f"{system}-{key}.jsonl"
            facts_path = cached.with_suffix(".json")
            if not facts_path.is_file():
                cached.parent.mkdir(parents=True, exist_ok=True)
                facts = timer.step(f"beams {system} (k={settings.k}, {len(rows)} sentences)",
                                   lambda folder=folder, decoding=decoding, cached=cached:
                                   make_beams(folder, rows, decoding, settings, cached))
                facts_path.write_text(json.dumps(facts), encoding="utf-8")
            facts = json.loads(facts_path.read_text(encoding="utf-8"))
            shutil.copyfile(cached, out / "beams" / f"{system}.jsonl")
            made[system] = {"parser": parser, "decoding": decoding, "train_share": train_share(folder),
                            "valid_share": round(facts["valid_share"], 4),
                            "beam_seconds": round(facts["beam_seconds"], 1)}
            specs.append(SystemSpec(system, (str(out / "beams" / f"{system}.jsonl"),)))
    base = StudyConfig(similarities=(MEASURE,), qualities=(MEASURE,),
                       beam_sizes=tuple(k for k in PAPER_BEAM_SIZES if k <= settings.k) or (settings.k,),
                       estimators=PAPER_ESTIMATORS, n_bootstrap=settings.n_bootstrap, seed=settings.seed,
                       workers=settings.workers, cache_dir=work / "matrices", progress=settings.progress)
    paper = timer.step("study: paper estimators", lambda: run_systems(specs, gold, base))
    everything = timer.step("study: black-box, gray-box and hybrid estimators", lambda: run_systems(
        specs, gold, dataclasses.replace(base, estimators=(*PAPER_ESTIMATORS, *GRAYBOX_ESTIMATORS,
                                                           *HYBRID_ESTIMATORS))))
    table = _table(paper, everything, made)
    correlations = correlation_rows(paper)
    families = family_rows(everything)
    _write_csv(out / "findings.csv", table, FINDINGS_COLUMNS)
    _write_csv(out / "correlation.csv", correlations, list(correlations[0]))
    _write_csv(out / "families.csv", families, list(families[0]))
    timer.step("figures 1 and 2", lambda: _figures(paper, correlations, out / "figures"))
    if settings.write_report:
        from lsplits.uncertainty.systems_report import write_systems_report

        timer.step("the cross-system report (all estimators)",  # replaces its own earlier report only
                   lambda: write_systems_report(everything, out / "report"))
    return Findings(table, correlations, families, without_mean(paper), dict(timer.seconds))


def _cell(value: object, digits: int = 3) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def print_findings(findings: Findings) -> None:
    """The table, the correlations and the family comparison as markdown on stdout."""
    columns = ["system", "train_share", "top1_smatchpp", "valid_share", "mean_prr",
               *(c for c in FINDINGS_COLUMNS if c.startswith("mean_prr_k")),
               *(f"{family}_mean_prr" for family in FAMILIES), "beam_seconds"]
    print("\n| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for row in findings.table:
        print("| " + " | ".join(_cell(row.get(c, math.nan), 1 if c == "beam_seconds" else 3) for c in columns)
              + " |")
    for system, reason in findings.without_mean.items():
        print(f"{system}: no mean PRR: {reason}")
    print("\nBest estimator of each family at the largest k:")
    for row in findings.table:
        print(f"  {row['system']}: " + "; ".join(f"{family} {row[f'{family}_best']}" for family in FAMILIES))
    print("\nFigure 1 (over systems):")
    for row in findings.correlations:
        print(f"  {row['performance']} vs {row['prr']}: Spearman {_cell(row['spearman'])} (p {_cell(row['spearman_p'])}),"
              f" Pearson {_cell(row['pearson'])} (p {_cell(row['pearson_p'])}), n = {row['n']}")


def main(argv: Sequence[str] | None = None) -> Findings:
    """Parse the options, make the parsers (trained or reused) and run :func:`run_findings`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    data_argument(parser, "--train", "amr/lpp_amr_v3.0_train.jsonl", "the training graphs (JSON lines: snt, amr)")
    data_argument(parser, "--test", "amr/lpp_amr_v3.0_test.jsonl", "the test graphs (JSON lines: id, snt, amr)")
    parser.add_argument("--full", type=Path, default=REPO / "spaces" / "lsplits-demo" / "parser",
                        help="the parser trained on all training graphs (a parser folder)")
    parser.add_argument("--out", type=Path, required=True, help="where the table, CSV files and figures go")
    parser.add_argument("--work", type=Path, default=None, help="the cache of trained parsers, beams and similarity "
                        "matrices (default: OUT/work)")
    parser.add_argument("--epochs", type=int, default=ParserTraining.epochs, help="of the quarter and half parsers")
    parser.add_argument("--seed", type=int, default=ParserTraining.seed)
    parser.add_argument("--k", type=int, default=Settings.k)
    parser.add_argument("--decodings", default=",".join(DECODINGS), help=f"comma-separated, of {', '.join(DECODINGS)}")
    parser.add_argument("--max-new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS)
    parser.add_argument("--test-limit", type=int, default=None, help="the first N test graphs only")
    parser.add_argument("--bootstrap", type=int, default=Settings.n_bootstrap, help="PRR bootstrap resamples")
    parser.add_argument("--workers", type=int, default=0, help="similarity processes (0: one per core)")
    parser.add_argument("--no-report", action="store_true", help="skip the library's full cross-system report")
    args = parser.parse_args(argv)
    decodings = tuple(part.strip() for part in args.decodings.split(",") if part.strip())
    unknown = [d for d in decodings if d not in DECODINGS]
    if unknown or not decodings:
        parser.error(f"--decodings: {', '.join(unknown) or 'none given'}; choose from {', '.join(DECODINGS)}")
    if not (args.full / "lsplits_parser.json").is_file():
        parser.error(f"--full {args.full}: not a parser folder (no lsplits_parser.json); train it with "
                     "benchmarks/train_amr_parser.py or name one")
    for name in ("k", "max_new_tokens", "epochs", "test_limit"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    work = args.work or args.out / "work"
    rows = read_amr_jsonl(args.test)[: args.test_limit]
    timer = Timer()
    begin = time.perf_counter()
    training = ParserTraining(epochs=args.epochs, seed=args.seed)
    parsers = {name: timer.step(f"parser {name} ({share:g} of the training graphs, {args.epochs} epochs)",
                                lambda name=name, share=share: trained_parser(name, share, args.train, training, work))
               for name, share in SHARES.items()}
    parsers["full"] = args.full
    settings = Settings(k=args.k, decodings=decodings, max_new_tokens=args.max_new_tokens, seed=args.seed,
                        n_bootstrap=args.bootstrap, workers=args.workers, write_report=not args.no_report)
    findings = run_findings(parsers, rows, args.out, work, settings, timer)
    findings.timings["total"] = round(time.perf_counter() - begin, 1)
    _write_csv(args.out / "timings.csv", [{"step": s, "seconds": v} for s, v in findings.timings.items()],
               ["step", "seconds"])
    print_findings(findings)
    print(f"\n{len(rows)} test graphs, k = {args.k}; total {findings.timings['total']:.0f} s; written to {args.out}")
    return findings


if __name__ == "__main__":
    main()
