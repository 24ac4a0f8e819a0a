"""Run batches of independent work on a process pool here or as Ray tasks, with one result order.

Every batch is a plain picklable value handed to a module-level ``task(batch) -> result``; results come back
in batch order whatever finished first, so a caller that seeds each unit of work from its own index gets the
same results on any backend and any number of workers.

- ``"process"`` (default): ``workers`` processes on this machine (``spawn``, so numba and threads start
  clean); one worker, or a single batch, runs in this process.
- ``"ray"``: each batch is a Ray task (the ``distributed`` extra). With ``address`` the work goes to that
  cluster; otherwise a local Ray is started with ``num_cpus=workers`` and shut down at the end.

A [`WorkerPool`][connect4_agents.evaluation.backends.WorkerPool] keeps ``"process"`` workers across several
calls (``run_batches(..., pool=pool)``), so a loop of calls (a training run's generations) starts its
processes, and loads what each keeps (numba kernels, the opening book, a solver's transposition table), once.

Ctrl-C (KeyboardInterrupt) stops the workers — the pool is terminated, Ray tasks are cancelled and a Ray we
started is shut down — and then propagates, after ``on_result`` has seen every finished batch.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from connect4_env.extras import require
from connect4_env.policy import resolve_opponent
from connect4_env.rules import Rules
from connect4_env.validation import check_choice, check_int

__all__ = ["BACKENDS", "WorkerPool", "run_batches", "default_workers", "plan_batches", "worker_policy"]

BACKENDS = ("process", "ray")


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _ignore_sigint() -> None:
    # the parent handles Ctrl-C and terminates the pool; a worker interrupted mid-task would only add noise
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _indexed(task: Callable[[Any], Any], item: tuple[int, Any]) -> tuple[int, Any]:
    index, batch = item
    return index, task(batch)


def plan_batches(
    items: Sequence[Any], workers: int | None, batch_size: int | None, largest: int
) -> tuple[int, list[list[Any]]]:
    """The number of workers (default: the CPUs available) and ``items`` cut into batches of ``batch_size``,
    by default about four batches per worker and at most ``largest`` items each.

    Raises:
        TypeError: ``workers`` or ``batch_size`` is neither None nor an integer.
        ValueError: ``workers`` is outside ``1..4096``, or ``batch_size`` is below 1.
    """
    workers = default_workers() if workers is None else check_int("workers", workers, 1, 4096)
    if batch_size is None:
        batch_size = max(1, min(largest, math.ceil(len(items) / (4 * workers))))
    else:
        batch_size = check_int("batch_size", batch_size, 1)
    return workers, [list(items[i : i + batch_size]) for i in range(0, len(items), batch_size)]


_POLICIES: dict[tuple[str, Rules], Any] = {}


def worker_policy(agent: Any, rules: Rules) -> Any:
    """``agent`` bound to ``rules``: a spec is built once per worker process and board, then reused (callers
    reset it before each game or position); an object is bound as it is.

    Raises:
        TypeError: ``agent`` is neither a spec string nor an object with ``act``, or ``rules`` is not a
            [`Rules`][connect4_env.rules.Rules] (as
            [`resolve_opponent`][connect4_env.policy.resolve_opponent] checks them).
        ValueError: ``agent`` is an unknown name or spec, or a policy that cannot play ``rules``.
    """
    if not isinstance(agent, str):
        return resolve_opponent(agent, None, rules)
    key = (agent, rules)
    if key not in _POLICIES:
        _POLICIES[key] = resolve_opponent(agent, None, rules)
    return _POLICIES[key]


def run_batches(
    task: Callable[[Any], Any],
    batches: Sequence[Any],
    *,
    backend: str = "process",
    workers: int | None = None,
    address: str | None = None,
    on_result: Callable[[int, Any], None] | None = None,
    pool: WorkerPool | None = None,
) -> list[Any]:
    """``[task(b) for b in batches]``, spread over ``workers`` (default: the CPUs available).

    ``on_result(index, result)`` is called here, in the caller's process, as each batch finishes (in
    completion order). ``pool``: run on its kept processes (``"process"`` backend, more than one worker and
    batch) instead of a pool started and ended in this call. Whatever ``task`` raises propagates.

    Raises:
        TypeError: ``workers`` is neither None nor an integer, ``address`` is neither None nor a str, or
            ``pool`` is neither None nor a [`WorkerPool`][connect4_agents.evaluation.backends.WorkerPool].
        ValueError: an unknown ``backend``, ``workers`` outside ``1..4096``, or an ``address`` without
            ``backend="ray"``.
        MissingExtraError: ``backend="ray"`` without Ray (the ``distributed`` extra).
    """
    check_choice("backend", backend, BACKENDS)
    workers = default_workers() if workers is None else check_int("workers", workers, 1, 4096)
    if address is not None:
        if not isinstance(address, str):
            raise TypeError(f"address must be a str such as 'ray://head:10001', got {type(address).__name__}")
        if backend != "ray":
            raise ValueError(f"address={address!r} needs backend='ray'")
    if pool is not None and not isinstance(pool, WorkerPool):
        raise TypeError(f"pool must be None or a WorkerPool, got {type(pool).__name__}")
    results: list[Any] = [None] * len(batches)

    def finished(index: int, result: Any) -> None:
        results[index] = result
        if on_result is not None:
            on_result(index, result)

    if backend == "ray":
        _run_ray(task, batches, workers, address, finished)
    elif workers == 1 or len(batches) <= 1:
        for index, batch in enumerate(batches):
            finished(index, task(batch))
    elif pool is not None:
        pool.run(task, batches, finished)
    else:
        with WorkerPool(min(workers, len(batches))) as own:
            own.run(task, batches, finished)
    return results


class WorkerPool:
    """``workers`` spawned processes kept for several
    [`run_batches`][connect4_agents.evaluation.backends.run_batches] calls: started at the first, ended by
    [`close`][connect4_agents.evaluation.backends.WorkerPool.close] or at the end of a ``with`` block (at
    once, terminated, when it ends with an exception).

    What a worker keeps in module state stays warm between calls: numba kernels, the opening book, a
    solver's transposition table. A call interrupted by Ctrl-C (or any exception) terminates the workers;
    a later call starts new ones. A worker that dies (killed, out of memory, a SIGTERM sent to the whole
    process group as ``timeout`` and batch schedulers do) ends the call with
    ``concurrent.futures.process.BrokenProcessPool`` and the other workers are stopped, never a hang: the
    pool is a `concurrent.futures.ProcessPoolExecutor`, which watches its workers.

    Examples:
        >>> with WorkerPool(2) as pool:  # doctest: +SKIP
        ...     for generation in range(10):
        ...         run_batches(task, batches, workers=2, pool=pool)

    Raises:
        TypeError: ``workers`` is neither None nor an integer.
        ValueError: ``workers`` is outside ``1..4096``.
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = default_workers() if workers is None else check_int("workers", workers, 1, 4096)
        self._executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        self.close(terminate=kind is not None)

    def __repr__(self) -> str:
        state = "running" if self._executor is not None else "not started"
        return f"WorkerPool(workers={self.workers}, {state})"

    @property
    def pids(self) -> list[int]:
        """The process ids of the running workers (empty before the first call and after
        [`close`][connect4_agents.evaluation.backends.WorkerPool.close]).
        """
        return [process.pid for process in self._processes()]

    def _processes(self) -> list[Any]:
        # the executor's own table of its workers (it has no public one)
        table = getattr(self._executor, "_processes", None) or {}
        return list(table.values())

    def run(
        self, task: Callable[[Any], Any], batches: Sequence[Any], finished: Callable[[int, Any], None]
    ) -> None:
        """``finished(index, task(batch))`` for each batch, on the kept workers (started now if need be)."""
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_sigint
            )
        executor = self._executor

        def hand_out() -> list[Future[tuple[int, Any]]]:
            return [executor.submit(_indexed, task, item) for item in enumerate(batches)]

        try:
            # the workers start as the first batches are handed out
            futures, held = _with_signals_held(hand_out)
            for number in held:  # Ctrl-C or SIGTERM that came while the workers started: handled now
                signal.raise_signal(number)
            for future in as_completed(futures):
                finished(*future.result())
        except BrokenProcessPool as error:
            self.close(terminate=True)
            raise BrokenProcessPool(
                "a worker process ended abruptly: killed by a signal, out of memory, or unable to start (a "
                "spawned worker imports the main script first, which a script read from standard input does "
                f"not allow: run it from a file); {error}"
            ) from error
        except BaseException:
            self.close(terminate=True)
            raise

    def close(self, terminate: bool = False) -> None:
        """End the workers: let them finish (``terminate``: stop them at once) and wait for them."""
        processes = self._processes()
        executor, self._executor = self._executor, None
        if executor is None:
            return
        if terminate:
            executor.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                if process.is_alive():
                    process.terminate()
            for process in processes:
                process.join()
        executor.shutdown(wait=True)


