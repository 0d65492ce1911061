"""Identity and time: what decides that a rebuilt deck updates the notes learners have.

Anki's importer matches a note by its GUID across the whole collection and
takes its content only when the incoming modification time is strictly newer
than the one it holds. So two things must never go wrong:

- **the GUID** of an item stays the one learners already have, whatever the
  bank's topic, language or the item's id are called today (`formerly:`);
- **the modification time** of a note moves past every time ever issued for
  that GUID whenever its content differs from what was last issued, even when
  the content goes *back* to an older text (a revert), and never holds a
  nonsense value (zero, milliseconds, the future).

The evidence of times already issued comes from places a revert does not
undo: every version of the lock file in the banks' git history, and a record
kept in the output folder (`OUT/.ankigen-issued.json`).
"""
