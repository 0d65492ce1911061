"""The command line, a thin layer over the library: the console script's entry, the
answer to a build with nothing to do (before click loads), the click commands, and every
line a command prints."""
