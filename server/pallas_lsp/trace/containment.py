"""Every trace in a fresh process, in a PID namespace of its own, and everything it started ended with it.

Standard library only, no user code: the trace runner (runner.py) loads this file by path under the
ANALYSED project's interpreter (no pallas_lsp there), and the server imports it as
`pallas_lsp.trace.containment` for `kill_descendants`.

    worker (runner.py: jax imported, no user code ever runs here; a child subreaper)
     └─ launcher (a fork: enters a new PID namespace, waits for its one child)
         └─ keeper (init of that namespace; in it, no process can signal the keeper or leave)
             └─ the trace (user code runs here, from the worker's clean state; pid 2 of the namespace)

When the keeper exits, the kernel kills whatever is left in the namespace. Where namespaces are not
allowed, the keeper is a child subreaper instead and the worker catches what escapes it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
NAMESPACES_ENV = "PALLAS_LSP_TRACE_NAMESPACES"  # "0": subreapers only, as on a host without namespaces


def _reap_children() -> list[tuple[int, int]]:
    """Collect the children of this process that already ended: (pid, wait status) of each."""
    reaped = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped.append((pid, status))


def limit_memory(megabytes: int) -> None:
    """Cap the address space at what jax needs now plus `megabytes`: a runaway allocation in user
    code then raises MemoryError (or kills only this process) instead of taking the machine."""
    if megabytes <= 0:
        return
    try:
        import resource
        with open("/proc/self/status") as status:
            vm = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
        limit = vm + megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except Exception:  # noqa: BLE001 - not Linux, or no permission: the server's timeout still applies
        pass


def die_with_parent() -> None:
    """If the server dies without closing us (SIGKILL), take this worker and everything below it down
    too, even in the middle of a hanging trace."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                try:
                    kill_descendants(os.getpid())
                finally:
                    os._exit(1)

    threading.Thread(target=watch, name="pallas-trace-parent-watch", daemon=True).start()


def _descendants(root: int) -> list[int]:
    """Live (not zombie) processes below `root`, from the parent links in /proc."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm)": state ppid ...
        if len(fields) > 1 and fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_descendants(root: int, keep: int | None = None, seconds: float = 5.0) -> int:
    """SIGKILL every process below `root` (but `keep`) until none is left; returns how many were killed.
    Orphans of killed processes come back below `root` when `root` is a subreaper, so this ends
    only when the whole tree is gone, however it forked or whichever session it moved to."""
    import signal

    killed: set[int] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in _descendants(root) if p != keep]
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.01)
    return len(killed)


def _libc():
    import ctypes
    return ctypes.CDLL(None, use_errno=True)


def become_subreaper() -> bool:
    try:
        return _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _enter_pid_namespace() -> bool:
    """Make this process's next child the init of a new PID namespace (and mount namespace, for its own
    /proc): as root, or in a user namespace of our own where unprivileged ones are allowed."""
    if os.environ.get(NAMESPACES_ENV) == "0":
        return False
    try:
        unshare = _libc().unshare
    except (OSError, AttributeError):
        return False
    if unshare(CLONE_NEWPID | CLONE_NEWNS) == 0:
        return True
    uid, gid = os.geteuid(), os.getegid()
    if unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) != 0:
        return False
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        except OSError:
            pass  # unmapped ids read as "nobody"; files are still checked against the real ones
    return True


_host_proc: int | None = None  # the host's /proc, kept open by a keeper across mounting its own
_own_proc = False
_outer_pids: dict[int, int] = {}


def _mount_own_proc() -> None:
    """As a new PID namespace's init: mount a /proc of this namespace. CUDA's driver will not start
    (cuInit: CUDA_ERROR_OPERATING_SYSTEM) under a /proc whose pids are not its namespace's."""
    global _host_proc, _own_proc
    try:
        _host_proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        libc = _libc()
        _own_proc = (libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0
                     and libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0)
    except (OSError, AttributeError):
        pass


def _close_host_proc() -> None:
    global _host_proc
    if _host_proc is not None:
        os.close(_host_proc)
        _host_proc = None


