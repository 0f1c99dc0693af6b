"""Corpus pipeline: readers (readers, tmx, textio) -> Corpus (corpus) -> filters,
splits, stats, context -> Preprocessor (preprocess) + vocabularies (vocab) -> ids
(dataset) -> batches (batching)."""
