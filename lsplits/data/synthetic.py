"""The embedded demo dataset: synthetic NLI-like sentence pairs with a known long tail.

``lsplits demo`` needs data that exists offline and whose hard examples are known in advance, so
the demo can show that a Likelihood Split puts them in eval. :func:`make_demo_dataset` writes
templated premise/hypothesis pairs whose nouns, verbs, adjectives and phrases are drawn with Zipf
weights from a lexicon of common English words, plus two planted tails in the hypothesis (the
scored query):

- rare words (:data:`DEMO_RARE_WORDS`, each at most 1 per million in wordfreq's English list) in
  about :data:`RARE_WORD_RATE` of the examples (:func:`has_rare_word`);
- a rare construction, participle preposing ("Running in the park is a tall man.") instead of the
  usual "A tall man is running in the park.", in about :data:`RARE_CONSTRUCTION_RATE` of them
  (:func:`is_rare_construction`).

The output is a pure function of ``(n, seed)``: one ``random.Random(seed)``, lists rather than sets
and our own weighted draw, so it is identical across runs, machines and ``PYTHONHASHSEED``.

:data:`DEMO_TASK` is the SNLI task of :mod:`lsplits.data.tasks` on the demo's fields.
"""

from __future__ import annotations

import bisect
import itertools
import random
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsplits.data.tasks import NLI_LABELS, Example, Task, nli_task
from lsplits.errors import InvalidOption

DEMO_TASK: Task = nli_task("demo", premise_field="premise", hypothesis_field="hypothesis", label_field="label")
"""The task of the demo dataset: SNLI's prompt on ``premise``/``label``, ``hypothesis`` scored."""


# --- lexicon (list order = Zipf rank: the first item of each list is drawn most often) ----------

_SUBJECTS = ["man", "woman", "boy", "girl", "dog", "child", "person", "worker", "student", "player",
             "cat", "horse", "teacher", "doctor", "musician", "farmer", "bird", "baby", "chef",
             "tourist", "soldier", "artist", "driver", "dancer"]
_ADJECTIVES = ["young", "old", "small", "tall", "happy", "tired", "little", "big", "quiet", "busy",
               "angry", "hungry", "brave", "proud", "strong", "lonely", "careful", "curious", "nervous"]
_CLASHING_ADJECTIVES = [{"young", "old"}, {"small", "little", "big", "tall"}]  # at most one of each set
_OBJECT_ADJECTIVES = ["red", "blue", "new", "old", "green", "heavy", "black", "white", "broken", "yellow"]


@dataclass(frozen=True)
class _Verb:
    gerund: str
    objects: tuple[str, ...] = ()  # plausible objects, most frequent first
    object_required: bool = False


_VERBS = [
    _Verb("walking"),
    _Verb("holding", ("ball", "book", "picture", "box", "camera", "bottle", "umbrella", "flag", "map", "hat"),
          True),
    _Verb("running"),
    _Verb("sitting"),
    _Verb("eating", ("sandwich", "apple", "pizza", "cake", "bread", "soup")),
    _Verb("playing", ("game", "guitar", "drum", "piano")),
    _Verb("reading", ("book", "newspaper", "letter", "map", "magazine", "sign")),
    _Verb("carrying", ("box", "bag", "basket", "ladder", "bottle", "chair"), True),
    _Verb("waiting"),
    _Verb("singing"),
    _Verb("watching", ("game", "movie", "bird", "boat", "train", "crowd")),
    _Verb("painting", ("picture", "wall", "fence", "boat", "chair")),
    _Verb("dancing"),
    _Verb("pushing", ("cart", "bicycle", "box", "door", "car"), True),
    _Verb("climbing", ("tree", "wall", "ladder", "fence", "hill")),
    _Verb("cooking", ("soup", "pizza", "cake", "meal")),
    _Verb("throwing", ("ball", "stone", "stick", "hat"), True),
    _Verb("cleaning", ("window", "car", "table", "floor", "bicycle")),
    _Verb("fixing", ("bicycle", "car", "wheel", "chair", "fence", "roof"), True),
    _Verb("jumping"),
    _Verb("building", ("fence", "wall", "house", "boat", "table"), True),
]
_RARE_OBJECT_VERBS = ["holding", "carrying", "watching", "fixing"]
_CONTRADICTING_VERBS = ["sleeping", "swimming", "lying down", "standing still"]
_NEXT_TO_RARE_OBJECT = "sleeping next to"  # a contradiction that keeps a planted rare object
_PLACE_ADJECTIVES = ["busy", "small", "big", "quiet", "old", "empty", "crowded"]
_PLACES = [("in", "park"), ("on", "street"), ("in", "kitchen"), ("on", "beach"), ("in", "garden"),
           ("in", "field"), ("at", "market"), ("at", "station"), ("by", "river"), ("in", "city"),
           ("in", "room"), ("in", "yard"), ("in", "library"), ("in", "forest"), ("on", "bridge"),
           ("near", "church"), ("at", "school"), ("in", "store"), ("near", "hospital")]
