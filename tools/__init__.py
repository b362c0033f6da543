"""Developer tools run from the repository root; not part of the library, not in the wheel."""
