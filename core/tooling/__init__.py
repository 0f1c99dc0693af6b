"""The CLI's measuring tools: the speed benches (`bench`), the GPU check (`device-check`),
the `demo` command's pipeline and the comparison with OpenNMT-py (train_vs_onmt).

Only core/cli/ and experiments/ reach them; they build on the services and the layers
below, and the GUI never needs them.
"""