_COMPANIONS = ["with a friend", "with two friends", "with the family", "with a dog", "with a group of people"]
_TIMES = ["in the morning", "at night", "in the afternoon", "in the evening", "in the rain", "at noon"]
_NEUTRAL_ADDITIONS = ["for fun", "for a prize", "before dinner", "for the first time", "to pass the time",
                      "after a long day", "to make money", "for a friend", "while people watch",
                      "before the game starts"]

DEMO_RARE_SUBJECTS: tuple[str, ...] = ("ocelot", "ptarmigan", "cassowary", "axolotl", "quokka", "tapir",
                                       "narwhal")
DEMO_RARE_OBJECTS: tuple[str, ...] = ("theodolite", "astrolabe", "gnomon", "dirigible")
DEMO_RARE_ADJECTIVES: tuple[str, ...] = ("lugubrious", "quixotic", "ebullient", "obsequious",
                                         "pusillanimous", "bumptious")
DEMO_RARE_WORDS: frozenset[str] = frozenset(DEMO_RARE_SUBJECTS + DEMO_RARE_OBJECTS + DEMO_RARE_ADJECTIVES)
"""The planted rare words, all at most 1 per million in wordfreq's English list."""

RARE_WORD_RATE = 0.05
"""Probability that an example gets one planted rare word (in its premise and its hypothesis)."""
RARE_CONSTRUCTION_RATE = 0.03
"""Probability that an example's hypothesis uses participle preposing (a little less in effect:
negated contradictions keep the usual order)."""

_ZIPF_EXPONENT = 1.1
_GERUNDS = frozenset([v.gerund for v in _VERBS] + [v.split()[0] for v in _CONTRADICTING_VERBS])


def common_lexicon() -> list[str]:
    """Every word the generator may use besides the planted rare words (for checks and tests)."""
    phrases = [*_SUBJECTS, *_ADJECTIVES, *_OBJECT_ADJECTIVES, *_CONTRADICTING_VERBS, *_PLACE_ADJECTIVES,
               *_COMPANIONS, *_TIMES, *_NEUTRAL_ADDITIONS, _NEXT_TO_RARE_OBJECT, "a an the is no someone",
               *(v.gerund for v in _VERBS), *(o for v in _VERBS for o in v.objects),
               *(f"{prep} the {place}" for prep, place in _PLACES)]
    return sorted({word for phrase in phrases for word in phrase.split()})


class _ZipfPicker:
    """Draw items with weight 1/rank**s using only ``rng.random()`` (stable across Python versions)."""

    def __init__(self, items: Sequence, exponent: float = _ZIPF_EXPONENT) -> None:
        self.items = list(items)
        self.cumulative = list(itertools.accumulate(1.0 / rank**exponent for rank in range(1, len(items) + 1)))

    def __call__(self, rng: random.Random, exclude: Collection = ()) -> Any:
        while True:
            item = self.items[bisect.bisect_right(self.cumulative, rng.random() * self.cumulative[-1])]
            if item not in exclude:
                return item


