"""An SQLite database from a file someone else made, read so that it cannot hang ankigen,
fill its memory, or end it with a traceback.

A package's collection is SQL its author wrote: a table ankigen reads may be a view over a
query that never ends, a virtual table, or a column computed by an expression, and any
text may hold bytes that are not UTF-8. So the database is read in memory, never written
(`query_only`), with nothing in its schema trusted to run (`trusted_schema`), under a
budget of SQLite's steps and of time, its text read as bytes and decoded here; the tables
ankigen reads must be tables. Triggers are left alone: they run only when a table is
written, and this database never is.
"""

from __future__ import annotations

import signal
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ankigen.core.errors import AnkigenError

STEPS_FLOOR = 10_000_000
STEPS_PER_BYTE = 2
"""SQLite's budget of steps (virtual machine instructions) for all of one database's
reads: the floor, and as many again for each byte of the database. Reading a genuine
collection of 100,000 notes exported by Anki took 3 million steps, its database 99 MB
with notes of 500 characters (a budget of 208 million), 22 MB with notes of a few (55
million)."""
MAX_SECONDS = 30.0
"""And at most this long in SQLite, all reads together: those collections are read in
well under a second."""
_EVERY = 1000
"""Steps between two looks at the budget."""
IN_MEMORY = hasattr(sqlite3.Connection, "deserialize")
"""Whether this SQLite can open a database's bytes in memory: built in since 3.36."""


class Refused(AnkigenError):
    """Why a database cannot be read, said without the name of the file that holds it."""


class GuardedDatabase:
    """A database's bytes, opened read-only in memory with a budget for every read."""

    def __init__(
        self, data: bytes, max_steps: int | None = None, max_seconds: float = MAX_SECONDS
    ) -> None:
        self.max_steps = max_steps or STEPS_FLOOR + STEPS_PER_BYTE * len(data)
        self.max_seconds = max_seconds
        self._calls = 0
        self._used = 0.0
        """Seconds spent in SQLite so far."""
        self._deadline = 0.0
        self._spent = ""
        self._interrupted = False
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        try:
            self._connection = self._open(data)
            self._guard(len(data))
        except BaseException:
            self.close()
            raise

    def _open(self, data: bytes) -> sqlite3.Connection:
        if IN_MEMORY:
            connection = sqlite3.connect(":memory:")
            try:
                connection.deserialize(data)
            except sqlite3.DatabaseError as error:
                connection.close()
                raise Refused(f"its collection cannot be read by SQLite ({error})") from None
            return connection
        # an SQLite older than 3.36 (Ubuntu 20.04's, RHEL 8's) cannot deserialize: a
        # scratch copy, opened so that SQLite never writes or locks it
        self._scratch = tempfile.TemporaryDirectory(prefix="ankigen-")
        path = Path(self._scratch.name) / "collection.anki2"
        path.write_bytes(data)
        return sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)

    def _guard(self, size: int) -> None:
        connection = self._connection
        connection.text_factory = bytes  # decoded by `text`, which names what is not UTF-8
        # no value of a genuine database is longer than the database; a LIKE pattern
        # longer than this would be a query ankigen never sends
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(size, 1 << 20))
        connection.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 100)
        connection.set_progress_handler(self._progress, _EVERY)
        for pragma in ("query_only = ON", "trusted_schema = OFF", "cell_size_check = ON"):
            self.rows(f"PRAGMA {pragma}")

    def _progress(self) -> int:
        self._calls += 1
        if self._calls * _EVERY > self.max_steps:
            self._spent = f"more than {self.max_steps:,} of SQLite's steps"
        elif time.monotonic() > self._deadline:
            self._spent = f"more than {self.max_seconds:g} s"
        return 1 if self._spent else 0

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """Every row of one query, under the budget; a Refused saying why not."""
        previous = self._catch_interrupt()
        start = time.monotonic()
        self._deadline = start + self.max_seconds - self._used
        try:
            return self._connection.execute(sql).fetchall()
        except UnicodeDecodeError as error:
            # SQLite's own message quotes the file's bytes, and Python cannot decode them
            said = error.object[:200].decode("utf-8", "backslashreplace")
            raise Refused(f"its collection cannot be read by SQLite ({said})") from None
        except sqlite3.DatabaseError as error:
            if self._interrupted:
                raise KeyboardInterrupt from None
            if self._spent:
                raise Refused(
                    f"reading its collection took {self._spent}, far more than a genuine "
                    "collection of its size needs: a query that may never end"
                ) from None
            raise Refused(f"its collection cannot be read by SQLite ({error})") from None
        except MemoryError:
            raise Refused("reading its collection would need more memory than there is") from None
        finally:
            self._used += time.monotonic() - start
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def _catch_interrupt(self) -> Any:
        """Python's own Ctrl-C, but remembered: Python runs its handler inside the
        progress handler, where sqlite3 swallows the KeyboardInterrupt and only aborts
        the query; `rows` raises it again. The previous handler, or None where Python's
        is not the one in place (another thread, or a command's own)."""
        if threading.current_thread() is not threading.main_thread():
            return None
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return None
        self._interrupted = False

        def interrupted(number: int, frame: FrameType | None) -> None:
            self._interrupted = True
            raise KeyboardInterrupt

        return signal.signal(signal.SIGINT, interrupted)

    def require_tables(self, names: tuple[str, ...]) -> None:
        """A Refused unless each of `names` is a table of the database's own: not a view
        or a virtual table, and without computed columns, so that reading it runs
        nothing its author wrote."""
        schema = {
            name: (kind, root, sql)
            for kind, name, root, sql in self.rows(
                "SELECT type, name, rootpage, sql FROM sqlite_master"
            )
        }
        for name in names:
            found = schema.get(name.encode())
            if found is None:
                raise Refused(f"its collection has no {name} table")
            kind, root, sql = found
            if kind != b"table":  # a view, or an index or trigger by that name
                said = kind.decode("utf-8", "replace") if isinstance(kind, bytes) else "?"
                raise Refused(f"its collection's {name} is a {said}, not a table")
            # SQLite writes a table's statement so (a virtual one's `CREATE VIRTUAL TABLE`),
            # and gives only tables a root page
            real = isinstance(root, int) and root > 0 and isinstance(sql, bytes)
            if not real or not sql.startswith(b"CREATE TABLE "):
                raise Refused(f"its collection's {name} is a virtual table, not a table")
            if any(column[6] for column in self.rows(f"PRAGMA table_xinfo({name})")):
                raise Refused(f"its collection's {name} table has computed columns")

    def close(self) -> None:
        if getattr(self, "_connection", None) is not None:
            self._connection.close()
        if self._scratch is not None:
            self._scratch.cleanup()

    def __enter__(self) -> GuardedDatabase:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def text(value: object, what: str) -> str:
    """A text read from the database, or a Refused naming `what` it was."""
    if not isinstance(value, bytes):
        raise Refused(f"{what}: not text")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Refused(
            f"{what}: not UTF-8 (byte 0x{value[error.start]:02x} at {error.start})"
        ) from None


def integer(value: object, what: str) -> int:
    """A whole number read from the database, or a Refused naming `what` it was."""
    if not isinstance(value, int):
        raise Refused(f"{what}: not a whole number")
    return value
