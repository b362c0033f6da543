"""The team's own code: the calls in it that may reach an ingested API (:func:`scan`)."""

from apiatlas.loaders.code.models import CodeCall, CodeFile, CodeWarning
from apiatlas.loaders.code.scan import Scan, scan

__all__ = ["CodeCall", "CodeFile", "CodeWarning", "Scan", "scan"]
