"""What a hand-out holds and what it leaves out: the one list that making it and checking it share."""

INCLUDE = ("course", "labs", "data", "README.md", "Makefile", "pyproject.toml", "environment.yml",
           "LICENSE", ".gitignore")
LEFT_OUT = ("solutions", "tests", ".ci", ".git", ".venv", "course/grading")
MARKER = ".course-handout"
LESSONS = "course/lessons"
ENGINE = "course/engine/exercise.py"
GRADER = "course/grading"
