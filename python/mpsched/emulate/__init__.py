"""The kernel engine: a scenario run with the machine's own TCP/MPTCP through user-space
emulated links (``mpsched emulate``, docs/emulate.md)."""
