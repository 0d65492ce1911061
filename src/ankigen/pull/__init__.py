"""`ankigen pull`: fixes made in Anki brought back into the banks. The notes' fields read
back into texts (`fields`), matched and decided against the lock (`pull`), and fetched
from a running Anki (`anki`)."""
