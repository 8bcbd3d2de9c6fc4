"""A small judge module in the layout of a PrefIX checkout (test fixture, our own words)."""

from dataclasses import dataclass


@dataclass
class LikertDefinition:
    anchor_1: str
    anchor_2: str
    anchor_3: str
    anchor_4: str
    anchor_5: str


LIKERT_DEFINITIONS: dict[str, LikertDefinition] = {
    "initiative_timing": LikertDefinition(
        anchor_1="Fixture: always at the wrong moment.",
        anchor_2="Fixture: often at the wrong moment.",
        anchor_3="Fixture: sometimes at the wrong moment.",
        anchor_4="Fixture: rarely at the wrong moment.",
        anchor_5="Fixture: never at the wrong moment.",
    ),
    "interaction_preference_alignment": LikertDefinition(
        anchor_1="Fixture: ignores the preference.",
        anchor_2="Fixture: mostly ignores the preference.",
        anchor_3="Fixture: follows the preference half the time.",
        anchor_4="Fixture: mostly follows the preference.",
        anchor_5="Fixture: always follows the preference.",
    ),
    "overall_user_experience": LikertDefinition(
        anchor_1="Fixture: would not come back.",
        anchor_2="Fixture: would hardly come back.",
        anchor_3="Fixture: might come back.",
        anchor_4="Fixture: would come back.",
        anchor_5="Fixture: would gladly come back.",
    ),
}
