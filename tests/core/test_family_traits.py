"""Family traits live in core.families and are asked for by name; no module keeps its
own list of family names."""
from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.families import FAMILIES, TRAITS, families_with, family_traits


def test_every_family_has_traits_and_the_groups_are_right():
    from core.models import registry

    assert set(FAMILIES) == set(registry._MODULES)  # every family can be built
    assert families_with(context=True) == ("concat", "context_transformer")
    assert families_with(transformer=True) == ("transformer", "concat", "context_transformer",
                                               "marian")
    assert families_with(trainable=False) == ("marian",)  # imported only (runs import)
    assert families_with(layered=True) == families_with(transformer=True)
    assert families_with(context=True, previous_only=True) == ("concat",)
    assert not family_traits("rnnsearch").context and not family_traits("luong").layered


def test_unknown_family_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown model family 'gpt'; known: "):
        family_traits("gpt")


def test_sessions_and_training_ask_the_registry(monkeypatch):
    """A family marked as context-aware in TRAITS is treated as one by the session."""
    from core import families
    from core.config import RunConfig
    from core.infer.session import TranslationSession

    monkeypatch.setitem(families.TRAITS, "luong", families.FamilyTraits(context=True))

    class Member:
        config = RunConfig()

    session = TranslationSession([Member()], ["x"])
    assert RunConfig().model.family == "luong" and session.is_context_model


def test_each_family_has_a_default_reading_that_align_uses(monkeypatch):
    from core import families
    from core.config import RunConfig
    from core.evaluate.readings import READINGS
    from core.services.alignment_runs import reading_list

    assert all(t.reading in READINGS for t in TRAITS.values())
    luong, guided, rnn = RunConfig(), RunConfig(), RunConfig()
    guided.train.guided_alignment = 0.5
    rnn.model.family = "rnnsearch"
    # measured (RESULTS.md D): input-feeding Luong attends a word ahead, RNNsearch does not,
    # and a guided run aligns at the step its guide supervised
    assert reading_list(None, luong) == ["previous"]
    assert reading_list(None, rnn) == ["predict"] and reading_list(None, guided) == ["predict"]
    monkeypatch.setitem(families.TRAITS, "luong", families.FamilyTraits(reading="shift"))
    assert reading_list(None, luong) == ["shift"]  # what `align` reads without --reading
    assert reading_list(["sum", "predict"], luong) == ["predict", "sum"]  # asked wins


def test_no_module_keeps_its_own_list_of_families():
    """Family groups are asked of core.families, never spelled out as tuples of names
    (five such lists once drifted apart)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    names = "|".join(FAMILIES)
    tuple_of_families = re.compile(rf'\(\s*"({names})"\s*,\s*"({names})"')
    found = [f"{p.relative_to(root)}:{k}" for folder in ("core", "app")
             for p in sorted((root / folder).rglob("*.py")) if p.name != "families.py"
             for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if tuple_of_families.search(line) or re.search(r"[A-Z]+_FAMILIES\b", line)]
    assert found == []
