"""Hostile bots that try to talk to another bot: one channel per mode, each result printed as
`RESULT <word> <detail>` (OPEN or SEEN when the channel works, BLOCKED when it does not).

Used by tests/it/sandbox_zoo.rs, which runs two of them at once (a sender and a receiver) and
asserts from the outside that nothing crossed.
"""
import ctypes
import errno
import fcntl
import os
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


def hold(token):
    """Leave names in the network namespace for another bot to find: an abstract Unix socket
    named `token`, a TCP port from listen() without bind(), a route-netlink port id."""
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.bind(b"\0" + token.encode())
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
        n.bind((0, 0))
        keep.append(n)
        out("NAME", "netlink", n.getsockname()[0])
    except OSError as e:
        out("NAME", "netlink", "-", code(e.errno))
    return keep


def seek(token, port, portid):
    """Look for what `hold` left: in /proc/net, and by colliding on the same name."""
    def table(name):
        try:
            with open("/proc/net/" + name) as f:
                return f.read()
        except OSError as e:
            return "ERR " + code(e.errno)
    unix = table("unix")
    out("SEEN" if token in unix else "BLOCKED", "proc-net-unix")
    if port != "-":
        tcp = table("tcp")
        out("SEEN" if (":%04X " % int(port)) in tcp else "BLOCKED", "proc-net-tcp")
    if portid != "-":
        nl = [l.split() for l in table("netlink").splitlines()[1:]]
        out("SEEN" if any(len(l) > 2 and l[2] == portid for l in nl) else "BLOCKED", "proc-net-netlink")
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


def sysv():
    """SysV shared memory and a message queue that would outlive the bot (the tier without
    namespaces shares them machine-wide), and listen() on an unbound socket."""
    IPC_CREAT, IPC_PRIVATE = 0o1000, 0
    shm = libc.shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0o666)
    out("OPEN" if shm >= 0 else "BLOCKED", "shmget", code(ctypes.get_errno()) if shm < 0 else shm)
    msg = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o666)
    out("OPEN" if msg >= 0 else "BLOCKED", "msgget", code(ctypes.get_errno()) if msg < 0 else msg)
    sem = libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o666)
    out("OPEN" if sem >= 0 else "BLOCKED", "semget", code(ctypes.get_errno()) if sem < 0 else sem)
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        t.listen(1)
        out("OPEN", "listen", t.getsockname()[1])
    except OSError as e:
        out("BLOCKED", "listen", code(e.errno))


def fds(numbers):
    """Read or write descriptors the referee may have inherited from its own parent."""
    for n in numbers:
        try:
            data = os.read(int(n), 64)
            out("OPEN", "read", n, data.decode(errors="replace").strip() or "-")
        except OSError as e:
            out("BLOCKED", "read", n, code(e.errno))


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    keep = None
    if mode == "locks":
        locks(args[0], int(args[1]))
    elif mode == "hold":
        keep = hold(args[0])
    elif mode == "seek":
        seek(*sys.stdin.readline().split())
    elif mode == "sysv":
        sysv()
    elif mode == "fds":
        fds(args)
    print("DONE", flush=True)
    # Stay alive (as a bot would) until the referee ends the match.
    try:
        sys.stdin.read()
    except Exception:
        pass
    del keep


main()
