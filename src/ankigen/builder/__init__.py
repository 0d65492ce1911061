"""The build: every bank checked, each deck planned and packaged, the lock and the
evidence committed; `pipeline` is the front door, which a build with nothing to do
leaves early."""
