"""The machine line of benchmark headers names the processor with its family and model
numbers (core/train/device.py `cpu_name`), which tell hosts apart that a virtual machine
names alike ('AMD EPYC')."""
from __future__ import annotations

from core.train.device import cpu_name, machine_summary

TWO_PROCESSORS = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
flags\t\t: fpu avx2 avx512f

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: Other
"""


def test_the_first_processors_name_family_and_model():
    assert cpu_name(TWO_PROCESSORS, "x86_64") == "AMD EPYC (family 25, model 17)"


def test_without_numbers_the_name_alone_and_without_a_name_the_default():
    assert cpu_name("model name\t: Some CPU\n", "x86_64") == "Some CPU"
    assert cpu_name("processor\t: 0\nBogoMIPS\t: 50.00\n", "aarch64") == "aarch64"
    assert cpu_name("", "x86_64") == "x86_64"


def test_the_summary_line_starts_with_the_processor():
    line = machine_summary()
    assert line.startswith("machine: ") and " cores, torch CPU kernels " in line
