"""The code-site eval: pinned real code, tester-labelled sites, precision and recall."""
