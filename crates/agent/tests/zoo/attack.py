"""A hostile bot: one attack per mode, each result printed as `RESULT <word> <detail>`.

Used by tests/it/sandbox_zoo.rs. Every attack tries what a contestant's program could try against
the referee, the other seats or the machine; the test asserts from the outside that it failed.
"""
import ctypes
import errno
import os
import signal
import socket
import sys
import time


def out(*words):
    print("RESULT", *words, flush=True)


def try_read(path):
    try:
        with open(path, "rb") as f:
            data = f.read(64)
        out("LEAKED", path, len(data))
    except OSError as e:
        out("BLOCKED", path, errno.errorcode.get(e.errno, e.errno))


def try_write(path):
    try:
        with open(path, "wb") as f:
            f.write(b"pwned")
        out("WROTE", path)
    except OSError as e:
        out("BLOCKED", path, errno.errorcode.get(e.errno, e.errno))


def main():
    # `--exit`: end after the attack instead of waiting for the referee (when a shell runs a
    # legal bot afterwards).
    wait = True
    argv = sys.argv[1:]
    if argv and argv[0] == "--exit":
        wait = False
        argv = argv[1:]
    mode = argv[0]
    args = argv[1:]
    if args == ["-"]:
        # Targets come on stdin: a path on the command line would be mounted for the bot, as
        # the organiser's command line names what the bot may read.
        args = sys.stdin.readline().split()
    if mode == "read":
        for p in args:
            try_read(p)
    elif mode == "list":
        # The names a directory shows (`-` when empty), or why it cannot be listed.
        for p in args:
            try:
                names = sorted(os.listdir(p))
                out("LISTED", p, ",".join(names) or "-")
            except OSError as e:
                out("BLOCKED", p, errno.errorcode.get(e.errno, e.errno))
    elif mode == "write":
        for p in args:
            try_write(p)
    elif mode == "connect":
        for port in args:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(2)
            try:
                s.connect(("127.0.0.1", int(port)))
                out("CONNECTED", port)
            except OSError as e:
                out("BLOCKED", port, errno.errorcode.get(e.errno, e.errno) if e.errno else type(e).__name__)
            finally:
                s.close()
    elif mode == "connect-to":
        # HOST:PORT[xN]: connect N times (1 by default), printing the first outcome and how many
        # calls were made; then the descriptors it holds (the referee's watch must not be one).
        for target in args:
            addr, _, times = target.partition("x")
            host, _, port = addr.rpartition(":")
            host = host.strip("[]")
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            first = None
            for _ in range(int(times or 1)):
                s = socket.socket(family, socket.SOCK_STREAM)
                s.settimeout(2)
                try:
                    s.connect((host, int(port)))
                    first = first or "CONNECTED"
                except OSError as e:
                    first = first or errno.errorcode.get(e.errno, e.errno)
                finally:
                    s.close()
            out("CONNECT", addr, first, int(times or 1))
        fds = sorted(os.readlink("/proc/self/fd/" + fd) for fd in os.listdir("/proc/self/fd"))
        out("FDS", " ".join(fds))
    elif mode == "bind":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", int(args[0])))
            s.listen(1)
            out("BOUND", args[0])
        except OSError as e:
            out("BLOCKED", args[0], errno.errorcode.get(e.errno, e.errno))
    elif mode == "sockets":
        # Every socket family and protocol a side door could use: `CREATED` or `BLOCKED`.
        kinds = [
            ("tcp", socket.AF_INET, socket.SOCK_STREAM, 0),
            ("tcp6", socket.AF_INET6, socket.SOCK_STREAM, 0),
            ("unix", socket.AF_UNIX, socket.SOCK_STREAM, 0),
            ("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, 0),
            ("mptcp", socket.AF_INET, socket.SOCK_STREAM, 262),
            ("mptcp6", socket.AF_INET6, socket.SOCK_STREAM, 262),
            ("sctp", socket.AF_INET, socket.SOCK_STREAM, 132),
            ("udp", socket.AF_INET, socket.SOCK_DGRAM, 0),
            ("udp6", socket.AF_INET6, socket.SOCK_DGRAM, 0),
            ("udplite", socket.AF_INET, socket.SOCK_DGRAM, 136),
            ("icmp", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
            ("raw", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP),
            ("seqpacket-inet", socket.AF_INET, socket.SOCK_SEQPACKET, 0),
            ("packet", 17, socket.SOCK_RAW, 0),
            ("netlink-usersock", socket.AF_NETLINK, socket.SOCK_RAW, 2),
            ("netlink-generic", socket.AF_NETLINK, socket.SOCK_RAW, 16),
            ("vsock", 40, socket.SOCK_STREAM, 0),
            ("tipc", 30, socket.SOCK_RDM, 0),
            ("xdp", 44, socket.SOCK_RAW, 0),
        ]
        for name, fam, ty, proto in kinds:
            try:
                s = socket.socket(fam, ty | socket.SOCK_CLOEXEC, proto)
                s.close()
                out("CREATED", name)
            except OSError as e:
                out("BLOCKED", name, errno.errorcode.get(e.errno, e.errno))
    elif mode == "side-doors":
        # Reach a TCP port without connect(2): MPTCP, TCP Fast Open (sendto with MSG_FASTOPEN
        # and the TCP_FASTOPEN_CONNECT option), and UDP to the same port.
        for port in args:
            p = int(port)
            for name in ("mptcp", "fastopen-sendto", "fastopen-connect", "udp"):
                s = None
                try:
                    if name == "mptcp":
                        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
                        s.settimeout(2)
                        s.connect(("127.0.0.1", p))
                    elif name == "fastopen-sendto":
                        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                        s.settimeout(2)
                        s.sendto(b"x", 0x20000000, ("127.0.0.1", p))
                    elif name == "fastopen-connect":
                        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                        s.setsockopt(socket.IPPROTO_TCP, 30, 1)
                        s.settimeout(2)
                        s.connect(("127.0.0.1", p))
                        s.send(b"x")
                    else:
                        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        s.sendto(b"x", ("127.0.0.1", p))
                    out("REACHED", name + ":" + port)
                except OSError as e:
                    out("BLOCKED", name + ":" + port, errno.errorcode.get(e.errno, e.errno) if e.errno else type(e).__name__)
                finally:
                    if s is not None:
                        s.close()
    elif mode == "listen-any":
        # A server inside the bot (MPTCP or TCP) that a host process could reach.
        for name, proto in (("tcp", 0), ("mptcp", 262)):
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
                s.bind(("0.0.0.0", int(args[0])))
                s.listen(1)
                out("LISTENING", name)
            except OSError as e:
                out("BLOCKED", name, errno.errorcode.get(e.errno, e.errno))
    elif mode == "net-view":
        # What the bot can learn of the network: TCP sockets in /proc/net (listening ports) and
        # interfaces.
        ports = []
        for f in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                with open(f) as fh:
                    for line in fh.readlines()[1:]:
                        parts = line.split()
                        if parts[3] == "0A":
                            ports.append(str(int(parts[1].split(":")[1], 16)))
            except OSError:
                pass
        out("LISTENERS", ",".join(sorted(set(ports))) or "-")
        out("IFACES", ",".join(n for _, n in socket.if_nameindex()) or "-")
    elif mode == "abstract-listen":
        # An abstract unix socket (named by the network namespace, not the file system).
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind("\0" + args[0])
            s.listen(1)
            out("LISTENING", args[0])
        except OSError as e:
            out("BLOCKED", args[0], errno.errorcode.get(e.errno, e.errno))
    elif mode == "abstract-connect":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect("\0" + args[0])
            out("CONNECTED", args[0])
        except OSError as e:
            out("BLOCKED", args[0], errno.errorcode.get(e.errno, e.errno))
    elif mode == "ifaces":
        # The network interfaces it can see, and whether any is up.
        names = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
        up = []
        for _, name in socket.if_nameindex():
            up.append(name)
        out("IFACES", ",".join(up) or "-")
    elif mode == "signal":
        # -1: every process this one may signal.
        for pid in args:
            try:
                os.kill(int(pid), signal.SIGSTOP)
                out("SENT", pid)
            except OSError as e:
                out("BLOCKED", pid, errno.errorcode.get(e.errno, e.errno))
    elif mode == "ptrace":
        libc = ctypes.CDLL(None, use_errno=True)
        for pid in args:
            r = libc.ptrace(16, int(pid), None, None)  # PTRACE_ATTACH
            if r == 0:
                out("ATTACHED", pid)
            else:
                out("BLOCKED", pid, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))
    elif mode == "outlive":
        # A grandchild in its own session and process group, as a daemon would be.
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", args[0]])
            os._exit(0)
        os.waitpid(pid, 0)
        out("SPAWNED", args[0])
    elif mode == "fork":
        n = int(args[0])
        made = 0
        children = []
        for _ in range(n):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
            made += 1
        out("FORKED", made)
    elif mode == "threads":
        # A neighbour's check: can this bot still fork and start threads?
        import threading
        n = int(args[0])
        made = 0
        for _ in range(n):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            made += 1
        out("FORKED", made)
        started = 0
        for _ in range(n):
            try:
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
            except RuntimeError:
                break
            started += 1
        out("THREADS", started)
    elif mode == "memory":
        # Three processes of `mib` MiB each, plus a file in /dev/shm.
        mib = int(args[0])
        pids = []
        for i in range(3):
            pid = os.fork()
            if pid == 0:
                block = bytearray(mib << 20)
                for j in range(0, len(block), 4096):
                    block[j] = 1
                out("HELD", i, mib)
                time.sleep(30)
                os._exit(0)
            pids.append(pid)
        shm = 0
        try:
            with open("/dev/shm/big", "wb") as f:
                chunk = b"x" * (1 << 20)
                for _ in range(int(args[1])):
                    f.write(chunk)
                    shm += 1
        except OSError:
            pass
        out("SHM", shm)
        time.sleep(3)
    elif mode == "disk":
        total = 0
        for i in range(int(args[0])):
            try:
                with open("file%d" % i, "wb") as f:
                    chunk = b"y" * (1 << 20)
                    for _ in range(int(args[1])):
                        f.write(chunk)
                        total += 1
            except OSError:
                pass
        out("WRITTEN_MIB", total)
    elif mode == "environ":
        # Everything the referee put in the environment (a host path would tell where it runs).
        for k, v in sorted(os.environ.items()):
            out("ENV", "%s=%s" % (k, v))
    elif mode == "cgroup":
        # The cgroup's name (the referee's pid in it would tell which process runs the match).
        with open("/proc/self/cgroup") as f:
            for line in f.read().splitlines():
                out("CGROUP", line)
    elif mode == "mountinfo":
        # Field 4 is a mount's root within its file system, field 5 where it is mounted.
        with open("/proc/self/mountinfo") as f:
            for line in f.read().splitlines():
                out("MOUNT", line)
    elif mode == "many-entries":
        # Thousands of folders each holding an empty file: bytes nobody counts, inodes and
        # blocks of the host's disk when the folder is kept (--keep-seat-files).
        made = 0
        for i in range(int(args[0])):
            try:
                os.mkdir("d%d" % i)
                open("d%d/f" % i, "wb").close()
                made += 2
            except OSError:
                break
        out("MADE", made)
    elif mode == "whoami":
        with open("/proc/self/status") as f:
            status = f.read()
        caps = [l for l in status.splitlines() if l.startswith(("Cap", "Uid", "Gid", "Groups", "NoNewPrivs", "Seccomp:"))]
        out("ID", os.getuid(), os.getgid(), "|".join(caps).replace(" ", "").replace("\t", ""))
        out("PIDS", len([p for p in os.listdir("/proc") if p.isdigit()]), os.getpid())
        out("CWD", os.getcwd())
    print("DONE", flush=True)
    if not wait:
        return
    # Stay alive (as a bot would) until the referee ends the match.
    try:
        sys.stdin.read()
    except Exception:
        pass


main()