_pick_subject = _ZipfPicker(_SUBJECTS)
_pick_adjective = _ZipfPicker(_ADJECTIVES)
_pick_object_adjective = _ZipfPicker(_OBJECT_ADJECTIVES)
_pick_verb = _ZipfPicker(_VERBS)
_pick_object = {verb.gerund: _ZipfPicker(verb.objects) for verb in _VERBS if verb.objects}
_pick_place_adjective = _ZipfPicker(_PLACE_ADJECTIVES)
_pick_place = _ZipfPicker(_PLACES)
_pick_companion = _ZipfPicker(_COMPANIONS)
_pick_time = _ZipfPicker(_TIMES)
_pick_addition = _ZipfPicker(_NEUTRAL_ADDITIONS)


@dataclass
class _Clause:
    """One described situation: subject, verb, optional object, place and extra phrases."""

    subject: str
    adjectives: list[str]
    verb: str
    object_phrase: str = ""
    place_phrase: str = ""
    details: list[str] = field(default_factory=list)
    negated: bool = False

    def subject_phrase(self) -> str:
        words = " ".join([*self.adjectives, self.subject])
        return f"no {words}" if self.negated else f"{_article(words)} {words}"

    def predicate(self) -> str:
        return " ".join(p for p in [self.verb, self.object_phrase, self.place_phrase, *self.details] if p)

    def render(self, preposed: bool = False) -> str:
        """``A tall man is running in the park.`` or, preposed, ``Running in the park is a tall man.``"""
        if preposed:
            text = f"{self.predicate()} is {self.subject_phrase()}"
        else:
            text = f"{self.subject_phrase()} is {self.predicate()}"
        return text[0].upper() + text[1:] + "."


def _article(phrase: str) -> str:
    return "an" if phrase[0] in "aeiou" else "a"


def _with_article(words: list[str]) -> str:
    phrase = " ".join(words)
    return f"{_article(phrase)} {phrase}"


def _adjectives(rng: random.Random) -> list[str]:
    chosen: list[str] = []
    excluded: set[str] = set()
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        adjective = _pick_adjective(rng, exclude=excluded)
        chosen.append(adjective)
        excluded |= {adjective}.union(*(group for group in _CLASHING_ADJECTIVES if adjective in group))
    return chosen


def _scene(rng: random.Random, rare_slot: str | None) -> _Clause:
    """A premise situation; ``rare_slot`` (subject/object/adjective) gets a planted rare word."""
    subject = rng.choice(DEMO_RARE_SUBJECTS) if rare_slot == "subject" else _pick_subject(rng)
    adjectives = _adjectives(rng)
    if rare_slot == "adjective":
        adjectives.insert(0, rng.choice(DEMO_RARE_ADJECTIVES))
    verb: _Verb = _pick_verb(rng)
    object_phrase = ""
    if rare_slot == "object":
        verb = _Verb(rng.choice(_RARE_OBJECT_VERBS))
        object_phrase = _with_article([rng.choice(DEMO_RARE_OBJECTS)])
    elif verb.objects and (verb.object_required or rng.random() < 0.6):
        noun = _pick_object[verb.gerund](rng)
        object_phrase = _with_article([_pick_object_adjective(rng), noun] if rng.random() < 0.4 else [noun])
    place_phrase = ""
    if rng.random() < 0.8:
        prep, place = _pick_place(rng)
        place = f"{_pick_place_adjective(rng)} {place}" if rng.random() < 0.3 else place
        place_phrase = f"{prep} the {place}"
    details = [pick(rng) for pick in (_pick_companion, _pick_time) if rng.random() < 0.35]
    return _Clause(subject, adjectives, verb.gerund, object_phrase, place_phrase, details)