def outer_pid() -> int:
    """This process's pid as the host's /proc and the server know it (remembered: the trace's process
    closes the host's /proc before user code runs)."""
    pid = os.getpid()
    if pid not in _outer_pids:
        try:
            _outer_pids[pid] = int(os.readlink("self", dir_fd=_host_proc) if _host_proc is not None
                                   else os.readlink("/proc/self"))
        except (OSError, ValueError):
            _outer_pids[pid] = pid
    return _outer_pids[pid]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def run_contained(work, private_fds=(), seconds: float | None = None, output_limit: int | None = None) -> dict:
    """Run `work()` (it returns a JSON-able dict) in a fresh fork of this process and end everything it
    started. Returns {"result", "pid", "killed"}, or {"crashed": exit code as subprocess gives it (None
    when unknown), "pid", "killed"}; plus "emitted": what it sent with `emit` as it went (kept however
    it ended).

    `seconds`: past it the process is killed ("timed_out"). `output_limit`: its stdout and stderr are
    captured instead of shared; past that many bytes it is killed ("output_exceeded"); the last
    `OUTPUT_TAIL` bytes come back as "output" with "output_bytes" counted."""
    me = os.getpid()
    read_end, write_end = os.pipe()
    output = _Output(output_limit) if output_limit is not None else None
    deadline = None if seconds is None else time.monotonic() + seconds
    launcher = os.fork()
    if launcher == 0:
        os.close(read_end)
        for fd in private_fds:
            os.close(fd)
        if output is not None:
            output.become_writer()
        _launch(work, write_end)
    os.close(write_end)
    if output is not None:
        output.become_reader()
    received = b""
    launcher_done = False
    trace_status = None
    messages: dict = {}
    ended_because = None
    try:
        while True:
            received += _read_available(read_end, 0.05, output)
            for pid, status in _reap_children():
                launcher_done = launcher_done or pid == launcher
                if pid == messages.get("P"):  # adopted after its keeper was killed
                    trace_status = status
            messages = _contained_messages(received)
            trace = messages.get("P")
            if ended_because is None:
                if output is not None and output.exceeded:
                    ended_because = "output_exceeded"
                elif deadline is not None and time.monotonic() > deadline:
                    ended_because = "timed_out"
                if ended_because is not None:
                    _kill(trace if trace is not None and "S" not in messages else None, me)
            if "S" in messages and not launcher_done:  # the keeper's last word: the launcher ends next
                _wait_for(launcher)
                launcher_done = True
            if launcher_done and (trace is None or "R" in messages or "S" in messages
                                  or trace_status is not None or not _alive(trace)):
                break
        received += _read_available(read_end, 0, output)
    finally:
        os.close(read_end)
    trace = messages.get("P")
    deadline = time.monotonic() + 5
    while trace is not None and _alive(trace) and time.monotonic() < deadline:
        time.sleep(0.005)  # it answered and is exiting: it is not a leftover (only without namespaces)
        _reap_children()
    killed = kill_descendants(me)
    _reap_children()
    messages = _contained_messages(received)
    status, killed_inside = messages.get("S", (trace_status, 0))
    outcome = {"pid": messages.get("P"), "killed": killed + killed_inside, "emitted": messages.get("L", [])}
    if "R" in messages:
        outcome["result"] = messages["R"]
    else:
        outcome["crashed"] = None if status is None else os.waitstatus_to_exitcode(status)
    if ended_because is not None:
        outcome[ended_because] = True
    if output is not None:
        outcome.update(output.close())
    return outcome


def _kill(trace: int | None, me: int) -> None:
    """End a contained run early: its process (its keeper then ends the namespace), or, before it
    said who it is, everything below this worker."""
    import signal

    if trace is None:
        kill_descendants(me)
        return
    try:
        os.kill(trace, signal.SIGKILL)
    except OSError:
        pass


OUTPUT_TAIL = 16 * 1024


