"""`ankigen schema`: the JSON Schema of a bank or of the project file, for an editor or CI."""

from __future__ import annotations

import click

from ankigen.bank.schema import KINDS, schema_path


@click.command()
@click.argument("kind", type=click.Choice(KINDS))
def schema(kind: str) -> None:
    """Print the JSON Schema (draft 2020-12) of a bank (`bank`) or of the project file,
    ankigen.toml (`project`).

    It is the file shipped with ankigen, which banks that `translate` and `import` write
    name on their first line for yaml-language-server: an editor completes and checks a
    bank's keys with it. `ankigen lint` checks what no schema can (docs/bank-format.md).
    """
    click.echo(schema_path(kind).read_text(encoding="utf-8"), nl=False)
