"""Lesson 07, exercise 07.6: many-to-many with references on both sides, and their two update paths.

A student lists the courses it takes (``courseIds``), a course lists its students (``studentIds``): each
enrolment is two writes, and each must be safe to repeat.
"""

from __future__ import annotations

from course.datasets.more_patterns import courses, students
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import data, seeded

#: enrolments set up before the unenroll checks: (student, course)
ENROLLED = (("s1", "c1"), ("s1", "c2"), ("s2", "c1"), ("s3", "c2"), ("s3", "c3"))


def _set_up(pairs) -> dict:
    found = {"students": data(students), "courses": data(courses)}
    for student, course in pairs:
        next(s for s in found["students"] if s["_id"] == student)["courseIds"].append(course)
        next(c for c in found["courses"] if c["_id"] == course)["studentIds"].append(student)
    return found


class ManyToMany(Exercise):
    id = "07.6"
    title = "Many-to-many: students and courses, both sides kept"
    answers = ("enroll", "unenroll")
    requirements = {
        "both": "enroll adds the course's _id to the student's courseIds and the student's _id to the course's "
                "studentIds",
        "once": "enrolling a student again in the same course changes nothing: each id appears once on each side",
        "unenroll": "unenroll removes the course from the student's courseIds and the student from the course's "
                    "studentIds, and leaves every other enrolment alone",
    }
    hints = (
        "Two update_one calls, one per collection.",
        "$addToSet adds a value only when the array does not hold it yet.",
        "$pull removes a value from an array.",
    )
    solution_code = """
def enroll(db, student_id, course_id):
    \"\"\"Both sides of the enrolment; safe to repeat.\"\"\"
    db.students.update_one({"_id": student_id}, {"$addToSet": {"courseIds": course_id}})
    db.courses.update_one({"_id": course_id}, {"$addToSet": {"studentIds": student_id}})


def unenroll(db, student_id, course_id):
    \"\"\"Remove the enrolment from both sides.\"\"\"
    db.students.update_one({"_id": student_id}, {"$pull": {"courseIds": course_id}})
    db.courses.update_one({"_id": course_id}, {"$pull": {"studentIds": student_id}})
"""

    def _sides(self, db):
        return ({s["_id"]: s.get("courseIds") for s in db.students.find()},
                {c["_id"]: c.get("studentIds") for c in db.courses.find()})

    def _check_sides(self, db, pairs, what):
        taking, taken = self._sides(db)
        for student in taking:
            want = sorted({c for s, c in pairs if s == student})
            got = taking[student]
            if not isinstance(got, list) or sorted(set(got)) != want:
                raise Incorrect(f"after {what}, student {student}'s courseIds is {got!r}, expected {want} (in any "
                                "order)")
        for course in taken:
            want = sorted({s for s, c in pairs if c == course})
            got = taken[course]
            if not isinstance(got, list) or sorted(set(got)) != want:
                raise Incorrect(f"after {what}, course {course}'s studentIds is {got!r}, expected {want} (in any "
                                "order): keep both sides")

    def _enroll_all(self, answer, pairs, db=None):
        db = db if db is not None else seeded(self.lab, **_set_up(()))
        for student, course in pairs:
            self.call("enroll", answer.enroll, db, student, course)
        return db

    @visible(points=2, checks="both")
    def both_sides(self, answer):
        """Three enrolments: each student lists its courses, each course its students"""
        pairs = (("s1", "c1"), ("s2", "c1"), ("s1", "c3"))
        self._check_sides(self._enroll_all(answer, pairs), pairs, "enrolling s1 in c1, s2 in c1 and s1 in c3")

    @hidden(points=1, checks="both")
    def many_enrolments(self, answer):
        """Every student in two courses"""
        pairs = tuple((f"s{i}", f"c{1 + (i + k) % 4}") for i in range(1, 7) for k in (0, 1))
        self._check_sides(self._enroll_all(answer, pairs), pairs, "twelve enrolments")

    def _check_once(self, db, student, course):
        taking, taken = self._sides(db)
        for label, values, value in (("student " + student + "'s courseIds", taking[student], course),
                                     ("course " + course + "'s studentIds", taken[course], student)):
            if isinstance(values, list) and values.count(value) > 1:
                raise Incorrect(f"after enrolling {student} in {course} twice, {label} holds {value!r} "
                                f"{values.count(value)} times: an enrolment repeated must change nothing")

    @visible(points=2, checks="once")
    def enroll_twice(self, answer):
        """Enrolling s2 in c2 twice: each side holds the id once"""
        db = self._enroll_all(answer, (("s2", "c2"), ("s2", "c2")))
        self._check_once(db, "s2", "c2")

    @hidden(points=1, checks="once")
    def enroll_again_later(self, answer):
        """Enrolled, then other enrolments, then again"""
        db = self._enroll_all(answer, (("s4", "c1"), ("s5", "c1"), ("s4", "c2"), ("s4", "c1")))
        self._check_once(db, "s4", "c1")

    def _check_unenroll(self, answer, removals):
        db = seeded(self.lab, **_set_up(ENROLLED))
        for student, course in removals:
            self.call("unenroll", answer.unenroll, db, student, course)
        left = tuple(pair for pair in ENROLLED if pair not in removals)
        self._check_sides(db, left, "unenrolling " + " and ".join(f"{s} from {c}" for s, c in removals))

    @visible(points=2, checks="unenroll")
    def unenroll_one(self, answer):
        """s1 leaves c1: both sides forget it, the other enrolments stay"""
        self._check_unenroll(answer, (("s1", "c1"),))

    @hidden(points=1, checks="unenroll")
    def unenroll_two(self, answer):
        """s3 leaves both its courses"""
        self._check_unenroll(answer, (("s3", "c2"), ("s3", "c3")))
