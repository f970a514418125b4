"""Schema Design in a Schemaless Store: the course package.

Learners use two names from here: :func:`start_lab`, the first call of every
lab, and ``____``, the placeholder that marks an answer still to write.
"""

from course.engine.placeholder import ____
from course.engine.version import VERSION as __version__
from course.lab.session import start_lab

__all__ = ["start_lab", "____", "__version__"]
