"""GateProfile: the mean gate per watched word, per token class and per phenomenon."""
import pytest

from core.evaluate.gates import GateProfile, watched_words, word_of


def test_tokens_are_read_as_lowercased_words():
    assert [word_of(t) for t in ("\u2581It", "it@@", "They", "\u2581", ",")] == [
        "it", "it", "they", "", ","]
    assert "it" in watched_words("en") and "it" in watched_words("en-GB")
    assert watched_words("xx") == ()


def test_means_per_word_class_and_phenomenon():
    profile = GateProfile(("it", "they"))
    profile.add(["\u2581It", "\u2581is", "\u2581red", "."], [0.2, 0.9, 0.8, 1.0], "il")
    profile.add(["They", "are", "it", "!"], [0.4, 0.7, 0.6, 0.5], "ils")
    profile.add(["\u2581", "here"], [0.0, 0.3])  # a lone word-start mark is no token
    m = profile.metrics()
    assert m["mean_gate watched words"] == pytest.approx((0.2 + 0.4 + 0.6) / 3)
    assert m["mean_gate other words"] == pytest.approx((0.9 + 0.8 + 0.7 + 0.3) / 4)
    assert m["mean_gate punctuation"] == pytest.approx(0.75)
    assert m["mean_gate 'it'"] == pytest.approx(0.4) and m["mean_gate 'they'"] == pytest.approx(0.4)
    assert profile.by_phenomenon["il"].mean == pytest.approx(0.2)
    assert profile.by_phenomenon["ils"].mean == pytest.approx(0.5)
    assert profile.by_word["it"].count == 2
    rows = {r[0]: r[1:] for r in profile.to_table().rows}
    assert rows["class: watched words"][0] == 3 and rows["word: they"] == [1, pytest.approx(0.4)]
    with pytest.raises(ValueError, match="2 tokens but 1 gate"):
        profile.add(["a", "b"], [0.5])
