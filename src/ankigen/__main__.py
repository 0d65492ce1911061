"""`python -m ankigen`."""

from ankigen.cli.entry import main

# guarded: worker processes import this module again when a build runs in parallel
if __name__ == "__main__":
    main()
