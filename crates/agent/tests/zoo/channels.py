"""Hostile bots that try to talk to another bot: one channel per mode, each result printed as
`RESULT <word> <detail>` (OPEN or SEEN when the channel works, BLOCKED when it does not).

Used by tests/it/sandbox_zoo.rs, which runs two of them at once (a sender and a receiver) and
asserts from the outside that nothing crossed.
"""
import ctypes
import errno
import fcntl
import os
import select
import signal
import socket
import struct
import sys

F_OFD_GETLK, F_OFD_SETLK, F_NOTIFY = 36, 37, 1026
DN_ACCESS = 0x00000001
IN_OPEN = 0x00000020
libc = ctypes.CDLL(None, use_errno=True)


def out(*words):
    print("RESULT", *words, flush=True)


def code(e):
    return errno.errorcode.get(e, str(e))


def flock_struct(kind, start):
    # struct flock on 64-bit Linux: short l_type, short l_whence, off_t l_start, off_t l_len,
    # pid_t l_pid (padded).
    return struct.pack("hhqqi4x", kind, 0, start, 1, 0)


def locks(path, offset):
    """A sender's locks on a file every bot can read, at `offset`: the receiver would see them."""
    fd = os.open(path, os.O_RDONLY)
    tries = [
        ("posix-lock", lambda: fcntl.fcntl(fd, fcntl.F_SETLK, flock_struct(fcntl.F_RDLCK, offset))),
        ("posix-getlk", lambda: fcntl.fcntl(fd, fcntl.F_GETLK, flock_struct(fcntl.F_WRLCK, 0))),
        ("ofd-lock", lambda: fcntl.fcntl(fd, F_OFD_SETLK, flock_struct(fcntl.F_RDLCK, offset))),
        ("ofd-getlk", lambda: fcntl.fcntl(fd, F_OFD_GETLK, flock_struct(fcntl.F_WRLCK, 0))),
        ("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
    ]
    for name, attempt in tries:
        try:
            attempt()
            out("OPEN", name)
        except OSError as e:
            out("BLOCKED", name, code(e.errno))
    dfd = os.open(os.path.dirname(path) or "/", os.O_RDONLY | os.O_DIRECTORY)
    # A watch signals SIGIO, which would end this process (and release its locks) at the first
    # access to the directory: catch it, as a watcher would.
    signal.signal(signal.SIGIO, lambda *_: None)
    try:
        fcntl.fcntl(dfd, F_NOTIFY, DN_ACCESS)
        out("OPEN", "dnotify")
    except OSError as e:
        out("BLOCKED", "dnotify", code(e.errno))
    ifd = libc.inotify_init1(0)
    if ifd < 0:
        out("BLOCKED", "inotify-init", code(ctypes.get_errno()))
    else:
        wd = libc.inotify_add_watch(ifd, os.path.dirname(path).encode() or b"/", IN_OPEN)
        if wd < 0:
            out("BLOCKED", "inotify", code(ctypes.get_errno()))
        else:
            out("OPEN", "inotify")


def locks_seek(path, offset):
    """A receiver's look for the locks another bot took with `locks` at `offset`: SEEN when a
    conflicting lock is reported, BLOCKED when the look is refused, UNSEEN when it finds none."""
    fd = os.open(path, os.O_RDONLY)
    for name, cmd in (("posix-getlk", fcntl.F_GETLK), ("ofd-getlk", F_OFD_GETLK)):
        try:
            got = fcntl.fcntl(fd, cmd, flock_struct(fcntl.F_WRLCK, offset))
            kind = struct.unpack("hhqqi4x", got)[0]
            out("UNSEEN" if kind == fcntl.F_UNLCK else "SEEN", name)
        except OSError as e:
            out("BLOCKED", name, code(e.errno))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out("UNSEEN", "flock-ex")
    except OSError as e:
        out("SEEN" if e.errno == errno.EWOULDBLOCK else "BLOCKED", "flock-ex", code(e.errno))


def hold(token, portid=None):
    """Leave names in the network namespace for another bot to find: an abstract Unix socket
    named `token`, a TCP port from listen() without bind(), a route-netlink port id (`portid`
    when given, else the kernel's choice)."""
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.bind(b"\0" + token.encode())
    u.listen(1)
    out("NAME", "unix", token)
    keep = [u]
    try:
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.listen(1)
        keep.append(t)
        out("NAME", "tcp", t.getsockname()[1])
    except OSError as e:
        out("NAME", "tcp", "-", code(e.errno))
    try:
        n = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        n.bind((int(portid or 0), 0))
        keep.append(n)
        out("NAME", "netlink", n.getsockname()[0])
    except OSError as e:
        out("NAME", "netlink", "-", code(e.errno))
    return keep


def seek(token, port, portid):
    """Look for what `hold` left: in /proc/net, and by colliding on the same name. `port` and
    `portid` (`-` to skip) may be `any`: any TCP listener, any netlink socket of a process (a
    receiver that was told no name looks for whatever is there)."""
    def table(name):
        try:
            with open("/proc/net/" + name) as f:
                return f.read()
        except OSError as e:
            return "ERR " + code(e.errno)
    unix = table("unix")
    out("SEEN" if token in unix else "BLOCKED", "proc-net-unix")
    if port == "any":
        # State 0A: a listener, of any port (the sender's came from listen() without bind()).
        rows = [l.split() for t in ("tcp", "tcp6") for l in table(t).splitlines()[1:]]
        out("SEEN" if any(len(r) > 3 and r[3] == "0A" for r in rows) else "BLOCKED", "proc-net-tcp")
    elif port != "-":
        tcp = table("tcp")
        out("SEEN" if (":%04X " % int(port)) in tcp else "BLOCKED", "proc-net-tcp")
    nl = [l.split() for l in table("netlink").splitlines()[1:]]
    if portid == "any":
        # Port id 0 is the kernel's own socket; this receiver opened none.
        out("SEEN" if any(len(l) > 2 and l[2] != "0" for l in nl) else "BLOCKED", "proc-net-netlink")
    elif portid != "-":
        out("SEEN" if any(len(l) > 2 and l[2] == portid for l in nl) else "BLOCKED", "proc-net-netlink")
        n = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        try:
            n.bind((int(portid), 0))
            out("BLOCKED", "netlink-collision")
        except OSError as e:
            out("SEEN" if e.errno == errno.EADDRINUSE else "BLOCKED", "netlink-collision", code(e.errno))
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        u.bind(b"\0" + token.encode())
        out("BLOCKED", "bind-collision")
    except OSError as e:
        out("SEEN" if e.errno == errno.EADDRINUSE else "BLOCKED", "bind-collision", code(e.errno))
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        u.connect(b"\0" + token.encode())
        out("SEEN", "abstract-connect")
    except OSError as e:
        out("BLOCKED", "abstract-connect", code(e.errno))


IPC_CREAT = 0o1000


def sysv(key=0):
    """SysV shared memory, a message queue and semaphores that would outlive the bot (the tier
    without namespaces shares them machine-wide), made under `key` when given (another bot would
    look them up by it), and listen() on an unbound IPv4 and IPv6 socket."""
    shm = libc.shmget(key, 1 << 20, IPC_CREAT | 0o666)
    out("OPEN" if shm >= 0 else "BLOCKED", "shmget", code(ctypes.get_errno()) if shm < 0 else shm)
    msg = libc.msgget(key, IPC_CREAT | 0o666)
    out("OPEN" if msg >= 0 else "BLOCKED", "msgget", code(ctypes.get_errno()) if msg < 0 else msg)
    sem = libc.semget(key, 1, IPC_CREAT | 0o666)
    out("OPEN" if sem >= 0 else "BLOCKED", "semget", code(ctypes.get_errno()) if sem < 0 else sem)
    for name, family in (("listen", socket.AF_INET), ("listen6", socket.AF_INET6)):
        t = socket.socket(family, socket.SOCK_STREAM)
        try:
            t.listen(1)
            out("OPEN", name, t.getsockname()[1])
        except OSError as e:
            out("BLOCKED", name, code(e.errno))


def sysv_find(key):
    """Look for the SysV objects another bot made under `key` with `sysv`: by key (SEEN when one
    is there, ABSENT when the look-up works and finds none, BLOCKED when it is refused) and in
    /proc/sysvipc (whose second column is the key)."""
    for name, get in (
        ("shmget", lambda: libc.shmget(key, 0, 0)),
        ("msgget", lambda: libc.msgget(key, 0)),
        ("semget", lambda: libc.semget(key, 0, 0)),
    ):
        r = get()
        err = ctypes.get_errno()
        if r >= 0:
            out("SEEN", name, r)
        else:
            out("ABSENT" if err == errno.ENOENT else "BLOCKED", name, code(err))
    for table in ("shm", "msg", "sem"):
        try:
            with open("/proc/sysvipc/" + table) as f:
                rows = [l.split() for l in f.read().splitlines()[1:]]
            found = any(len(r) > 1 and r[0] == str(key) for r in rows)
            out("SEEN" if found else "ABSENT", "proc-sysvipc-" + table)
        except OSError as e:
            out("BLOCKED", "proc-sysvipc-" + table, code(e.errno))


def fds(numbers):
    """Read or write descriptors the referee may have inherited from its own parent."""
    for n in numbers:
        try:
            data = os.read(int(n), 64)
            out("OPEN", "read", n, data.decode(errors="replace").strip() or "-")
        except OSError as e:
            out("BLOCKED", "read", n, code(e.errno))


def fds_all(extra):
    """Every descriptor above standard error (3 to 4095, and the numbers in `extra`): whatever
    is open is read (what waits in it) and written to. Only the bot's own are expected: none."""
    found = 0
    for n in sorted(set(range(3, 4096)) | {int(x) for x in extra}):
        try:
            os.fstat(n)
        except OSError:
            continue
        found += 1
        p = select.poll()
        p.register(n, select.POLLIN | select.POLLOUT)
        ready = dict(p.poll(0)).get(n, 0)
        readable, writable = ready & select.POLLIN, ready & select.POLLOUT
        if readable:
            try:
                data = os.read(n, 64)
                out("OPEN", "read", n, data.decode(errors="replace").strip() or "-")
            except OSError as e:
                out("OPEN", "read", n, code(e.errno))
        if writable:
            try:
                os.write(n, b"from the bot\n")
                out("OPEN", "write", n)
            except OSError as e:
                out("OPEN", "write", n, code(e.errno))
        if not (readable or writable):
            out("OPEN", "fd", n)
    if not found:
        out("BLOCKED", "fds", "none-above-2")


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    keep = None
    if mode == "locks":
        locks(args[0], int(args[1]))
    elif mode == "locks-seek":
        locks_seek(args[0], int(args[1]))
    elif mode == "hold":
        keep = hold(*args[:2])
    elif mode == "seek":
        seek(*sys.stdin.readline().split())
    elif mode == "sysv":
        sysv(int(args[0]) if args else 0)
    elif mode == "sysv-find":
        sysv_find(int(args[0]))
    elif mode == "fds":
        fds(args)
    elif mode == "fds-all":
        fds_all(args)
    print("DONE", flush=True)
    # Stay alive (as a bot would) until the referee ends the match.
    try:
        sys.stdin.read()
    except Exception:
        pass
    del keep


main()
