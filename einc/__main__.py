"""`python -m einc` runs the command-line interface."""
from einc.cli import main

main()