class _Output:
    """A contained run's stdout and stderr, through a pipe of its own: counted, its tail kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.read_fd, self.write_fd = os.pipe()
        self.tail = b""
        self.size = 0

    def become_writer(self) -> None:
        os.close(self.read_fd)
        os.dup2(self.write_fd, 1)
        os.dup2(self.write_fd, 2)
        os.close(self.write_fd)

    def become_reader(self) -> None:
        os.close(self.write_fd)
        os.set_blocking(self.read_fd, False)

    @property
    def exceeded(self) -> bool:
        return self.size > self.limit

    def drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.read_fd, 1 << 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if not chunk:
                return
            self.size += len(chunk)
            self.tail = (self.tail + chunk)[-OUTPUT_TAIL:]

    def close(self) -> dict:
        self.drain()
        os.close(self.read_fd)
        return {"output": self.tail.decode("utf-8", "replace"), "output_bytes": self.size}


def _wait_for(pid: int) -> None:
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def _read_available(fd: int, timeout: float, output: "_Output | None" = None) -> bytes:
    """What the private pipe holds now (waiting up to `timeout` for something), the output drained."""
    import select

    watched = [fd] if output is None else [fd, output.read_fd]
    data = b""
    while True:
        ready = select.select(watched, [], [], timeout)[0]
        if output is not None and output.read_fd in ready:
            output.drain()
        if fd not in ready:
            return data
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return data
        data += chunk
        timeout = 0


def _contained_messages(received: bytes) -> dict:
    """The lines of the private pipe: "P pid" (the trace started), "R json" (its result), "S status killed"
    (the keeper saw it end), the first of each counting; "L json" (`emit`), every one, in order."""
    messages: dict = {}
    for line in received.split(b"\n")[:-1]:
        kind, _, rest = line.partition(b" ")
        kind = kind.decode("ascii", "replace")
        if kind in messages and kind != "L":
            continue
        try:
            if kind == "P":
                messages["P"] = int(rest)
            elif kind == "R":
                messages["R"] = json.loads(rest)
            elif kind == "L":
                messages.setdefault("L", []).append(json.loads(rest))
            elif kind == "S":
                status, killed = rest.split()
                messages["S"] = (None if status == b"None" else int(status), int(killed))
        except ValueError:
            continue
    return messages


_emit_to: tuple[int, int] | None = None  # (the private pipe, the process that may write to it)


def emit(record: dict) -> None:
    """Send `record` to the worker now, from the contained process (not from a fork of it): what was
    sent stays sent if the process dies, hangs or is killed later."""
    if _emit_to is not None and os.getpid() == _emit_to[1]:
        _write_all(_emit_to[0], ("L " + json.dumps(record, default=str) + "\n").encode())


def _launch(work, write_end: int) -> None:
    """The launcher, then the keeper; never returns."""
    import signal

    try:
        namespaced = _enter_pid_namespace()
        keeper = os.fork()
        if keeper != 0:
            _wait_for(keeper)
            os._exit(0)
        if namespaced:
            _mount_own_proc()
        else:
            become_subreaper()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a namespace's init, only handled signals arrive
        trace = os.fork()
        if trace == 0:
            _run_trace_process(work, write_end)
        status = None
        while status is None:
            try:
                pid, wait_status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            if pid == trace:
                status = wait_status
        killed = _end_namespace() if namespaced else kill_descendants(os.getpid())
        _reap_children()
        _write_all(write_end, f"S {status} {killed}\n".encode())
    finally:
        os._exit(0)


def _end_namespace() -> int:
    """As the namespace's init: kill every other process in it (kill(-1) from its init reaches exactly
    those) and collect them; how many there were."""
    import signal

    left = len(_descendants(os.getpid() if _own_proc else outer_pid()))
    if left:
        try:
            os.kill(-1, signal.SIGKILL)  # from a namespace's init: every process in the namespace but itself
        except OSError:
            pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return left
        except InterruptedError:
            continue


def _run_trace_process(work, write_end: int) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    me = os.getpid()
    code = 0
    global _emit_to
    try:
        _write_all(write_end, f"P {outer_pid()}\n".encode())
        _close_host_proc()
        _emit_to = (write_end, me)
        result = work()
        if os.getpid() == me:  # a fork made by user code that came back here never answers
            _write_all(write_end, ("R " + json.dumps(result, default=str) + "\n").encode())
    except BaseException:  # noqa: BLE001 - reported as a crash, with what it printed
        traceback.print_exc()
        code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)

