"""The workspace: the SQLite index and the folder of files every front works in.

store.Workspace is the one object callers use; it is made of the mixins corpus_records
(corpora, splits), runs (the runs table) and run_records (metrics, checkpoints,
evaluations, translations) over database (connections, transactions, names). paths:
the folder layout, the schema and its migrations; health: the checks made before
opening; info: the dataclasses it returns; gold_folders: a gold set's files and a killed
import's leftovers. No module here loads torch or numpy (tests/core/test_layering.py).
"""