def _hypothesis(rng: random.Random, scene: _Clause, label: str, rare_slot: str | None) -> _Clause:
    """A hypothesis clause for ``label``; the planted rare word (if any) is always kept."""
    keep = rng.choice([0.2, 0.5, 0.8, 1.0])
    adjectives = [a for a in scene.adjectives if a in DEMO_RARE_WORDS or rng.random() < keep]
    object_kept = rare_slot == "object" or _object_required(scene.verb) or rng.random() < keep
    hypothesis = _Clause(scene.subject, adjectives, scene.verb,
                         object_phrase=scene.object_phrase if object_kept else "",
                         place_phrase=scene.place_phrase if rng.random() < keep else "",
                         details=[d for d in scene.details if rng.random() < keep])
    if label == "neutral":
        if rng.random() < 0.4 and not any(d in _COMPANIONS for d in scene.details):
            hypothesis.details.append(_pick_companion(rng))
        hypothesis.details.append(_pick_addition(rng))
    elif label == "contradiction":
        how = rng.choice(["verb", "verb", "place", "negation"])
        if how == "place" and scene.place_phrase:
            prep, place = _pick_place(rng, exclude=[p for p in _PLACES if scene.place_phrase.endswith(p[1])])
            hypothesis.place_phrase = f"{prep} the {place}"
        elif how == "negation":
            hypothesis.negated = True
        elif rare_slot == "object":
            hypothesis.verb = _NEXT_TO_RARE_OBJECT
        else:
            hypothesis.verb, hypothesis.object_phrase = rng.choice(_CONTRADICTING_VERBS), ""
    return hypothesis


def _object_required(gerund: str) -> bool:
    return any(v.gerund == gerund and v.object_required for v in _VERBS)


def _example(rng: random.Random, example_id: str) -> dict[str, str]:
    label = NLI_LABELS[rng.randrange(len(NLI_LABELS))]
    rare_slot = rng.choice(["subject", "object", "adjective"]) if rng.random() < RARE_WORD_RATE else None
    preposed = rng.random() < RARE_CONSTRUCTION_RATE
    scene = _scene(rng, rare_slot)
    if label == "entailment" and rare_slot is None and not preposed and rng.random() < 0.08:
        hypothesis = f"Someone is {scene.verb}."
    else:
        clause = _hypothesis(rng, scene, label, rare_slot)
        # "Running in the park is no man." reads oddly: negated clauses keep the usual order.
        hypothesis = clause.render(preposed=preposed and not clause.negated)
    return {"id": example_id, "premise": scene.render(), "hypothesis": hypothesis, "label": label}


def make_demo_dataset(n: int, seed: int = 0) -> list[dict[str, str]]:
    """Generate ``n`` demo examples (``id``, ``premise``, ``hypothesis``, ``label``), deterministically.

    Ids are ``demo-00000``, ``demo-00001``, ... (zero-padded to at least five digits); labels are
    ``entailment``/``neutral``/``contradiction`` drawn uniformly. Raises ValueError when ``n < 0``.

    >>> make_demo_dataset(1)[0]["id"]
    'demo-00000'
    """
    if n < 0:
        raise InvalidOption(f"n must be >= 0, got {n}")
    rng = random.Random(seed)
    width = max(5, len(str(n - 1)))
    return [_example(rng, f"demo-{i:0{width}d}") for i in range(n)]


_WORD = re.compile(r"[a-z]+")


def has_rare_word(example: Example, field_name: str = "hypothesis") -> bool:
    """Whether the example's ``field_name`` contains one of :data:`DEMO_RARE_WORDS`."""
    return any(word in DEMO_RARE_WORDS for word in _WORD.findall(str(example[field_name]).lower()))


def is_rare_construction(example: Example, field_name: str = "hypothesis") -> bool:
    """Whether the example's ``field_name`` uses the planted rare construction (participle preposing).

    Every other hypothesis the generator writes starts with a determiner or "Someone", so a
    leading gerund identifies the construction exactly.
    """
    words = _WORD.findall(str(example[field_name]).lower())
    return bool(words) and words[0] in _GERUNDS
