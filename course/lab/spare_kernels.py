"""JupyterLab's kernels for ``make lab``: one started and warmed ahead, handed to the next notebook opened.

A fresh kernel takes a second or more before the lab's first cell ends (ipykernel
starts, then ``start_lab`` imports the engine).  :class:`SpareKernelManager`
keeps one kernel of the default kind started and warmed by
:func:`course.lab.kernel_warmup.warm_up`, in the folder of the last notebook opened
(at first the served folder, where ``make lab`` puts the labs).  When a notebook
of that folder asks for a kernel with the server's own environment, it gets the
spare (its ``__session__`` and ``JPY_SESSION_NAME`` set as a fresh kernel's
would be), and the next spare starts :attr:`~SpareKernelManager.spare_delay`
seconds later.  A notebook of another folder starts the usual way and moves the
spare to its folder.  Any other request (another kernel, another environment, a
chosen kernel id) starts a kernel the usual way and leaves the spare alone; so
does a restart.

The spare is not in the server's kernel list (JupyterLab shows no extra kernel),
and it is shut down with the server's kernels.  Its first start waits for the
first request that lists or starts kernels, which JupyterLab makes as it loads.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from traitlets import Bool, Float

from course.lab.kernel_warmup import WARM_UP_CODE

SESSION_VARIABLE = "JPY_SESSION_NAME"  #: what jupyter_server adds to each kernel's environment: the notebook's path
WARM_UP_TIMEOUT = 120  #: seconds a spare may take to start and warm up before it is given up


@dataclass
class Spare:
    """A kernel started ahead: its manager and id, and what it was started with."""

    kernel_name: str
    cwd: str
    env: dict[str, str]
    manager: Any = None
    kernel_id: str = ""
    warmed: bool = False


class SpareKernelManager(AsyncMappingKernelManager):
    """jupyter_server's kernel manager, with one warmed kernel kept ready (see the module docstring)."""

    spares = Bool(True, config=True, help="Keep one warmed kernel ready for the next notebook opened.")
    spare_delay = Float(2.0, config=True, help="Seconds between handing a spare out and starting the next one "
                                               "(the notebook that got it runs its first cells meanwhile).")

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._spare: Spare | None = None
        self._spare_task: asyncio.Task | None = None
        self._adopting: Spare | None = None
        self._last_cwd = ""
        self._retiring: set[asyncio.Task] = set()
        self._closing = False

    # ---- the spare ---------------------------------------------------------------------------------
    def ensure_spare(self, delay: float = 0.0, cwd: str | None = None) -> asyncio.Task | None:
        """Start a spare in ``cwd`` (default: the folder of the last notebook opened, at first the root)
        after ``delay`` seconds, unless one exists or is starting; return its task."""
        if not self.spares or self._closing:
            return None
        if self._spare_task is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return None
            self._last_cwd = cwd or self._last_cwd or self.cwd_for_path("")
            self._spare = Spare(self.default_kernel_name, self._last_cwd, dict(os.environ))
            self._spare_task = loop.create_task(self._start_spare(self._spare, delay))
        return self._spare_task

    def _retire_spare(self) -> None:
        """Shut the spare down (in the background): it was started for another folder."""
        task, spare, self._spare_task, self._spare = self._spare_task, self._spare, None, None
        if task is not None:
            task.cancel()
            retiring = asyncio.get_running_loop().create_task(_after(task, spare))
            self._retiring.add(retiring)
            retiring.add_done_callback(self._retiring.discard)

    async def _start_spare(self, spare: Spare, delay: float) -> Spare | None:
        """Start and warm ``spare``; None (and a warning in the log) if it would not start."""
        if delay:
            await asyncio.sleep(delay)
        if self._closing:
            return None
        kwargs = {"cwd": spare.cwd, "env": dict(spare.env)}
        if hasattr(self, "_kernel_start_kwargs"):  # jupyter_server >= 2.21: the server's launch policy
            kwargs = self._kernel_start_kwargs(**kwargs)
        try:
            manager, _, kernel_id = super().pre_start_kernel(spare.kernel_name, kwargs)
            kwargs["kernel_id"] = kernel_id
            spare.manager, spare.kernel_id = manager, kernel_id
            await asyncio.wait_for(manager.start_kernel(**kwargs), WARM_UP_TIMEOUT)
            spare.warmed = await self._run_silently(manager, WARM_UP_CODE, new=True)
        except Exception as error:  # noqa: BLE001 - a spare is an optimisation: the next notebook starts cold
            self.log.warning("course: no spare kernel (%s: %s)", type(error).__name__, error)
            await _shut_down(spare)
            return None
        self.log.info("course: a spare kernel is ready%s", "" if spare.warmed else " (not warmed up)")
        return spare

    async def _run_silently(self, manager: Any, code: str, *, new: bool = False) -> bool:
        """Run ``code`` in the kernel without output, history or an execution count; True if it ran.

        Only the shell reply is awaited (it cannot be missed, unlike IOPub messages sent before a
        subscription is complete); a ``new`` kernel is first waited for until it answers.
        """
        client = manager.client()
        client.start_channels()
        try:
            if new:
                await client.wait_for_ready(timeout=WARM_UP_TIMEOUT)
            request = client.execute(code, silent=True, store_history=False, allow_stdin=False)
            deadline = time.monotonic() + WARM_UP_TIMEOUT
            while True:
                reply = await client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
                if reply.get("parent_header", {}).get("msg_id") == request:
                    break
        finally:
            client.stop_channels()
        ok = reply.get("content", {}).get("status") == "ok"
        if not ok:
            self.log.warning("course: a spare kernel could not run %r: %s", code[:60],
                             reply.get("content", {}).get("evalue", "no reply"))
        return ok

    async def _take_spare(self, kernel_name: str | None, cwd: str, env: dict | None, extra: set[str]) -> Spare | None:
        """The spare, if it was started for exactly this request (waiting for it if it is starting)."""
        wanted, task = self._spare, self._spare_task
        plain_env = {k: v for k, v in (env or {}).items() if k != SESSION_VARIABLE}
        usual = (kernel_name or self.default_kernel_name) == self.default_kernel_name \
            and plain_env == dict(os.environ) and not extra
        if usual and wanted is not None and (cwd != wanted.cwd or plain_env != wanted.env
                                             or wanted.manager is None and not task.done()):
            # another folder (the next notebook will likely come from this one too), or a spare still
            # waiting for its delay: waiting for that would be slower than starting a kernel now
            self._retire_spare()
            wanted = task = None
        if task is None or wanted is None:
            if usual:
                self.ensure_spare(self.spare_delay, cwd)  # after this request's own kernel has started
            return None
        if not usual:
            return None
        self._spare = self._spare_task = None  # this request has it: no other one can
        spare = await task
        if spare is None or not await spare.manager.is_alive():
            await _shut_down(spare)
            self.ensure_spare(self.spare_delay, cwd)
            return None
        self.ensure_spare(self.spare_delay, cwd)
        self.log.info("course: a notebook in %s got the spare kernel %s", cwd, spare.kernel_id)
        return spare

    # ---- jupyter_server's entry points ---------------------------------------------------------------
    async def _async_start_kernel(self, *, kernel_id: str | None = None, path: Any = None, **kwargs: Any) -> str:
        """Start a kernel for a session: the spare when it fits the request, else a new one."""
        spare = None
        if kernel_id is None:
            cwd = self.cwd_for_path(path if path is not None else "", env=kwargs.get("env", {}))
            extra = set(kwargs) - {"kernel_name", "env"}
            spare = await self._take_spare(kwargs.get("kernel_name"), cwd, kwargs.get("env"), extra)
        self._adopting = spare
        try:
            kernel_id = await super()._async_start_kernel(kernel_id=kernel_id, path=path, **kwargs)
        finally:
            self._adopting = None
        if spare is not None and isinstance(kwargs.get("env"), dict) and SESSION_VARIABLE in kwargs["env"]:
            await self._name_session(spare, kwargs["env"])
        return kernel_id

    start_kernel = _async_start_kernel  # as jupyter_server's own class does

    def pre_start_kernel(self, kernel_name: str | None, kwargs: Any) -> tuple[Any, str, str]:
        """The spare being handed out (its start already done), else a new kernel's manager."""
        spare, self._adopting = self._adopting, None
        if spare is None:
            return super().pre_start_kernel(kernel_name, kwargs)
        kwargs.pop("kernel_id", None)
        manager = spare.manager

        async def already_started(**_: Any) -> None:
            del manager.start_kernel  # a restart starts the kernel again, the usual way

        manager.start_kernel = already_started
        return manager, spare.kernel_name, spare.kernel_id

    async def _name_session(self, spare: Spare, env: dict) -> None:
        """Give the handed-out kernel the notebook's path, as jupyter_server gives a new kernel's environment."""
        name = env[SESSION_VARIABLE]
        code = f"__import__('os').environ[{SESSION_VARIABLE!r}] = {name!r}\n__session__ = {name!r}"
        try:
            spare.manager.update_env(env={SESSION_VARIABLE: name})  # a restart starts with it
            await self._run_silently(spare.manager, code)
        except Exception as error:  # noqa: BLE001 - the kernel works without it
            self.log.warning("course: could not name the session of a spare kernel: %s", error)

    def list_kernels(self) -> list:
        """The running kernels (never the spare); the first call starts the spare."""
        self.ensure_spare()
        return super().list_kernels()

    async def _async_shutdown_all(self, now: bool = False) -> None:
        """Shut down every kernel, the spare too."""
        self._closing = True
        task, spare, self._spare_task, self._spare = self._spare_task, self._spare, None, None
        if task is not None:
            task.cancel()  # a spare still starting stops where it is; its kernel, if any, is stopped below
            await _after(task, spare)
        await asyncio.gather(*self._retiring, return_exceptions=True)
        await super()._async_shutdown_all(now=now)

    shutdown_all = _async_shutdown_all


async def _after(task: asyncio.Task, spare: Spare | None) -> None:
    """Wait for a (cancelled) spare's task to end, then stop its kernel."""
    try:
        await task
    except (asyncio.CancelledError, Exception):  # noqa: BLE001 - it is going away either way
        pass
    await _shut_down(spare)


async def _shut_down(spare: Spare | None) -> None:
    """Stop a spare's kernel, if it started (which removes its connection file too)."""
    if spare is None or spare.manager is None:
        return
    try:
        if spare.manager.has_kernel:
            await spare.manager.shutdown_kernel(now=True)
    except Exception:  # noqa: BLE001 - it is going away either way
        pass
