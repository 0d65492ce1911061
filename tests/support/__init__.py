"""What test modules share besides fixtures: helpers by concern, one module each.

A test module imports from here, from tests.helpers or from tests.desktop, never from
another test module (tests/test_layout.py checks it); fixtures are in conftest.py files."""
