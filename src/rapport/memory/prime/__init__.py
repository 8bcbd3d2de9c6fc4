"""PRIME: an evolving library of distilled experiences, retrieved at every turn."""

from ._credit import (
    GAMMA,
    TOP_K,
    Credit,
    Stage,
    Zone,
    equalized,
    key_turns,
    reward_to_go,
    stage_of,
    zone_of,
)
from ._distill import (
    Distillation,
    Distilled,
    DistilledText,
    Exploration,
    Lessons,
    distill,
    episode_facts,
    explorations,
    grounded,
    turn_notes,
)
from ._evolve import (
    EvolutionSettings,
    Operation,
    draw_operations,
    evolve_once,
    meta_temperature,
    prune_ids,
)
from ._experience import ANY_ENV, Conditions, Experience
from ._library import ExperienceLibrary, LibraryVersion
from ._memory import PrimeMemory, PrimeOptions, library_from_state
from ._select import select, zone_prompt
from ._situation import compact_situation, exchanges_of, move_gist, situation_text
from ._verify import TurnFacts, babbles, lesson_problems, names_any, quotes, same_lesson

__all__ = [
    "ANY_ENV",
    "GAMMA",
    "TOP_K",
    "Conditions",
    "Credit",
    "Distillation",
    "Distilled",
    "DistilledText",
    "EvolutionSettings",
    "Experience",
    "ExperienceLibrary",
    "Exploration",
    "Lessons",
    "LibraryVersion",
    "Operation",
    "PrimeMemory",
    "PrimeOptions",
    "Stage",
    "TurnFacts",
    "Zone",
    "babbles",
    "compact_situation",
    "distill",
    "draw_operations",
    "episode_facts",
    "equalized",
    "evolve_once",
    "exchanges_of",
    "explorations",
    "grounded",
    "key_turns",
    "lesson_problems",
    "library_from_state",
    "meta_temperature",
    "move_gist",
    "names_any",
    "prune_ids",
    "quotes",
    "reward_to_go",
    "same_lesson",
    "select",
    "situation_text",
    "stage_of",
    "turn_notes",
    "zone_of",
    "zone_prompt",
]
