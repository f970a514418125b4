"""The learner's lab: the session a notebook starts, and the JupyterLab server around it.

Here: :mod:`~course.lab.session` (``start_lab``: a lab's database and exercises on one backend),
:mod:`~course.lab.workspace` (``work/``, the learner's own copies), :mod:`~course.lab.spare_kernels` and
:mod:`~course.lab.kernel_warmup` (a warmed kernel ready for the next lab opened), and JupyterLab's settings
(``jupyterlab-overrides.json``).

May use: :mod:`course.lessons` and everything below it.  Used by ``course/__init__`` and the CLI.
"""
