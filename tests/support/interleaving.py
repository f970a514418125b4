"""A class graded in turn: every attacker between two honest learners, so that at one job the same worker
grades an honest learner just before and just after each attack (folder names sort in grading order)."""

from __future__ import annotations

from typing import Iterable


def honest_name(number: int) -> str:
    """The folder of the honest learner graded in place ``number`` (sorts before every attacker it follows)."""
    return f"{number:02d}_0_honest"


def interleaved(attackers: Iterable[str]) -> dict[str, str]:
    """folder -> its attack, or ``"honest"``: honest, attacker, honest, ... honest, in grading order."""
    attackers = list(attackers)
    folders: dict[str, str] = {}
    for number, attack in enumerate(attackers):
        folders[honest_name(number)] = "honest"
        folders[f"{number:02d}_1_{attack}"] = attack
    folders[honest_name(len(attackers))] = "honest"
    return folders
