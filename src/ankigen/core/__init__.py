"""What every other part stands on: errors, atomic and user-facing file writes, process
tuning and parallel work, JSON, times, the output folder's mutex. Imports nothing else of
ankigen."""
