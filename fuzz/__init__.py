"""Fuzzing einc: differential testing of generated programs against their NumPy meaning
(fuzz.programs), and mutation fuzzing of the front end on real programs (fuzz.mutants).

`python -m fuzz` (or `make fuzz`) runs the campaigns registered in fuzz.campaigns.
"""
