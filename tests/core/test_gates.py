"""GateProfile: the mean gate per watched word, per token class and per phenomenon."""
import pytest

from core.evaluate.gates import GateProfile, watched_words, word_of, words_and_gates


def test_tokens_are_read_as_lowercased_words():
    assert [word_of(t) for t in ("\u2581It", "They", "\u2581", ",")] == ["it", "they", "", ","]
    assert "it" in watched_words("en") and "it" in watched_words("en-GB")
    assert "la" not in watched_words("fr") and "elle" in watched_words("fr")  # no articles
    assert watched_words("xx") == ()


def test_sentencepiece_pieces_count_as_their_words():
    """'▁la' + 'mpara' is the word 'lampara', not the watched 'la'; a word's gate is its
    pieces' mean."""
    pieces = ["\u2581la", "mpara", "\u2581It", "self", "\u2581it", "."]
    assert words_and_gates(pieces, [0.2, 0.4, 0.5, 0.7, 0.3, 0.9], subword=True) == [
        ("\u2581lampara", pytest.approx(0.3)), ("\u2581Itself", pytest.approx(0.6)),
        ("\u2581it", 0.3), (".", 0.9)]
    profile = GateProfile(("la", "it"))
    profile.add(pieces, [0.2, 0.4, 0.5, 0.7, 0.3, 0.9], subword=True)
    assert set(profile.by_word) == {"it"} and profile.by_word["it"].count == 1
    assert profile.by_class["other words"].count == 2  # lampara, itself
    assert profile.by_class["punctuation"].mean == pytest.approx(0.9)


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