def _with_signals_held(start: Callable[[], Any]) -> tuple[Any, list[int]]:
    """``start()`` with Ctrl-C and SIGTERM held back; returns its result and the signals that arrived
    meanwhile. Interrupted half-way through sending a worker its start-up data, the worker would print a
    traceback (EOFError) of its own. Signal handlers can only be swapped in the main thread: elsewhere
    ``start()`` runs as it is.
    """
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        return start(), held
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    for number in previous:
        signal.signal(number, lambda received, frame: held.append(received))
    try:
        return start(), held
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def _run_ray(
    task: Callable[[Any], Any],
    batches: Sequence[Any],
    workers: int,
    address: str | None,
    finished: Callable[[int, Any], None],
) -> None:
    ray = require("ray", "distributed", "backend='ray'")
    started = not ray.is_initialized()
    if started:
        options: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": "ERROR",
            "log_to_driver": False,
        }
        if address is None:
            options["num_cpus"] = workers
        else:
            options["address"] = address
        ray.init(**options)
    pending: list[Any] = []
    try:
        remote = ray.remote(_indexed)
        pending = [remote.remote(task, (index, batch)) for index, batch in enumerate(batches)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                finished(*ray.get(ref))
    except BaseException:
        # a Ray started here is shut down below, which stops its workers and their tasks; cancelling them
        # first raced with replies still in flight (Ray aborted the process: "Tried to complete task that
        # was not pending"). On a cluster we only joined, the tasks are cancelled.
        if not started:
            for ref in pending:
                ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()
