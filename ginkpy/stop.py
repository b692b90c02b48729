"""Stopping criteria; several given together stop each column at the first that is met."""
from ginkpy._exports import face_attributes as _face_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast); the names:
# ginkpy/_exports.py
__getattr__, __dir__, __all__ = _face_attributes(globals())
